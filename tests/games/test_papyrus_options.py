"""Papyrus: options (12.1), options.setup validation, client maps (12.6), the solo variant."""

from __future__ import annotations

import copy

import pytest

from service.engine import InvalidOptions
from service.engine.local import LocalGame
from service.games import GAMES
from service.games.papyrus import GAME
from service.games.papyrus.data import (BUILTIN_BOARD_DOC, GODS, SPELLING,
                                        canonical_events, canonical_glyphs, canonical_movement)

from tests.games.test_papyrus import _set_holder
from tests.games.test_papyrus_helpers import act, conservation, fresh, hand, holder, players


def bad(options, n=2, code=None):
    with pytest.raises(InvalidOptions) as info:
        GAME.normalize_options(options, players(n))
    if code:
        assert info.value.code == code, (info.value.code, info.value.details)
    return info.value


def test_registered():
    assert GAME.type_id == "papyrus"
    assert GAMES.get("papyrus", GAME) is GAME  # the lead lists it in service/games MODULES
    assert set(GAME.action_schemas) == {"draw_movement", "move", "exchange", "event_choice",
                                        "discard_excess", "form_god", "buy_glyph",
                                        "discard_glyph"}


def test_defaults():
    assert GAME.normalize_options({}, players(3)) == {
        "variant": "standard", "first_player": 0, "god_deck_size": 36,
        "board": "nile-rings-v1", "turn_limit": 2000}


def test_no_turn_limit_only_when_every_seat_is_human():
    bots = [{"name": "r", "bot": {"level": "random"}}, {"name": "Ann", "bot": None}]
    assert GAME.normalize_options({"turn_limit": 0}, players(2))["turn_limit"] == 0
    with pytest.raises(InvalidOptions) as info:
        GAME.normalize_options({"turn_limit": 0}, bots)
    assert info.value.details == {"option": "turn_limit", "reason": "bots_need_a_turn_limit",
                                  "min": 1}
    assert GAME.normalize_options({}, bots)["turn_limit"] == 2000


@pytest.mark.parametrize("options,n,code", [
    ({"variant": "coop"}, 2, "invalid_option"),
    ({"variant": ["solo"]}, 2, "invalid_option"),
    ({}, 1, "invalid_player_count"),
    ({"variant": "solo"}, 6, "invalid_player_count"),
    ({"first_player": 2}, 2, "invalid_option"),
    ({"first_player": True}, 2, "invalid_option"),
    ({"first_player": "0"}, 2, "invalid_option"),
    ({"god_deck_size": 5}, 2, "invalid_option"),
    ({"god_deck_size": 37}, 2, "invalid_option"),
    ({"god_deck_size": 14}, 5, "invalid_option"),
    ({"variant": "solo", "god_deck_size": 2}, 1, "invalid_option"),
    ({"turn_limit": -1}, 2, "invalid_option"),
    ({"turn_limit": 10**30}, 2, "invalid_option"),
    ({"turn_limit": 1.5}, 2, "invalid_option"),
    ({"colour": "red"}, 2, "unknown_option"),
    ({"board": "nile-rings-v2"}, 2, "invalid_board"),
    ({"setup": []}, 2, "invalid_setup"),
    ({"setup": {"deck": []}}, 2, "unknown_option"),
    ({"setup": {"god_deck": GODS[:35]}}, 2, "invalid_setup"),
    ({"setup": {"god_deck": GODS[:35] + GODS[:1]}}, 2, "invalid_setup"),
    ({"setup": {"god_deck": GODS[:35] + [None]}}, 2, "invalid_setup"),
    ({"setup": {"movement_deck": canonical_movement()[1:] + ["eye"]}}, 2, "invalid_setup"),
    ({"setup": {"event_deck": canonical_events()[:-1] + ["gold"]}}, 2, "invalid_setup"),
    ({"setup": {"bag": canonical_glyphs()[:-1]}}, 2, "invalid_setup"),
    ({"variant": "solo", "setup": {"movement_deck": ["light"] * 110}}, 1, "invalid_setup"),
    ({"clock": {"per_decision_ms": 1000}}, 2, "unknown_option"),  # the shell's, never the game's
])
def test_invalid_options(options, n, code):
    bad(options, n, code)


def test_solo_accepts_and_ignores_movement_and_event_decks():
    opts = GAME.normalize_options({"variant": "solo", "setup": {
        "movement_deck": canonical_movement(), "event_deck": canonical_events()}}, players(1))
    s = GAME.initial(players(1), opts)
    assert s["setup"] == "custom"


def test_god_deck_size_standard():
    s = fresh(2, god_deck_size=8, setup={"god_deck": list(GODS)})
    assert s["god_deck"] == ["osiris", "nephthys"]  # 6 dealt, 2 left
    assert len(s["gods_out"]) == 28
    conservation(s)
    view = GAME.view(s, 0)
    assert view["god_deck_count"] == 2 and "gods_out" not in str(view)


# ---------------------------------------------------------------------------------------------
# client maps


def small_board():
    gods = list(GODS)
    nodes = [{"id": "start", "name": "Start", "kind": "start"}]
    paths = []
    for i, g in enumerate(gods):
        nodes.append({"id": f"pyr-{g}", "kind": "pyramid", "god": g, "x": i, "y": 0})
        paths.append({"id": f"s{i}", "a": "start", "b": f"pyr-{g}", "squares": {"light": 1}})
    nodes += [{"id": "e1", "kind": "event"}, {"id": "e2", "kind": "event"}]
    paths += [{"id": "x1", "a": "start", "b": "e1", "squares": {"water": 1}},
              {"id": "x2", "a": "e1", "b": "e2", "squares": {"nature": 2, "darkness": 0}}]
    return {"id": "star", "nodes": nodes, "paths": paths}


def test_custom_board_accepted_and_normalised():
    opts = GAME.normalize_options({"board": small_board()}, players(2))
    b = opts["board"]
    assert b["colours"] == ["light", "darkness", "nature", "water"]
    assert b["paths"][-1]["squares"] == {"nature": 2}
    assert b["nodes"][0]["name"] == "Start"
    g = LocalGame(GAME, players(2), {"board": small_board()}, b"star")
    assert g.state["seats"][0]["pawn"] == "start"
    assert GAME.view(g.state, 0)["board"]["id"] == "star"


def test_board_without_event_nodes():
    doc = small_board()
    doc["nodes"] = doc["nodes"][:-2]
    doc["paths"] = doc["paths"][:-2]
    GAME.normalize_options({"board": doc}, players(2))


def _mutated(fn):
    doc = copy.deepcopy(small_board())
    fn(doc)
    return doc


@pytest.mark.parametrize("mutate,code,failed", [
    (lambda d: d.update(nodes="x"), "invalid_board", "type"),
    (lambda d: d.pop("id"), "invalid_board", "required"),
    (lambda d: d.update(extra=1), "unknown_option", None),
    (lambda d: d.update(colours=["light", "fire"]), "invalid_board", "enum"),
    (lambda d: d["nodes"].append({"id": "start", "kind": "event"}), "invalid_board",
     "duplicate_node"),
    (lambda d: d["nodes"].append({"id": "s2", "kind": "start"}), "invalid_board", "start_count"),
    (lambda d: d["nodes"][0].update(kind="event"), "invalid_board", "start_count"),
    (lambda d: d["nodes"].append({"id": "zz", "kind": "oasis"}), "invalid_board", "enum"),
    (lambda d: d["nodes"].append({"id": "zz", "kind": "pyramid", "god": "zeus"}),
     "invalid_board", "enum"),
    (lambda d: d["nodes"].append({"id": "zz", "kind": "pyramid"}), "invalid_board", "required"),
    (lambda d: d["nodes"].append({"id": "zz", "kind": "event", "god": "horus"}),
     "invalid_board", "not"),
    (lambda d: d["nodes"].append({"id": "zz", "kind": "pyramid", "god": "horus"}),
     "invalid_board", "duplicate_god"),
    (lambda d: d["nodes"].pop(1), "invalid_board", "god_missing"),
    (lambda d: d["paths"].append({"id": "q", "a": "start", "b": "nowhere",
                                  "squares": {"light": 1}}), "invalid_board", "unknown_node"),
    (lambda d: d["paths"].append({"id": "q", "a": "e1", "b": "e1",
                                  "squares": {"light": 1}}), "invalid_board", "self_loop"),
    (lambda d: d["paths"].append({"id": "q", "a": "e1", "b": "start",
                                  "squares": {"light": 1}}), "invalid_board", "duplicate_path"),
    (lambda d: d["paths"].append({"id": "s0", "a": "e2", "b": "start",
                                  "squares": {"light": 1}}), "invalid_board",
     "duplicate_path_id"),
    (lambda d: d["paths"][0].update(squares={}), "invalid_board", "empty_path"),
    (lambda d: d["paths"][0].update(squares={"light": 0}), "invalid_board", "empty_path"),
    (lambda d: d["paths"][0].update(squares={"gold": 1}), "unknown_option", None),
    (lambda d: d["paths"][0].update(squares={"light": -1}), "invalid_board", "minimum"),
    (lambda d: d["paths"][0].update(squares={"light": True}), "invalid_board", "type"),
    (lambda d: d["paths"][0].update(squares={"light": 9, "water": 9}), "invalid_board",
     "too_many_squares"),
    (lambda d: d.update(colours=["light", "water"]) or d["paths"][-1].update(
        squares={"nature": 1}), "invalid_board", "not_a_board_colour"),
    (lambda d: d["paths"].pop(0), "invalid_board", "god_unreachable"),
    (lambda d: d["paths"].pop(), "invalid_board", "not_connected"),
    (lambda d: d["nodes"].extend({"id": f"n{i}", "kind": "event"} for i in range(300)),
     "invalid_board", "maxItems"),
])
def test_invalid_boards(mutate, code, failed):
    details = bad({"board": _mutated(mutate)}, 2, code).details
    assert details["option"].startswith("board")
    if failed:
        assert failed in (details.get("reason"), *details.get("expected", {}))


def test_board_only_needs_the_gods_in_play_when_the_deck_is_fixed():
    doc = _mutated(lambda d: d["nodes"].pop(1) and d["paths"].pop(0))  # no amon-ra pyramid
    bad({"board": doc}, 2, "invalid_board")
    order = [g for g in GODS if g != "amon-ra"] + ["amon-ra"]
    GAME.normalize_options({"board": doc, "god_deck_size": 35, "setup": {"god_deck": order}},
                           players(2))
    assert bad({"board": doc, "god_deck_size": 36, "setup": {"god_deck": order}}, 2,
               "invalid_board").details["reason"] == "god_missing"


def test_builtin_board_document_is_valid_as_client_board():
    opts = GAME.normalize_options({"board": copy.deepcopy(BUILTIN_BOARD_DOC)}, players(2))
    assert opts["board"] == BUILTIN_BOARD_DOC


def test_barque_chains_to_another_event_on_a_custom_board():
    s = fresh(2, board=small_board())
    s["seats"][0]["pawn"] = "start"
    p = s["seats"][0]
    for k, v in p["movement"].items():
        s["movement_deck"] += [k] * v
    s["movement_deck"].remove("water")
    p["movement"] = hand(water=1)
    for card in ("scribes-gift", "sacred-barque"):
        s["event_deck"].remove(card)
        s["event_deck"].insert(0, card)
    conservation(s)
    _, after = act(s, 0, {"type": "move", "path": "x1", "cards": {"water": 1}})
    assert after["pending"]["kind"] == "sacred-barque"
    assert [a["path"] for a in GAME.legal_actions(after, 0)] == ["x1", "x2", None]
    events, done = act(after, 0, {"type": "event_choice", "path": "x2"})
    types = [e["type"] for e in events]
    assert types[:6] == ["DecisionResolved", "EventDiscarded", "PawnMoved", "EventDrawn",
                         "GlyphsDrawn", "EventDiscarded"]
    assert done["seats"][0]["pawn"] == "e2" and done["current"] == 1
    assert sum(done["seats"][0]["holder"].values()) == 11
    conservation(done)


# ---------------------------------------------------------------------------------------------
# solo


def test_solo_setup_and_view():
    g = LocalGame(GAME, players(1), {"variant": "solo", "god_deck_size": 9}, b"solo")
    s = g.state
    assert len(s["god_deck"]) == 6 and len(s["gods_out"]) == 27
    assert s["movement_deck"] == [] and s["event_deck"] == []
    view = GAME.view(s, 0)
    assert "board" not in view and "market" not in view and view["seats"][0]["paid"] >= 0
    # the seat is awaited only with a real choice
    assert len(GAME.legal_actions(s, 0)) >= 2
    conservation(s)


def test_solo_multi_seat_turns_and_final_round():
    order = ["horus", "bes", "isis", "mut", "nut", "shu"] + \
        [g for g in GODS if g not in ("horus", "bes", "isis", "mut", "nut", "shu")]
    s = fresh(2, variant="solo", god_deck_size=6, setup={"god_deck": order})
    assert s["god_deck"] == [] and s["seats"][1]["gods"] == ["mut", "nut", "shu"]
    need = holder()
    for g in ("horus", "bes", "isis"):
        for x, k in SPELLING[g].items():
            need[x] += k
    _set_holder(s, 0, need)
    _, s = act(s, 0, {"type": "form_god", "god": "horus"})
    assert s["current"] == 0  # forming does not end the turn
    _, s = act(s, 0, {"type": "form_god", "god": "bes"})
    events, s = act(s, 0, {"type": "form_god", "god": "isis"})
    types = [e["type"] for e in events]
    assert "GlyphBought" not in types  # the turn ended at once, no purchase
    assert s["final"] is not None and s["final"]["trigger"] == 0
    assert s["seats"][0]["paid"] == 0
    # seat 1 takes one more turn (its purchase may be forced), then the game ends
    while not GAME.is_over(s):
        seat = GAME.awaiting(s)[0]
        assert seat == 1
        a = next((x for x in GAME.legal_actions(s, 1) if x["type"] != "form_god"), None)
        _, s = act(s, 1, a)
    res = GAME.result(s)
    assert res["scores"][0] == 6 + 4 + 5 + 15
    assert res["winners"][0] == 0
    assert s["seats"][1]["paid"] == 1


def test_solo_ranks_by_margin():
    s = fresh(3, variant="solo")
    s["over"] = True
    s["end_reason"] = "final_round"
    for seat, (score, scarabs, paid) in enumerate(((10, 2, 5), (0, 0, 0), (14, 2, 30))):
        s["seats"][seat].update(score=score, scarabs=scarabs, paid=paid)
    res = GAME.result(s)
    assert res["scores"] == [20, 0, 24]
    assert res["ranks"] == [1, 2, 3]   # margins 15, 0, -6
    assert res["winners"] == [0]
    # the win is scored once the last God card is formed (10.1): a game cut short by its
    # turn limit ranks the same, and nobody beats the Pharaoh
    s["end_reason"] = "turn_limit"
    res = GAME.result(s)
    assert (res["ranks"], res["winners"]) == ([1, 2, 3], [])
    assert [d["beats_pharaoh"] for d in res["details"]["seats"]] == [False] * 3


def test_a_solo_turn_limit_of_one_is_no_win():
    """A one-seat solo game with ``turn_limit: 1`` dealt Horus and its spelling: the seat forms
    it (11 points) and buys once (1 paid), and the game ends with 35 God cards unformed: the
    seat has not beaten the Pharaoh."""
    from service.games.papyrus.data import GODS, canonical_glyphs

    spelling = ["flax", "lasso", "mouth", "cloth", "quail"]
    bag = canonical_glyphs()
    for glyph in spelling:
        bag.remove(glyph)
    setup = {"god_deck": ["horus"] + [g for g in GODS if g != "horus"], "bag": spelling + bag}
    g = LocalGame(GAME, players(1), {"variant": "solo", "turn_limit": 1, "setup": setup},
                  b"solo-limit-1")
    g.act(0, {"type": "form_god", "god": "horus"})
    if not GAME.is_over(g.state):
        g.act(0, {"type": "buy_glyph"})
    res = GAME.result(g.state)
    seat = res["details"]["seats"][0]
    assert res["details"]["end_reason"] == "turn_limit" and (seat["total"], seat["paid"]) == (11, 1)
    assert res["winners"] == [] and seat["beats_pharaoh"] is False


def test_solo_timeout_actions():
    g = LocalGame(GAME, players(1), {"variant": "solo"}, b"solo-timeout")
    s = g.state
    a = GAME.timeout_action(s, 0)
    assert a in GAME.legal_actions(s, 0)
