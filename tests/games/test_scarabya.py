"""Scarabya: generator vectors, pieces, worked examples S1-S6, options, hostile actions, leaks.

Spec: /work/shared/rules/scarabya.md (section numbers below refer to it).
"""

from __future__ import annotations

import orjson
import pytest
from jsonschema import Draft202012Validator

from service.engine import ALL, InvalidOptions, NotYourTurn, Rng, command
from service.engine.fold import clone
from service.engine.local import LocalGame
from service.games.scarabya import rules as S
from service.games.scarabya import GAME
from tests.games.harness import illegal
from tests.games.schema_walk import check_history, walk


# ---------------------------------------------------------------------------------------------
# Mulberry32: the reference generator of 4.3, used only to test the algorithms in isolation.
# ---------------------------------------------------------------------------------------------
class Mulberry32:
    def __init__(self, seed: int) -> None:
        self.state = seed & 0xFFFFFFFF

    def next(self) -> int:
        self.state = (self.state + 0x6D2B79F5) & 0xFFFFFFFF
        t = self.state
        t = ((t ^ (t >> 15)) * (t | 1)) & 0xFFFFFFFF
        t = t ^ ((t + (((t ^ (t >> 7)) * (t | 61)) & 0xFFFFFFFF)) & 0xFFFFFFFF)
        return (t ^ (t >> 14)) & 0xFFFFFFFF

    def below(self, n: int) -> int:
        return self.next() % n


def rows(text: str) -> list[str]:
    return [line.split()[-1] for line in text.strip().splitlines()]


L1 = rows("""
  0   S.R...S..S
  1   .S.S.S.R..
  2   S.......S.
  3   ...RS.S.R.
  4   .S.....S..
  5   S..S....S.
  6   .S...S.R..
  7   .R..S..S..
  8   S..R..R..S
  9   ..S..S..S.
""")
ORDER = list("XLPIVYWFZUNT")

#: The 12 placements of S1-S4 (round 11, N, is discarded automatically).
PLAYS = {
    "X": [(3, 5), (4, 4), (4, 5), (4, 6), (5, 5)],
    "L": [(1, 2), (2, 2), (2, 3), (2, 4), (2, 5)],
    "P": [(2, 0), (2, 1), (3, 0), (3, 1), (4, 0)],
    "I": [(5, 0), (5, 1), (5, 2), (5, 3), (5, 4)],
    "V": [(0, 8), (1, 8), (2, 6), (2, 7), (2, 8)],
    "Y": [(0, 4), (0, 5), (0, 6), (0, 7), (1, 6)],
    "W": [(4, 7), (5, 7), (5, 8), (6, 8), (6, 9)],
    "F": [(6, 5), (7, 3), (7, 4), (7, 5), (8, 4)],
    "Z": [(7, 7), (7, 8), (8, 8), (9, 8), (9, 9)],
    "U": [(6, 0), (6, 1), (7, 0), (8, 0), (8, 1)],
    "T": [(7, 2), (8, 2), (9, 1), (9, 2), (9, 3)],
}
LEGAL_COUNTS = {"X": 10, "L": 56, "P": 69, "I": 6, "V": 22, "Y": 31, "W": 15, "F": 25, "Z": 8,
                "U": 5, "N": 0, "T": 1}
POINTS = {"X": 0, "L": 1, "P": 8, "I": 4, "V": 0, "Y": 8, "W": 2, "F": 0, "Z": 2, "U": 0,
          "N": 0, "T": 0}


def place(piece, cells):
    return {"type": "place", "piece": piece, "cells": [list(c) for c in cells]}


def x_at(r, c):
    return place("X", [(r - 1, c), (r, c - 1), (r, c), (r, c + 1), (r + 1, c)])


def new_game(players=2, seed=b"scarabya-test", **options):
    setup = options.pop("setup", {"layout": L1, "mission_order": ORDER})
    opts = dict(options)
    if setup is not None:
        opts["setup"] = setup
    return LocalGame(GAME, [{"name": f"p{i}"} for i in range(players)], opts, seed)


def site_rows(g, site=0):
    return GAME.view(g.state, ALL)["sites"][site]["rows"]


# ---------------------------------------------------------------------------------------------
# Section 4: generator and deck
# ---------------------------------------------------------------------------------------------
def test_mulberry32_reference_values():
    m = Mulberry32(1)
    assert [m.next() for _ in range(3)] == [2693262067, 11749833, 2265367787]


def test_generator_vector_seed_1():
    trace = []
    layout, attempts = S.generate_layout(Mulberry32(1), trace=trace)
    assert attempts == 1 and len(trace) == 1
    assert layout == rows("""
        ..........
        R.S..SRSS.
        S..S......
        .R...S.S.S
        SSS....R..
        ...SSS....
        ..S.....S.
        ...R.SR...
        S...S.R.SS
        .R.S..S...
    """)


def test_generator_vector_seed_7_rejects_attempt_1_by_v4():
    trace = []
    layout, attempts = S.generate_layout(Mulberry32(7), trace=trace)
    first = rows("""
        ...R.S..R.
        ....S..SSR
        SSR...S..S
        ..........
        S.S.S...S.
        ...SS.S.S.
        ....S.....
        .....S...S
        S..RS.....
        ..S.RRSS.R
    """)
    assert attempts == 2 and trace[0] == first
    assert S.layout_problem(first, True)["rule"] == "V4"
    assert layout == rows("""
        SR....S...
        .S.S...RS.
        RS.......S
        .......SS.
        .S..S..R.S
        ....SSS.SS
        S.SS.S..R.
        ..S.R.....
        S.R..R...S
        ..........
    """)


def test_generator_consumes_96_draws_per_attempt():
    class Counting(Mulberry32):
        draws = 0

        def below(self, n):
            self.draws += 1
            return super().below(n)

    for seed, attempts in ((1, 1), (7, 2)):
        m = Counting(seed)
        S.generate_layout(m)
        assert m.draws == 96 * attempts


def test_mission_deck_vector():
    assert S.shuffle_missions(Mulberry32(1)) == list("IXLUTFPNWYZV")


def test_create_draws_layout_then_deck_from_engine_rng():
    seed = b"\x01\x02\x03\x04"
    g = LocalGame(GAME, [{"name": "a"}, {"name": "b"}], {}, seed)
    rng = Rng(seed, 1)
    layout, attempts = S.generate_layout(rng)
    deck = S.shuffle_missions(rng)
    assert rng.draws == 96 * attempts + 11
    ev = {e["type"]: e for e in g.events}
    assert ev["LayoutCreated"]["data"] == {"rows": layout, "source": "generated",
                                           "attempts": attempts}
    assert ev["MissionDeckShuffled"]["data"] == {"order": deck, "source": "shuffled"}
    assert g.state["layout"] == layout and g.state["deck"] == deck
    assert ev["MissionRevealed"]["data"]["piece"] == deck[0]
    assert g.events[0]["data"]["setup"] == "standard"


def test_generated_layouts_are_valid_and_deterministic():
    for i in range(20):
        seed = i.to_bytes(4, "big")
        a = LocalGame(GAME, [{"name": "a"}, {"name": "b"}], {}, seed)
        b = LocalGame(GAME, [{"name": "a"}, {"name": "b"}], {}, seed)
        assert a.events == b.events
        assert S.layout_problem(a.state["layout"], True) is None


def test_generator_uses_allow_reflection_for_v5():
    # V5 under rotations-only is at least as strict; generated layouts always pass it.
    for i in range(10):
        g = LocalGame(GAME, [{"name": "a"}], {"allow_reflection": False}, bytes([i, 9]))
        assert S.layout_problem(g.state["layout"], False) is None


# ---------------------------------------------------------------------------------------------
# Section 5: pieces
# ---------------------------------------------------------------------------------------------
def test_orientation_counts():
    with_refl = {p: len(S.shapes(p, True)) for p in S.LETTERS}
    rot_only = {p: len(S.shapes(p, False)) for p in S.LETTERS}
    assert with_refl == {"F": 8, "I": 2, "L": 8, "N": 8, "P": 8, "T": 4, "U": 4, "V": 4,
                         "W": 4, "X": 1, "Y": 8, "Z": 4}
    assert rot_only == {"F": 4, "I": 2, "L": 4, "N": 4, "P": 4, "T": 4, "U": 4, "V": 4,
                        "W": 4, "X": 1, "Y": 4, "Z": 2}
    assert sum(with_refl.values()) == 63 and sum(rot_only.values()) == 41


def test_pieces_are_the_twelve_distinct_free_pentominoes():
    seen = set()
    for p in S.LETTERS:
        free = S.SHAPES[(p, True)]
        assert S.normalize(S.CANONICAL[p]) in free
        assert not seen & free
        seen |= free
    assert len(seen) == 63


def test_first_placement_counts_on_L1():
    rocks, _ = S.layout_masks(tuple(L1))
    refl = {p: len(S.legal_masks(p, True, rocks, 0)) for p in S.LETTERS}
    rot = {p: len(S.legal_masks(p, False, rocks, 0)) for p in S.LETTERS}
    assert refl == {"F": 78, "I": 24, "L": 81, "N": 76, "P": 74, "T": 40, "U": 40, "V": 41,
                    "W": 39, "X": 10, "Y": 84, "Z": 39}
    assert rot == {"F": 39, "I": 24, "L": 41, "N": 37, "P": 36, "T": 40, "U": 40, "V": 41,
                   "W": 39, "X": 10, "Y": 43, "Z": 20}


def test_legal_counts_per_piece_in_a_game_on_L1():
    for refl in (True, False):
        for piece in S.LETTERS:
            order = [piece] + [p for p in S.LETTERS if p != piece]
            g = new_game(1, allow_reflection=refl, setup={"layout": L1, "mission_order": order})
            rocks, _ = S.layout_masks(tuple(L1))
            assert len(g.legal(0)) == len(S.legal_masks(piece, refl, rocks, 0))


# ---------------------------------------------------------------------------------------------
# Section 14: worked examples
# ---------------------------------------------------------------------------------------------
def test_s1_first_placement():
    g = new_game()
    assert g.state["piece"] == "X" and g.awaiting() == [0, 1]
    legal = g.legal(0)
    centres = sorted(tuple(a["cells"][2]) for a in legal)  # X's middle is its 3rd sorted cell
    assert centres == [(3, 5), (4, 4), (4, 5), (4, 6), (5, 3), (5, 4), (5, 5), (5, 6), (6, 4),
                       (6, 5)]
    assert illegal(GAME, g.state, 0, x_at(2, 2)).code == "first_must_cover_center"
    assert illegal(GAME, g.state, 0, x_at(4, 3)).code == "covers_rock"
    assert illegal(GAME, g.state, 0, x_at(9, 5)).code == "off_board"
    assert illegal(GAME, g.state, 0, place("L", PLAYS["L"])).code == "not_current_piece"
    g.act(0, place("X", PLAYS["X"]))
    g.act(1, place("X", PLAYS["X"]))
    assert g.state["scores"] == [0, 0]
    assert not [e for e in g.events if e["type"] == "RegionsScored"]


def play_standard_rounds(g, upto, seats=(0, 1)):
    """Play S1-S4's placements for every seat until round ``upto`` is resolved."""
    totals = []
    while g.state["round"] <= upto and not g.state["over"]:
        piece = g.state["piece"]
        assert len(g.legal(seats[0])) == LEGAL_COUNTS[piece], piece
        for seat in seats:
            if seat in g.awaiting():
                g.act(seat, place(piece, PLAYS[piece]))
        totals.append(g.state["scores"][seats[0]])
    return totals


def test_s2_rounds_2_to_4():
    g = new_game()
    play_standard_rounds(g, 1)
    assert g.state["piece"] == "L" and len(g.legal(0)) == 56
    assert illegal(GAME, g.state, 0, place("L", [(8, 7), (9, 4), (9, 5), (9, 6), (9, 7)])
                   ).code == "not_adjacent"
    assert illegal(GAME, g.state, 0, place("L", [(2, 6), (3, 6), (4, 6), (5, 6), (5, 7)])
                   ).code == "piece_overlaps"
    assert illegal(GAME, g.state, 0, place("L", [(0, 0), (0, 1), (0, 2), (0, 3), (1, 1)])
                   ).code == "bad_shape"
    g.act(0, place("L", PLAYS["L"]))
    g.act(1, place("L", PLAYS["L"]))
    scored = [e for e in g.events if e["type"] == "RegionsScored" and e["seat"] == 0]
    assert scored[-1]["data"]["regions"] == [
        {"cells": [[3, 4]], "scarabs": [[3, 4]], "size": 1, "points": 1}]
    assert g.state["scores"] == [1, 1]
    # Round 3: P covers the scarab (2,0) and closes the 4-cell corner.
    assert len(g.legal(0)) == 69
    g.act(0, place("P", PLAYS["P"]))
    g.act(1, place("P", PLAYS["P"]))
    scored = [e for e in g.events if e["type"] == "RegionsScored" and e["seat"] == 0]
    assert scored[-1]["data"]["regions"] == [
        {"cells": [[0, 0], [0, 1], [1, 0], [1, 1]], "scarabs": [[0, 0], [1, 1]], "size": 4,
         "points": 8}]
    assert g.state["scores"] == [9, 9]
    # Round 4: exactly the 6 I placements of the spec.
    assert sorted(tuple(map(tuple, a["cells"])) for a in g.legal(0)) == sorted([
        tuple((r, 2) for r in range(3, 8)), tuple((5, c) for c in range(0, 5)),
        tuple((r, 0) for r in range(5, 10)), tuple((r, 4) for r in range(5, 10)),
        tuple((6, c) for c in range(1, 6)), tuple((6, c) for c in range(2, 7))])
    g.act(0, place("I", PLAYS["I"]))
    g.act(1, place("I", PLAYS["I"]))
    assert g.state["scores"] == [13, 13]
    assert site_rows(g, 0) == site_rows(g, 1) == rows("""
      0   4.R...S..S
      1   .4LS.S.R..
      2   pPLLLL..S.
      3   PP.R1XS.R.
      4   P4..XXXS..
      5   iIIiIX..S.
      6   .S...S.R..
      7   .R..S..S..
      8   S..R..R..S
      9   ..S..S..S.
    """)


def test_s2_mirror_l_is_bad_shape_without_reflection():
    g = new_game(allow_reflection=False)
    g.act(0, place("X", PLAYS["X"]))
    g.act(1, place("X", PLAYS["X"]))
    assert illegal(GAME, g.state, 0, place("L", PLAYS["L"])).code == "bad_shape"


def test_s3_large_region_scores_only_when_cut_down():
    g = new_game()
    play_standard_rounds(g, 4)
    assert g.state["piece"] == "V" and len(g.legal(0)) == 22
    g.act(0, place("V", PLAYS["V"]))
    g.act(1, place("V", PLAYS["V"]))
    assert g.state["scores"] == [13, 13]
    assert not [e for e in g.events if e["type"] == "RegionsScored" and e["data"]["round"] == 5]
    assert len(g.legal(0)) == 31
    g.act(0, place("Y", PLAYS["Y"]))
    g.act(1, place("Y", PLAYS["Y"]))
    ev = [e for e in g.events if e["type"] == "RegionsScored" and e["data"]["round"] == 6]
    assert ev[0]["data"]["regions"] == [
        {"cells": [[0, 3], [1, 3], [1, 4], [1, 5]], "scarabs": [[1, 3], [1, 5]], "size": 4,
         "points": 8}]
    assert g.state["scores"] == [21, 21]
    assert site_rows(g) == rows("""
      0   4.R.YYyYVS
      1   .4L4.4YRV.
      2   pPLLLLVVv.
      3   PP.R1XS.R.
      4   P4..XXXS..
      5   iIIiIX..S.
      6   .S...S.R..
      7   .R..S..S..
      8   S..R..R..S
      9   ..S..S..S.
    """)


FINAL_ROWS = rows("""
  0   4.R.YYyYVS
  1   .4L4.4YRV.
  2   pPLLLLVVv.
  3   PP.R1X2.R.
  4   P4..XXXw..
  5   iIIiIX.Ww.
  6   Uu...f.RWW
  7   URTFfF.zZ.
  8   uUTRF.R.Z2
  9   .TtT.S..zZ
""")


def test_s4_full_standard_game():
    g = new_game(players=3)
    totals = play_standard_rounds(g, 12, seats=(0, 1, 2))
    assert totals == [0, 1, 9, 13, 13, 21, 23, 23, 25, 25]  # rounds 11-12 were automatic
    assert g.state["over"]
    # Round 11: N discarded automatically for every seat; round 12: the only T forced.
    discards = [e for e in g.events if e["type"] == "CampDiscarded"]
    assert [(e["data"]["seat"], e["data"]["piece"], e["data"]["round"]) for e in discards] == [
        (0, "N", 11), (1, "N", 11), (2, "N", 11)]
    forced = [e for e in g.events if e.get("forced")]
    assert {e["type"] for e in forced} >= {"PlacementCommitted"}
    assert all(e["data"]["piece"] == "T" for e in forced if e["type"] == "PlacementCommitted")
    r9 = [e for e in g.events if e["type"] == "RegionsScored" and e["data"]["round"] == 9
          and e["seat"] == 0][0]["data"]
    assert r9["regions"] == [
        {"cells": [[5, 6], [6, 6], [7, 6]], "scarabs": [], "size": 3, "points": 0},
        {"cells": [[7, 9], [8, 9]], "scarabs": [[8, 9]], "size": 2, "points": 2}]
    r12 = [e for e in g.events if e["type"] == "RegionsScored" and e["data"]["round"] == 12
           and e["seat"] == 0][0]["data"]
    assert r12["regions"] == [
        {"cells": [[6, 2], [6, 3], [6, 4]], "scarabs": [], "size": 3, "points": 0},
        {"cells": [[9, 0]], "scarabs": [], "size": 1, "points": 0}]
    for seat in range(3):
        assert site_rows(g, seat) == FINAL_ROWS
    result = GAME.result(g.state)
    assert result["scores"] == [25, 25, 25] and result["ranks"] == [1, 1, 1]
    assert result["winners"] == [0, 1, 2]
    tokens = sorted((tuple(t["cell"]), t["value"]) for t in result["details"]["seats"][0]
                    ["tokens"])
    assert tokens == sorted([((0, 0), 4), ((1, 1), 4), ((3, 4), 1), ((4, 1), 4), ((1, 3), 4),
                             ((1, 5), 4), ((3, 6), 2), ((8, 9), 2)])
    assert sum(v for _, v in tokens) == 25
    assert result["details"]["seats"][0]["covered_scarabs"] == 14
    assert result["details"]["seats"][0]["discarded"] == ["N"]
    assert GAME.awaiting(g.state) == [] and GAME.legal_actions(g.state, 0) == []


def test_standard_sites_are_independent_and_ranking():
    """Seat 1 deviates in round 3 (no 8 points): seat 0 wins alone."""
    g = new_game()
    play_standard_rounds(g, 2)
    other = [a for a in g.legal(1) if a["cells"] != [list(c) for c in PLAYS["P"]]][0]
    g.act(1, other)
    g.act(0, place("P", PLAYS["P"]))
    assert g.state["sites"][0]["camps"][-1]["cells"] == [list(c) for c in PLAYS["P"]]
    assert g.state["sites"][1]["camps"][-1]["cells"] == other["cells"]
    while not g.state["over"]:
        for seat in g.awaiting():
            g.act(seat, GAME.timeout_action(g.state, seat))
    res = GAME.result(g.state)
    assert res["scores"] == [s["score"] for s in res["details"]["seats"]]
    for seat in range(2):
        assert res["scores"][seat] == sum(t["value"] for t in res["details"]["seats"][seat]
                                          ["tokens"])


def duel_play(g, game_no):
    """Play S5's placements on the shared site; returns the active seat per turn."""
    actives = []
    while not g.state["over"] and g.state["game"] == game_no:
        piece = g.state["piece"]
        (seat,) = g.awaiting()
        actives.append((g.state["round"], seat))
        assert len(g.legal(seat)) == LEGAL_COUNTS[piece], piece
        assert len(g.legal(1 - seat)) == 0
        with pytest.raises(NotYourTurn) as exc:
            command(GAME, g.state, 1 - seat, place(piece, PLAYS[piece]), None)
        assert exc.value.reason == "not_your_turn"
        g.act(seat, place(piece, PLAYS[piece]))
    return actives


def test_s5_duel_single_game():
    g = new_game(mode="duel", duel_games=1)
    actives = duel_play(g, 1)
    assert [s for _, s in actives] == [0, 1, 0, 1, 0, 1, 0, 1, 0, 1]  # turns 1-10
    assert g.state["over"]
    res = GAME.result(g.state)
    assert res["scores"] == [12, 13] and res["winners"] == [1] and res["ranks"] == [2, 1]
    discard = [e for e in g.events if e["type"] == "CampDiscarded"]
    assert [(e["data"]["seat"], e["data"]["piece"]) for e in discard] == [(0, "N")]
    assert res["details"]["games"][0]["rows"] == FINAL_ROWS
    # Who scored what (turn 6: B gets the 8 points although A's V built the border).
    by_seat = {0: {}, 1: {}}
    for e in g.events:
        if e["type"] == "RegionsScored" and e["data"]["points"]:
            by_seat[e["seat"]][ORDER[e["data"]["round"] - 1]] = e["data"]["points"]
    assert by_seat == {0: {"P": 8, "W": 2, "Z": 2}, 1: {"L": 1, "I": 4, "Y": 8}}
    camps = g.state["game_log"][0]["camps"]
    assert [c["seat"] for c in camps] == [0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 1]


def test_s5_duel_match_swaps_starter_same_order():
    g = new_game(mode="duel")
    duel_play(g, 1)
    assert not g.state["over"] and g.state["game"] == 2 and g.state["starter"] == 1
    assert g.state["sites"][0]["camps"] == [] and g.state["scores"] == [0, 0]
    view = GAME.view(g.state, 0)
    assert view["games"][0]["scores"] == [12, 13] and view["match_scores"] == [12, 13]
    actives = duel_play(g, 2)
    assert [s for _, s in actives] == [1, 0, 1, 0, 1, 0, 1, 0, 1, 0]
    assert g.state["over"]
    res = GAME.result(g.state)
    assert [x["scores"] for x in res["details"]["games"]] == [[12, 13], [13, 12]]
    assert res["scores"] == [25, 25] and res["ranks"] == [1, 1] and res["winners"] == [0, 1]
    revealed = [e["data"]["piece"] for e in g.events if e["type"] == "MissionRevealed"]
    assert revealed == ORDER + ORDER


def test_duel_generated_deck_reused_in_game_2():
    g = LocalGame(GAME, [{"name": "a"}, {"name": "b"}], {"mode": "duel"}, b"duel-seed")
    while not g.state["over"]:
        (seat,) = g.awaiting()
        g.act(seat, GAME.timeout_action(g.state, seat))
    revealed = [e["data"]["piece"] for e in g.events if e["type"] == "MissionRevealed"]
    assert revealed[:12] == revealed[12:] == g.state["deck"]
    starters = [e["data"]["seat"] for e in g.events
                if e["type"] == "MissionRevealed" and e["data"]["round"] == 1]
    assert starters == [0, 1]
    res = GAME.result(g.state)
    assert res["scores"] == [sum(x["scores"][s] for x in res["details"]["games"])
                             for s in range(2)]


def test_s6_solo_loss():
    g = new_game(players=1)
    assert g.state["mode"] == "solo"
    while not g.state["over"]:
        piece = g.state["piece"]
        assert len(g.legal(0)) == LEGAL_COUNTS[piece]
        g.act(0, place(piece, PLAYS[piece]))
    res = GAME.result(g.state)
    assert res["scores"] == [14] and res["ranks"] == [1] and res["winners"] == []
    d = res["details"]
    assert d["won"] is False and d["covered"] == 14 and d["rounds_played"] == 12
    assert d["uncovered"] == [[0, 0], [0, 9], [1, 1], [1, 3], [1, 5], [3, 4], [3, 6], [4, 1],
                              [8, 9], [9, 5]]
    assert d["discarded"] == ["N"]
    assert not [e for e in g.events if e["type"] == "RegionsScored"]  # solo scores nothing


def test_s6_solo_discard_loses():
    g = new_game(players=1, solo_discard_loses=True)
    while not g.state["over"]:
        piece = g.state["piece"]
        g.act(0, place(piece, PLAYS[piece]))
    res = GAME.result(g.state)
    assert res["winners"] == [] and res["details"]["rounds_played"] == 11
    assert res["details"]["won"] is False
    assert [e["type"] for e in g.events[-2:]] == ["CampDiscarded", "GameEnded"]


def test_solo_early_win_ends_at_once():
    g = new_game(players=1)
    while g.state["round"] < 10:
        piece = g.state["piece"]
        g.act(0, place(piece, PLAYS[piece]))
    assert g.state["piece"] == "U"
    # Rebuild the position on a layout whose only uncovered scarabs are those U covers.
    state = clone(g.state)
    grid = [list(r) for r in state["layout"]]
    for r, c in [(0, 0), (0, 9), (1, 1), (1, 3), (1, 5), (3, 4), (3, 6), (4, 1), (8, 9), (9, 5),
                 (9, 2)]:  # (9, 2) is covered by the T of round 12
        grid[r][c] = "."
    state["layout"] = ["".join(r) for r in grid]
    events, _ = GAME.decide(state, 0, place("U", PLAYS["U"]), None)
    assert [e["type"] for e in events] == ["CampPlaced", "GameEnded"]
    res = events[-1]["data"]["result"]
    assert res["winners"] == [0] and res["details"]["won"] is True
    assert res["details"]["rounds_played"] == 10 and res["details"]["uncovered"] == []


# ---------------------------------------------------------------------------------------------
# Options and setup validation (V1-V5, mission_order)
# ---------------------------------------------------------------------------------------------
def bad_options(options, players=2):
    with pytest.raises(InvalidOptions) as exc:
        GAME.normalize_options(options, [{"name": str(i)} for i in range(players)])
    return exc.value


def layout_error(layout, **options):
    err = bad_options({"setup": {"layout": layout}, **options})
    assert err.code == "invalid_layout"
    return err.details["rule"]


def test_layout_v1():
    assert layout_error(L1[:9]) == "V1"
    assert layout_error("x" * 100) == "V1"
    assert layout_error(L1[:9] + ["S.R...S..S."]) == "V1"
    assert layout_error(L1[:9] + ["S.R...S..X"]) == "V1"
    assert layout_error(L1[:9] + [12]) == "V1"
    assert layout_error({"rows": L1}) == "V1"


def test_layout_v2():
    swapped = [L1[0].replace("S", ".", 1)] + L1[1:]  # Q0 has 5 scarabs
    assert layout_error(swapped) == "V2"
    moved = list(L1)
    moved[0] = "S.....S..S"  # Q0 loses a rock
    assert layout_error(moved) == "V2"


def test_layout_v3():
    grid = [list(r) for r in L1]
    grid[3][3] = "."
    grid[4][4] = "R"
    assert layout_error(["".join(r) for r in grid]) == "V3"


def test_layout_v4():
    sealed = rows("""
        ...R.S..R.
        ....S..SSR
        SSR...S..S
        ..........
        S.S.S...S.
        ...SS.S.S.
        ....S.....
        .....S...S
        S..RS.....
        ..S.RRSS.R
    """)
    assert layout_error(sealed) == "V4"


def test_layout_v5():
    no_x = rows("""
        .SS..SSSS.
        .S..S.....
        ...S.SR...
        ....RR....
        ..RS...S..
        S..S.SR...
        ...RR..R..
        .S....S...
        S..S.....S
        ....S.SS.S
    """)
    err = bad_options({"setup": {"layout": no_x}})
    assert err.code == "invalid_layout" and err.details["rule"] == "V5"
    assert err.details["piece"] == "X"


def test_valid_setup_is_normalized():
    opts = GAME.normalize_options({"setup": {"layout": L1, "mission_order": ORDER}},
                                  [{"name": "a"}, {"name": "b"}])
    assert opts == {"mode": "standard", "allow_reflection": True, "duel_games": 2,
                    "solo_discard_loses": False,
                    "setup": {"layout": L1, "mission_order": ORDER}}
    assert GAME.normalize_options({}, [{"name": "a"}])["mode"] == "solo"
    g = new_game()
    assert g.events[0]["data"]["setup"] == "custom"
    assert GAME.view(g.state, None)["setup"] == "custom"
    assert [e["data"]["source"] for e in g.events if "source" in e["data"]] == ["setup", "setup"]


def test_layout_only_setup_still_shuffles_deck():
    g = LocalGame(GAME, [{"name": "a"}, {"name": "b"}], {"setup": {"layout": L1}}, b"k")
    rng = Rng(b"k", 1)
    assert g.state["deck"] == S.shuffle_missions(rng)
    assert g.state["layout"] == L1


def test_mission_order_validation():
    for order, option, failed in (
            (ORDER[:11], "", "minItems"), (ORDER + ["X"], "", "maxItems"),
            (ORDER[:11] + ["X"], "", "uniqueItems"), (ORDER[:11] + ["Q"], ".11", "enum"),
            (ORDER[:11] + [1], ".11", "enum"), ("XLPIVYWFZUNT", "", "type"),
            ({"0": "X"}, "", "type")):
        err = bad_options({"setup": {"mission_order": order}})
        assert err.code == "invalid_setup"
        assert err.details["option"] == f"setup.mission_order{option}"
        assert list(err.details["expected"]) == [failed]


@pytest.mark.parametrize("options,players,code", [
    ({"mode": "duel"}, 3, "invalid_player_count"),
    ({"mode": "duel"}, 1, "invalid_player_count"),
    ({"mode": "solo"}, 2, "invalid_player_count"),
    ({"mode": "standard"}, 1, "invalid_player_count"),
    ({"mode": "standard"}, 5, "invalid_player_count"),
    ({"mode": "coop"}, 2, "invalid_option"),
    ({"mode": 3}, 2, "invalid_option"),
    ({"allow_reflection": "yes"}, 2, "invalid_option"),
    ({"allow_reflection": 1}, 2, "invalid_option"),
    ({"duel_games": 3}, 2, "invalid_option"),
    ({"duel_games": True}, 2, "invalid_option"),
    ({"duel_games": "2"}, 2, "invalid_option"),
    ({"solo_discard_loses": None}, 1, "invalid_option"),
    ({"colour": "red"}, 2, "unknown_option"),
    ({"setup": []}, 2, "invalid_setup"),
    ({"setup": {"deck": []}}, 2, "unknown_option"),
    ({"clock": {"per_decision_ms": 1000}}, 2, "unknown_option"),  # the shell's, never the game's
])
def test_bad_options(options, players, code):
    assert bad_options(options, players).code == code


def test_v5_depends_on_allow_reflection_option(monkeypatch):
    # The layout check runs with the game's own allow_reflection (V5 uses it).
    calls = []
    orig = S.layout_problem

    def spy(rows_, refl):
        calls.append(refl)
        return orig(rows_, refl)

    monkeypatch.setattr(S, "layout_problem", spy)  # S is the rules module: the name it calls
    GAME.normalize_options({"allow_reflection": False, "setup": {"layout": L1}}, [{"name": "a"}])
    assert calls == [False]


# ---------------------------------------------------------------------------------------------
# Hostile actions, turn checks
# ---------------------------------------------------------------------------------------------
GOOD = PLAYS["X"]


@pytest.mark.parametrize("action,code", [
    ("place", "malformed_action"),
    ([1, 2], "malformed_action"),
    ({}, "malformed_action"),
    ({"type": "pass"}, "unknown_action"),
    ({"type": 5}, "malformed_action"),
    ({"type": "place"}, "missing_field"),
    ({"type": "place", "piece": "X"}, "missing_field"),
    ({"type": "place", "cells": [list(c) for c in GOOD]}, "missing_field"),
    ({"type": "place", "piece": "X", "cells": [list(c) for c in GOOD], "x": 1},
     "unexpected_field"),
    ({"type": "place", "piece": 5, "cells": [list(c) for c in GOOD]}, "invalid_field"),
    ({"type": "place", "piece": None, "cells": [list(c) for c in GOOD]}, "invalid_field"),
    ({"type": "place", "piece": ["X"], "cells": [list(c) for c in GOOD]}, "invalid_field"),
    ({"type": "place", "piece": "x", "cells": [list(c) for c in GOOD]}, "not_current_piece"),
    ({"type": "place", "piece": "Q", "cells": [list(c) for c in GOOD]}, "not_current_piece"),
    ({"type": "place", "piece": "X", "cells": None}, "bad_cells"),
    ({"type": "place", "piece": "X", "cells": "(3,5)"}, "bad_cells"),
    ({"type": "place", "piece": "X", "cells": {"0": [3, 5]}}, "bad_cells"),
    ({"type": "place", "piece": "X", "cells": [list(c) for c in GOOD][:4]}, "bad_cells"),
    ({"type": "place", "piece": "X", "cells": [list(c) for c in GOOD] + [[0, 0]]}, "bad_cells"),
    ({"type": "place", "piece": "X", "cells": [[3, 5]] * 5}, "bad_cells"),
    ({"type": "place", "piece": "X", "cells": [[3, 5, 0]] + [list(c) for c in GOOD][1:]},
     "bad_cells"),
    ({"type": "place", "piece": "X", "cells": [["3", "5"]] + [list(c) for c in GOOD][1:]},
     "bad_cells"),
    ({"type": "place", "piece": "X", "cells": [[3.0, 5]] + [list(c) for c in GOOD][1:]},
     "bad_cells"),
    ({"type": "place", "piece": "X", "cells": [[True, 5]] + [list(c) for c in GOOD][1:]},
     "bad_cells"),
    ({"type": "place", "piece": "X", "cells": [{"r": 3, "c": 5}] + [list(c) for c in GOOD][1:]},
     "bad_cells"),
    ({"type": "place", "piece": "X", "cells": [None] * 5}, "bad_cells"),
    ({"type": "place", "piece": "X",
      "cells": [[10 ** 30, 5], [4, 4], [4, 5], [4, 6], [5, 5]]}, "off_board"),
    ({"type": "place", "piece": "X", "cells": [[-1, 0], [0, -1], [0, 0], [0, 1], [1, 0]]},
     "off_board"),
    ({"type": "place", "piece": "X", "cells": [[4, 4], [4, 5], [4, 6], [4, 7], [4, 8]]},
     "bad_shape"),
    ({"type": "place", "piece": "X", "cells": [[0, 0], [0, 1], [0, 2], [5, 5], [9, 9]]},
     "bad_shape"),
])
def test_hostile_actions(action, code):
    g = new_game()
    assert illegal(GAME, g.state, 0, action).code == code


def test_cells_accepted_in_any_order():
    g = new_game()
    before = clone(g.state)
    events, _ = GAME.decide(g.state, 0, place("X", list(reversed(GOOD))), None)
    assert g.state == before
    assert events[0]["data"]["cells"] == [list(c) for c in sorted(GOOD)]


def test_not_awaited_reasons():
    g = new_game()
    g.act(0, place("X", GOOD))
    with pytest.raises(NotYourTurn) as exc:
        command(GAME, g.state, 0, place("X", GOOD), None)
    assert exc.value.reason == "already_committed"
    assert GAME.legal_actions(g.state, 0) == []


def test_legal_actions_are_canonical_and_postable():
    g = new_game()
    for _ in range(3):
        acts = g.legal(0)
        keys = [a["cells"] for a in acts]
        assert keys == sorted(keys)
        assert all(a["cells"] == sorted(a["cells"]) for a in acts)
        assert len({orjson.dumps(a) for a in acts}) == len(acts)
        for a in acts:
            assert set(a) == {"type", "piece", "cells"} and a["piece"] == g.state["piece"]
            GAME.decide(g.state, 0, a, None)  # every listed action is accepted
        assert GAME.timeout_action(g.state, 0) == acts[0]
        for seat in g.awaiting():
            g.act(seat, place(g.state["piece"], PLAYS[g.state["piece"]]))


# ---------------------------------------------------------------------------------------------
# Hidden information
# ---------------------------------------------------------------------------------------------
def test_pending_placement_is_hidden_until_all_committed():
    g = new_game(players=3)
    events = g.act(0, place("X", GOOD))
    assert [e["type"] for e in events] == ["PlacementCommitted"]
    secret = orjson.dumps([list(c) for c in sorted(GOOD)])
    for viewer in (1, 2, None):
        view = orjson.dumps(GAME.view(g.state, viewer))
        assert secret[1:-1] not in view  # the cell list appears nowhere
        assert "pending" not in GAME.view(g.state, viewer)["seats"][0]
        red = GAME.visible(events[0], viewer)
        assert "cells" not in red["data"] and red["data"]["seat"] == 0
        assert events[0]["data"]["cells"]  # input not mutated
    assert GAME.view(g.state, 0)["seats"][0]["pending"] == [list(c) for c in sorted(GOOD)]
    assert GAME.view(g.state, ALL)["seats"][0]["pending"]
    assert GAME.visible(events[0], 0) == events[0]
    # Others' legal actions do not depend on seat 0's pending placement.
    assert GAME.legal_actions(g.state, 1) == new_game(players=3).legal(1)
    # Seat 0's board shows nothing yet, to anyone.
    assert GAME.view(g.state, 0)["sites"][0]["camps"] == []
    g.act(1, place("X", GOOD))
    events = g.act(2, x_at(4, 4))
    types = [e["type"] for e in events]
    assert types[:2] == ["PlacementCommitted", "PlacementsRevealed"]
    assert events[1]["data"]["placements"][2] == [[3, 4], [4, 3], [4, 4], [4, 5], [5, 4]]
    assert GAME.visible(events[1], None) == events[1]


def test_deck_order_is_hidden_while_running():
    g = LocalGame(GAME, [{"name": "a"}, {"name": "b"}], {}, b"hidden-deck")
    deck_ev = [e for e in g.events if e["type"] == "MissionDeckShuffled"][0]
    for viewer in (0, 1, None):
        red = GAME.visible(deck_ev, viewer)
        assert "order" not in red["data"]
        view = GAME.view(g.state, viewer)
        assert "deck" not in view
        assert "order" not in orjson.dumps(view).decode()
    assert GAME.view(g.state, ALL)["deck"] == g.state["deck"]
    assert "order" in deck_ev["data"]


def test_view_shape():
    g = new_game()
    view = GAME.view(g.state, 0)
    assert view["phase"] == "placing" and view["round"] == 1 and view["piece"] == "X"
    assert view["missions_left"] == 11 and view["revealed"] == ["X"]
    assert view["sites"][0]["rows"] == L1 and view["layout"] == L1
    assert view["scores"] == [0, 0]
    assert [s["status"] for s in view["seats"]] == ["await", "await"]


def test_every_event_and_every_version_is_served_as_declared():
    """Random games of every mode serve every event type, and the state at every version (the
    states inside a command that GET /states/{version} serves: round 0 before a duel's next
    game, say) matches the declared schemas for each seat, a spectator and ALL."""
    served = set()
    for n, options, seed in ((4, {"mode": "standard"}, 2), (2, {"mode": "duel"}, 2),
                             (2, {"mode": "duel", "duel_games": 1}, 3),
                             (1, {"mode": "solo", "solo_discard_loses": True}, 2)):
        g, types = walk(GAME, n, options, seed, lambda game, state, seat, legal, rnd:
                        rnd.choice(legal))
        check_history(GAME, g, [*range(n), None, ALL])
        served |= set(types)
    assert set(GAME.event_schemas) <= served


def test_served_schemas_refuse_what_scarabya_never_serves():
    """The declared schemas are strict, mode by mode: a client generated from them can rely on
    every field."""
    g = new_game(players=3)
    g.act(0, place("X", GOOD))
    state = Draft202012Validator(GAME.state_schema)
    view = GAME.view(g.state, 0)
    duel = GAME.view(new_game(mode="duel").state, 1)
    assert view["seats"][0]["pending"] and state.is_valid(view) and state.is_valid(duel)
    site = view["sites"][0]
    result = {"scores": [0] * 3, "ranks": [1] * 3, "winners": [0, 1, 2], "details": {"seats": [
        {"score": 0, "tokens": [], "discarded": [], "covered_scarabs": 0, "rows": site["rows"]}]}}
    assert state.is_valid({**view, "phase": "over", "result": result})
    for broken in ({**view, "turn": 1},                                  # an unknown field
                   {**view, "piece": "Q"},                               # no pentomino Q
                   {**view, "sites": [{**site, "rows": ["Q" * 10] * 10}, *view["sites"][1:]]},
                   {**view, "active_seat": 0},                           # a duel-only field
                   {**view, "result": result},                           # before the end
                   {k: v for k, v in duel.items() if k != "match_scores"},
                   {**duel, "sites": [{**site, "seat": 0}]}):            # standard-only field
        assert not state.is_valid(broken)
    committed = Draft202012Validator(GAME.event_schemas["PlacementCommitted"])
    data = g.events[-1]["data"]
    assert committed.is_valid(data)
    assert committed.is_valid({k: v for k, v in data.items() if k != "cells"})  # as others see
    assert not committed.is_valid({**data, "cells": data["cells"][:4]})
    assert not committed.is_valid({**data, "cells": [[10, 0], *data["cells"][1:]]})


def test_legal_actions_fast_on_first_moves():
    """Sanity bound (the real figures: bench/scarabya_legal_actions.py): the largest move lists
    occur on the empty site; even the slowest of them stays far below 5 ms."""
    import time
    worst = 0.0
    for i in range(10):
        g = LocalGame(GAME, [{"name": "a"}], {}, bytes([i, 1]))
        times = []
        for _ in range(5):
            t0 = time.perf_counter()
            GAME.legal_actions(g.state, 0)
            times.append(time.perf_counter() - t0)
        worst = max(worst, sorted(times)[2])
    assert worst < 0.005
