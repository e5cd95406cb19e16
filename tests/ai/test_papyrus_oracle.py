"""bench/papyrus_oracle.py's comparison of candidates with the heuristic's choice (paired by
world) and its reliability figures, on made-up playouts; its targets on a real deal."""

from __future__ import annotations

import random

import pytest

from service.engine.local import LocalGame
from service.games.papyrus import GAME
from tests.ai.support import load_bench, obs_of


@pytest.fixture(scope="module")
def oracle():
    return load_bench("papyrus_oracle")


def runs(margins, cut_of=lambda m: m / 100):
    return [{"margin": m, "win": float(m > 0), "cut": {r: cut_of(m) for r in (1, 2, 4, 8, 16)}}
            for m in margins]


def test_candidates_are_classed_by_their_paired_difference_with_the_heuristics(oracle):
    world = [10.0, -20.0, 30.0, 0.0, 5.0, -7.0]      # what each world gives the heuristic's choice
    found = {"heuristic": 0, "runs": {
        0: runs(world),
        1: runs([m + 3 + (i % 2) for i, m in enumerate(world)]),   # better in every world
        2: runs([m - 4 - (i % 3) for i, m in enumerate(world)]),   # worse in every world
        3: runs([m + (5 if i % 2 else -5) for i, m in enumerate(world)]),  # noise around 0
    }}
    out = oracle.summarize(found)
    assert (out["better"], out["worse"]) == (1, 1)
    assert out["index"] == [0, 1, 2, 3]
    assert out["diffs"] == pytest.approx([3.5, -5.0, 0.0])
    # the cut-off reward here is the margin itself: it predicts the end perfectly
    assert all(c == pytest.approx(1.0) for c in out["evaluate_corr"].values())


def test_a_cut_off_reward_that_says_nothing_and_a_decided_game(oracle):
    world = [10.0, -20.0, 30.0, 0.0]
    found = {"heuristic": 1, "runs": {
        0: runs([m + 1 for m in world], cut_of=lambda m: 0.5),
        1: runs(world, cut_of=lambda m: 0.5),
        2: runs([m + 2 for m in world], cut_of=lambda m: 0.5)}}
    out = oracle.summarize(found)
    assert all(c is None for c in out["evaluate_corr"].values())  # constant: no correlation
    assert out["split_half"] == pytest.approx(1.0)
    assert oracle.mean_of([None, 1.0, 2.0]) == 1.5 and oracle.mean_of([None]) is None


def test_targets_are_the_gods_in_hand_against_the_heuristic_left_to_choose(oracle):
    g = LocalGame(GAME, [{"name": "a"}, {"name": "b"}], {}, b"oracle-targets")
    obs = obs_of(GAME, g, 0)
    found = oracle.examine_targets(obs, 2, random.Random(1))
    gods = obs.view["seats"][0]["gods"]
    assert found["cands"] == [None] + list(gods) and found["heuristic"] == 0
    assert sorted(found["runs"]) == [0, 1, 2, 3]
    assert all(len(r) == 2 and all(isinstance(x["margin"], float) for x in r)
               for r in found["runs"].values())
    # each target is played out on the same two worlds: a target does change the game
    assert len({tuple(x["margin"] for x in r) for r in found["runs"].values()}) > 1
