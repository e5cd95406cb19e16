"""The Tides of Time reference implementation: (a) proven on the spec's worked examples
(rules/tides-of-time.md section 12, plus the section 3 conformance vector and the section 7 tie),
(b) cross-checked step by step against the production module ``service.games.tides_of_time``
played through ``LocalGame`` with the same random streams, (c) a leak check through production
views: what the opponent and a spectator see never depends on a committed, unrevealed choice.

Parts (b) and (c) are skipped while ``service.games.tides_of_time`` does not exist. Production is
only observed through its public surface (events, ``view``, ``legal_actions``, ``result``).
"""

from __future__ import annotations

import hashlib
import importlib
import importlib.util
import json
import random

import pytest

from service.engine.rng import NoRandomness, Rng
from tests.reference.tides_ref import (CARDS, GAME_OVER, RELIC, SUITS, Illegal, TidesRef,
                                       effective_counts, score_kingdoms)

NO_RNG = NoRandomness()


def pick(card: int) -> dict:
    return {"type": "pick", "card": card}


def relic(keep: int, remove: int) -> dict:
    return {"type": "relic", "keep": keep, "remove": remove}


def both(ref: TidesRef, a: dict, b: dict) -> None:
    assert ref.awaiting() == [0, 1]
    ref.act(0, a)
    assert ref.awaiting() == [1] and ref.legal(0) == []
    ref.act(1, b)


def counts_tuple(kingdom) -> tuple:
    n = effective_counts(kingdom)
    return tuple(n[s] for s in SUITS)


# ---------------------------------------------------------------------------------------------
# (a) the worked examples, reference alone
# ---------------------------------------------------------------------------------------------

def test_card_table_design_check():
    suits = [CARDS[c][1] for c in CARDS]
    assert all(suits.count(s) == 3 for s in SUITS) and suits.count(None) == 3
    each = [CARDS[c] for c in CARDS if CARDS[c][2] == "EACH"]
    maj = [CARDS[c] for c in CARDS if CARDS[c][2] == "MAJ"]
    assert sorted(x[3][0] for x in each) == sorted(SUITS)
    assert sorted(x[3][0] for x in maj) == sorted(SUITS)
    assert all(x[1] != x[3][0] for x in each + maj)


class Mulberry32:
    """The reference generator of scarabya.md section 4.3."""

    def __init__(self, seed: int) -> None:
        self.state = seed & 0xFFFFFFFF

    def next(self) -> int:
        m = 0xFFFFFFFF
        self.state = (self.state + 0x6D2B79F5) & m
        t = self.state
        t = ((t ^ (t >> 15)) * (t | 1)) & m
        t = t ^ ((t + (((t ^ (t >> 7)) * (t | 61)) & m)) & m)
        return (t ^ (t >> 14)) & m

    def below(self, n: int) -> int:
        return self.next() % n


def test_shuffle_conformance_vector():
    m = Mulberry32(1)
    assert [m.next() for _ in range(3)] == [2693262067, 11749833, 2265367787]
    ref = TidesRef({}, Mulberry32(1))
    assert ref.deck == [7, 4, 14, 15, 13, 6, 10, 3, 11, 5, 9, 1, 18, 2, 16, 17, 12, 8]
    assert ref.hands == [[7, 4, 14, 15, 13], [6, 10, 3, 11, 5]]
    assert ref.pile == [9, 1, 18, 2, 16, 17, 12, 8]


def test_shuffle_draws_exactly_17_and_deck_order_draws_none():
    rng = Rng(b"tides-ref", 1)
    TidesRef({}, rng)
    assert rng.draws == 17
    TidesRef({"setup": {"deck_order": list(range(18, 0, -1))}}, NO_RNG)


T1_DECK = [17, 1, 15, 12, 7, 2, 10, 14, 6, 9, 5, 16, 3, 18, 11, 8, 13, 4]


def t1_ref(strict: bool = False) -> TidesRef:
    ref = TidesRef({"strict_zero_ties": strict, "setup": {"deck_order": T1_DECK}}, NO_RNG)
    assert sorted(ref.hands[0]) == [1, 7, 12, 15, 17] and sorted(ref.hands[1]) == [2, 6, 9, 10, 14]
    assert ref.pile == [5, 16, 3, 18, 11, 8, 13, 4]
    table = [  # A plays, B plays, A holds after exchange, B holds after exchange
        (17, 14, {2, 10, 6, 9}, {1, 15, 12, 7}),
        (2, 12, {1, 15, 7}, {10, 6, 9}),
        (1, 6, {10, 9}, {15, 7}),
    ]
    for a, b, ha, hb in table:
        both(ref, pick(a), pick(b))
        assert set(ref.hands[0]) == ha and set(ref.hands[1]) == hb
    assert ref.legal(0) == [pick(9), pick(10)]
    ref.act(0, pick(10))
    ref.act(1, pick(7))  # pick 5 is forced for both: 15 and 9
    assert ref.forced_log == [(0, pick(15)), (1, pick(9))]
    return ref


def test_example_T1_round_one():
    ref = t1_ref()
    assert ref.phase == RELIC and ref.round == 1
    assert sorted(ref.kingdom(0)) == [1, 2, 10, 15, 17]
    assert sorted(ref.kingdom(1)) == [6, 7, 9, 12, 14]
    assert counts_tuple(ref.kingdom(0)) == (4, 0, 0, 1, 1)
    assert counts_tuple(ref.kingdom(1)) == (0, 1, 2, 1, 1)
    per_card = ref.round_per_card[0]
    assert per_card[0] == {17: 0, 2: 7, 1: 0, 10: 6, 15: 12}
    assert per_card[1] == {14: 5, 12: 7, 6: 6, 7: 0, 9: 0}
    assert ref.round_scores == [[25], [18]]


def t2_ref() -> TidesRef:
    ref = t1_ref()
    assert ref.awaiting() == [0, 1] and len(ref.legal(0)) == 20
    with pytest.raises(Illegal) as e:
        ref.act(0, relic(1, 1))
    assert e.value.code == "same_card"
    with pytest.raises(Illegal) as e:
        ref.act(1, relic(3, 9))
    assert e.value.code == "not_played_this_round"
    with pytest.raises(Illegal) as e:
        ref.act(1, pick(14))
    assert e.value.code == "wrong_phase"
    both(ref, relic(1, 10), relic(6, 9))
    return ref


def test_example_T2_relic_phase():
    ref = t2_ref()
    assert ref.removed == [10, 9]
    assert sorted(ref.hands[0]) == [2, 5, 15, 16, 17]
    assert sorted(ref.hands[1]) == [3, 7, 12, 14, 18]
    assert ref.pile == [11, 8, 13, 4]
    assert ref.relics == [[1], [6]] and ref.round == 2 and ref.pick == 1


def t3_ref() -> TidesRef:
    ref = t2_ref()
    both(ref, pick(17), pick(14))
    assert set(ref.hands[0]) == {12, 7, 3, 18} and set(ref.hands[1]) == {2, 15, 5, 16}
    both(ref, pick(18), pick(2))
    assert set(ref.hands[0]) == {15, 5, 16} and set(ref.hands[1]) == {12, 7, 3}
    both(ref, pick(15), pick(12))
    assert set(ref.hands[0]) == {7, 3} and set(ref.hands[1]) == {5, 16}
    ref.act(1, pick(16))
    ref.act(0, pick(7))
    assert ref.forced_log[-2:] == [(0, pick(5)), (1, pick(3))]
    return ref


def test_example_T3_round_two():
    ref = t3_ref()
    assert counts_tuple(ref.kingdom(0)) == (2, 2, 2, 2, 0)
    assert counts_tuple(ref.kingdom(1)) == (2, 1, 0, 1, 1)
    pc = ref.round_per_card[1]
    assert pc[0] == {1: 0, 17: 0, 18: 0, 15: 6, 7: 7, 5: 0}
    assert pc[1] == {6: 0, 14: 0, 2: 7, 12: 0, 16: 8, 3: 3}
    assert ref.round_scores == [[25, 13], [18, 18]]
    both(ref, relic(17, 5), relic(16, 14))
    assert ref.removed == [10, 9, 5, 14]
    assert sorted(ref.hands[0]) == [7, 8, 11, 15, 18]
    assert sorted(ref.hands[1]) == [2, 3, 4, 12, 13]
    assert ref.pile == [] and ref.relics == [[1, 17], [6, 16]]


def test_example_T4_round_three_and_result():
    ref = t3_ref()
    both(ref, relic(17, 5), relic(16, 14))
    both(ref, pick(18), pick(13))
    both(ref, pick(2), pick(7))
    both(ref, pick(15), pick(3))
    both(ref, pick(12), pick(8))  # then forced 11 / 4
    assert ref.forced_log[-2:] == [(0, pick(11)), (1, pick(4))]
    assert ref.phase == GAME_OVER and ref.awaiting() == [] and ref.legal(0) == []
    assert counts_tuple(ref.kingdom(0)) == (4, 0, 0, 1, 4)
    assert counts_tuple(ref.kingdom(1)) == (1, 2, 2, 1, 0)
    pc = ref.round_per_card[2]
    assert pc[0] == {1: 0, 17: 0, 18: 8, 2: 7, 15: 12, 12: 0, 11: 3}
    assert pc[1] == {6: 6, 16: 8, 13: 7, 7: 0, 3: 6, 8: 0, 4: 0}
    assert ref.round_scores == [[25, 13, 30], [18, 18, 27]]
    assert ref.result() == {"scores": [68, 63], "ranks": [1, 2], "winners": [0],
                            "round_scores": [[25, 13, 30], [18, 18, 27]]}
    assert len(ref.kingdom(0)) + len(ref.kingdom(1)) == 14 and ref.removed == [10, 9, 5, 14]
    with pytest.raises(Illegal):
        ref.act(0, pick(11))


def test_example_T5_zero_ties_and_option():
    a, b = [1, 18, 2, 3, 4], [5, 6, 7, 8, 12]
    assert counts_tuple(a) == (3, 1, 0, 0, 0) and counts_tuple(b) == (0, 2, 2, 0, 1)
    pc, totals, _ = score_kingdoms([a, b], strict_zero_ties=False)
    assert pc[1] == {5: 0, 6: 6, 7: 0, 8: 3, 12: 7} and totals[1] == 16
    assert pc[0] == {1: 0, 18: 8, 2: 0, 3: 3, 4: 7} and totals[0] == 18
    pc, totals, _ = score_kingdoms([a, b], strict_zero_ties=True)
    assert pc[0] == {1: 0, 18: 0, 2: 0, 3: 3, 4: 0} and totals == [3, 16]


def test_example_T6_sets():
    a, b = [14, 17, 6, 9, 4, 7, 3], [5, 1, 2, 10, 11, 13, 15]
    assert counts_tuple(a) == (1, 4, 4, 1, 0) and counts_tuple(b) == (2, 1, 0, 2, 2)
    pc, totals, _ = score_kingdoms([a, b])
    assert pc[0] == {14: 20, 17: 0, 6: 12, 9: 0, 4: 0, 7: 0, 3: 12} and totals[0] == 44
    assert pc[1] == {5: 18, 1: 0, 2: 7, 10: 3, 11: 6, 13: 0, 15: 6} and totals[1] == 40
    a, b = [9, 1, 4, 11, 14], [16, 15, 10, 3, 8]
    pc, totals, _ = score_kingdoms([a, b])
    assert pc[0] == {9: 13, 1: 0, 4: 7, 11: 3, 14: 5} and totals[0] == 28
    assert pc[1] == {16: 0, 15: 3, 10: 3, 3: 0, 8: 3} and totals[1] == 9


def test_roof_edge_cases_and_section_9():
    assert counts_tuple([17]) == (0, 0, 0, 0, 0)            # no suited card: nothing
    assert counts_tuple([17, 1, 2, 4, 5, 7]) == (4, 4, 1, 0, 0)  # 2/2/1 -> 4/4/1
    # strict option: Kings Nest wins a 1-1 tie but not a 0-0 one
    pc, _, _ = score_kingdoms([[1, 4, 15], [13]], strict_zero_ties=True)
    assert pc[0][4] == 7                                      # temple 1 vs 1
    pc, _, _ = score_kingdoms([[1, 2], [3]], strict_zero_ties=True)
    assert pc[0][2] == 0                                      # stronghold 0 vs 0
    pc, _, _ = score_kingdoms([[1, 2], [3]], strict_zero_ties=False)
    assert pc[0][2] == 7


def test_section_7_equal_totals_share_victory():
    ref = TidesRef({"setup": {"deck_order": T1_DECK}}, NO_RNG)
    ref.round_scores = [[20, 25, 30], [25, 20, 30]]
    ref.phase = GAME_OVER
    res = ref.result()
    assert res["scores"] == [75, 75] and res["ranks"] == [1, 1] and res["winners"] == [0, 1]


def test_illegal_actions_reference():
    ref = TidesRef({"setup": {"deck_order": T1_DECK}}, NO_RNG)
    cases = [(0, pick(2), "card_not_in_hand"), (0, relic(17, 1), "wrong_phase"),
             (0, {"type": "pass"}, "malformed"), (0, pick("17"), "malformed"),
             (2, pick(17), "not_awaited")]
    for seat, action, code in cases:
        with pytest.raises(Illegal) as e:
            ref.act(seat, action)
        assert e.value.code == code
    ref.act(0, pick(17))
    with pytest.raises(Illegal) as e:
        ref.act(0, pick(1))
    assert e.value.code == "already_committed"                # 409, reason already_committed


# ---------------------------------------------------------------------------------------------
# (b) the cross-check against the production module
# ---------------------------------------------------------------------------------------------

def _production():
    if importlib.util.find_spec("service.games.tides_of_time") is None:
        pytest.skip("service.games.tides_of_time does not exist yet")
    return importlib.import_module("service.games.tides_of_time").GAME


def _js(actions) -> set:
    return {json.dumps(a, sort_keys=True) for a in actions}


def _seed(i: int) -> bytes:
    return hashlib.sha256(f"tides-crosscheck-{i}".encode()).digest()


def _options(i: int, rnd: random.Random) -> dict:
    options: dict = {"strict_zero_ties": bool(i % 2)}
    if i % 5 == 2:
        order = list(range(1, 19))
        rnd.shuffle(order)
        options["setup"] = {"deck_order": order}
    return options


def _compare(game, g, ref, where: str) -> None:
    assert g.awaiting() == ref.awaiting(), f"{where}: awaiting"
    for seat in (0, 1):
        prod, mine = _js(g.legal(seat)), _js(ref.legal(seat))
        assert prod == mine, (f"{where}: legal actions of seat {seat}: production only "
                              f"{sorted(prod - mine)}, reference only {sorted(mine - prod)}")
    # public facts, read from the spectator's view
    v = game.view(g.state, None)
    assert v["phase"] == ref.phase, f"{where}: phase"
    assert v["round"] == ref.round, f"{where}: round"
    if ref.phase == "DRAFT":
        assert v["pick"] == ref.pick, f"{where}: pick"
    assert sorted(v["removed"]) == sorted(ref.removed), f"{where}: removed pile"
    assert v["draw_pile_size"] == len(ref.pile), f"{where}: draw pile size"
    for seat in (0, 1):
        ps = v["seats"][seat]
        assert sorted(ps["relics"]) == sorted(ref.relics[seat]), f"{where}: relics of {seat}"
        assert sorted(ps["kingdom"]) == sorted(ref.kingdom(seat)), f"{where}: kingdom of {seat}"
        assert ps["round_scores"] == ref.round_scores[seat], f"{where}: round scores of {seat}"
        assert ps["committed"] == (ref.pending[seat] is not None), f"{where}: committed {seat}"
        assert ps["hand"] is None or ref.over, f"{where}: spectator sees hand of {seat}"
        assert ps["pending"] is None or ref.over, f"{where}: spectator sees pending of {seat}"
        own_pending = game.view(g.state, seat)["seats"][seat]["pending"]
        mine = ref.pending[seat]
        if isinstance(mine, tuple):
            mine = {"keep": mine[0], "remove": mine[1]}
        assert own_pending == mine, f"{where}: own pending choice of {seat} (owner must see it)"
        assert game.view(g.state, 1 - seat)["seats"][seat]["pending"] is None, \
            f"{where}: opponent sees pending of {seat}"
        # In RELIC, spec 5.3.1 puts this round's 5 cards back in hand (the reference keeps them
        # in ``played``; production's view shows them as the hand and still lists them under
        # kingdom/played_this_round).
        in_hand = ref.hands[seat] if ref.phase == "DRAFT" else ref.played[seat]
        if ref.phase in ("DRAFT", "RELIC"):
            assert ps["hand_size"] == len(in_hand), f"{where}: hand size of {seat}"
            own = game.view(g.state, seat)["seats"][seat]["hand"]
            assert sorted(own) == sorted(in_hand), f"{where}: own hand of {seat}"
            assert game.view(g.state, 1 - seat)["seats"][seat]["hand"] is None, \
                f"{where}: opponent sees hand of {seat}"


def _check_rejections(game, g, ref, rnd, where: str) -> None:
    """Both sides refuse the same illegal actions (codes of spec section 11 where defined)."""
    from service.engine import NotYourTurn, command
    from service.engine.game import IllegalAction

    cases = []
    awaiting = ref.awaiting()
    for seat in (0, 1):
        if seat not in awaiting:
            cases.append((seat, pick(1), "already_committed"))
            cases.append((seat, relic(1, 2), "already_committed"))
            continue
        if ref.phase == "DRAFT":
            outside = [c for c in range(1, 19) if c not in ref.hands[seat]]
            cases.append((seat, pick(rnd.choice(outside)), "card_not_in_hand"))
            cases.append((seat, relic(1, 2), "wrong_phase"))
        else:
            mine = ref.played[seat]
            other = [c for c in range(1, 19) if c not in mine]
            cases.append((seat, relic(mine[0], mine[0]), "same_card"))
            cases.append((seat, relic(rnd.choice(other), mine[1]), "not_played_this_round"))
            cases.append((seat, relic(mine[1], rnd.choice(other)), "not_played_this_round"))
            cases.append((seat, pick(mine[0]), "wrong_phase"))
        cases.append((seat, {"type": "draw"}, "malformed"))
    for seat, action, code in cases:
        with pytest.raises(Illegal) as e:
            ref.act(seat, action)
        assert e.value.code == code
        try:
            command(game, g.state, seat, action, NO_RNG)
        except NotYourTurn as err:
            got = "409 " + err.reason
        except IllegalAction as err:
            got = err.code
        else:
            pytest.fail(f"{where}: production accepted {action} from seat {seat}")
        if code == "already_committed":
            assert got == "409 already_committed", f"{where}: {action} from seat {seat}: {got}"
        elif code != "malformed":
            assert got == code, f"{where}: {action} from seat {seat}: code {got}, spec {code}"


def _compare_end(game, g, ref, where: str) -> None:
    assert game.is_over(g.state), f"{where}: reference over, production not"
    prod = game.result(g.state)
    mine = ref.result()
    for key in ("scores", "ranks", "winners"):
        assert prod[key] == mine[key], f"{where}: result {key}"
    details = prod["details"]
    assert details["round_scores"] == mine["round_scores"], f"{where}: round scores"
    for r, rnd_info in enumerate(details["rounds"]):
        for seat in (0, 1):
            prod_pc = {e["card"]: e["points"] for e in rnd_info["per_card"][seat]}
            assert prod_pc == ref.round_per_card[r][seat], \
                f"{where}: per-card points round {r + 1} seat {seat}"
            assert rnd_info["counts"][seat] == ref.round_counts[r][seat], \
                f"{where}: effective counts round {r + 1} seat {seat}"
            assert rnd_info["totals"][seat] == ref.round_scores[seat][r]
    assert sorted(details["removed"]) == sorted(ref.removed), f"{where}: removed"
    from service.engine import NotYourTurn, command
    for seat in (0, 1):
        assert g.legal(seat) == [] == ref.legal(seat), f"{where}: legal actions after the end"
        with pytest.raises(Illegal):
            ref.act(seat, pick(1))
        with pytest.raises(NotYourTurn):
            command(game, g.state, seat, pick(1), NO_RNG)


def _forced_of(events) -> list:
    return [(ev["seat"], {"type": "pick", "card": ev["data"]["card"]}) for ev in events
            if ev.get("forced") and ev["type"] == "PickCommitted"]


def crosscheck_game(game, i: int) -> None:
    from service.engine.local import LocalGame

    rnd = random.Random(i)
    seed = _seed(i)
    options = _options(i, rnd)
    players = [{"name": "a"}, {"name": "b"}]
    where = f"game #{i} (seed {seed.hex()[:16]}, options {options})"

    g = LocalGame(game, players, options, seed)
    ref = TidesRef(options, Rng(seed, 1))
    dealt = next(ev for ev in g.events if ev["type"] == "CardsDealt")["data"]
    assert dealt["hands"][0] + dealt["hands"][1] + dealt["pile"] == ref.deck, f"{where}: deal"
    _compare(game, g, ref, f"{where}, after creation")
    step = 0
    while ref.awaiting():
        step += 1
        assert step < 100, f"{where}: no end"
        if step % 4 == 1:
            _check_rejections(game, g, ref, rnd, f"{where}, before step {step}")
        seat = rnd.choice(ref.awaiting())
        action = rnd.choice(ref.legal(seat))
        before = len(ref.forced_log)
        events = g.act(seat, action)
        ref.act(seat, action)
        here = f"{where}, step {step} (seat {seat} {action})"
        assert _forced_of(events) == ref.forced_log[before:], f"{here}: forced moves"
        _compare(game, g, ref, here)
    _compare_end(game, g, ref, where)


N_GAMES = 1200
BATCH = 100


@pytest.mark.parametrize("batch", range(N_GAMES // BATCH))
def test_crosscheck_with_production(batch):
    game = _production()
    for i in range(batch * BATCH, (batch + 1) * BATCH):
        crosscheck_game(game, i)


def test_crosscheck_worked_example_through_production():
    """T1-T4 played in production: the spec's numbers, forced moves included."""
    from service.engine.local import LocalGame

    game = _production()
    g = LocalGame(game, [{"name": "A"}, {"name": "B"}], {"setup": {"deck_order": T1_DECK}},
                  b"t1")
    script = [(17, 14), (2, 12), (1, 6), (10, 7), ("r", 1, 10, 6, 9),
              (17, 14), (18, 2), (15, 12), (7, 16), ("r", 17, 5, 16, 14),
              (18, 13), (2, 7), (15, 3), (12, 8)]
    for step in script:
        if step[0] == "r":
            g.act(0, relic(step[1], step[2]))
            g.act(1, relic(step[3], step[4]))
        else:
            g.act(0, pick(step[0]))
            g.act(1, pick(step[1]))
    res = game.result(g.state)
    assert res["scores"] == [68, 63] and res["winners"] == [0] and res["ranks"] == [1, 2]
    assert res["details"]["round_scores"] == [[25, 13, 30], [18, 18, 27]]


# ---------------------------------------------------------------------------------------------
# (c) no leak of a committed, unrevealed choice
# ---------------------------------------------------------------------------------------------

def _leak_check(game, g, seat: int, options_for_seat: list, where: str) -> None:
    """Commit each alternative for ``seat`` (the first to commit) on copies of the state; the
    opponent's and the spectator's views, legal actions and visible events must not differ."""
    from service.engine import command, visible
    from service.engine.rng import Rng as _Rng

    other = 1 - seat
    seen = None
    for action in options_for_seat:
        events, state = command(game, g.state, seat, action, _Rng(g.seed, g.version + 1))
        assert not game.is_over(state)
        obs = {}
        for viewer in (other, None):
            obs[f"viewer {viewer}"] = {
                "view": game.view(state, viewer),
                "events": [visible(game, ev, viewer, False) for ev in events],
                "awaiting": game.awaiting(state),
            }
        obs["legal_other"] = _js(game.legal_actions(state, other))
        blob = json.dumps(obs, sort_keys=True, default=str)
        if seen is None:
            seen = (action, blob)
        elif blob != seen[1]:
            a = json.loads(seen[1])
            b = json.loads(blob)
            diff = {k: (a[k], b[k]) for k in a if a[k] != b[k]}
            pytest.fail(f"{where}: committing {seen[0]} vs {action} for seat {seat} is visible "
                        f"to the opponent/spectator: {str(diff)[:1500]}")


@pytest.mark.parametrize("strict", [False, True])
def test_no_leak_of_pending_choices(strict):
    from service.engine.local import LocalGame

    game = _production()
    for i in range(12):
        rnd = random.Random(1000 + i)
        seed = _seed(1000 + i)
        options = {"strict_zero_ties": strict}
        g = LocalGame(game, [{"name": "a"}, {"name": "b"}], options, seed)
        step = 0
        while g.awaiting():
            step += 1
            awaiting = g.awaiting()
            seat = rnd.choice(awaiting)
            legal = g.legal(seat)
            if len(awaiting) == 2 and len(legal) > 1:
                alts = legal if len(legal) <= 5 else rnd.sample(legal, 5)
                _leak_check(game, g, seat, alts, f"leak game #{i} step {step}")
            g.act(seat, rnd.choice(legal))


def _observe(game, g, viewers, events) -> str:
    from service.engine.fold import visible

    obs = {}
    for viewer in viewers:
        obs[f"viewer {viewer}"] = {
            "view": game.view(g.state, viewer),
            "events": [visible(game, ev, viewer, game.is_over(g.state)) for ev in events],
            "awaiting": game.awaiting(g.state),
        }
    return json.dumps(obs, sort_keys=True)


def _play_round_one(game, g, rnd) -> None:
    """Random round-1 picks and relic choices, drawn from seat 0/1's legal lists."""
    while game.view(g.state, None)["round"] == 1:
        seat = rnd.choice(g.awaiting())
        legal = sorted(g.legal(seat), key=lambda a: json.dumps(a, sort_keys=True))
        g.act(seat, rnd.choice(legal))


def test_no_leak_of_hands_and_draw_pile():
    """Two deals that differ only in something a viewer may not know look the same to it:
    seat 0's hand vs the pile (seat 1 and the spectator at creation), the draw pile order
    (everybody at creation), and what the other seat drew after relic phase 1."""
    from service.engine.local import LocalGame

    game = _production()
    players = [{"name": "a"}, {"name": "b"}]
    for i in range(20):
        rnd = random.Random(2000 + i)
        base = list(range(1, 19))
        rnd.shuffle(base)
        seed = _seed(2000 + i)

        def make(order):
            return LocalGame(game, players, {"setup": {"deck_order": order}}, seed)

        def swapped(a, b):
            order = list(base)
            order[a], order[b] = order[b], order[a]
            return order

        g0 = make(base)
        # seat s's hand card <-> a pile card: invisible to the other seat and the spectator
        for seat, other in ((0, 1), (1, 0)):
            pos = rnd.randrange(5) + 5 * seat
            g1 = make(swapped(pos, 10 + rnd.randrange(8)))
            assert (_observe(game, g0, [other, None], g0.events)
                    == _observe(game, g1, [other, None], g1.events)), \
                f"deal #{i}: seat {seat}'s hand visible to seat {other} or the spectator"
        # two pile cards: invisible to everybody
        g1 = make(swapped(10 + rnd.randrange(8), 10 + rnd.randrange(8)))
        assert (_observe(game, g0, [0, 1, None], g0.events)
                == _observe(game, g1, [0, 1, None], g1.events)), f"deal #{i}: pile order"
        # after relic phase 1: seat 0 drew pile[0:2], seat 1 pile[2:4]
        for seat, other, a, b in ((0, 1, 0, 6), (1, 0, 2, 5)):
            ga, gb = make(base), make(swapped(10 + a, 10 + b))
            _play_round_one(game, ga, random.Random(i))
            _play_round_one(game, gb, random.Random(i))
            assert (_observe(game, ga, [other, None], ga.events)
                    == _observe(game, gb, [other, None], gb.events)), \
                f"deal #{i}: seat {seat}'s round-2 draw visible to seat {other} or the spectator"
