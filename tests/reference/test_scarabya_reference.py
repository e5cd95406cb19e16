"""The Scarabya reference implementation: (a) proven on the spec's generator vectors and worked
examples (rules/scarabya.md sections 4.3 and 14), (b) cross-checked step by step against the
production module ``service.games.scarabya`` played through ``LocalGame`` with the same random
streams, in every mode.

Part (b) is skipped while ``service.games.scarabya`` does not exist.
"""

from __future__ import annotations

import hashlib
import importlib
import importlib.util
import random

import pytest

from service.engine.rng import NoRandomness, Rng
from tests.reference.scarabya_ref import (CENTRE, LETTERS, Illegal, Mulberry32, ScarabyaRef,
                                          Site, action, all_placements, generate_layout,
                                          layout_valid, parse_layout, reflect, shapes,
                                          shuffle_missions)

NO_RNG = NoRandomness()

L1 = [
    "S.R...S..S",
    ".S.S.S.R..",
    "S.......S.",
    "...RS.S.R.",
    ".S.....S..",
    "S..S....S.",
    ".S...S.R..",
    ".R..S..S..",
    "S..R..R..S",
    "..S..S..S.",
]
ORDER = list("XLPIVYWFZUNT")

# Section 14: (piece, legal count with reflection, played cells or None, points)
PLAYS = [
    ("X", 10, [(3, 5), (4, 4), (4, 5), (4, 6), (5, 5)], 0),
    ("L", 56, [(1, 2), (2, 2), (2, 3), (2, 4), (2, 5)], 1),
    ("P", 69, [(2, 0), (2, 1), (3, 0), (3, 1), (4, 0)], 8),
    ("I", 6, [(5, 0), (5, 1), (5, 2), (5, 3), (5, 4)], 4),
    ("V", 22, [(0, 8), (1, 8), (2, 6), (2, 7), (2, 8)], 0),
    ("Y", 31, [(0, 4), (0, 5), (0, 6), (0, 7), (1, 6)], 8),
    ("W", 15, [(4, 7), (5, 7), (5, 8), (6, 8), (6, 9)], 2),
    ("F", 25, [(6, 5), (7, 3), (7, 4), (7, 5), (8, 4)], 0),
    ("Z", 8, [(7, 7), (7, 8), (8, 8), (9, 8), (9, 9)], 2),
    ("U", 5, [(6, 0), (6, 1), (7, 0), (8, 0), (8, 1)], 0),
    ("N", 0, None, 0),
    ("T", 1, [(7, 2), (8, 2), (9, 1), (9, 2), (9, 3)], 0),
]

AFTER_4 = ["4.R...S..S", ".4LS.S.R..", "pPLLLL..S.", "PP.R1XS.R.", "P4..XXXS..",
           "iIIiIX..S.", ".S...S.R..", ".R..S..S..", "S..R..R..S", "..S..S..S."]
AFTER_6 = ["4.R.YYyYVS", ".4L4.4YRV.", "pPLLLLVVv.", "PP.R1XS.R.", "P4..XXXS..",
           "iIIiIX..S.", ".S...S.R..", ".R..S..S..", "S..R..R..S", "..S..S..S."]
AFTER_12 = ["4.R.YYyYVS", ".4L4.4YRV.", "pPLLLLVVv.", "PP.R1X2.R.", "P4..XXXw..",
            "iIIiIX.Ww.", "Uu...f.RWW", "URTFfF.zZ.", "uUTRF.R.Z2", ".TtT.S..zZ"]


def place(letter, cells):
    return action(letter, cells)


def l1_ref(n=1, **opts):
    options = {"setup": {"layout": L1, "mission_order": ORDER}, **opts}
    return ScarabyaRef(n, NO_RNG, options)


# ---------------------------------------------------------------------------------------------
# (a) generator vectors, shapes, worked examples — reference alone
# ---------------------------------------------------------------------------------------------

def test_mulberry32_vector():
    m = Mulberry32(1)
    assert [m.next(), m.next(), m.next()] == [2693262067, 11749833, 2265367787]


def test_layout_vector_seed_1():
    rng = Mulberry32(1)
    rows, attempts = generate_layout(rng)
    assert len(attempts) == 1
    assert rows == ["..........", "R.S..SRSS.", "S..S......", ".R...S.S.S", "SSS....R..",
                    "...SSS....", "..S.....S.", "...R.SR...", "S...S.R.SS", ".R.S..S..."]
    # exactly 96 draws per attempt: the stream continues at draw 97
    ref = Mulberry32(1)
    for _ in range(96):
        ref.next()
    assert rng.next() == ref.next()


def test_layout_vector_seed_7():
    rows, attempts = generate_layout(Mulberry32(7))
    assert len(attempts) == 2
    assert attempts[0] == ["...R.S..R.", "....S..SSR", "SSR...S..S", "..........", "S.S.S...S.",
                           "...SS.S.S.", "....S.....", ".....S...S", "S..RS.....", "..S.RRSS.R"]
    assert not layout_valid(attempts[0])
    assert rows == ["SR....S...", ".S.S...RS.", "RS.......S", ".......SS.", ".S..S..R.S",
                    "....SSS.SS", "S.SS.S..R.", "..S.R.....", "S.R..R...S", ".........."]
    assert layout_valid(rows)


def test_mission_deck_vector():
    assert shuffle_missions(Mulberry32(1)) == list("IXLUTFPNWYZV")


def test_orientation_counts():
    refl = {"F": 8, "I": 2, "L": 8, "N": 8, "P": 8, "T": 4, "U": 4, "V": 4, "W": 4, "X": 1,
            "Y": 8, "Z": 4}
    rot = {"F": 4, "I": 2, "L": 4, "N": 4, "P": 4, "T": 4, "U": 4, "V": 4, "W": 4, "X": 1,
           "Y": 4, "Z": 2}
    assert {p: len(shapes(p, True)) for p in LETTERS} == refl
    assert {p: len(shapes(p, False)) for p in LETTERS} == rot
    assert sum(refl.values()) == 63 and sum(rot.values()) == 41


def test_l1_first_placement_counts():
    assert layout_valid(L1)
    rocks, scarabs = parse_layout(L1)
    assert sorted(rocks) == sorted([(0, 2), (3, 3), (1, 7), (3, 8), (7, 1), (8, 3), (6, 7),
                                    (8, 6)])
    site = Site(rocks, scarabs)
    with_refl = {"F": 78, "I": 24, "L": 81, "N": 76, "P": 74, "T": 40, "U": 40, "V": 41,
                 "W": 39, "X": 10, "Y": 84, "Z": 39}
    rot_only = {"F": 39, "I": 24, "L": 41, "N": 37, "P": 36, "T": 40, "U": 40, "V": 41,
                "W": 39, "X": 10, "Y": 43, "Z": 20}
    assert {p: len(site.legal(p, True)) for p in LETTERS} == with_refl
    assert {p: len(site.legal(p, False)) for p in LETTERS} == rot_only


def test_invalid_layouts():
    bad_rock_centre = [row for row in L1]
    bad_rock_centre[4] = ".S..R..S.."  # Q0 now 3 rocks
    assert not layout_valid(bad_rock_centre)
    swapped = [row for row in L1]
    # move rock (3,3) onto the centre (4,4): counts still fine, V3 fails
    swapped[3] = "...." + "S.S.R."
    swapped[4] = ".S..R..S.."
    assert not layout_valid(swapped)
    assert not layout_valid(L1[:9])
    assert not layout_valid([r.replace("S", "x", 1) for r in L1])
    with pytest.raises(Illegal):
        ScarabyaRef(2, NO_RNG, {"setup": {"layout": bad_rock_centre}})


def test_example_s1():
    ref = l1_ref(2)
    assert ref.awaiting() == [0, 1]
    legal = ref.legal(0)
    assert len(legal) == 10
    middles = sorted({tuple(sorted(map(tuple, a["cells"])))[2] for a in legal})
    assert middles == [(3, 5), (4, 4), (4, 5), (4, 6), (5, 3), (5, 4), (5, 5), (5, 6), (6, 4),
                       (6, 5)]

    def x_at(r, c):
        return place("X", [(r - 1, c), (r, c - 1), (r, c), (r, c + 1), (r + 1, c)])

    assert ref.check(0, x_at(2, 2)) == "first_must_cover_center"
    assert ref.check(0, x_at(4, 3)) == "covers_rock"
    assert ref.check(0, x_at(9, 5)) == "off_board"
    assert ref.check(0, place("L", [(1, 2), (2, 2), (2, 3), (2, 4), (2, 5)])) == "not_current_piece"
    assert ref.check(0, place("X", [(3, 5), (4, 4), (4, 5), (4, 6)])) == "bad_cells"
    assert ref.check(0, {"type": "place", "piece": "X",
                         "cells": [[3, 5], [4, 4], [4, 5], [4, 6], [4, 6]]}) == "bad_cells"
    ref.act(0, place("X", PLAYS[0][2]))
    assert ref.awaiting() == [1] and ref.legal(0) == []
    with pytest.raises(Illegal):
        ref.act(0, place("X", PLAYS[0][2]))
    # cells in any order are accepted
    ref.act(1, {"type": "place", "piece": "X", "cells": [[5, 5], [4, 6], [3, 5], [4, 5], [4, 4]]})
    assert ref.scores() == [0, 0] and ref.current_piece() == "L"


def test_example_s2_errors_and_reflection():
    ref = l1_ref(1)
    ref.act(0, place("X", PLAYS[0][2]))
    assert len(ref.legal(0)) == 56
    assert ref.check(0, place("L", [(8, 7), (9, 4), (9, 5), (9, 6), (9, 7)])) == "not_adjacent"
    assert ref.check(0, place("L", [(2, 6), (3, 6), (4, 6), (5, 6), (5, 7)])) == "piece_overlaps"
    assert ref.check(0, place("L", [(0, 0), (0, 1), (0, 2), (0, 3), (1, 1)])) == "bad_shape"
    # the same L placement without reflection is bad_shape
    noref = l1_ref(1, allow_reflection=False)
    noref.act(0, place("X", PLAYS[0][2]))
    assert noref.check(0, place("L", PLAYS[1][2])) == "bad_shape"
    assert ref.check(0, place("L", PLAYS[1][2])) is None
    assert frozenset(PLAYS[1][2]) not in all_placements("L", False)


def _play_examples(ref, seats_for_turn):
    """Play S1-S4 on ``ref``; ``seats_for_turn(i)`` = the seats acting in round/turn i+1."""
    totals = []
    for i, (letter, count, cells, _pts) in enumerate(PLAYS):
        if cells is None or count == 1:
            continue  # discarded / forced: the engine does it
        assert ref.current_piece() == letter, i
        for seat in seats_for_turn(i):
            assert len(ref.legal(seat)) == count, (i, seat)
            ref.act(seat, place(letter, cells))
        totals.append(list(ref.scores()))
    return totals


def test_examples_s2_to_s4_standard_two_seats():
    ref = l1_ref(2)
    cumulative = 0
    for i, (letter, count, cells, pts) in enumerate(PLAYS[:10]):
        assert ref.current_piece() == letter
        assert ref.awaiting() == [0, 1]
        assert len(ref.legal(0)) == count and len(ref.legal(1)) == count
        ref.act(0, place(letter, cells))
        assert ref.scores() == [cumulative, cumulative]  # hidden until everybody committed
        ref.act(1, place(letter, cells))
        cumulative += pts
        assert ref.scores() == [cumulative, cumulative]
        if i == 3:
            assert ref.sites[0].render() == AFTER_4
            assert cumulative == 13
        if i == 5:
            assert ref.sites[1].render() == AFTER_6
            assert cumulative == 21
    # round 11: N discarded for both (nobody awaited), round 12: the only T is forced
    assert ref.over
    for s in (0, 1):
        site = ref.sites[s]
        assert site.render() == AFTER_12
        assert site.discarded == ["N"]
        assert site.history[-1][0] == "T"
        assert sorted(site.history[-1][1]) == PLAYS[11][2]
        regions = sorted(sorted(r[0]) for r in site.history[-1][4])
        assert regions == [[(6, 2), (6, 3), (6, 4)], [(9, 0)]]
        assert len(site.covered_scarabs()) == 14
    assert ref.result()["scores"] == [25, 25]
    assert ref.result()["ranks"] == [1, 1] and ref.result()["winners"] == [0, 1]


def test_example_s4_counts_before_forced_and_discard():
    ref = l1_ref(3)
    for letter, count, cells, _ in PLAYS[:9]:
        for seat in (0, 1, 2):
            ref.act(seat, place(letter, cells))
    # round 10, seat 2 places U elsewhere; seats 0 and 1 follow the example
    assert len(ref.legal(2)) == 5
    ref.act(0, place("U", PLAYS[9][2]))
    ref.act(1, place("U", PLAYS[9][2]))
    other = [a for a in ref.legal(2) if sorted(map(tuple, a["cells"])) != PLAYS[9][2]][0]
    ref.act(2, other)
    # seats 0 and 1 discarded N; seat 2 may or may not have options
    assert 0 not in ref.awaiting() and 1 not in ref.awaiting()
    assert ref.sites[0].discarded == ["N"]


def test_example_s5_duel():
    ref = l1_ref(2, mode="duel", duel_games=1)
    turn_points = {0: [], 1: []}
    for t, (letter, count, cells, pts) in enumerate(PLAYS, start=1):
        seat = 0 if t % 2 == 1 else 1
        if cells is None:
            continue
        if count == 1:
            assert ref.over
            break
        assert ref.awaiting() == [seat], t
        assert len(ref.legal(seat)) == count and ref.legal(1 - seat) == []
        before = ref.scores()[seat]
        ref.act(seat, place(letter, cells))
        turn_points[seat].append(ref.scores()[seat] - before)
    assert turn_points[0] == [0, 8, 0, 2, 2]
    assert turn_points[1] == [1, 4, 8, 0, 0]
    res = ref.result()
    assert res["scores"] == [12, 13] and res["winners"] == [1] and res["ranks"] == [2, 1]
    assert ref.site.render() == AFTER_12
    assert [e[1] for e in ref.log if e[0] == "discard"] == [0]  # A's turn 11


def test_example_s5_duel_match_second_game():
    ref = l1_ref(2, mode="duel")
    for t, (letter, count, cells, pts) in enumerate(PLAYS, start=1):
        if cells is None or count == 1:
            continue
        ref.act(0 if t % 2 == 1 else 1, place(letter, cells))
    assert not ref.over and ref.game_no == 2 and ref.game_scores == [[12, 13]]
    assert ref.awaiting() == [1] and ref.current_piece() == "X"
    assert ref.scores() == [12, 13] and not ref.site.camps
    for t, (letter, count, cells, pts) in enumerate(PLAYS, start=1):
        if cells is None or count == 1:
            continue
        ref.act(1 if t % 2 == 1 else 0, place(letter, cells))
    res = ref.result()
    assert ref.game_scores == [[12, 13], [13, 12]]
    assert res["scores"] == [25, 25] and res["winners"] == [0, 1] and res["ranks"] == [1, 1]


def test_example_s6_solo():
    ref = l1_ref(1)
    assert ref.mode == "solo"
    for letter, count, cells, _ in PLAYS:
        if cells is None or count == 1:
            continue
        ref.act(0, place(letter, cells))
    res = ref.result()
    assert res["scores"] == [14] and res["ranks"] == [1] and res["winners"] == []
    assert res["details"]["won"] is False and res["details"]["covered"] == 14
    assert res["details"]["uncovered"] == [[0, 0], [0, 9], [1, 1], [1, 3], [1, 5], [3, 4],
                                           [3, 6], [4, 1], [8, 9], [9, 5]]
    assert res["details"]["rounds"] == 12


def test_example_s6_solo_discard_loses():
    ref = l1_ref(1, solo_discard_loses=True)
    for letter, count, cells, _ in PLAYS[:10]:
        ref.act(0, place(letter, cells))
    assert ref.over and not ref.won
    assert ref.result()["details"]["rounds"] == 11
    assert ref.result()["winners"] == [] and ref.site.discarded == ["N"]
    assert "T" not in [h[0] for h in ref.site.history]


def test_solo_early_win():
    # The mechanism alone (the cross-check also plays greedy solo games, some of them won):
    # pretend the only scarabs lie under the first camp; covering them ends the game at once.
    ref = l1_ref(1)
    ref.scarabs = frozenset(PLAYS[0][2])  # pretend the only scarabs are under the X
    ref.act(0, place("X", PLAYS[0][2]))
    assert ref.over and ref.won and ref.result()["winners"] == [0]
    assert ref.result()["details"]["rounds"] == 1


def test_generator_consumes_96_draws_per_attempt_with_engine_rng():
    seed = b"scarabya-ref-draws"
    rng = Rng(seed, 1)
    rows, attempts = generate_layout(rng)
    assert rng.draws == 96 * len(attempts)
    order = shuffle_missions(rng)
    assert rng.draws == 96 * len(attempts) + 11
    ref = ScarabyaRef(2, Rng(seed, 1))
    assert ref.layout == rows and ref.order == order


# ---------------------------------------------------------------------------------------------
# (b) the cross-check against the production module
# ---------------------------------------------------------------------------------------------

def _production():
    if importlib.util.find_spec("service.games.scarabya") is None:
        pytest.skip("service.games.scarabya does not exist yet")
    return importlib.import_module("service.games.scarabya").GAME


def _norm(actions):
    out = []
    for a in actions:
        assert a.get("type") == "place", a
        out.append((a["piece"], tuple(sorted(tuple(c) for c in a["cells"]))))
    return out


def _seed(i: int) -> bytes:
    return hashlib.sha256(f"scarabya-crosscheck-{i}".encode()).digest()


def _config(i: int, rnd: random.Random):
    kind = i % 3
    options: dict = {}
    if kind == 0:
        mode, n = "standard", 2 + (i // 3) % 3
    elif kind == 1:
        mode, n = "duel", 2
        options["duel_games"] = rnd.choice([1, 2, 2])
    else:
        mode, n = "solo", 1
        options["solo_discard_loses"] = rnd.random() < 0.4
    if rnd.random() < 0.5 or mode != "standard":
        options["mode"] = mode
    if rnd.random() < 0.3:
        options["allow_reflection"] = False
    setup = {}
    if i % 11 == 5:
        setup["layout"] = L1
    elif i % 11 == 8:
        setup["layout"] = generate_layout(Rng(_seed(10_000 + i), 1))[0]
    if i % 7 == 2:
        order = list(LETTERS)
        rnd.shuffle(order)
        setup["mission_order"] = order
    if setup:
        options["setup"] = setup
    return mode, n, options


def _illegal_variants(ref, seat, rnd):
    """A few actions that break section 7, built from a legal one."""
    legal = ref.legal_cells(seat)
    if not legal:
        return []
    cells = sorted(rnd.choice(legal))
    letter = ref.current_piece()
    out = [place(rnd.choice([p for p in LETTERS if p != letter]), cells),
           {"type": "place", "piece": letter, "cells": [list(c) for c in cells[:4]]},
           {"type": "place", "piece": letter, "cells": [list(c) for c in cells[:4]]
            + [list(cells[0])]}]
    for _ in range(6):
        dr, dc = rnd.randint(-3, 3), rnd.randint(-3, 3)
        out.append({"type": "place", "piece": letter,
                    "cells": [[r + dr, c + dc] for r, c in cells]})
    mirrored = [(r, -c + 20) for r, c in cells]
    out.append(place(letter, [(r, c - min(x for _, x in mirrored)) for r, c in mirrored]))
    # a non-piece shape: a 5-cell row-and-bend never equal to the piece itself
    shape = sorted(reflect(cells))
    out.append(place(letter, [(r + cells[0][0], c) for r, c in shape]))
    return out


def _check_state(game, g, ref, n, where):
    assert g.awaiting() == ref.awaiting(), f"{where}: awaiting"
    for seat in range(n):
        prod = _norm(g.legal(seat))
        mine = _norm(ref.legal(seat))
        assert len(prod) == len(set(prod)), f"{where}: duplicate legal actions, seat {seat}"
        for a in g.legal(seat):
            assert a["cells"] == sorted(a["cells"]), f"{where}: legal cells not sorted"
        if set(prod) != set(mine):
            pytest.fail(f"{where}: legal actions of seat {seat} differ: production-only "
                        f"{sorted(set(prod) - set(mine))[:5]}, reference-only "
                        f"{sorted(set(mine) - set(prod))[:5]}")
    # public facts of the "all" view (field names as production serves them)
    view = game.view(g.state, "all")
    if ref.mode == "standard":
        assert view["scores"] == ref.scores(), f"{where}: standard scores"
        sites = ref.sites
    else:
        sites = [ref.site]
    if ref.mode == "duel":
        assert view["match_scores"] == ref.scores(), f"{where}: duel match scores"
    assert [s["rows"] for s in view["sites"]] == [s.render() for s in sites], \
        f"{where}: site rows (section 3 notation)"


def crosscheck_game(game, i: int) -> None:
    from service.engine import NotYourTurn, command
    from service.engine.game import IllegalAction
    from service.engine.local import LocalGame

    rnd = random.Random(i)
    mode, n, options = _config(i, rnd)
    seed = _seed(i)
    players = [{"name": f"p{s}"} for s in range(n)]
    where = f"seed #{i} ({seed.hex()[:16]}), {mode}, {n} seats, options={ {k: v for k, v in options.items() if k != 'setup'} }, setup={sorted(options.get('setup', {}))}"

    g = LocalGame(game, players, options, seed)
    ref = ScarabyaRef(n, Rng(seed, 1), options)
    layout_ev = [e for e in g.events if e["type"] == "LayoutCreated"]
    assert layout_ev and layout_ev[0]["data"]["rows"] == ref.layout, f"{where}: layout"
    assert game.view(g.state, "all")["layout"] == ref.layout, f"{where}: view layout"
    deck_ev = [e for e in g.events if e["type"] == "MissionDeckShuffled"]
    assert deck_ev and deck_ev[0]["data"]["order"] == ref.order, f"{where}: mission order"
    _check_state(game, g, ref, n, f"{where}, after creation")
    greedy = rnd.random() < 0.5
    step = 0
    while ref.awaiting():
        step += 1
        assert step < 200, f"{where}: no end"
        seat = rnd.choice(ref.awaiting())
        if step % 4 == 1:
            for bad in _illegal_variants(ref, seat, rnd):
                code = ref.check(seat, bad)
                if code is None:
                    continue
                with pytest.raises(IllegalAction) as exc:
                    command(game, g.state, seat, bad, None)
                assert exc.value.code == code, (f"{where}, step {step}: error code for {bad}: "
                                                f"production {exc.value.code}, spec {code}")
            others = [s for s in range(n) if s not in ref.awaiting()]
            if others:
                with pytest.raises(NotYourTurn):
                    command(game, g.state, others[0], ref.legal(seat)[0], None)
        choices = ref.legal_cells(seat)
        if greedy and mode == "solo":
            best = max(len(c & ref.scarabs) for c in choices)
            choices = [c for c in choices if len(c & ref.scarabs) == best]
        cells = list(rnd.choice(choices))
        rnd.shuffle(cells)  # the server accepts the cells in any order
        act = {"type": "place", "piece": ref.current_piece(), "cells": [list(c) for c in cells]}
        version = g.version
        g.act(seat, act)
        ref.act(seat, act, Rng(seed, version + 1))
        _check_state(game, g, ref, n, f"{where}, step {step} (seat {seat} {act['piece']})")
    assert game.is_over(g.state), f"{where}: reference over, production not"
    prod = game.result(g.state)
    mine = ref.result()
    for key in ("scores", "ranks", "winners"):
        assert prod[key] == mine[key], f"{where}: result {key}: production {prod[key]}, " \
                                       f"reference {mine[key]}"
    if mode == "solo":
        for key in ("won", "covered", "uncovered"):
            assert prod["details"][key] == mine["details"][key], f"{where}: solo {key}"
        assert prod["details"]["rounds_played"] == mine["details"]["rounds"], \
            f"{where}: solo rounds played"
    if mode == "duel":
        assert [gm["scores"] for gm in prod["details"]["games"]] == ref.game_scores, \
            f"{where}: duel per-game scores"
    view = game.view(g.state, "all")
    if mode == "standard":
        for s in range(n):
            assert view["sites"][s]["rows"] == ref.sites[s].render(), f"{where}: site {s} rows"


N_GAMES = 480
BATCH = 30


@pytest.mark.parametrize("batch", range(N_GAMES // BATCH))
def test_crosscheck_with_production(batch):
    game = _production()
    for i in range(batch * BATCH, (batch + 1) * BATCH):
        crosscheck_game(game, i)


@pytest.mark.parametrize("mode,n,extra", [("standard", 2, {}), ("standard", 4, {}),
                                          ("duel", 2, {"duel_games": 1}), ("duel", 2, {}),
                                          ("solo", 1, {}),
                                          ("solo", 1, {"solo_discard_loses": True})])
def test_examples_through_production(mode, n, extra):
    """S1-S6 scripted through production and the reference side by side."""
    from service.engine.local import LocalGame

    game = _production()
    options = {"mode": mode, "setup": {"layout": L1, "mission_order": ORDER}, **extra}
    g = LocalGame(game, [{"name": f"p{s}"} for s in range(n)], options, b"s" * 32)
    ref = ScarabyaRef(n, NO_RNG, options)
    where = f"examples {mode} {extra}"
    _check_state(game, g, ref, n, where)
    games = 2 if mode == "duel" and extra.get("duel_games", 2) == 2 else 1
    for gm in range(games):
        for t, (letter, count, cells, _) in enumerate(PLAYS, start=1):
            if cells is None or count == 1 or ref.over:
                continue
            seats = ref.awaiting()
            for seat in seats:
                g.act(seat, place(letter, cells))
                ref.act(seat, place(letter, cells))
                _check_state(game, g, ref, n, f"{where}, game {gm + 1} turn {t} seat {seat}")
    assert ref.over and game.is_over(g.state)
    prod, mine = game.result(g.state), ref.result()
    for key in ("scores", "ranks", "winners"):
        assert prod[key] == mine[key], f"{where}: {key}"


@pytest.mark.parametrize("allow_reflection", [True, False])
def test_layout_validation_against_production(allow_reflection):
    """Client layouts: production accepts exactly the layouts that pass V1-V5."""
    from service.engine.game import InvalidOptions
    from service.engine.local import LocalGame

    game = _production()
    candidates = [L1, generate_layout(Mulberry32(7))[1][0],  # V4 failure (sealed corner)
                  generate_layout(Mulberry32(1))[0]]
    bad = list(L1)
    bad[4] = ".S..R..S.."                                    # V2: 3 rocks in Q0
    candidates.append(bad)
    v3 = list(L1)
    v3[3], v3[4] = "....S.S.R.", ".S..R..S.."               # V3: rock on (4,4)
    candidates.append(v3)
    # rocks sealing the 2x2 centre (V4 and V5 both fail)
    ring = [list("." * 10) for _ in range(10)]
    for r, c in [(4, 3), (3, 4), (3, 5), (4, 6), (5, 3), (6, 4), (5, 6), (6, 5)]:
        ring[r][c] = "R"
    for q, (r0, c0) in enumerate([(0, 0), (0, 5), (5, 0), (5, 5)]):
        k = 0
        for i in range(5):
            for j in range(5):
                if ring[r0 + i][c0 + j] == "." and k < 6 and (i + j) % 2 == 0 and \
                        (r0 + i, c0 + j) not in CENTRE:
                    ring[r0 + i][c0 + j] = "S"
                    k += 1
    candidates.append(["".join(r) for r in ring])
    for seed in range(20):   # more rejected attempts from the generator itself
        candidates.extend(generate_layout(Mulberry32(seed))[1][:-1])
    checked = 0
    for rows in candidates:
        options = {"allow_reflection": allow_reflection, "setup": {"layout": rows}}
        expected = layout_valid(rows, allow_reflection)
        try:
            LocalGame(game, [{"name": "a"}, {"name": "b"}], options, b"v" * 32)
            accepted = True
        except InvalidOptions as exc:
            accepted = False
            assert exc.code == "invalid_layout", (rows, exc.code)
        assert accepted == expected, f"layout {rows}: production accepted={accepted}, " \
                                     f"spec V1-V5={expected}"
        checked += 1
    assert checked >= 7
