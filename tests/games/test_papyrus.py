"""Papyrus: the worked examples of rules section 13 and the core rules (movement, payment,
conquest, exchange, events, capacity, end of game, scoring)."""

from __future__ import annotations

import pytest

from service.engine import IllegalAction, NotYourTurn
from service.games.papyrus import GAME
from service.games.papyrus.data import GOD, SPELLING, BUILTIN_BOARD

from tests.games.harness import illegal
from tests.games.test_papyrus_helpers import act, conservation, fresh, hand, holder


# ---------------------------------------------------------------------------------------------
# data (example 1 and the tables)


def test_example_1_spellings_and_values():
    assert SPELLING["horus"] == {"flax": 1, "lasso": 1, "mouth": 1, "cloth": 1, "quail": 1}
    assert GOD["horus"]["value"] == 6
    assert SPELLING["amon-ra"] == {"vulture": 2, "owl": 1, "ripple": 1, "lasso": 1, "mouth": 1}
    assert GOD["amon-ra"]["value"] == 7
    assert SPELLING["imsety"] == {"reed": 3, "owl": 1, "cloth": 1, "bread": 1}
    assert GOD["imsety"]["value"] == 7
    assert SPELLING["qebehsenuef"] == {"foot": 1, "basket": 1, "reed": 4, "viper": 1, "flax": 1,
                                       "ripple": 1, "cloth": 1, "quail": 1}
    assert GOD["qebehsenuef"]["value"] == 12
    # worth at the end incl. its scarab
    assert [GOD[g]["value"] + 5 for g in ("horus", "amon-ra", "imsety", "qebehsenuef")] == \
        [11, 12, 12, 17]
    # a 10-tile holder can never hold Qebehsenuef's 11
    assert sum(SPELLING["qebehsenuef"].values()) == 11


def test_board_shape():
    assert len(BUILTIN_BOARD.nodes) == 45 and len(BUILTIN_BOARD.paths) == 96
    assert BUILTIN_BOARD.paths["p13"]["squares"] == {"light": 2, "water": 4}
    assert BUILTIN_BOARD.start == "golden-pyramid"


# ---------------------------------------------------------------------------------------------
# example 2: paying for a path


def _on(state, seat, space, **cards):
    p = state["seats"][seat]
    p["pawn"] = space
    p["movement"] = hand(**cards)


def test_example_2_paying_p13():
    s = fresh(2)
    _on(s, 0, "horus", water=3, light=1, eye=2, darkness=1, nature=1)
    moves = [a for a in GAME.legal_actions(s, 0) if a["type"] == "move" and a["path"] == "p13"]
    assert moves == [{"type": "move", "path": "p13",
                      "cards": {"light": 1, "water": 3, "eye": 2}}]
    assert illegal(GAME, s, 0, {"type": "move", "path": "p13", "cards": {
        "water": 3, "light": 1, "eye": 1, "nature": 1}}).code == "colour_not_on_path"
    assert illegal(GAME, s, 0, {"type": "move", "path": "p13", "cards": {
        "water": 3, "light": 1, "eye": 1}}).code == "wrong_card_count"
    events, after = act(s, 0, moves[0])
    p = after["seats"][0]
    assert p["pawn"] == "anubis"
    assert p["movement"] == hand(darkness=1, nature=1)
    assert after["movement_discard"]["water"] == 3 and after["movement_discard"]["eye"] == 2


def test_example_2_paying_p05():
    s = fresh(2)
    _on(s, 0, "golden-pyramid", water=2, eye=1)
    moves = [a["cards"] for a in GAME.legal_actions(s, 0)
             if a["type"] == "move" and a["path"] == "p05"]
    assert moves == [{"water": 1, "eye": 1}]
    assert illegal(GAME, s, 0, {"type": "move", "path": "p05",
                                "cards": {"water": 2}}).code == "too_many_of_colour"
    # an Eye may be played even when the colour is held
    _on(s, 0, "golden-pyramid", water=2, nature=1, eye=2)
    moves = [a["cards"] for a in GAME.legal_actions(s, 0)
             if a["type"] == "move" and a["path"] == "p05"]
    assert moves == [{"nature": 1, "water": 1}, {"nature": 1, "eye": 1},
                     {"water": 1, "eye": 1}, {"eye": 2}]


def test_move_errors():
    s = fresh(2)
    _on(s, 0, "golden-pyramid", water=2, eye=1)
    assert illegal(GAME, s, 0, {"type": "move", "path": "p13",
                                "cards": {"water": 2}}).code == "path_not_adjacent"
    assert illegal(GAME, s, 0, {"type": "move", "path": "p99",
                                "cards": {"water": 2}}).code == "unknown_path"
    assert illegal(GAME, s, 0, {"type": "move", "path": "p05",
                                "cards": {"nature": 1, "water": 1}}).code == "card_not_in_hand"
    assert illegal(GAME, s, 0, {"type": "move", "path": "p05",
                                "cards": {"eye": 2}}).code == "card_not_in_hand"
    # explicit zero counts are accepted
    events, after = act(s, 0, {"type": "move", "path": "p05",
                               "cards": {"water": 1, "eye": 1, "light": 0}})
    assert after["seats"][0]["pawn"] == "horus"


# ---------------------------------------------------------------------------------------------
# example 3: arrival and conquest


def example3_state():
    s = fresh(2)
    p = s["seats"][0]
    s["bag"] = ["ripple", "reed", "basket", "bread", "owl"] + s["bag"]
    # keep the tile count honest: take the five we added out of the bag's tail
    for g in ["ripple", "reed", "basket", "bread", "owl"]:
        idx = len(s["bag"]) - 1 - s["bag"][::-1].index(g)
        del s["bag"][idx]
    old_holder = p["holder"]
    for g, k in old_holder.items():  # return the dealt holder to the bag's end
        s["bag"] += [g] * k
    new = holder("flax", "lasso", "mouth", "quail", "cloth", "reed", "reed", "bread", "vulture",
                 "owl")
    for g, k in new.items():  # and take the new holder out of the bag's end
        for _ in range(k):
            idx = len(s["bag"]) - 1 - s["bag"][::-1].index(g)
            del s["bag"][idx]
    p["holder"] = new
    # God cards: Horus, Bes, Seth; top of the God deck: Khnum
    for g in p["gods"]:
        s["god_deck"].append(g)
    for g in ("horus", "bes", "seth", "khnum"):
        for q in s["seats"][1:]:
            if g in q["gods"]:
                q["gods"].remove(g)
                q["gods"].append(next(x for x in s["god_deck"]
                                      if x not in ("horus", "bes", "seth", "khnum")))
                s["god_deck"].remove(q["gods"][-1])
        if g in s["god_deck"]:
            s["god_deck"].remove(g)
        if g in s["gods_out"]:
            s["gods_out"].remove(g)
    p["gods"] = ["horus", "bes", "seth"]
    s["god_deck"].insert(0, "khnum")
    # movement: nature 1, eye 1, darkness 2 (the rest back to the deck)
    for k, v in p["movement"].items():
        s["movement_deck"] += [k] * v
    for k, v in (("nature", 1), ("eye", 1), ("darkness", 2)):
        for _ in range(v):
            s["movement_deck"].remove(k)
    p["movement"] = hand(nature=1, eye=1, darkness=2)
    conservation(s)
    return s


def test_example_3_arrival_and_conquest():
    s = example3_state()
    events, after = act(s, 0, {"type": "move", "path": "p05", "cards": {"nature": 1, "eye": 1}})
    p = after["seats"][0]
    assert p["pawn"] == "horus"
    assert after["owners"] == {"horus": 0}
    assert p["score"] == 6 and p["scarabs"] == 1
    assert p["gods"] == ["bes", "seth", "khnum"]
    assert p["holder"] == holder(reed=3, bread=2, owl=2, vulture=1, ripple=1, basket=1)
    assert p["movement"] == hand(darkness=2)
    assert after["movement_discard"]["nature"] == 1 and after["movement_discard"]["eye"] == 1
    assert after["glyph_discard"] == holder("flax", "lasso", "mouth", "quail", "cloth")
    assert after["current"] == 1
    types = [e["type"] for e in events]
    assert types == ["PawnMoved", "GodConquered", "GodDrawn", "GlyphsDrawn", "TurnEnded",
                     "TurnStarted"]
    conservation(after)


def test_example_3_incomplete_spelling_nothing_happens():
    s = example3_state()
    p = s["seats"][0]
    p["holder"]["quail"] -= 1
    s["bag"].append("quail")
    events, after = act(s, 0, {"type": "move", "path": "p05", "cards": {"nature": 1, "eye": 1}})
    assert after["seats"][0]["pawn"] == "horus" and after["owners"] == {}
    assert after["seats"][0]["score"] == 0
    # completing the spelling later does not conquer: the pawn must leave and arrive again
    after["seats"][0]["holder"]["quail"] += 1
    after["bag"].remove("quail")
    after["current"] = 0
    after["seats"][0]["movement"] = hand(nature=1, water=2)
    after["movement_deck"] = after["movement_deck"][3:]  # keep the count: remove any 3
    _, after2 = act(after, 0, {"type": "exchange", "pay": "reed", "take": "bag"})
    assert after2["owners"] == {}


# ---------------------------------------------------------------------------------------------
# example 4: exchange, event and holder capacity


def _set_holder(s, seat, new):
    """Give ``seat`` the holder ``new``, keeping the tile count (via the bag's tail)."""
    p = s["seats"][seat]
    for g, k in p["holder"].items():
        s["bag"] += [g] * k
    for g, k in new.items():
        for _ in range(k):
            idx = len(s["bag"]) - 1 - s["bag"][::-1].index(g)
            del s["bag"][idx]
    p["holder"] = dict(new)


def _bag_front(s, glyphs):
    for g in glyphs:
        idx = len(s["bag"]) - 1 - s["bag"][::-1].index(g)
        del s["bag"][idx]
    s["bag"][:0] = glyphs


def _market(s, glyphs):
    for g in glyphs:
        idx = len(s["bag"]) - 1 - s["bag"][::-1].index(g)
        del s["bag"][idx]
        s["market"][g] += 1


def _set_movement(s, seat, **cards):
    p = s["seats"][seat]
    for k, v in p["movement"].items():
        s["movement_deck"] += [k] * v
    for k, v in cards.items():
        for _ in range(v):
            s["movement_deck"].remove(k)
    p["movement"] = hand(**cards)


def test_example_4a_exchange():
    s = fresh(2)
    s["current"] = 1
    _market(s, ["foot", "stool"])
    _set_holder(s, 1, holder(reed=4, cloth=1, bread=2, vulture=1, owl=1, jar_stand=1))
    conservation(s)
    assert illegal(GAME, s, 1, {"type": "exchange", "pay": "jar-stand",
                                "take": "jar-stand"}).code == "glyph_not_in_market"
    _, after = act(s, 1, {"type": "exchange", "pay": "jar-stand", "take": "stool"})
    assert after["market"] == holder("foot", "jar-stand")
    assert after["seats"][1]["holder"] == holder(reed=4, cloth=1, bread=2, vulture=1, owl=1,
                                                 stool=1)
    conservation(after)


def test_exchange_rules():
    s = fresh(2)
    _market(s, ["foot"])
    legal = [a for a in GAME.legal_actions(s, 0) if a["type"] == "exchange"]
    held = [g for g, k in s["seats"][0]["holder"].items() if k]
    assert len(legal) == 2 * len(held)
    assert illegal(GAME, s, 0, {"type": "exchange", "pay": "jar-stand" if not s["seats"][0][
        "holder"]["jar-stand"] else "cobra", "take": "bag"}).code in ("glyph_not_in_holder",)
    # an empty bag with a non-empty glyph discard pile is still a source (refill first)
    s["glyph_discard"] = holder(*s["bag"])
    s["bag"] = []
    _, after = act(s, 0, {"type": "exchange", "pay": held[0], "take": "bag"})
    assert [e["type"] for e in _] == ["GlyphsToMarket", "BagRefilled", "GlyphsDrawn",
                                      "TurnEnded", "TurnStarted"]
    assert len(after["bag"]) == 300 - 20 - 1 - 1  # holders, market foot, the drawn tile
    conservation(after)
    # no bag, no discard, empty market: no exchange at all
    s["glyph_discard"] = holder()
    s["market"] = holder()
    assert illegal(GAME, s, 0, {"type": "exchange", "pay": held[0],
                                "take": "bag"}).code == "no_glyph_source"
    assert not [a for a in GAME.legal_actions(s, 0) if a["type"] == "exchange"]


def example4b_state():
    s = fresh(3)
    s["current"] = 2
    s["seats"][2]["pawn"] = "amon-ra"
    _set_movement(s, 2, nature=1, water=2)
    _set_holder(s, 2, holder(reed=5, bread=3, flax=2, cloth=2, quail=2, vulture=2, ripple=1,
                             owl=1, basket=1, foot=1))
    _bag_front(s, ["owl"])
    s["event_deck"].remove("scribes-gift")
    s["event_deck"].insert(0, "scribes-gift")
    conservation(s)
    return s


def test_example_4b_event_and_capacity():
    s = example4b_state()
    assert sum(s["seats"][2]["holder"].values()) == 20
    events, after = act(s, 2, {"type": "move", "path": "p18", "cards": {"nature": 1, "water": 1}})
    p = after["seats"][2]
    assert p["pawn"] == "ev-marshes"
    assert p["movement"] == hand(water=1)
    assert sum(p["holder"].values()) == 21 and p["holder"]["owl"] == 2
    assert after["pending"] == {"seat": 2, "kind": "capacity", "count": 1, "card": None}
    assert after["event_discard"]["scribes-gift"] == 1
    assert GAME.awaiting(after) == [2]
    assert illegal(GAME, after, 2, {"type": "draw_movement"}).code == "capacity_exceeded"
    refused = illegal(GAME, after, 2, {"type": "discard_excess", "glyphs": ["reed", "reed"]})
    assert refused.code == "wrong_glyph_count"
    assert refused.details["fields"] == {"glyphs": ["wrong number of glyphs"]}
    assert illegal(GAME, after, 2, {"type": "discard_excess",
                                    "glyphs": ["stool"]}).code == "glyph_not_in_holder"
    legal = GAME.legal_actions(after, 2)
    assert {"type": "discard_excess", "glyphs": ["reed"]} in legal
    assert len(legal) == 10  # one per glyph type held
    _, done = act(after, 2, {"type": "discard_excess", "glyphs": ["reed"]})
    assert done["seats"][2]["holder"] == holder(reed=4, bread=3, flax=2, cloth=2, quail=2,
                                                vulture=2, owl=2, ripple=1, basket=1, foot=1)
    assert done["market"]["reed"] == 1
    assert done["current"] == 0 and done["pending"] is None
    conservation(done)


# ---------------------------------------------------------------------------------------------
# example 5: end of the game, final scoring and tie-breaks


def _give_conquests(s, seat, gods):
    p = s["seats"][seat]
    for g in gods:
        p["conquered"].append(g)
        p["score"] += GOD[g]["value"]
        p["scarabs"] += 1
        s["owners"][g] = seat


def example5_state(blue_other="amon-ra"):
    s = fresh(4, god_deck_size=36)
    # every god card outside the hands is "conquered" or out of the game; hands emptied
    for p in s["seats"]:
        p["gods"] = []
    s["god_deck"] = []
    _give_conquests(s, 0, ["hapi", "imsety", "osiris", "hathor", "bes"])
    _give_conquests(s, 1, ["duamutef", blue_other, "anubis"])
    _give_conquests(s, 2, ["nephthys", "sekhmet", "taweret", "thoth", "nut"])
    _give_conquests(s, 3, ["khnum", "sobek", "min"])
    used = {g for p in s["seats"] for g in p["conquered"]} | {"qebehsenuef"}
    s["gods_out"] = [g for g in GOD if g not in used]
    s["seats"][1]["gods"] = ["qebehsenuef"]
    s["seats"][1]["pawn"] = "serket"
    _set_movement(s, 1, light=2, darkness=2)
    # Blue's 11 tiles: 10 in the holder is the cap of setup; add one from the bag (an event)
    q = holder(**SPELLING["qebehsenuef"])
    _set_holder(s, 1, q)
    s["seats"][3]["skip"] = True  # Yellow drew Lost in the Desert earlier
    s["current"] = 1
    conservation(s)
    return s


def test_example_5_final_round_and_tiebreaks():
    s = example5_state()
    events, after = act(s, 1, {"type": "move", "path": "p72",
                               "cards": {"light": 2, "darkness": 2}})
    assert after["owners"]["qebehsenuef"] == 1
    assert after["final"] == {"trigger": 1, "remaining": [3, 0]}
    assert after["current"] == 2
    assert [e["type"] for e in events][-3:] == ["FinalRoundStarted", "TurnEnded", "TurnStarted"]
    # Green's final turn; then Yellow's is skipped; then Red's final turn
    _, after = act(after, 2, {"type": "draw_movement"})
    assert after["current"] == 0 and after["seats"][3]["skip"] is False
    with pytest.raises(NotYourTurn):
        act(after, 1, {"type": "draw_movement"})
    _, after = act(after, 0, {"type": "draw_movement"})
    assert GAME.is_over(after) and GAME.awaiting(after) == []
    res = GAME.result(after)
    assert res["scores"] == [60, 60, 60, 31]
    assert res["ranks"] == [2, 1, 3, 4]
    assert res["winners"] == [1]
    d = res["details"]["seats"]
    assert [x["track"] for x in d] == [30, 35, 35, 16]
    assert [x["sons_bonus"] for x in d] == [5, 5, 0, 0]
    assert res["details"]["end_reason"] == "final_round"


def test_example_5_shared_first_place_without_amon_ra():
    s = example5_state(blue_other="khepri")
    _, after = act(s, 1, {"type": "move", "path": "p72", "cards": {"light": 2, "darkness": 2}})
    _, after = act(after, 2, {"type": "draw_movement"})
    _, after = act(after, 0, {"type": "draw_movement"})
    res = GAME.result(after)
    assert res["scores"] == [60, 60, 60, 31]
    assert res["ranks"] == [1, 1, 3, 4]
    assert res["winners"] == [0, 1]


def test_sons_bonus_table():
    s = fresh(2)
    s["over"] = True
    s["end_reason"] = "turn_limit"
    for sons, bonus in ((0, 0), (1, 0), (2, 5), (3, 8), (4, 10)):
        for p in s["seats"]:
            p["conquered"], p["score"], p["scarabs"] = [], 0, 0
        s["owners"] = {}
        _give_conquests(s, 0, ["hapi", "duamutef", "imsety", "qebehsenuef"][:sons])
        d = GAME.result(s)["details"]["seats"][0]
        assert d["sons_bonus"] == bonus


# ---------------------------------------------------------------------------------------------
# example 6: solo result


def test_example_6_solo_result():
    order = ["horus", "bes", "isis", "thoth", "osiris", "nut"]
    rest = [g for g in GOD if g not in order]
    s = fresh(1, variant="solo", god_deck_size=6, setup={"god_deck": order + rest})
    p = s["seats"][0]
    assert p["gods"] == ["horus", "bes", "isis"] and s["god_deck"] == ["thoth", "osiris", "nut"]
    for round_ in (["horus", "bes", "isis"], ["thoth", "osiris", "nut"]):
        need = holder()
        for g in round_:
            for x, k in SPELLING[g].items():
                need[x] += k
        _set_holder(s, 0, need)
        for g in round_:
            assert {"type": "form_god", "god": g} in GAME.legal_actions(s, 0)
            _, s = act(s, 0, {"type": "form_god", "god": g})
    assert GAME.is_over(s)
    for paid, wins in ((61, True), (62, False)):
        s["seats"][0]["paid"] = paid
        res = GAME.result(s)
        assert res["scores"] == [62]
        assert res["details"]["seats"][0]["sons_bonus"] == 0
        assert res["winners"] == ([0] if wins else [])
        assert res["ranks"] == [1]


def test_example_6_solo_capacity():
    s = fresh(1, variant="solo")
    p = s["seats"][0]
    full = holder(reed=5, bread=5, flax=5, cloth=5)
    _set_holder(s, 0, full)
    p["gods"] = ["qebehsenuef", "duamutef", "nephthys"]  # nothing formable from that holder
    paid = p["paid"]
    assert GAME.legal_actions(s, 0) == [{"type": "buy_glyph"}]
    events, after = act(s, 0, {"type": "buy_glyph"})
    q = after["seats"][0]
    assert q["paid"] == paid + 1
    assert sum(q["holder"].values()) == 21
    assert after["pending"]["kind"] == "capacity"
    assert illegal(GAME, after, 0, {"type": "buy_glyph"}).code == "capacity_exceeded"
    g = next(x for x, k in q["holder"].items() if k)
    _, done = act(after, 0, {"type": "discard_glyph", "glyph": g})
    assert sum(done["seats"][0]["holder"].values()) == 20 or GAME.awaiting(done)
    assert done["glyph_discard"][g] >= 1


# ---------------------------------------------------------------------------------------------
# turn structure, skips, turn limit


def test_draw_movement_and_turn_passes():
    s = fresh(3, first_player=2)
    assert GAME.awaiting(s) == [2]
    _, after = act(s, 2, {"type": "draw_movement"})
    assert sum(after["seats"][2]["movement"].values()) == 6
    assert after["current"] == 0 and after["turns"] == 1


def test_movement_reshuffle_from_discard():
    s = fresh(2)
    s["movement_discard"] = {k: s["movement_deck"].count(k) for k in
                             ("light", "darkness", "nature", "water", "eye")}
    s["movement_deck"] = []
    events, after = act(s, 0, {"type": "draw_movement"})
    assert [e["type"] for e in events][:2] == ["MovementReshuffled", "MovementDrawn"]
    assert len(after["movement_deck"]) == 110 - 8 - 2
    conservation(after)
    # both empty: the draw yields nothing, the turn still passes
    s["movement_discard"] = {k: 0 for k in s["movement_discard"]}
    events, after = act(s, 0, {"type": "draw_movement"})
    assert [e["type"] for e in events] == ["TurnEnded", "TurnStarted"]
    assert sum(after["seats"][0]["movement"].values()) == 4


def test_turn_limit_ends_the_game():
    s = fresh(2, turn_limit=3)
    for seat in (0, 1, 0):
        _, s = act(s, seat, {"type": "draw_movement"})
    assert GAME.is_over(s) and s["end_reason"] == "turn_limit"
    assert GAME.result(s)["ranks"] == [1, 1]


def test_skip_counts_as_turn_and_for_turn_limit():
    s = fresh(3, turn_limit=3)
    s["seats"][1]["skip"] = True
    _, s = act(s, 0, {"type": "draw_movement"})
    assert s["current"] == 2 and s["turns"] == 2 and not s["seats"][1]["skip"]
    _, s = act(s, 2, {"type": "draw_movement"})
    assert GAME.is_over(s)


def test_events_at_setup_are_deterministic():
    a, b = fresh(3), fresh(3)
    assert a == b
    conservation(a)
    assert all(sum(p["holder"].values()) == 10 and len(p["gods"]) == 3
               and sum(p["movement"].values()) == 4 for p in a["seats"])


def test_setup_orders_deal_from_the_top():
    from tests.games.test_papyrus_helpers import canonical_glyphs, canonical_movement
    from service.games.papyrus.data import GODS, canonical_events
    s = fresh(2, setup={"movement_deck": canonical_movement(), "god_deck": list(GODS),
                        "event_deck": canonical_events(), "bag": canonical_glyphs()})
    assert s["seats"][0]["gods"] == ["amon-ra", "hathor", "sekhmet"]
    assert s["seats"][1]["gods"] == ["nekhbet", "horus", "anubis"]
    assert s["seats"][0]["movement"] == hand(light=4)
    assert s["seats"][0]["holder"] == holder(vulture=10)
    assert s["seats"][1]["holder"] == holder(vulture=10)
    assert s["god_deck"][0] == "osiris" and s["bag"][0] == "foot"
    assert s["event_deck"][0] == "gift-of-the-nile"


def test_first_player_option_and_not_your_turn():
    s = fresh(2, first_player=1)
    with pytest.raises(NotYourTurn):
        act(s, 0, {"type": "draw_movement"})
    with pytest.raises(IllegalAction):
        GAME.decide(s, 0, {"type": "draw_movement"}, None)


def test_turn_with_only_draw_movement_is_forced():
    s = fresh(2)
    q = s["seats"][1]
    for g, k in q["holder"].items():
        s["glyph_discard"][g] += k
    q["holder"] = holder()
    for k, v in q["movement"].items():
        s["movement_discard"][k] += v
    q["movement"] = hand()
    conservation(s)
    events, after = act(s, 0, {"type": "draw_movement"})
    forced = [e for e in events if e.get("forced")]
    assert forced and forced[0]["type"] == "MovementDrawn" and forced[0]["seat"] == 1
    assert after["current"] == 0 and sum(after["seats"][1]["movement"].values()) == 2
    conservation(after)


def test_view_scores_include_the_sons_bonus():
    s = fresh(2)
    _give_conquests(s, 1, ["hapi", "imsety"])
    v = GAME.view(s, None)
    assert v["scores"] == [0, 5 + 7 + 10 + 5]
    assert v["seats"][1]["sons_of_horus"] == 2


def test_documented_rng_sequence_at_setup():
    from service.engine import Rng
    from service.games.papyrus.data import (GODS, canonical_events, canonical_glyphs,
                                            canonical_movement)
    from tests.games.test_papyrus_helpers import SEED
    rng = Rng(SEED, 1)
    movement = rng.shuffled(canonical_movement())
    gods = rng.shuffled(list(GODS))
    events = rng.shuffled(canonical_events())
    bag = rng.shuffled(canonical_glyphs())
    s = fresh(3, god_deck_size=20)
    assert s["seats"][0]["gods"] == gods[:3] and s["seats"][2]["gods"] == gods[6:9]
    assert s["god_deck"] == gods[9:20] and s["gods_out"] == gods[20:]
    assert s["movement_deck"] == movement[12:] and s["event_deck"] == events
    assert s["bag"] == bag[30:]
    # solo: God deck, then bag
    rng = Rng(SEED, 1)
    gods = rng.shuffled(list(GODS))
    bag = rng.shuffled(canonical_glyphs())
    s = fresh(1, variant="solo")
    assert s["seats"][0]["gods"] == gods[:3] and s["bag"] == bag[10:]
    # a setup order skips its shuffle only
    rng = Rng(SEED, 1)
    movement = rng.shuffled(canonical_movement())
    events = rng.shuffled(canonical_events())
    s = fresh(2, setup={"god_deck": list(GODS), "bag": canonical_glyphs()})
    assert s["movement_deck"] == movement[8:] and s["event_deck"] == events


def test_reshuffle_starts_from_the_canonical_listing():
    from service.engine import Rng
    from service.games.papyrus.data import canonical_movement
    s = fresh(2)
    s["movement_discard"] = {k: s["movement_deck"].count(k) for k in
                             ("light", "darkness", "nature", "water", "eye")}
    pile = dict(s["movement_discard"])
    s["movement_deck"] = []
    events, _ = act(s, 0, {"type": "draw_movement"}, version=42)
    from tests.games.test_papyrus_helpers import SEED
    assert events[0]["data"]["deck"] == Rng(SEED, 42).shuffled(canonical_movement(pile))


def test_timeout_actions_standard():
    s = fresh(2)
    assert GAME.timeout_action(s, 0) == {"type": "draw_movement"}
