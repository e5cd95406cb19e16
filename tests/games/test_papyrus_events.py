"""Papyrus: the nine Event card kinds, their pending decisions and chains (rules section 2.5, 6)."""

from __future__ import annotations

import pytest

from service.games.papyrus import GAME
from service.games.papyrus.data import SPELLING

from tests.games.harness import illegal
from tests.games.test_papyrus import _bag_front, _market, _set_holder, _set_movement
from tests.games.test_papyrus_helpers import act, conservation, fresh, hand, holder

MOVE = {"type": "move", "path": "p18", "cards": {"nature": 1, "water": 1}}


def at_marshes(card: str, n: int = 2, **movement) -> dict:
    """Seat 0 on Amon-Ra, one move (p18) away from the Papyrus Marshes, ``card`` on top."""
    s = fresh(n)
    s["seats"][0]["pawn"] = "amon-ra"
    movement = movement or {"nature": 1, "water": 1, "light": 2}
    _set_movement(s, 0, **movement)
    s["event_deck"].remove(card)
    s["event_deck"].insert(0, card)
    conservation(s)
    return s


def test_gift_of_the_nile():
    s = at_marshes("gift-of-the-nile")
    events, after = act(s, 0, MOVE)
    assert [e["type"] for e in events][:4] == ["PawnMoved", "EventDrawn", "MovementDrawn",
                                               "EventDiscarded"]
    assert sum(after["seats"][0]["movement"].values()) == 4
    assert after["current"] == 1
    conservation(after)


def test_scribes_gift():
    s = at_marshes("scribes-gift")
    _, after = act(s, 0, MOVE)
    assert sum(after["seats"][0]["holder"].values()) == 11
    assert after["current"] == 1 and after["pending"] is None


def test_temple_offering_choice_and_empty_market():
    s = at_marshes("temple-offering")
    _market(s, ["stool", "foot", "stool"])
    _, after = act(s, 0, MOVE)
    assert after["pending"]["kind"] == "temple-offering"
    assert GAME.legal_actions(after, 0) == [{"type": "event_choice", "take": "foot"},
                                           {"type": "event_choice", "take": "stool"}]
    assert illegal(GAME, after, 0, {"type": "event_choice",
                                    "take": "owl"}).code == "glyph_not_in_market"
    assert illegal(GAME, after, 0, {"type": "draw_movement"}).code == "decision_pending"
    assert illegal(GAME, after, 0, {"type": "event_choice",
                                    "path": None}).code == "unexpected_field"
    assert illegal(GAME, after, 0, {"type": "event_choice"}).code == "missing_field"
    _, done = act(after, 0, {"type": "event_choice", "take": "stool"})
    assert done["market"] == holder("stool", "foot")
    assert done["seats"][0]["holder"]["stool"] >= 1
    assert sum(done["seats"][0]["holder"].values()) == 11
    assert done["event_discard"]["temple-offering"] == 1 and done["current"] == 1
    conservation(done)
    # empty market: draw from the bag instead, no decision
    s = at_marshes("temple-offering")
    _, after = act(s, 0, MOVE)
    assert after["pending"] is None and sum(after["seats"][0]["holder"].values()) == 11


def test_temple_offering_single_choice_is_forced():
    s = at_marshes("temple-offering")
    _market(s, ["stool", "stool"])
    events, after = act(s, 0, MOVE)
    forced = [e for e in events if e.get("forced")]
    assert forced and forced[0]["type"] == "DecisionResolved"
    assert after["current"] == 1 and after["market"]["stool"] == 1


def test_wisdom_of_thoth():
    s = at_marshes("wisdom-of-thoth")
    _bag_front(s, ["cobra", "hand"])
    _, after = act(s, 0, MOVE)
    p = after["seats"][0]
    assert sum(p["holder"].values()) == 12
    assert after["pending"] == {"seat": 0, "kind": "wisdom-of-thoth", "count": 2,
                                "card": "wisdom-of-thoth"}
    legal = GAME.legal_actions(after, 0)
    assert all(len(a["return"]) == 2 for a in legal)
    assert {"type": "event_choice", "return": ["hand", "cobra"]} in legal  # table order
    assert illegal(GAME, after, 0, {"type": "event_choice",
                                    "return": ["cobra"]}).code == "wrong_glyph_count"
    assert illegal(GAME, after, 0, {"type": "event_choice",
                                    "return": ["cobra", "cobra"]}).code == \
        "glyph_not_in_holder" or p["holder"]["cobra"] >= 2
    # posted in any order: normalised
    _, done = act(after, 0, {"type": "event_choice", "return": ["cobra", "hand"]})
    assert done["market"]["cobra"] == 1 and done["market"]["hand"] == 1
    assert sum(done["seats"][0]["holder"].values()) == 10 and done["current"] == 1
    conservation(done)


def test_wisdom_of_thoth_one_tile_drawn():
    s = at_marshes("wisdom-of-thoth")
    # leave exactly one tile in the bag and nothing on the discard pile
    extra = s["bag"][1:]
    s["bag"] = s["bag"][:1]
    for g in extra:
        s["market"][g] += 1
    _, after = act(s, 0, MOVE)
    assert after["pending"]["count"] == 1
    assert all(len(a["return"]) == 1 for a in GAME.legal_actions(after, 0))
    conservation(after)


def test_wisdom_of_thoth_nothing_drawn():
    s = at_marshes("wisdom-of-thoth")
    for g in s["bag"]:
        s["market"][g] += 1
    s["bag"] = []
    _, after = act(s, 0, MOVE)
    assert after["pending"] is None and after["current"] == 1


def test_sacred_barque_chain_to_conquest():
    s = at_marshes("sacred-barque")
    p = s["seats"][0]
    # hold Neith (p58 from the Marshes) and its spelling
    other = p["gods"][0]
    p["gods"][0] = "neith"
    for q in s["seats"][1:]:
        if "neith" in q["gods"]:
            q["gods"][q["gods"].index("neith")] = other
            other = None
    if other is not None:
        if "neith" in s["god_deck"]:
            s["god_deck"][s["god_deck"].index("neith")] = other
        else:
            s["gods_out"][s["gods_out"].index("neith")] = other
    _set_holder(s, 0, holder(**SPELLING["neith"], vulture=5))
    conservation(s)
    _, after = act(s, 0, MOVE)
    assert after["pending"]["kind"] == "sacred-barque"
    legal = GAME.legal_actions(after, 0)
    paths = [a["path"] for a in legal]
    assert paths == ["p18", "p19", "p41", "p42", "p58", None]
    assert illegal(GAME, after, 0, {"type": "event_choice",
                                    "path": "p13"}).code == "path_not_adjacent"
    events, done = act(after, 0, {"type": "event_choice", "path": "p58"})
    types = [e["type"] for e in events]
    assert types.index("EventDiscarded") < types.index("PawnMoved") < types.index("GodConquered")
    assert done["owners"] == {"neith": 0} and done["seats"][0]["pawn"] == "neith"
    assert done["current"] == 1
    conservation(done)


def test_sacred_barque_decline_and_chain_event():
    s = at_marshes("sacred-barque")
    s["event_deck"].remove("lost-in-the-desert")
    s["event_deck"].insert(1, "lost-in-the-desert")
    _, after = act(s, 0, MOVE)
    _, declined = act(after, 0, {"type": "event_choice", "path": None})
    assert declined["seats"][0]["pawn"] == "ev-marshes" and declined["current"] == 1
    assert declined["event_discard"]["sacred-barque"] == 1
    # to another Event space? Marshes' neighbours are pyramids; go back to Amon-Ra instead
    _, back = act(after, 0, {"type": "event_choice", "path": "p18"})
    assert back["seats"][0]["pawn"] == "amon-ra"


def test_sandstorm():
    s = at_marshes("sandstorm", nature=1, water=1, light=2, eye=1)
    _, after = act(s, 0, MOVE)
    assert after["pending"]["kind"] == "sandstorm"
    assert GAME.legal_actions(after, 0) == [
        {"type": "event_choice", "discard": {"light": 2}},
        {"type": "event_choice", "discard": {"light": 1, "eye": 1}}]
    assert illegal(GAME, after, 0, {"type": "event_choice",
                                    "discard": {"light": 1}}).code == "wrong_card_count"
    assert illegal(GAME, after, 0, {"type": "event_choice",
                                    "discard": {"eye": 2}}).code == "card_not_in_hand"
    _, done = act(after, 0, {"type": "event_choice", "discard": {"eye": 1, "light": 1}})
    assert done["seats"][0]["movement"] == hand(light=1)
    conservation(done)
    # fewer than 2 cards: all of them, no decision
    s = at_marshes("sandstorm", nature=1, water=1, light=1)
    _, after = act(s, 0, MOVE)
    assert after["pending"] is None and sum(after["seats"][0]["movement"].values()) == 0


def test_tomb_robbers():
    s = at_marshes("tomb-robbers")
    _, after = act(s, 0, MOVE)
    held = [g for g, k in after["seats"][0]["holder"].items() if k]
    assert GAME.legal_actions(after, 0) == [{"type": "event_choice", "return": g} for g in held]
    _, done = act(after, 0, {"type": "event_choice", "return": held[0]})
    assert done["market"][held[0]] == 1 and sum(done["seats"][0]["holder"].values()) == 9
    # empty holder: nothing happens
    s = at_marshes("tomb-robbers")
    for g, k in s["seats"][0]["holder"].items():
        s["glyph_discard"][g] += k
    s["seats"][0]["holder"] = holder()
    _, after = act(s, 0, MOVE)
    assert after["pending"] is None and after["current"] == 1


def test_divine_revelation():
    s = at_marshes("divine-revelation")
    top = s["god_deck"][0]
    mine = list(s["seats"][0]["gods"])
    _, after = act(s, 0, MOVE)
    assert GAME.legal_actions(after, 0) == (
        [{"type": "event_choice", "god": g} for g in mine] + [{"type": "event_choice",
                                                                "god": None}])
    assert illegal(GAME, after, 0, {"type": "event_choice",
                                    "god": "not-a-god"}).code == "card_not_in_hand"
    events, done = act(after, 0, {"type": "event_choice", "god": mine[1]})
    assert done["god_deck"][-1] == mine[1]
    assert done["seats"][0]["gods"] == [mine[0], mine[2], top]
    # the swap is private; that it happened is public
    swap = next(e for e in events if e["type"] == "GodSwapped")
    assert GAME.visible(swap, 1)["data"] == {}
    resolved = next(e for e in events if e["type"] == "DecisionResolved")
    assert GAME.visible(resolved, 1)["data"] == {"kind": "divine-revelation", "declined": False}
    conservation(done)
    # empty God deck: no effect
    s = at_marshes("divine-revelation")
    s["gods_out"] += s["god_deck"]
    s["god_deck"] = []
    _, after = act(s, 0, MOVE)
    assert after["pending"] is None and after["current"] == 1


def test_lost_in_the_desert():
    s = at_marshes("lost-in-the-desert", n=3)
    _, after = act(s, 0, MOVE)
    assert after["seats"][0]["skip"] is True
    _, after = act(after, 1, {"type": "draw_movement"})
    events, after = act(after, 2, {"type": "draw_movement"})
    assert [e["type"] for e in events][-3:] == ["TurnEnded", "TurnSkipped", "TurnStarted"]
    assert after["current"] == 1 and after["seats"][0]["skip"] is False
    assert after["turns"] == 4


def test_event_deck_reshuffle():
    s = at_marshes("scribes-gift")
    for e in s["event_deck"]:
        s["event_discard"][e] += 1
    s["event_deck"] = []
    events, after = act(s, 0, MOVE)
    assert [e["type"] for e in events][1:3] == ["EventDeckReshuffled", "EventDrawn"]
    assert len(after["event_deck"]) == 39
    conservation(after)


def test_capacity_after_temple_offering():
    s = at_marshes("temple-offering")
    _market(s, ["stool", "foot"])
    _set_holder(s, 0, holder(reed=10, bread=10))
    _, after = act(s, 0, MOVE)
    _, after = act(after, 0, {"type": "event_choice", "take": "foot"})
    assert after["pending"]["kind"] == "capacity"
    legal = GAME.legal_actions(after, 0)
    assert legal == [{"type": "discard_excess", "glyphs": [g]} for g in ("foot", "reed", "bread")]
    _, done = act(after, 0, {"type": "discard_excess", "glyphs": ["foot"]})
    assert done["market"]["foot"] == 1 and done["current"] == 1


def test_wisdom_at_full_holder_never_needs_capacity():
    s = at_marshes("wisdom-of-thoth")
    _set_holder(s, 0, holder(reed=10, bread=10))
    _, after = act(s, 0, MOVE)
    _, done = act(after, 0, GAME.legal_actions(after, 0)[0])
    assert done["pending"] is None and sum(done["seats"][0]["holder"].values()) == 20


@pytest.mark.parametrize("card", ["temple-offering", "wisdom-of-thoth", "sacred-barque",
                                  "sandstorm", "tomb-robbers", "divine-revelation"])
def test_timeout_action_is_legal(card):
    s = at_marshes(card, nature=1, water=1, light=2, eye=1, darkness=1)
    _market(s, ["stool", "foot"])
    _, after = act(s, 0, MOVE)
    if after["pending"] is None:
        return
    a = GAME.timeout_action(after, 0)
    assert a in GAME.legal_actions(after, 0)
    if card in ("sacred-barque", "divine-revelation"):
        assert None in a.values()
