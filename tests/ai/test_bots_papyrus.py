"""Papyrus bots: complete games at every level in the standard game (2-5
seats) and the solo variant, the determinizer's consistency with the observation and its
blindness to the true hidden state, the rollout policy ends games, heuristic > random."""

from __future__ import annotations

from functools import partial

import math
import random
import statistics

import pytest

from service.engine.bots import choose
from tests.ai import support
from service.games.papyrus import bots as bot
from service.engine import clone, command
from service.engine.local import LocalGame
from service.engine.rng import SimRng
from service.games.papyrus import GAME
from service.games.papyrus.data import (BAG_COUNTS, EVENT_COUNTS, GLYPHS, GODS, KINDS,
                                        MOVEMENT_COUNTS)


new_game = partial(support.new_game, GAME)
obs_of = partial(support.obs_of, GAME)

def conserved(state: dict) -> None:
    """Every component is somewhere, exactly once."""
    tiles = dict(state["glyph_discard"])
    for x in state["bag"]:
        tiles[x] += 1
    for x in GLYPHS:
        tiles[x] += state["market"][x] + sum(p["holder"][x] for p in state["seats"])
    assert tiles == BAG_COUNTS
    gods = state["god_deck"] + state["gods_out"] + list(state["owners"])
    for p in state["seats"]:
        gods += p["gods"]
    assert sorted(gods) == sorted(GODS)
    if state["variant"] == "standard":
        cards = dict(state["movement_discard"])
        for k in state["movement_deck"]:
            cards[k] += 1
        for p in state["seats"]:
            for k in KINDS:
                cards[k] += p["movement"][k]
        assert cards == MOVEMENT_COUNTS
        events = dict(state["event_discard"])
        for e in state["event_deck"] + ([state["event_card"]] if state["event_card"] else []):
            events[e] += 1
        assert events == EVENT_COUNTS


def check_determinization(g: LocalGame, seat: int, rnd_seed: int) -> dict:
    sampled = support.check_determinization(GAME, bot, g, seat, rnd_seed)
    conserved(sampled)
    return sampled


def play(levels: list[str], options: dict, seed: bytes, *, check_every: int = 0,
         rnd_seed: int = 0, max_steps: int = 5000) -> LocalGame:
    return support.play(GAME, levels, options, seed, check=check_determinization,
                        check_every=check_every, stride=0, rnd_seed=rnd_seed,
                        max_steps=max_steps)


def test_module_registered():
    assert GAME.bots is bot.BOTS


@pytest.mark.parametrize("n", [2, 3, 4, 5])
def test_random_and_heuristic_complete_standard_games(n):
    levels = (["heuristic", "random"] * 3)[:n]
    g = play(levels, {"turn_limit": 60 * n}, f"pap-mixed-{n}".encode(), check_every=9,
             rnd_seed=n)
    res = GAME.result(g.state)
    assert res["details"]["end_reason"] in ("turn_limit", "final_round")


@pytest.mark.parametrize("n", [2, 5])
def test_heuristic_games_end_by_the_rules(n):
    """Without a turn limit, heuristic bots conquer every God card and finish the game."""
    g = play(["heuristic"] * n, {}, f"pap-heur-{n}".encode(), check_every=25)
    res = GAME.result(g.state)
    assert res["details"]["end_reason"] == "final_round"
    assert sum(d["scarabs"] for d in res["details"]["seats"]) >= 36 - 3 * n


@pytest.mark.parametrize("k", [11, 22, 27])
def test_two_heuristic_seats_do_not_trade_the_same_glyphs_back_and_forth(k):
    """Deals where a seat paying one plan's tile for another tile of the same plan (reed for
    flax, then flax for reed) lets two heuristic seats swap glyphs with the market in a cycle
    until the 2,000-turn limit: an exchange is made only when it leaves the seat's plans better,
    so these games end by the rules in a few hundred turns."""
    g = play(["heuristic"] * 2, {}, f"stall-2-{k}".encode())
    assert GAME.result(g.state)["details"]["end_reason"] == "final_round"
    assert g.state["turns"] < 1000


def test_a_market_exchange_must_leave_the_plans_better(monkeypatch):
    """Paying a tile of a plan for another tile that plan needs, both in the market, gains
    nothing; paying a tile no plan needs for one the plan lacks does. Nothing is changed."""
    monkeypatch.setattr(bot, "_travel_turns", lambda me, god: 0.0)  # no board: tiles only
    held = {"basket": 1, "reed": 1, "stool": 1, "mouth": 1, "bread": 1}  # khepri lacks reed, flax
    me = bot._Me(0, False, None, {}, ["khepri"], dict(held), {"reed": 3, "flax": 3},
                 {x: 0 for x in GLYPHS}, None, 0, None, True)
    plans = bot._plans(me)
    assert not bot._improves(me, plans, "reed", "flax")
    assert bot._improves(me, plans, "bread", "flax")
    assert me.market == {"reed": 3, "flax": 3} and me.holder == held


@pytest.mark.parametrize("n,options", [
    (1, {"variant": "solo"}),
    (1, {"variant": "solo", "god_deck_size": 6, "turn_limit": 400}),
    (3, {"variant": "solo", "god_deck_size": 12, "turn_limit": 150}),
])
def test_solo_games(n, options):
    levels = (["heuristic", "random"] * 3)[:n]
    if options.get("turn_limit"):
        g = play(levels, options, b"pap-solo-mixed", check_every=5)
        assert GAME.result(g.state) is not None
    g = play(["heuristic"] * n, {k: v for k, v in options.items() if k != "turn_limit"},
             b"pap-solo-heur", check_every=40)
    assert GAME.result(g.state)["details"]["end_reason"] == "final_round"


@pytest.mark.parametrize("n,options,expected", [
    (2, {}, {"MovementReshuffled", "EventDrawn", "DecisionPending", "GodDrawn"}),
    # the full god deck: the solo discards keep the glyphs the gods to come need, so a shorter
    # game (24 gods) no longer empties the bag; the full one does (refill at step 158 of 194)
    (1, {"variant": "solo"}, {"BagRefilled", "GodFormed", "GodDrawn"}),
])
def test_determinization_after_reshuffles_and_events(n, options, expected):
    """Long games: reshuffles, bag refills and event decisions are all covered."""
    g = new_game(n, options, b"pap-long")
    rnd = random.Random(4)
    step = 0
    refills = []
    while not GAME.is_over(g.state):
        seat = g.awaiting()[0]
        obs = obs_of(g, seat)
        if step % 11 == 0 or obs.view["pending"]:
            for s in range(n):
                check_determinization(g, s, step)
        refills.append(sum(ev["type"] == "BagRefilled" for ev in g.events))
        g.act(seat, choose("heuristic", obs, rnd))
        step += 1
    assert expected <= {ev["type"] for ev in g.events}
    if "BagRefilled" in expected:  # determinizations were checked after a refill too
        assert refills[-1] > 0 and refills.index(refills[-1]) < len(refills) - 5


def test_determinizer_never_reads_the_true_hidden_state():
    """Two true states that differ only in what seat 0 cannot see give the same observation
    and, for the same ``rnd`` seed, the same determinization."""
    h = new_game(3, {}, b"pap-hidden")
    rnd = random.Random(2)
    for step in range(1000):
        seat = h.awaiting()[0]
        if step >= 70 and seat == 0:
            break
        h.act(seat, choose("heuristic", obs_of(h, seat), rnd))
    assert not GAME.is_over(h.state) and h.awaiting() == [0]
    true = h.state
    other = clone(true)
    shuffle = random.Random(9).shuffle
    # everything seat 0 cannot see is pooled and dealt again: seats 1 and 2's God cards,
    # tiles and movement cards, the God deck, the bag, the movement and event decks
    seats = other["seats"][1:]
    gods = other["god_deck"] + [g for p in seats for g in p["gods"]]
    shuffle(gods)
    for p in seats:
        k = len(p["gods"])
        p["gods"], gods = gods[:k], gods[k:]
    other["god_deck"] = gods
    for key, pile, keys in (("holder", "bag", GLYPHS), ("movement", "movement_deck", KINDS)):
        items = other[pile] + [x for p in seats for x in keys for _ in range(p[key][x])]
        shuffle(items)
        for p in seats:
            k = sum(p[key].values())
            p[key] = {x: items[:k].count(x) for x in keys}
            items = items[k:]
        other[pile] = items
    shuffle(other["event_deck"])
    assert other != true
    a, b = obs_of(h, 0, true), obs_of(h, 0, other)
    assert (a.view, a.events, a.legal) == (b.view, b.events, b.legal)
    assert bot.determinize(a, random.Random(17)) == bot.determinize(b, random.Random(17))
    # and the heuristic, which sees the same observation, answers the same
    assert bot.heuristic(a, random.Random(1)) == bot.heuristic(b, random.Random(1))


def test_hidden_setups_give_identical_observations():
    """Two games whose setups differ only in seat 1's dealt hand (swapped with cards deep in the
    decks): seat 0 cannot tell them apart while seat 1 only draws movement cards."""
    rnd = random.Random(5)
    setups = []
    base = {"movement_deck": rnd.sample(
        [k for k in KINDS for _ in range(MOVEMENT_COUNTS[k])], 110),
        "god_deck": rnd.sample(GODS, 36),
        "event_deck": rnd.sample([e for e, c in EVENT_COUNTS.items() for _ in range(c)], 40),
        "bag": rnd.sample([x for x in GLYPHS for _ in range(BAG_COUNTS[x])], 300)}
    setups.append(base)
    alt = {k: list(v) for k, v in base.items()}
    # seat 1 is dealt movement 4..7, gods 3..5, tiles 10..19: swap them with the bottom
    for key, lo, hi in (("movement_deck", 4, 8), ("god_deck", 3, 6), ("bag", 10, 20)):
        deck = alt[key]
        for i in range(lo, hi):
            j = len(deck) - 1 - (i - lo)
            deck[i], deck[j] = deck[j], deck[i]
    setups.append(alt)
    games = [new_game(2, {"setup": s}, b"same-seed") for s in setups]
    assert games[0].state["seats"][1] != games[1].state["seats"][1]
    pick = random.Random(3)
    for _ in range(12):
        obs = [obs_of(g, 0) for g in games]
        assert (obs[0].view, obs[0].events) == (obs[1].view, obs[1].events)
        assert bot.determinize(obs[0], random.Random(8)) == \
            bot.determinize(obs[1], random.Random(8))
        if games[0].awaiting() == [0]:
            action = choose("heuristic", obs[0], pick)
            if action["type"] == "exchange" and action["take"] == "bag":
                action = {"type": "draw_movement"}  # keep the bag's top identical
            for g in games:
                g.act(0, action)
        else:
            for g in games:
                g.act(1, {"type": "draw_movement"})


def test_rollout_policy_ends_games_from_a_determinization():
    g = new_game(3, {}, b"pap-rollout")
    obs = obs_of(g, 0)
    rnd = random.Random(6)
    state = bot.determinize(obs, rnd)
    rng = SimRng(rnd)
    for _ in range(5000):
        if GAME.is_over(state):
            break
        seat = GAME.awaiting(state)[0]
        legal = GAME.legal_actions(state, seat)
        action = bot.rollout(GAME, state, seat, legal, rnd)
        assert action in legal
        _, state = command(GAME, state, seat, action, rng)
    assert GAME.is_over(state) and state["end_reason"] == "final_round"


def test_the_evaluation_compares_the_seats_gain_with_its_rivals_mean_gain():
    """At a simulation's cut-off the reward is a logistic of the seat's projected gain over its
    rivals' mean gain: even when one rival gained all of it, a seat that kept up with the
    rivals' mean is at 1/2; a rival's extra gain lowers it; with 2 seats the rival's gain."""
    def reward(n: int, gains: list[float], seat: int = 0) -> float:
        state = bot.determinize(obs_of(new_game(n, {}, b"pap-eval"), seat), random.Random(1))
        now = [bot._projected(state, i) for i in range(n)]
        state["sim_start_value"] = [v - g for v, g in zip(now, gains)]
        return bot.evaluate(GAME, state, seat)

    assert reward(3, [3.0, 6.0, 0.0]) == pytest.approx(0.5)
    assert reward(3, [3.0, 0.0, 6.0]) == pytest.approx(0.5)
    assert reward(5, [2.0, 8.0, 0.0, 0.0, 0.0]) == pytest.approx(0.5)
    assert reward(3, [3.0, 7.0, 0.0]) < 0.5 < reward(3, [3.0, 5.0, 0.0])
    assert reward(2, [3.0, 3.0]) == pytest.approx(0.5)
    assert reward(2, [9.0, 3.0]) == pytest.approx(1 / (1 + math.exp(-6.0 / bot.EVAL_POINTS)))


def test_heuristic_scores_clearly_more_than_random():
    heur, rand, wins = [], [], 0
    for i in range(4):
        levels = ["heuristic", "random"] if i % 2 == 0 else ["random", "heuristic"]
        g = play(levels, {"turn_limit": 200}, f"pap-cmp-{i}".encode(), rnd_seed=i)
        res = GAME.result(g.state)
        h = levels.index("heuristic")
        heur.append(res["scores"][h])
        rand.append(res["scores"][1 - h])
        wins += h in res["winners"] and len(res["winners"]) == 1
    assert wins >= 3
    assert statistics.mean(heur) >= statistics.mean(rand) + 25
    # solo: the heuristic's margin (score - cards paid) beats random's
    margins = {"heuristic": [], "random": []}
    for i in range(3):
        for level in margins:
            g = play([level], {"variant": "solo", "god_deck_size": 6, "turn_limit": 120},
                     f"pap-solo-cmp-{i}".encode(), rnd_seed=i)
            margins[level].append(GAME.result(g.state)["details"]["seats"][0]["margin"])
    assert statistics.mean(margins["heuristic"]) > statistics.mean(margins["random"])


def test_mcts_plays_a_complete_short_game():
    ismcts = pytest.importorskip("service.engine.ismcts")
    g = new_game(2, {"god_deck_size": 8, "turn_limit": 40}, b"pap-mcts")
    rnd = random.Random(7)
    while not GAME.is_over(g.state):
        seat = g.awaiting()[0]
        obs = obs_of(g, seat)
        if seat == 0:
            action = ismcts.search(obs, bot.BOTS, rnd, budget_ms=10**6, iterations=20)
        else:
            action = choose("heuristic", obs, rnd)
        assert action in obs.legal
        g.act(seat, action)
    assert GAME.result(g.state) is not None


def test_the_search_keeps_the_heuristics_choice_within_the_games_prior_margin():
    """``prior_margin`` is how much higher the most visited action's mean reward must be to
    overrule the heuristic's choice: at 1 (rewards are in [0, 1]) the search answers the
    heuristic's choice at every decision; at -1 it answers its most visited action, which is
    not always the heuristic's."""
    ismcts = pytest.importorskip("service.engine.ismcts")

    def hooks(margin: float):
        return type("Hooks", (bot.Bots,), {"prior_margin": margin})()

    g = new_game(2, {}, b"pap-prior-margin")
    decisions = differed = 0
    for step in range(100):
        seat = g.awaiting()[0]
        obs = obs_of(g, seat)
        h = choose("heuristic", obs, random.Random(step))
        if len(obs.legal) > 1 and step % 4 == 0:
            decisions += 1
            kept = ismcts.search(obs, hooks(1.0), random.Random(step), budget_ms=None,
                                 iterations=20)
            assert kept == h
            free = ismcts.search(obs, hooks(-1.0), random.Random(step), budget_ms=None,
                                 iterations=20)
            differed += free != h
        g.act(seat, h)
    assert decisions >= 20 and differed > 0


def check_candidates(g: LocalGame, seat: int, step: int) -> None:
    """The search's candidates for ``seat``: legal, with the heuristic's choice among them, and
    the same in every determinization (they read only what the seat sees)."""
    obs = obs_of(g, seat)
    if len(obs.legal) < 2:
        return
    picks = [bot.candidates(GAME, bot.determinize(obs, random.Random(step + k)), seat,
                            obs.legal) for k in range(2)]
    assert picks[0] == picks[1]
    assert picks[0] and all(a in obs.legal for a in picks[0])
    assert choose("heuristic", obs, random.Random(0)) in picks[0]
    if obs.view["variant"] == "solo":  # forms whenever one can; discards a least useful glyph
        forms = [a for a in obs.legal if a["type"] == "form_god"]
        assert not forms or {"type": "buy_glyph"} not in picks[0]
        assert len(picks[0]) <= max(len(forms), bot.SOLO_DISCARDS, 1)


@pytest.mark.parametrize("n,options", [(2, {"turn_limit": 120}), (1, {"variant": "solo"})])
def test_search_candidates(n, options):
    support.play(GAME, ["heuristic"] * n, options, b"pap-cands", check=check_candidates,
                 check_every=3, stride=0)


def test_search_candidates_leave_out_market_exchanges_that_gain_nothing():
    """The search considers a market exchange only when it leaves the seat's plans better (the
    heuristic's own rule): with them, its noise picked exchanges that moved no plan forward.
    Over one two-seat game some legal exchanges of a useful glyph are left out, and every
    market exchange searched passes :func:`bot._improves`."""
    g = new_game(2, {}, b"pap-cands-exchanges")
    left_out = searched = 0
    for step in range(600):
        if not g.awaiting():
            break
        seat = g.awaiting()[0]
        obs = obs_of(g, seat)
        state = bot.determinize(obs, random.Random(step))
        me = bot._me_from_state(state, seat)
        plans = bot._plans(me)
        picks = bot.candidates(GAME, state, seat, obs.legal)
        for a in picks:
            if a["type"] == "exchange" and a["take"] != "bag":
                assert bot._improves(me, plans, a["pay"], a["take"]), a
                searched += 1
        useful = {x for _, god, _ in plans for x in bot._missing(me.holder, god)}
        left_out += sum(1 for a in obs.legal if a["type"] == "exchange" and a["take"] in useful
                        and a not in picks and not bot._improves(me, plans, a["pay"], a["take"]))
        g.act(seat, choose("heuristic", obs, random.Random(0)))
    assert searched > 0 and left_out > 0


@pytest.mark.parametrize("n", [2, 3])
def test_policy_on_the_full_state_plays_what_the_heuristic_plays_from_the_view(n):
    # the rollouts (and bench/papyrus_oracle.py's continuations) are the heuristic level
    g = new_game(n, {}, f"pap-policy-{n}".encode())
    compared = 0
    for _ in range(400):
        if not g.awaiting():
            break
        seat = g.awaiting()[0]
        obs = obs_of(g, seat)
        h = bot.heuristic(obs, random.Random(0))
        if len(obs.legal) > 1:
            assert bot.policy(g.state, seat, GAME.legal_actions(g.state, seat)) == h
            compared += 1
        g.act(seat, h)
    assert compared > 100


def test_a_forced_target_is_pursued_before_the_heuristics_own_plans():
    # bench/papyrus_oracle.py --targets: the seat plays the heuristic but pursues the god it is
    # given; here its worst plan of the deal, which the heuristic itself conquers fifth
    def conquests(target: str | None) -> list[str]:
        g = LocalGame(GAME, [{"name": "a"}, {"name": "b"}], {}, b"pap-forced-4")
        while g.awaiting():
            s = g.awaiting()[0]
            legal = GAME.legal_actions(g.state, s)
            g.act(s, bot.policy(g.state, s, legal, target if s == 0 else None))
        return g.state["seats"][0]["conquered"]

    worst = bot._plans(bot._me_from_state(
        LocalGame(GAME, [{"name": "a"}, {"name": "b"}], {}, b"pap-forced-4").state, 0))[-1][1]
    free, forced = conquests(None), conquests(worst)
    assert free.index(worst) == 4 and forced.index(worst) == 0
