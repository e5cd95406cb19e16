"""Scarabya bots: complete games at every level and mode, the determinizer's
consistency and blindness to the true hidden state, heuristic > random."""

from __future__ import annotations

from functools import partial

import random

import pytest

from service.engine.bots import choose
from tests.ai import support
from service.games.scarabya import bots as bot
from service.engine import clone
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
    assert GAME.bots is bot.BOTS


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
    ismcts = pytest.importorskip("service.engine.ismcts")
    g = new_game(2, options, b"mcts")
    rnd = random.Random(5)
    while not GAME.is_over(g.state):
        aw = g.awaiting()
        seat = aw[-1]
        obs = obs_of(g, seat)
        if seat == 0 and len(obs.legal) > 1:
            action = ismcts.search(obs, bot.BOTS, rnd, budget_ms=10**6, iterations=30)
        else:
            action = choose("random", obs, rnd)
        assert action in obs.legal
        g.act(seat, action)
    assert GAME.result(g.state) is not None


# -- the mcts level's pieces: fast scoring, rollout choices, simulation hooks ----------------

def _random_positions(n_games: int, options: dict | None = None, players: int = 2):
    """(game, seat) at every decision of a few random games."""
    rnd = random.Random(11)
    for i in range(n_games):
        g = new_game(players, options or {}, b"pos-%d" % i)
        while not GAME.is_over(g.state):
            for s in list(g.awaiting()):
                if s in g.awaiting():
                    yield g, s
                    g.act(s, rnd.choice(g.legal(s)))


def test_fast_gain_and_choices_agree_with_the_rules():
    seen = 0
    for g, s in _random_positions(4):
        st = g.state
        rocks, scarabs = bot.layout_masks(tuple(st["layout"]))
        occ = bot.occupied(st["sites"][s])
        masks, best = bot._choices(rocks, scarabs, occ, st["piece"], st["allow_reflection"],
                                   "standard")
        legal = g.legal(s)
        assert masks == [bot.mask_of(a["cells"]) for a in legal]
        scores = [bot._policy_score(rocks, scarabs, occ, m) for m in masks]
        assert best and {i for i, x in enumerate(scores) if x == max(scores)} == set(best)
        for m in masks:
            assert bot._gain(rocks, scarabs, occ, m) == bot._points(rocks, scarabs, occ, m)
        seen += len(masks)
    assert seen > 500


def test_rollout_plays_legal_actions_of_the_seat():
    rnd = random.Random(2)
    for g, s in _random_positions(2, {"mode": "duel"}):
        legal = g.legal(s)
        assert bot.rollout(GAME, g.state, s, legal, rnd) in legal


def _sim_state(g, seat, rnd_seed=0):
    obs = obs_of(g, seat)
    return obs, bot.for_simulation(bot.determinize(obs, random.Random(rnd_seed)))


@pytest.mark.parametrize("options", [{}, {"mode": "duel"}])
def test_horizon_cuts_after_the_decided_card_and_evaluate_is_a_share(options):
    """Standard game: the cut comes with the card after the decided one (``HORIZON``); duel:
    after ``DUEL_HORIZON`` cards, counted across the match's games."""
    from service.engine import command
    from service.engine.rng import SimRng

    g = new_game(2, options, b"hooks")
    rnd = random.Random(4)
    cards = bot.DUEL_HORIZON if options else bot.HORIZON
    cuts = 0
    while not GAME.is_over(g.state):
        seat = g.awaiting()[0]
        obs, state = _sim_state(g, seat)
        assert bot.horizon(state) is False
        start = bot._progress(state)
        sim_rng = SimRng(rnd)
        while not GAME.is_over(state) and not bot.horizon(state):
            assert start <= bot._progress(state) < start + cards
            s = GAME.awaiting(state)[0]
            state = command(GAME, state, s, rnd.choice(GAME.legal_actions(state, s)), sim_rng,
                            simulated=True)[1]
        if not GAME.is_over(state):
            cuts += 1
            assert bot._progress(state) >= start + cards  # a discard may skip a turn
            for s in (0, 1):
                assert 0.0 <= bot.evaluate(GAME, state, s) <= 1.0
            if options:  # duel, same playout: the two seats' shares are complementary
                bot._sim_rnd.seed(5)
                e0 = bot.evaluate(GAME, state, 0)
                bot._sim_rnd.seed(5)
                assert abs(e0 + bot.evaluate(GAME, state, 1) - 1) < 1e-9
        g.act(seat, rnd.choice(obs.legal))
    assert cuts >= 10


def test_solo_simulations_are_not_cut():
    g = new_game(1, {"mode": "solo"}, b"solo-hooks")
    _, state = _sim_state(g, 0)
    assert "sim" not in state and bot.horizon(state) is False


def test_fast_playout_scores_what_the_rules_score():
    """Replaying the fast playout's placements through the rules gives the same points."""
    checked = 0
    for k, (g, s) in enumerate(_random_positions(3)):
        if k % 3 or len(g.awaiting()) < 2:
            continue
        _, state = _sim_state(g, s, k)
        trace: list[int] = []
        gain, occ = bot._playout_site(state, s, 12, random.Random(k), trace)
        before = state["scores"][s]
        other = 1 - s
        for m in trace:
            if GAME.is_over(state):
                break
            while s not in GAME.awaiting(state):  # the other seat plays its first legal move
                state = GAME_step(state, other, GAME.legal_actions(state, other)[0])
            if state["piece"] is None:
                break
            state = GAME_step(state, s, {"type": "place", "piece": state["piece"],
                                         "cells": bot.cells_of(m)})
            if other in GAME.awaiting(state):
                state = GAME_step(state, other, GAME.legal_actions(state, other)[0])
        assert state["scores"][s] - before == gain
        assert bot.occupied(state["sites"][s]) == occ
        checked += 1
    assert checked >= 5


def GAME_step(state, seat, action):
    """One command without the engine's forced moves (a trace holds every placement)."""
    from service.engine import command
    from service.engine.rng import SimRng

    return command(GAME, state, seat, action, SimRng(random.Random(0)), simulated=True)[1]


def test_mcts_decision_does_not_depend_on_the_true_hidden_state():
    """Same observation, different hidden deck order and hidden commitment: same answer."""
    ismcts = pytest.importorskip("service.engine.ismcts")
    g = new_game(2, {}, b"hidden-mcts")
    rnd = random.Random(8)
    checked = 0
    while not GAME.is_over(g.state) and checked < 3:
        aw = g.awaiting()
        if aw == [0, 1] and len(g.legal(1)) > 1 and len(g.legal(0)) > 1:
            g.act(1, rnd.choice(g.legal(1)))
            twin = clone(g.state)
            alternatives = [a["cells"] for a in GAME.legal_actions(
                {**twin, "status": ["await"] * 2}, 1) if a["cells"] != twin["pending"][1]]
            twin["pending"][1] = alternatives[-1]
            hidden = [p for p in LETTERS if p not in twin["revealed"]]
            twin["deck"] = twin["revealed"] + hidden[::-1]
            a, b = obs_of(g, 0), obs_of(g, 0, twin)
            assert a == b
            pick_a = ismcts.search(a, bot.BOTS, random.Random(1), budget_ms=None, iterations=60)
            pick_b = ismcts.search(b, bot.BOTS, random.Random(1), budget_ms=None, iterations=60)
            assert pick_a == pick_b and pick_a in a.legal
            checked += 1
        for s in g.awaiting():
            if s in g.awaiting():
                g.act(s, rnd.choice(g.legal(s)))
    assert checked >= 2


def test_duel_mcts_decision_does_not_depend_on_the_hidden_deck_order():
    """Duel, game 1: the unrevealed cards' order is hidden. The search (its tree on both
    seats' placements, its candidates) answers the same for two true states that differ in it."""
    ismcts = pytest.importorskip("service.engine.ismcts")
    g = new_game(2, {"mode": "duel"}, b"hidden-duel")
    rnd = random.Random(8)
    checked = 0
    while g.state["game"] == 1 and not GAME.is_over(g.state):
        seat = g.awaiting()[0]
        if len(g.legal(seat)) > 1 and g.state["round"] in (2, 5, 9):
            twin = clone(g.state)
            hidden = [p for p in LETTERS if p not in twin["revealed"]]
            twin["deck"] = twin["revealed"] + hidden[::-1]
            assert twin != g.state
            a, b = obs_of(g, seat), obs_of(g, seat, twin)
            assert a == b
            assert bot.BOTS.tree_every_seat(a)
            picks = [ismcts.search(o, bot.BOTS, random.Random(1), budget_ms=None, iterations=60)
                     for o in (a, b)]
            assert picks[0] == picks[1] and picks[0] in a.legal
            checked += 1
        g.act(seat, rnd.choice(g.legal(seat)))
    assert checked == 3


def test_duel_candidates():
    """Root: the heuristic's best placements; deeper (either seat): legal placements of the
    node's site and piece, at most ``DUEL_CANDIDATES``. Standard game: every placement, and the
    tree branches on the observer only."""
    g = new_game(2, {"mode": "duel"}, b"cands")
    for _ in range(3):
        seat = g.awaiting()[0]
        g.act(seat, g.legal(seat)[len(g.legal(seat)) // 2])
    seat = g.awaiting()[0]
    obs = obs_of(g, seat)
    rnd = random.Random(2)
    state = bot.for_simulation(bot.determinize(obs, rnd))
    root = bot.candidates(GAME, state, seat, GAME.legal_actions(state, seat))
    scores = bot._heuristic_scores(obs)
    best = sorted(range(len(obs.legal)), key=lambda i: -scores[i])[:bot.DUEL_CANDIDATES]
    assert root == [obs.legal[i] for i in best]
    assert bot.heuristic(obs, random.Random(0)) in root
    from service.engine import command
    from service.engine.rng import SimRng
    state = command(GAME, state, seat, root[0], SimRng(rnd), simulated=True)[1]
    other = GAME.awaiting(state)[0]
    assert other == 1 - seat
    legal = GAME.legal_actions(state, other)
    deeper = bot.candidates(GAME, state, other, legal)
    assert len(deeper) == min(len(legal), bot.DUEL_CANDIDATES)
    assert all(a in legal for a in deeper)
    std = new_game(2, {}, b"cands-std")
    obs = obs_of(std, 0)
    assert not bot.BOTS.tree_every_seat(obs)
    state = bot.determinize(obs, rnd)
    assert bot.candidates(GAME, state, 0, obs.legal) == obs.legal


def test_determinizations_of_one_observation_are_independent():
    g = new_game(2, {}, b"indep")
    g.act(1, g.legal(1)[3])
    obs = obs_of(g, 0)
    first = bot.determinize(obs, random.Random(1))
    first["sites"][0]["camps"].append({"piece": "X", "cells": [[0, 0]], "seat": 0, "round": 1})
    first["deck"].reverse()
    again = bot.determinize(obs, random.Random(1))
    assert again["sites"] == bot.determinize(obs_of(g, 0), random.Random(1))["sites"]
    assert GAME.view(again, 0) == obs.view
    # A new observation of the same game is never served a stale template.
    g.act(0, g.legal(0)[0])
    later = obs_of(g, 0)
    assert GAME.view(bot.determinize(later, random.Random(1)), 0) == later.view


@pytest.mark.parametrize("options", [{}, {"mode": "duel"}])
def test_mcts_is_reproducible_for_a_seed(options):
    from service.engine.ismcts import search

    g = new_game(2, options, b"repro")
    for _ in range(3):
        seat = g.awaiting()[0]
        g.act(seat, g.legal(seat)[len(g.legal(seat)) // 2])
    obs = obs_of(g, g.awaiting()[0])
    picks = [search(obs, bot.BOTS, random.Random(7), budget_ms=None, iterations=80)
             for _ in range(2)]
    picks.append(search(obs_of(g, g.awaiting()[0]), bot.BOTS, random.Random(7), budget_ms=None,
                        iterations=80))
    assert picks[0] == picks[1] == picks[2] and picks[0] in obs.legal


@pytest.mark.parametrize("n,options", [(3, {}), (1, {"mode": "solo"})])
def test_mcts_plays_complete_games_with_other_seat_counts(n, options):
    from service.engine.ismcts import search

    g = new_game(n, options, b"mcts-%d" % n)
    rnd = random.Random(6)
    while not GAME.is_over(g.state):
        seat = g.awaiting()[-1]
        obs = obs_of(g, seat)
        if seat == 0 and len(obs.legal) > 1:
            action = search(obs, bot.BOTS, rnd, budget_ms=None, iterations=25)
        else:
            action = choose("heuristic", obs, rnd)
        assert action in obs.legal
        g.act(seat, action)
    assert GAME.result(g.state) is not None
