"""Bot-only games of every type and variant end by their own rules (Papyrus by its default
``turn_limit`` at worst) with a result, inside the server's default event cap: the cap is the
backstop, never what ends a bot game. Played by ``random`` bots (the level that wanders most and
the fastest to run); heuristic and mcts games are shorter (``bench/game_lengths.py``,
docs/every-game-ends.md)."""

from __future__ import annotations

import random

import pytest

from service.application.creation import MAX_EVENTS
from service.engine import InvalidOptions
from service.engine.local import LocalGame
from service.games import GAMES


def tables():
    """``(type, variant id, seats, options)``: per variant (the game without options when it
    has none), the most seats it takes, Papyrus at its smallest tables (the most turns per
    seat)."""
    out = []
    for type_id, game in sorted(GAMES.items()):
        for variant in game.variants or [{"id": "default", "options": {}}]:
            counts = range(game.max_players, game.min_players - 1, -1)
            if type_id == "papyrus":
                counts = reversed(counts)
            for n in counts:
                try:
                    game.normalize_options(dict(variant["options"]),
                                           [{"name": "r", "bot": {"level": "random"}}] * n)
                except InvalidOptions:
                    continue
                out.append(pytest.param(type_id, variant["id"], n, variant["options"],
                                        id=f"{type_id}-{variant['id']}-{n}"))
                break
    return out


@pytest.mark.parametrize("type_id,variant,n,options", tables())
def test_a_random_bot_game_ends_under_the_caps(type_id, variant, n, options):
    game = GAMES[type_id]
    g = LocalGame(game, [{"name": f"r{i}", "bot": {"level": "random"}} for i in range(n)],
                  dict(options), f"ends-{type_id}-{variant}".encode())
    rnd = random.Random(7)
    while g.awaiting() and g.version < MAX_EVENTS:
        seat = g.awaiting()[0]
        g.act(seat, rnd.choice(g.legal(seat)))
    assert not g.awaiting() and g.version <= MAX_EVENTS - 1, (g.version, MAX_EVENTS)
    result = game.result(g.state)
    assert result is not None and sorted(result["ranks"])[0] == 1
    if type_id == "papyrus":
        assert result["details"]["end_reason"] in ("turn_limit", "final_round")
