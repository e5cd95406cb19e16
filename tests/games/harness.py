"""Checks every game must pass, shared by the per-game property tests.

``random_playout`` plays one game with uniformly random legal actions and asserts the engine
contract at every step; the game's own invariants are passed in as ``check``.
"""

from __future__ import annotations

import random
from typing import Callable

import orjson
import pytest

from service.engine import ALL, Game, IllegalAction, NotYourTurn, Rng, command, visible
from service.engine.fold import clone, fold
from service.engine.local import LocalGame


def assert_json_plain(value) -> None:
    assert orjson.loads(orjson.dumps(value)) == value


def random_playout(game, players, options, seed: bytes, *, pick_seed: int = 0,
                   check: Callable[[LocalGame], None] | None = None,
                   max_steps: int = 20_000) -> LocalGame:
    rnd = random.Random(pick_seed)
    g = LocalGame(game, players, options, seed)
    n = len(players)
    for _ in range(max_steps):
        state = g.state
        assert_json_plain(state)
        if check:
            check(g)
        if game.is_over(state):
            break
        awaiting = game.awaiting(state)
        assert awaiting, "a running game must await somebody"
        for seat in range(n):
            view = game.view(state, seat)
            assert_json_plain(view)
            if seat not in awaiting:
                with pytest.raises(NotYourTurn):
                    command(game, state, seat, {"type": "__probe__"}, None)
        for other in awaiting:  # what the runner asked the game's only_action
            legal = game.legal_actions(state, other)
            assert legal, "an awaited seat has a legal action"
            assert game.only_action(state, other) is None, \
                "forced moves must have been played by the engine"
            # a single legal action left to the seat: one only its hidden holdings make single
            assert len(legal) >= 2 or game.single_action(state, other) == legal[0]
        seat = rnd.choice(awaiting)
        actions = game.legal_actions(state, seat)
        for a in actions:
            assert_json_plain(a)
        action = rnd.choice(actions)
        # decide alone leaves the forced moves to the runner: there, a game's single_action
        # must answer what the engine's definition (from legal_actions) answers, and its
        # only_action that or nothing (a single choice the other seats cannot see is the seat's)
        _, decided = command(game, state, seat, action, Rng(g.seed, g.version + 1),
                             simulated=True)
        for other in [] if game.is_over(decided) else game.awaiting(decided):
            single = game.single_action(decided, other)
            assert single == Game.single_action(game, decided, other)
            assert game.only_action(decided, other) in (None, single)
        before = clone(state)
        events = g.act(seat, action)
        assert state == before, "command mutated its input state"
        # the state a command returns (decide's, then the forced moves') is its events
        # applied to the state before
        assert fold(game, clone(before), clone(events)) == g.state
    else:  # pragma: no cover
        raise AssertionError("game did not end")
    result = game.result(g.state)
    assert_json_plain(result)
    assert set(result) >= {"scores", "ranks", "winners", "details"}
    assert len(result["scores"]) == n and len(result["ranks"]) == n
    # Replaying the log from scratch gives the same state.
    replay = game.initial([{"name": p["name"], "bot": p.get("bot")} for p in players],
                          g.events[0]["data"]["options"])
    assert fold(game, replay, g.events[1:]) == g.state
    # After the end every event is public; spectators see the whole log.
    for ev in g.events[1:]:
        assert visible(game, ev, None, True) == ev
        assert visible(game, ev, ALL, False) == ev
    return g


def illegal(game, state, seat, action) -> IllegalAction:
    """The IllegalAction that ``action`` raises (fails the test when it is accepted)."""
    try:
        game.decide(clone(state), seat, action, None)
    except IllegalAction as exc:
        return exc
    raise AssertionError(f"{action} was accepted")
