"""Tides of Time bots: the planning heuristic, the memoized scoring, the lean playout and the
ISMCTS hooks (``horizon``, ``evaluate``, ``for_simulation``)."""

from __future__ import annotations

import random

import pytest

from tests.ai import support
from service.games.tides_of_time import bots as ai
from service.engine.ismcts import search
from service.engine import clone, command
from service.engine.local import LocalGame
from service.games import GAMES
from service.games.tides_of_time import NUMBERS, score_kingdoms

TIDES = GAMES["tides-of-time"]
PLAYERS = [{"name": "a"}, {"name": "b"}]


def _obs(g: LocalGame, seat: int):
    return support.obs_of(TIDES, g, seat)


def _random_states(games: int, seed: int = 0):
    """Every state of ``games`` random games (either awaited seat moves: some states have one
    committed choice pending)."""
    for i in range(games):
        rnd = random.Random(seed + i)
        g = LocalGame(TIDES, PLAYERS, {"strict_zero_ties": i % 3 == 0}, b"tides-ai-%d" % i)
        while not TIDES.is_over(g.state):
            yield g
            seat = rnd.choice(g.awaiting())
            g.act(seat, rnd.choice(g.legal(seat)))


# -- scoring -----------------------------------------------------------------------------------

@pytest.mark.parametrize("seed,n", [(7, 3000), (5, 400)])
def test_memoized_mask_scoring_agrees_with_the_rules(seed, n):
    rnd = random.Random(seed)
    for _ in range(n):
        cards = rnd.sample(NUMBERS, rnd.randint(0, 14))
        cut = rnd.randint(0, len(cards))
        k0, k1 = cards[:cut], cards[cut:]
        strict = rnd.random() < 0.3
        want = score_kingdoms([k0, k1], strict)["totals"]
        assert list(ai.totals(ai.mask(k0), ai.mask(k1), strict)) == want
        assert list(ai.totals(ai.mask(k1), ai.mask(k0), strict)) == want[::-1]  # memo, swapped
        assert list(ai._pair_totals(ai.mask(k0), ai.mask(k1), strict)) == want


def test_memoized_greedy_rule_and_relic_rule_follow_their_definitions():
    rnd = random.Random(8)
    for i in range(1500):
        cards = rnd.sample(NUMBERS, rnd.randint(6, 14))
        strict = i % 4 == 0
        hand, rest = cards[:rnd.randint(2, 5)], cards[5:]
        cut = rnd.randint(0, len(rest))
        k_me, k_opp = rest[:cut], rest[cut:]

        def margin(a, b):
            t = score_kingdoms([a, b], strict)["totals"]
            return t[0] - t[1]

        want = min(hand, key=lambda c: (-margin(k_me + [c], k_opp), c))
        for _ in range(2):  # computed, then from the memo
            assert ai.greedy_pick(hand, ai.mask(k_me), ai.mask(k_opp), strict) == want
        played, r_me, r_opp = cards[:5], cards[5:5 + i % 3], cards[8:8 + (i // 3) % 3]

        def score(a, b):
            return score_kingdoms([a, b], strict)["totals"][0]

        keep = min(played, key=lambda k: (-margin(r_me + [k], r_opp), k))
        mine = r_me + [keep]
        remove = min((r for r in played if r != keep), key=lambda r: (
            -((score(r_opp + [r], mine) - score(r_opp, mine))
              - (score(mine + [r], r_opp) - score(mine, r_opp))), r))
        for _ in range(2):
            assert ai.best_relic(played, r_me, r_opp, strict) == (keep, remove)


# -- the heuristic -----------------------------------------------------------------------------

# Round 1 after three picks: seat 0 played 10 Eye, 18 Port, 9 Maze and holds {2 Ancient
# Divide, 11 Jinn Shackles}; seat 1 played 15 Vestibule, 13 Blood-tear Spring, 6 Citadel and
# holds {14 Sky Pillars, 17 Roof}.
POSITION_DECK = [14, 17, 9, 13, 10, 18, 15, 6, 2, 11, 1, 8, 4, 12, 16, 5, 7, 3]
POSITION_PICKS = [(10, 15), (18, 13), (9, 6)]


def test_heuristic_looks_past_the_immediate_margin():
    g = LocalGame(TIDES, PLAYERS, {"setup": {"deck_order": POSITION_DECK}}, b"pos")
    for a, b in POSITION_PICKS:
        g.act(0, {"type": "pick", "card": a})
        g.act(1, {"type": "pick", "card": b})
    st = g.state
    mine, theirs = sorted(st["hands"][0]), sorted(st["hands"][1])
    assert (mine, theirs) == ([2, 11], [14, 17])
    k0, k1 = st["played"][0], st["played"][1]

    def final_margin(c, o):  # pick 4 then the forced pick 5, scored by the rules module
        k = [k0 + [c] + [x for x in theirs if x != o], k1 + [o] + [x for x in mine if x != c]]
        t = score_kingdoms(k)["totals"]
        return t[0] - t[1]

    # The greedy rule alone (best immediate margin) takes 2 ...
    immediate = {c: score_kingdoms([k0 + [c], k1])["totals"] for c in mine}
    assert max(mine, key=lambda c: (immediate[c][0] - immediate[c][1], -c)) == 2
    # ... but 11 ends the round better whichever card the opponent takes.
    assert all(final_margin(11, o) > final_margin(2, o) for o in theirs)
    assert ai.heuristic(_obs(g, 0), random.Random(0)) == {"type": "pick", "card": 11}


def test_heuristic_is_deterministic_given_rnd_and_plays_legal_moves():
    seen = 0
    for g in _random_states(3, seed=40):
        for seat in g.awaiting():
            obs = _obs(g, seat)
            if len(obs.legal) < 2:
                continue
            a = ai.heuristic(obs, random.Random(5))
            assert a in obs.legal
            assert ai.heuristic(obs, random.Random(5)) == a
            seen += 1
    assert seen > 30


def test_heuristic_samples_unknown_cards_from_the_unseen_ones_only():
    """Round 1, pick 1: the opponent's hand is unknown; every sampled hand is drawn from the 13
    cards the seat cannot see, with the right size."""
    g = LocalGame(TIDES, PLAYERS, {}, b"unknown")
    obs = _obs(g, 0)
    hand = set(obs.view["seats"][0]["hand"])
    sampled = []
    real = ai.pick_values

    def spy(mine, opp, m_me, m_opp, strict):
        sampled.append(list(opp))
        return real(mine, opp, m_me, m_opp, strict)

    ai.pick_values = spy
    try:
        ai.heuristic(obs, random.Random(1))
    finally:
        ai.pick_values = real
    assert len(sampled) == ai.SAMPLES
    for opp in sampled:
        assert len(opp) == 5 and not set(opp) & hand


# -- the lean playout ----------------------------------------------------------------------

def _choose(seat, phase, cards, m_me, m_opp):
    """An arbitrary deterministic policy, shared by the playout and the rules-driven game."""
    cs = sorted(cards)
    if phase == "DRAFT":
        return cs[(sum(cs) * 7 + m_me + 3 * m_opp) % len(cs)]
    i = (m_me + 5 * m_opp + sum(cs)) % len(cs)
    j = (i + 1 + m_opp % (len(cs) - 1)) % len(cs)
    return cs[i], cs[j]


def _rules_to_end(state):
    st = clone(state)
    while not TIDES.is_over(st):
        s = TIDES.awaiting(st)[0]
        if st["phase"] == "DRAFT":
            hand = st["hands"][s]
            card = hand[0] if len(hand) == 1 else _choose(
                s, "DRAFT", hand, ai.mask(st["relics"][s] + st["played"][s]),
                ai.mask(st["relics"][1 - s] + st["played"][1 - s]))
            action = {"type": "pick", "card": card}
        else:
            keep, remove = _choose(s, "RELIC", st["played"][s], ai.mask(st["relics"][s]),
                                   ai.mask(st["relics"][1 - s]))
            action = {"type": "relic", "keep": keep, "remove": remove}
        _, st = command(TIDES, st, s, action, None)
    return st["totals"]


def test_playout_gives_the_rules_totals_for_the_same_choices():
    checked = 0
    for g in _random_states(25):
        before = clone(g.state)
        got = ai.playout(g.state, random.Random(0), choose=_choose)
        assert g.state == before, "playout modified its input"
        assert got == _rules_to_end(g.state)
        checked += 1
    assert checked > 500


def test_playout_with_the_rollout_policy_ends_with_consistent_totals():
    for g in _random_states(5, seed=100):
        tot = ai.playout(g.state, random.Random(3))
        assert len(tot) == 2 and all(t >= s for t, s in zip(tot, g.state["totals"]))


# -- ISMCTS hooks ------------------------------------------------------------------------------

def test_evaluate_is_a_pure_win_share():
    for g in _random_states(4, seed=200):
        st = g.state
        for seat in (0, 1):
            v = ai.evaluate(TIDES, st, seat)
            assert v in (0.0, 0.5, 1.0)
            assert ai.evaluate(TIDES, clone(st), seat) == v
            assert ai.evaluate(TIDES, st, 1 - seat) == 1.0 - v
    g = LocalGame(TIDES, PLAYERS, {}, b"end")
    rnd = random.Random(0)
    while not TIDES.is_over(g.state):
        seat = g.awaiting()[0]
        g.act(seat, rnd.choice(g.legal(seat)))
    res = TIDES.result(g.state)
    for seat in (0, 1):
        share = 1 / len(res["winners"]) if seat in res["winners"] else 0.0
        assert ai.evaluate(TIDES, g.state, seat) == share


def test_horizon_changes_at_the_fifth_pick_and_at_the_next_round():
    g = LocalGame(TIDES, PLAYERS, {}, b"horizon")
    rnd = random.Random(1)
    keys = []
    while not TIDES.is_over(g.state):
        st = g.state
        keys.append((st["round"], st["phase"], st["pick"], ai.horizon(st)))
        seat = g.awaiting()[0]
        g.act(seat, rnd.choice(g.legal(seat)))
    for rnd_no in (1, 2, 3):
        draft = {k for r, ph, p, k in keys if r == rnd_no and ph == "DRAFT"}
        assert len(draft) == 1  # pick 5 is forced: never an observed state
        if rnd_no < 3:
            relic = {k for r, ph, p, k in keys if r == rnd_no and ph == "RELIC"}
            assert len(relic) == 1 and relic != draft
    assert len({k for *_, k in keys}) == 5


@pytest.mark.parametrize("phase", ["DRAFT", "RELIC"])
def test_search_cuts_simulations_at_the_horizon(phase):
    """Every simulation of a search stops at the first state past the horizon and is scored
    there by ``evaluate``."""
    g = LocalGame(TIDES, PLAYERS, {}, b"cut-" + phase.encode())
    rnd = random.Random(2)
    while g.state["phase"] != phase or (phase == "DRAFT" and g.state["pick"] != 2):
        seat = g.awaiting()[0]
        g.act(seat, rnd.choice(g.legal(seat)))
    obs = _obs(g, g.awaiting()[0])
    root_round = g.state["round"]
    cut = []

    def evaluate(game, state, seat):
        cut.append(clone(state))
        return ai.evaluate(game, state, seat)

    mod = ai.Bots()
    mod.evaluate = evaluate
    action = search(obs, mod, random.Random(3), budget_ms=None, iterations=40)
    assert action in obs.legal
    assert len(cut) == 40
    for st in cut:
        if phase == "DRAFT":
            assert (st["round"], st["phase"], st["pick"]) == (root_round, "DRAFT", 5)
        else:
            assert (st["round"], st["phase"], st["pick"]) == (root_round + 1, "DRAFT", 1)
            assert st["played"] == [[], []] and [len(h) for h in st["hands"]] == [5, 5]


def test_for_simulation_drops_only_the_round_breakdown():
    g = LocalGame(TIDES, PLAYERS, {}, b"prep")
    rnd = random.Random(4)
    while g.state["round"] < 2:
        seat = g.awaiting()[0]
        g.act(seat, rnd.choice(g.legal(seat)))
    st = ai.for_simulation(ai.determinize(_obs(g, 0), random.Random(0)))
    assert st["rounds"] is None
    assert st["totals"] == g.state["totals"] and st["round_scores"] == g.state["round_scores"]
