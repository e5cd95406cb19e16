"""A game played with a chosen policy (a bot's rollout, say) while every event and state it
serves is checked against the game's declared schemas, as tests/games/test_served_schemas.py
checks random games: for the events and phases random play seldom or never reaches
(conquests, reshuffles, resignations, end phases)."""

from __future__ import annotations

import random
from collections import Counter
from typing import Callable

from service.engine import ALL, Rng, clone, forfeit
from service.engine.local import LocalGame
from tests.games.test_served_schemas import check, check_ended, check_events, check_views

Policy = Callable[[object, dict, int, list, random.Random], dict]


def walk(game, n: int, options: dict, seed: int, policy: Policy, *,
         resign_at: dict[int, int] | None = None,
         max_steps: int = 5_000) -> tuple[LocalGame, Counter]:
    """Play ``policy`` to the end; ``resign_at`` maps a step to the seat that forfeits there.
    Every event is checked as each seat, a spectator and ``ALL`` are served it (and unredacted
    after the end), and so is the state after every step. Returns the game and the event types
    served."""
    g = LocalGame(game, [{"name": f"p{i}", "bot": None} for i in range(n)], dict(options),
                  f"schema-walk-{game.type_id}-{seed}".encode())
    viewers = [*range(n), None, ALL]
    rnd = random.Random(seed)
    types: Counter = Counter()
    seen = 0
    for step in range(max_steps):
        types.update(ev["type"] for ev in g.events[seen:])
        check_events(game, g.events[seen:], viewers)
        seen = len(g.events)
        check_views(game, g, viewers)
        if game.is_over(g.state):
            break
        if resign_at and step in resign_at:
            left = forfeit(game, g.state, [resign_at[step]], Rng(g.seed, g.version + 1))
            assert left is not None, "the rules let the seat leave"
            g.events += left[0]
            g.state = left[1]
            continue
        seat = rnd.choice(game.awaiting(g.state))
        g.act(seat, policy(game, g.state, seat, game.legal_actions(g.state, seat), rnd))
    check_ended(game, g)
    return g, types


def check_history(game, g: LocalGame, viewers: list) -> None:
    """The state at every version, as ``GET /v1/games/{id}/states/{version}`` serves it to each
    of ``viewers``: inside commands too (between two events of one command)."""
    created = g.events[0]["data"]
    state = game.initial(created["players"], clone(created["options"]))
    for version, ev in enumerate([None, *g.events[1:]], 1):
        if ev is not None:  # version 1: the state of the creation event alone
            game.apply(state, clone(ev))
        for viewer in viewers:
            check(game.state_schema, game.view(state, viewer),
                  f"state at version {version} as {viewer!r} sees it")
