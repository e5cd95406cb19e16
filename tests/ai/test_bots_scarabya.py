"""Scarabya bots (issue 7, part 2): complete games at every level and mode, the determinizer's
consistency and blindness to the true hidden state, heuristic > random."""

from __future__ import annotations

from functools import partial

import random

import pytest

from service.ai import choose, module_for
from tests.ai import support
from service.ai import scarabya as bot
from service.engine.fold import clone
from service.engine.local import LocalGame
from service.games.scarabya import GAME, LETTERS

MODES = {
    "standard-2": (2, {}),
    "standard-3": (3, {}),
    "standard-4": (4, {"allow_reflection": False}),
    "duel": (2, {"mode": "duel"}),
    "duel-1": (2, {"mode": "duel", "duel_games": 1}),
    "solo": (1, {"mode": "solo"}),
    "solo-discard-loses": (1, {"mode": "solo", "solo_discard_loses": True}),
}


new_game = partial(support.new_game, GAME)
obs_of = partial(support.obs_of, GAME)
check_determinization = partial(support.check_determinization, GAME, bot)

def play(levels: list[str], options: dict, seed: bytes, *, check: bool = False,
         rnd_seed: int = 0) -> LocalGame:
    return support.play(GAME, levels, options, seed, check=check_determinization,
                        check_every=1 if check else 0, stride=7, rnd_seed=rnd_seed)


def test_module_registered():
    assert module_for(GAME) is bot


@pytest.mark.parametrize("mode", sorted(MODES))
@pytest.mark.parametrize("first", ["heuristic", "random"])
def test_random_and_heuristic_complete_games(mode, first):
    n, options = MODES[mode]
    other = "random" if first == "heuristic" else "heuristic"
    levels = ([first, other] * 2)[:n]
    g = play(levels, options, f"sc-{mode}".encode(), check=True, rnd_seed=n)
    assert GAME.result(g.state) is not None


def test_determinizer_never_reads_the_true_hidden_state():
    """Standard game: seat 1 has committed; its placement and the deck order are secret."""
    g = new_game(3, {}, b"hidden")
    rnd = random.Random(3)
    checked = 0
    for rnd_no in range(1, 12):
        if GAME.is_over(g.state):
            break
        aw = g.awaiting()
        if 1 in aw and 0 in aw and len(g.legal(1)) > 1:
            g.act(1, rnd.choice(g.legal(1)))
            if 0 in g.awaiting():
                twin = clone(g.state)
                alternatives = [a["cells"] for a in GAME.legal_actions(
                    {**twin, "status": ["await"] * 3}, 1) if a["cells"] != twin["pending"][1]]
                twin["pending"][1] = alternatives[0]
                hidden = [p for p in LETTERS if p not in twin["revealed"]]
                twin["deck"] = twin["revealed"] + hidden[::-1]
                assert twin != g.state
                a, b = obs_of(g, 0), obs_of(g, 0, twin)
                assert a == b
                assert bot.determinize(a, random.Random(9)) == bot.determinize(b, random.Random(9))
                assert bot.heuristic(a, random.Random(1)) == bot.heuristic(b, random.Random(1))
                checked += 1
        for s in g.awaiting():
            if s in g.awaiting():
                g.act(s, rnd.choice(g.legal(s)))
    assert checked >= 3


def test_duel_determinizer_samples_the_deck_then_knows_it_in_game_two():
    g = new_game(2, {"mode": "duel"}, b"duel-deck")
    rnd = random.Random(1)
    true_deck = list(g.state["deck"])
    while not GAME.is_over(g.state):
        seat = g.awaiting()[0]
        obs = obs_of(g, seat)
        samples = [bot.determinize(obs, random.Random(k))["deck"] for k in range(6)]
        revealed = obs.view["revealed"]
        for deck in samples:
            assert sorted(deck) == sorted(LETTERS)
        if g.state["game"] == 2:
            assert all(deck == true_deck for deck in samples)
        else:
            assert all(deck[:len(revealed)] == revealed for deck in samples)
            if len(revealed) < 10:
                assert len({tuple(d) for d in samples}) > 1
        g.act(seat, rnd.choice(obs.legal))


def test_heuristic_prefers_immediate_points():
    # Rules example S2, round 3: P at (2,0)(2,1)(3,0)(3,1)(4,0) scores 8 on layout L1.
    layout = ["S.R...S..S", ".S.S.S.R..", "S.......S.", "...RS.S.R.", ".S.....S..",
              "S..S....S.", ".S...S.R..", ".R..S..S..", "S..R..R..S", "..S..S..S."]
    order = list("XLPIVYWFZUNT")
    g = new_game(1, {"mode": "solo", "setup": {"layout": layout, "mission_order": order}},
                 b"s2")
    g.act(0, {"type": "place", "piece": "X", "cells": [[3, 5], [4, 4], [4, 5], [4, 6], [5, 5]]})
    g.act(0, {"type": "place", "piece": "L", "cells": [[1, 2], [2, 2], [2, 3], [2, 4], [2, 5]]})
    rocks, scarabs = bot.layout_masks(tuple(layout))
    occ = bot.occupied(g.state["sites"][0])
    best = max(g.legal(0), key=lambda a: bot._points(rocks, scarabs, occ, bot.mask_of(a["cells"])))
    assert bot._points(rocks, scarabs, occ, bot.mask_of(best["cells"])) == 8
    two = new_game(2, {"setup": {"layout": layout, "mission_order": order}}, b"s2b")
    for act in ([[3, 5], [4, 4], [4, 5], [4, 6], [5, 5]], [[1, 2], [2, 2], [2, 3], [2, 4], [2, 5]]):
        for s in (0, 1):
            g2 = two
            g2.act(s, {"type": "place", "piece": g2.state["piece"], "cells": act})
    pick = bot.heuristic(obs_of(two, 0), random.Random(0))
    assert bot._points(rocks, scarabs, bot.occupied(two.state["sites"][0]),
                       bot.mask_of(pick["cells"])) == 8


def duel(levels: list[str], n_games: int, options: dict) -> list[float]:
    wins = [0.0, 0.0]
    for i in range(n_games):
        order = levels if i % 2 == 0 else levels[::-1]
        g = play(order, options, b"hvr-%d" % i, rnd_seed=i)
        winners = GAME.result(g.state)["winners"]
        for s in winners:
            wins[s if i % 2 == 0 else 1 - s] += 1 / len(winners)
    return wins


def test_heuristic_beats_random_two_seats():
    wins = duel(["heuristic", "random"], 12, {})
    assert wins[0] >= 10, wins
    wins = duel(["heuristic", "random"], 6, {"mode": "duel", "duel_games": 1})
    assert wins[0] >= 5, wins


@pytest.mark.parametrize("options", [{}, {"mode": "duel"}])
def test_mcts_plays_a_complete_game(options):
    ismcts = pytest.importorskip("service.ai.ismcts")
    g = new_game(2, options, b"mcts")
    rnd = random.Random(5)
    while not GAME.is_over(g.state):
        aw = g.awaiting()
        seat = aw[-1]
        obs = obs_of(g, seat)
        if seat == 0 and len(obs.legal) > 1:
            action = ismcts.search(obs, bot, rnd, budget_ms=10**6, iterations=30)
        else:
            action = choose("random", obs, rnd)
        assert action in obs.legal
        g.act(seat, action)
    assert GAME.result(g.state) is not None
