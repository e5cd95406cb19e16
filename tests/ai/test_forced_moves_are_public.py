"""Whether a seat's choice is played for it at once (a forced move: flagged, and timed with
the command before it) must be something every other seat can tell from what it sees: else
the flag, or its absence, tells it about the seat's hidden holdings (a Papyrus Sandstorm
forced because the whole hidden hand is of one kind would show that hand).

For every registered game with a determinizer, random games are stepped through the rules'
own ``decide`` and forced moves; at each state where a seat is awaited (after a command,
before its forced moves, and at each decision), every other seat's observation is sampled
into worlds it cannot tell from the true one, and in each the game must answer
``only_action`` alike: forced, or not."""

from __future__ import annotations

import random

import pytest

from service.engine import Rng
from service.engine.bots import observe
from service.engine.local import LocalGame
from service.games import GAMES

SAMPLES = 4
#: Papyrus's turn limit keeps random games short; the rest end by their rules
OPTIONS = {"papyrus": {"turn_limit": 120}}
CHECKS = 160  # per game: states checked, spread over its games


def cases():
    for type_id, game in sorted(GAMES.items()):
        if game.bots is None or game.bots.determinize is None:
            continue
        variants = game.variants or [{"id": "default", "options": {}}]
        yield pytest.param(type_id, variants, id=type_id)


def forced_everywhere(game, state, seat) -> bool:
    return game.only_action(state, seat) is not None


@pytest.mark.parametrize("type_id,variants", list(cases()))
def test_whether_a_move_is_forced_is_public(type_id, variants):
    game = GAMES[type_id]
    rnd = random.Random(11)
    checked = games = 0
    while checked < CHECKS and games < 60:
        variant = variants[games % len(variants)]
        options = {**variant["options"], **OPTIONS.get(type_id, {})}
        n = rnd.randint(game.min_players, min(game.max_players, 4))
        try:
            g = LocalGame(game, [{"name": f"p{i}"} for i in range(n)], options,
                          rnd.randbytes(32))
        except Exception:  # noqa: BLE001 - this variant is for other table sizes
            games += 1
            continue
        games += 1
        created, events, state = g.events[0]["data"], list(g.events[1:]), g.state
        for _ in range(400):
            if game.is_over(state) or checked >= CHECKS:
                break
            seat = rnd.choice(game.awaiting(state))
            evs, state = game.decide(state, seat, rnd.choice(game.legal_actions(state, seat)),
                                     Rng(g.seed, len(events) + 2))
            events += evs
            while not game.is_over(state):  # the forced moves, one by one
                if rnd.random() < 0.5:
                    checked += check(game, created, events, state, rnd)
                forced = [(s, game.only_action(state, s)) for s in game.awaiting(state)]
                forced = [(s, a) for s, a in forced if a is not None]
                if not forced:
                    break
                evs, state = game.decide(state, forced[0][0], forced[0][1],
                                         Rng(g.seed, len(events) + 2))
                events += [dict(e, forced=True) for e in evs]
    assert checked >= CHECKS // 2, f"only {checked} states checked in {games} games"


def check(game, created, events, state, rnd) -> int:
    """Every awaited seat's forcedness, in every world another seat cannot tell apart."""
    for seat in game.awaiting(state):
        truth = forced_everywhere(game, state, seat)
        for other in range(len(created["players"])):
            if other == seat:
                continue
            obs = observe(game, created, events, state, other, len(events) + 1)
            for _ in range(SAMPLES):
                world = game.bots.determinize(obs, rnd)
                if game.view(world, other) != obs.view:
                    continue  # a sample the determinizer could not make consistent
                assert forced_everywhere(game, world, seat) == truth, (
                    f"seat {other} could tell whether seat {seat}'s move is forced: "
                    f"{game.only_action(state, seat)} in truth")
    return 1

