"""Papyrus's declared schemas (service/games/papyrus/schemas.py): every event type is served
and matches them in games the bots' rollout policy plays to the end (conquests, reshuffles,
the final round, a resignation: what random play never reaches), and they refuse what the
server never serves."""

from __future__ import annotations

from jsonschema import Draft202012Validator

from service.engine import ALL, visible
from service.engine.local import LocalGame
from service.games.papyrus import bots
from service.games.papyrus.data import COLOURS, GODS
from service.games.papyrus.rules import GAME
from service.games.papyrus.schemas import EVENTS, STATE
from tests.games.schema_walk import check_history, walk

#: a client map where every move lands on an Event space or a pyramid: the 40 Event cards run
#: out and are reshuffled within a short game
HUB_BOARD = {
    "id": "hub",
    "nodes": [{"id": "start", "kind": "start"}, {"id": "e1", "kind": "event"},
              {"id": "e2", "kind": "event"}]
    + [{"id": g, "kind": "pyramid", "god": g} for g in GODS],
    "paths": [{"id": "start-e1", "a": "start", "b": "e1", "squares": {"light": 1}},
              {"id": "e1-e2", "a": "e1", "b": "e2", "squares": {"water": 1}}]
    + [{"id": f"to-{g}", "a": ("e1", "e2")[i % 2], "b": g,
        "squares": {COLOURS[i % len(COLOURS)]: 1}} for i, g in enumerate(GODS)],
}
SOLO_EVENTS = {"GodFormed", "GlyphBought", "GlyphsDiscarded", "BagRefilled"}


def test_a_standard_game_serves_every_standard_event_as_declared():
    """3 seats on the hub map, seat 0 resigns at step 60: every event type of the standard
    game, the redacted forms included, and the states at every phase change match."""
    # seed 3: a walk that also runs the movement deck out (MovementReshuffled); not every one
    # does, and which ones do changes with the rollout policy
    g, types = walk(GAME, 3, {"board": HUB_BOARD}, 3, bots.rollout, resign_at={60: 0})
    assert set(EVENTS) - SOLO_EVENTS <= set(types)
    assert GAME.result(g.state)["details"]["end_reason"] == "final_round"


def test_a_solo_game_serves_every_solo_event_as_declared():
    """The solo variant's 2-seat form, seat 0 resigning at step 30: formed gods, purchases,
    capacity discards, a bag refill, the final round."""
    g, types = walk(GAME, 2, {"variant": "solo"}, 1, bots.rollout, resign_at={30: 0})
    assert SOLO_EVENTS | {"PlayerResigned", "FinalRoundStarted"} <= set(types)
    assert g.state["over"]


def test_every_version_is_served_as_declared():
    """``/states/{version}`` serves the state between two events of a command too (before the
    setup, between a conquest and its draws, ...): every version of a short standard game and
    a short solo game matches, as every viewer sees it."""
    for options, policy in (({"turn_limit": 60}, bots.rollout),
                            ({"variant": "solo", "turn_limit": 40}, bots.rollout)):
        g, types = walk(GAME, 2, options, 1, policy)
        check_history(GAME, g, [0, 1, None, ALL])
        assert types["GodConquered"] + types["GodFormed"], "the games conquer"


def test_the_schemas_refuse_what_is_never_served():
    g = LocalGame(GAME, [{"name": "a", "bot": None}, {"name": "b", "bot": None}], {}, b"strict")
    state = Draft202012Validator(STATE)
    mine, theirs = GAME.view(g.state, 0), GAME.view(g.state, 1)
    assert state.is_valid(mine) and state.is_valid(theirs)
    assert not state.is_valid({**mine, "rubies": 3}), "an unknown state field"
    bad = {**mine, "seats": [dict(mine["seats"][0]), mine["seats"][1]]}
    bad["seats"][0]["holder"] = {**mine["seats"][0]["holder"], "ankh": 1}
    assert not state.is_valid(bad), "a glyph code that is not in the game"
    assert not state.is_valid({**mine, "phase": "setup"}), "a phase that does not exist"
    del bad["board"]
    bad["seats"][0]["holder"] = mine["seats"][0]["holder"]
    assert not state.is_valid(bad), "a standard game without its board"
    assert not state.is_valid({**mine, "result": None}), "a result while the game runs"
    dealt = next(ev for ev in g.events if ev["type"] == "HandDealt" and ev["seat"] == 0)
    hand = Draft202012Validator(EVENTS["HandDealt"])
    assert hand.is_valid(dealt["data"]) and hand.is_valid(visible(GAME, dealt, 1, False)["data"])
    assert not hand.is_valid({**dealt["data"], "gods": ["zeus", *GODS[:2]]}), "an unknown god"
    assert not hand.is_valid({**dealt["data"], "gods": -1}), "a negative count"
    assert visible(GAME, dealt, ALL, False)["data"]["gods"] == dealt["data"]["gods"]
