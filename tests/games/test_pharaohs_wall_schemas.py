"""Pharaoh's Wall's declared schemas (service/games/pharaohs_wall/schemas.py): every event type
is served and matches them, and so does the state at every version (the states inside a
command that ``/states/{version}`` serves included), in a curse game the bots' rollout policy
plays (a curse found: a victim gives a sarcophagus, which random play never reaches) and a
random base game (a scarab skipped); and they refuse what the server never serves."""

from __future__ import annotations

from jsonschema import Draft202012Validator

from service.engine import ALL, visible
from service.engine.local import LocalGame
from service.games.pharaohs_wall import bots
from service.games.pharaohs_wall.rules import GAME
from service.games.pharaohs_wall.schemas import EVENTS, STATE
from tests.games.schema_walk import check_history, walk


def uniform(game, state, seat, legal, rnd):
    return rnd.choice(legal)


def test_every_event_and_every_version_is_served_as_declared():
    served = set()
    for n, options, seed, policy in ((3, {"curse": True, "sphinx": True}, 2, bots.rollout),
                                      (4, {}, 3, uniform)):
        g, types = walk(GAME, n, options, seed, policy)
        check_history(GAME, g, [*range(n), None, ALL])
        served |= set(types)
    assert set(EVENTS) <= served


def test_the_schemas_refuse_what_is_never_served():
    g = LocalGame(GAME, [{"name": "a", "bot": None}, {"name": "b", "bot": None}],
                  {"curse": True}, b"strict")
    state = Draft202012Validator(STATE)
    mine = GAME.view(g.state, 0)
    assert state.is_valid(mine) and state.is_valid(GAME.view(g.state, None))
    assert not state.is_valid({**mine, "score": 3}), "an unknown state field"
    assert not state.is_valid({**mine, "hands": [["H-LION-1"], None]}), "an unknown card"
    assert not state.is_valid({**mine, "pile_sizes": {"draw": 29}}), "the base game's pile"
    assert not state.is_valid({k: v for k, v in mine.items() if k != "main_top_is_curse"}), \
        "a curse game without main_top_is_curse"
    assert not state.is_valid({**mine, "result": None}), "a result while the game runs"
    setup = next(ev for ev in g.events if ev["type"] == "GameSetUp")
    event = Draft202012Validator(EVENTS["GameSetUp"])
    theirs = visible(GAME, setup, 1, False)["data"]
    assert event.is_valid(setup["data"]) and event.is_valid(theirs)
    assert not event.is_valid({**theirs, "stacks": setup["data"]["stacks"]}), \
        "sarcophagus ids in the redacted setup"
    assert not event.is_valid({**theirs, "pharaohs": ["P-CAMEL", "P-SPHINX"]}), "a bad pharaoh"
