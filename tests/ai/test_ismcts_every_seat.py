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
