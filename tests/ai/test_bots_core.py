"""Bot levels for Diamant and Tides of Time, the ISMCTS core, and every game's bot hooks.

Everything a bot gets is an :class:`service.engine.bots.Observation` built by
:func:`service.engine.bots.observe` from the true state through ``view``/``visible``; these tests
check that the bots only ever play legal actions from it, that the determinizers sample states
consistent with it, and that they never depend on the true hidden state.
"""

from __future__ import annotations

import random

import pytest

from service.engine.bots import choose, observe
from tests.ai import support
from service.games.diamant import bots as ai_diamant
from service.games.tides_of_time import bots as ai_tides
from service.engine.ismcts import search
from service.engine import clone
from service.engine.local import LocalGame
from service.games import GAMES

DIAMANT = GAMES["diamant"]
TIDES = GAMES["tides-of-time"]
MCTS_ITERATIONS = 25


def _players(n):
    return [{"name": f"p{i}"} for i in range(n)]


def _obs(g: LocalGame, seat: int):
    return support.obs_of(g.game, g, seat)


def _bot_action(level, obs, rnd):
    if level == "mcts":
        if len(obs.legal) == 1:
            return obs.legal[0]
        return search(obs, obs.game.bots, rnd, budget_ms=None, iterations=MCTS_ITERATIONS)
    return choose(level, obs, rnd)


def play(game, levels, seed: bytes, rnd_seed: int = 0, on_decision=None,
         options: dict | None = None) -> LocalGame:
    g = LocalGame(game, _players(len(levels)), options or {}, seed)
    rnd = random.Random(rnd_seed)
    for _ in range(5000):
        awaiting = g.awaiting()
        if not awaiting:
            break
        seat = awaiting[0]
        obs = _obs(g, seat)
        assert obs.legal, "an awaited seat has legal actions"
        if on_decision is not None:
            on_decision(g, seat, obs)
        action = _bot_action(levels[seat], obs, rnd)
        assert action in obs.legal
        g.act(seat, action)
    assert game.is_over(g.state)
    return g


@pytest.mark.parametrize("level", ["random", "heuristic", "mcts"])
def test_diamant_levels_play_whole_games(level):
    g = play(DIAMANT, [level, "random", "heuristic", level], b"diamant-" + level.encode())
    assert len(DIAMANT.result(g.state)["scores"]) == 4


@pytest.mark.parametrize("level", ["random", "heuristic", "mcts"])
def test_tides_levels_play_whole_games(level):
    for seats in ([level, "random"], ["heuristic", level]):
        g = play(TIDES, seats, b"tides-" + level.encode())
        assert TIDES.result(g.state)["winners"]


def test_mcts_is_deterministic_for_a_seed():
    g = LocalGame(TIDES, _players(2), {}, b"det")
    obs = _obs(g, 0)
    mod = TIDES.bots
    a = search(obs, mod, random.Random(7), budget_ms=None, iterations=40)
    b = search(obs, mod, random.Random(7), budget_ms=None, iterations=40)
    assert a == b and a in obs.legal


def test_mcts_respects_a_time_budget():
    import time
    g = LocalGame(DIAMANT, _players(3), {}, b"budget")
    obs = _obs(g, 0)
    t0 = time.perf_counter()
    action = choose("mcts", obs, random.Random(1), budget_ms=50)
    assert time.perf_counter() - t0 < 2.0
    assert action in obs.legal


# -- determinizers: consistent with the observation ----------------------------------------

def _check_determinizations(g, seat, obs, samples=3):
    mod = g.game.bots
    for k in range(samples):
        sampled = mod.determinize(obs, random.Random(k))
        assert g.game.view(sampled, seat) == obs.view
        assert g.game.legal_actions(sampled, seat) == obs.legal
        assert sorted(g.game.awaiting(sampled)) == sorted(g.game.awaiting(g.state))
        # The sample is a playable full state: every awaited seat can act in it.
        for s in g.game.awaiting(sampled):
            assert g.game.legal_actions(sampled, s)


@pytest.mark.parametrize("n", [3, 5])
def test_diamant_determinizations_match_the_observation(n):
    checked = []

    def check(g, seat, obs):
        _check_determinizations(g, seat, obs)
        sampled = ai_diamant.determinize(obs, random.Random(0))
        # Deck composition is the true one; chests of others reconstructed from the log.
        assert sorted(sampled["deck"]) == sorted(g.state["deck"])
        assert sampled["chest"] == g.state["chest"]
        checked.append(seat)

    play(DIAMANT, ["heuristic"] * n, b"det-diamant-%d" % n, on_decision=check)
    assert len(checked) > 10


def test_tides_determinizations_match_the_observation():
    checked = []

    def check(g, seat, obs):
        _check_determinizations(g, seat, obs)
        sampled = ai_tides.determinize(obs, random.Random(0))
        opp = 1 - seat
        st = g.state
        # After the first exchange of a round the opponent's hand is known exactly.
        if st["phase"] == "DRAFT" and st["pick"] >= 2:
            assert sorted(sampled["hands"][opp]) == sorted(st["hands"][opp])
        # The unseen cards are split between the opponent's hand and the pile.
        assert sorted(sampled["pile"] + sampled["hands"][opp]) == \
            sorted(st["pile"] + st["hands"][opp])
        assert len(sampled["pile"]) == len(st["pile"])
        checked.append(seat)

    for seed in (b"t1", b"t2"):
        play(TIDES, ["heuristic", "random"], seed, on_decision=check)
    assert len(checked) > 20


def test_tides_determinizer_without_a_log_treats_the_opponent_hand_as_unknown():
    g = LocalGame(TIDES, _players(2), {}, b"nolog")
    rnd = random.Random(0)
    for _ in range(3):
        for seat in g.awaiting():
            g.act(seat, rnd.choice(g.legal(seat)))
    obs = _obs(g, 0)
    bare = type(obs)(game=obs.game, seat=0, players=obs.players, options=obs.options,
                     view=obs.view, events=[], legal=obs.legal)
    sampled = ai_tides.determinize(bare, random.Random(3))
    assert TIDES.view(sampled, 0) == obs.view
    assert TIDES.legal_actions(sampled, 0) == obs.legal


#: Seats and options of each game's game in the check below; a game not listed plays at its
#: ``min_players`` with no options.
EVERY_GAME = {"scarabya": (2, {}), "papyrus": (2, {"turn_limit": 30})}
#: Decisions (from the first) at which the determinizations are checked and an mcts search is
#: run; the rest of the game is played by the heuristic.
CHECKED_DECISIONS = 12


@pytest.mark.parametrize("type_id", list(GAMES))
def test_every_games_bots_play_legal_actions_from_samples_consistent_with_the_observation(
        type_id):
    """Every registered game: heuristic bots at every seat play a whole game; at its first
    decisions a game with a determinizer samples states consistent with the observation and a
    short mcts search picks a legal action (a game without bot hooks: random bots)."""
    game = GAMES[type_id]
    seats, options = EVERY_GAME.get(type_id, (game.min_players, {}))
    decisions = []

    def check(g, seat, obs):
        decisions.append(seat)
        if len(decisions) <= CHECKED_DECISIONS and getattr(game.bots, "determinize", None):
            _check_determinizations(g, seat, obs, samples=2)
            if len(obs.legal) > 1:
                action = search(obs, game.bots, random.Random(len(decisions)), budget_ms=None,
                                iterations=MCTS_ITERATIONS)
                assert action in obs.legal

    level = "heuristic" if game.bots is not None else "random"
    play(game, [level] * seats, f"every-{type_id}".encode(), on_decision=check, options=options)
    assert decisions


# -- never reads the true hidden state -----------------------------------------------------

def _same_bot_outputs(obs_a, obs_b, mod):
    assert obs_a.view == obs_b.view and obs_a.events == obs_b.events and obs_a.legal == obs_b.legal
    for k in range(3):
        assert mod.determinize(obs_a, random.Random(k)) == mod.determinize(obs_b, random.Random(k))
    for level in ("heuristic", "mcts"):
        if level == "mcts":
            a = search(obs_a, mod.BOTS, random.Random(11), budget_ms=None, iterations=30)
            b = search(obs_b, mod.BOTS, random.Random(11), budget_ms=None, iterations=30)
        else:
            a = choose(level, obs_a, random.Random(11))
            b = choose(level, obs_b, random.Random(11))
        assert a == b


def test_diamant_bots_ignore_the_true_deck_order():
    g = LocalGame(DIAMANT, _players(3), {}, b"hidden-diamant")
    rnd = random.Random(2)
    # Advance a few steps with everyone continuing (stop if the round ended).
    for _ in range(3):
        if g.state["round"] != 1 or len(g.state["path"]) > 3:
            break
        for seat in g.awaiting():
            if g.state["round"] == 1:
                g.act(seat, {"type": "decide", "choice": "continue"})
    seat = g.awaiting()[0]
    # A second true world: same public history, the rest of the deck in another order.
    other_state = clone(g.state)
    rnd.shuffle(other_state["deck"])
    assert other_state["deck"] != g.state["deck"]
    other_events = clone(g.events)
    for ev in other_events:
        if ev["type"] == "RoundStarted" and ev["data"]["round"] == g.state["round"]:
            ev["data"]["deck"] = list(g.state["path"]) + list(other_state["deck"])
    obs_a = _obs(g, seat)
    obs_b = observe(DIAMANT, other_events[0]["data"], other_events[1:], other_state, seat)
    obs_b = type(obs_b)(**{**obs_b.__dict__, "version": obs_a.version})
    _same_bot_outputs(obs_a, obs_b, ai_diamant)


def test_tides_bots_ignore_the_opponent_hand_and_the_pile_order():
    g = LocalGame(TIDES, _players(2), {}, b"hidden-tides")
    st = g.state
    # World B: swap one card of seat 1's hand with one of the pile, and reverse the pile.
    other = clone(st)
    a, b = other["hands"][1][0], other["pile"][0]
    other["hands"][1][0], other["pile"][0] = b, a
    other["pile"].reverse()
    events = clone(g.events)
    for ev in events:
        if ev["type"] == "CardsDealt":
            ev["data"]["hands"][1] = list(other["hands"][1])
            ev["data"]["pile"] = list(other["pile"])
    obs_a = _obs(g, 0)
    obs_b = observe(TIDES, events[0]["data"], events[1:], other, 0, g.version)
    _same_bot_outputs(obs_a, obs_b, ai_tides)
    # Also with the opponent's committed (hidden) pick differing between the worlds.
    g.act(1, {"type": "pick", "card": st["hands"][1][0]})
    other_b = clone(g.state)
    alt = g.state["hands"][1][1]
    other_b["pending"][1] = alt
    events_b = clone(g.events)
    events_b[-1]["data"]["card"] = alt
    obs_a = _obs(g, 0)
    obs_b = observe(TIDES, events_b[0]["data"], events_b[1:], other_b, 0, g.version)
    _same_bot_outputs(obs_a, obs_b, ai_tides)


# -- heuristics -----------------------------------------------------------------------------

def test_diamant_leave_rule_formula():
    # One spider on the path; 2 spiders among 10 cards: p = 0.2. Treasures 5 and 7 with 2 in the
    # cave: G = (2 + 3) / 10 = 0.5. Stake A = 10 + 3 // 2 = 11: p * A = 2.2 > 0.5 -> return.
    deck = ["T5a", "T7a", "SPIDER2", "SPIDER3", "SNAKE1", "LAVA1", "RAM1", "BOULDER1", "R1", "R2"]
    loss, gain = ai_diamant.leave_margin(deck, ["SPIDER1", "T1"], 10, 3, 2, 0)
    assert loss == pytest.approx(0.2 * 11) and gain == pytest.approx(0.5)
    # Nothing on the path that can repeat: never leave.
    loss, gain = ai_diamant.leave_margin(deck, ["T1"], 50, 0, 2, 0)
    assert loss == 0


def test_diamant_heuristic_returns_when_the_risk_is_high():
    g = LocalGame(DIAMANT, _players(3), {"setup": {"round_decks": [
        ["T17", "SPIDER1", "SNAKE1", "LAVA1", "BOULDER1", "RAM1"] +
        [c for c in ai_diamant.CANONICAL if c not in
         ("T17", "SPIDER1", "SNAKE1", "LAVA1", "BOULDER1", "RAM1")]]}}, b"risk")
    obs = _obs(g, 0)
    assert ai_diamant.heuristic(obs, random.Random(0))["choice"] == "continue"
    for _ in range(5):
        for seat in g.awaiting():
            g.act(seat, {"type": "decide", "choice": "continue"})
    obs = _obs(g, 0)
    assert obs.view["path"][-1] == "RAM1"
    assert ai_diamant.heuristic(obs, random.Random(0))["choice"] == "return"


def test_mcts_beats_random_at_tides():
    wins = 0.0
    games = 6
    for i in range(games):
        levels = ["mcts", "random"] if i % 2 == 0 else ["random", "mcts"]
        g = play(TIDES, levels, b"duel-%d" % i, rnd_seed=i)
        res = TIDES.result(g.state)
        me = levels.index("mcts")
        if me in res["winners"]:
            wins += 1 / len(res["winners"])
    assert wins >= 5
