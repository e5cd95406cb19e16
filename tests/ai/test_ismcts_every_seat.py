"""``BotHooks.tree_every_seat``: the ISMCTS tree branching on the other seat's decisions too
(max-min), against the default where the other seat follows the rollout policy."""

from __future__ import annotations

import random
from types import SimpleNamespace

from service.engine.bots import BotHooks
from service.engine.ismcts import search


class Trap:
    """Seat 0 plays ``safe`` (shared win whatever seat 1 does) or ``risky``; then seat 1 plays
    ``pass`` or ``punish``: after ``risky``, ``pass`` lets seat 0 win and ``punish`` wins for
    seat 1."""

    def is_over(self, state):
        return len(state["moves"]) == 2

    def awaiting(self, state):
        return [] if self.is_over(state) else [len(state["moves"])]

    def legal_actions(self, state, seat):
        if seat == 0:
            return [{"type": "risky"}, {"type": "safe"}]
        return [{"type": "pass"}, {"type": "punish"}]

    def decide(self, state, seat, action, rng):
        return [], {"moves": state["moves"] + [action["type"]]}

    def result(self, state):
        first, second = state["moves"]
        if first == "safe":
            return {"winners": [0, 1]}
        return {"winners": [0] if second == "pass" else [1]}


class Hooks(BotHooks):
    def __init__(self, every_seat: bool) -> None:
        self.every_seat = every_seat
        self.asked = []

    def determinize(self, obs, rnd):
        return {"moves": []}

    def rollout(self, game, state, seat, legal, rnd):
        return legal[0]  # seat 1's rollout policy always passes

    def candidates(self, game, state, seat, legal):
        self.asked.append(seat)
        return legal

    def tree_every_seat(self, obs):
        return self.every_seat


def _obs():
    game = Trap()
    return SimpleNamespace(game=game, seat=0, legal=game.legal_actions({"moves": []}, 0))


def test_default_the_other_seat_follows_the_rollout_policy():
    hooks = Hooks(False)
    assert not BotHooks().tree_every_seat(_obs())
    assert search(_obs(), hooks, random.Random(1), None, iterations=200) == {"type": "risky"}
    assert set(hooks.asked) == {0}  # only the observer's candidates are asked for


def test_every_seat_the_other_seat_maximises_its_own_reward():
    hooks = Hooks(True)
    assert search(_obs(), hooks, random.Random(1), None, iterations=200) == {"type": "safe"}
    assert set(hooks.asked) == {0, 1}


def test_every_seat_search_is_deterministic_for_a_seed():
    for seed in range(5):
        a = search(_obs(), Hooks(True), random.Random(seed), None, iterations=30)
        b = search(_obs(), Hooks(True), random.Random(seed), None, iterations=30)
        assert a == b


class Pick:
    """One decision of seat 0 among five actions; only the last one wins."""

    def is_over(self, state):
        return state["pick"] is not None

    def awaiting(self, state):
        return [] if self.is_over(state) else [0]

    def legal_actions(self, state, seat):
        return [{"type": "pick", "n": n} for n in range(5)]

    def decide(self, state, seat, action, rng):
        return [], {"pick": action["n"]}

    def result(self, state):
        return {"winners": [0] if state["pick"] == 4 else [1]}


class Widening(BotHooks):
    def __init__(self, widen: bool) -> None:
        self.widen = widen

    def determinize(self, obs, rnd):
        return {"pick": None}

    def progressive_widening(self, obs):
        return self.widen


def _pick_obs():
    game = Pick()
    return SimpleNamespace(game=game, seat=0, legal=game.legal_actions({"pick": None}, 0))


def test_progressive_widening_expands_the_candidates_in_order():
    assert not BotHooks().progressive_widening(_pick_obs())
    # 3 iterations: the first two candidates only (the third needs 2^2 <= visits of the two)
    for seed in range(5):
        pick = search(_pick_obs(), Widening(True), random.Random(seed), None, iterations=3)
        assert pick["n"] in (0, 1)
    # enough iterations reach the last candidate (4 tried children need 16 visits), and it wins
    assert search(_pick_obs(), Widening(True), random.Random(1), None, iterations=60)["n"] == 4
    # without widening every candidate is tried first, in random order
    assert search(_pick_obs(), Widening(False), random.Random(1), None, iterations=6)["n"] == 4
