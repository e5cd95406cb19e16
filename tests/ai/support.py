"""Shared helpers of the per-game bot tests."""

from __future__ import annotations

import random

from service.ai import observe
from service.engine.local import LocalGame


def new_game(game, n: int, options: dict, seed: bytes) -> LocalGame:
    return LocalGame(game, [{"name": f"p{i}"} for i in range(n)], options, seed)


def obs_of(game, g: LocalGame, seat: int, state: dict | None = None):
    """Seat ``seat``'s observation of ``g`` (or of ``state`` with ``g``'s log)."""
    return observe(game, g.events[0]["data"], g.events[1:],
                   g.state if state is None else state, seat, g.version)


def check_determinization(game, bot, g: LocalGame, seat: int, rnd_seed: int) -> dict:
    """A sampled state must look exactly like the observation to the observing seat."""
    obs = obs_of(game, g, seat)
    sampled = bot.determinize(obs, random.Random(rnd_seed))
    assert game.view(sampled, seat) == obs.view
    assert game.legal_actions(sampled, seat) == obs.legal
    assert game.awaiting(sampled) == game.awaiting(g.state)
    return sampled
