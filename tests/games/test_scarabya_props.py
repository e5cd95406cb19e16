"""Scarabya property tests: random legal play in every mode, checked against an independent,
literal (set-based, no bitmask) reading of sections 7 and 8 of the spec."""

from __future__ import annotations

import random

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from service.engine import ALL
from service.engine.local import LocalGame
from service.games import scarabya as S
from service.games.scarabya import GAME
from tests.games.harness import random_playout

SETTINGS = settings(max_examples=25, deadline=None,
                    suppress_health_check=[HealthCheck.too_slow])
CENTRE = {(4, 4), (4, 5), (5, 4), (5, 5)}


# -- an independent, literal model --------------------------------------------------------------
def literal_shapes(piece, allow_reflection):
    def norm(cells):
        mr = min(r for r, _ in cells)
        mc = min(c for _, c in cells)
        return frozenset((r - mr, c - mc) for r, c in cells)

    base = [tuple(x) for x in S.CANONICAL[piece]]
    out = set()
    for flip in ((False, True) if allow_reflection else (False,)):
        cells = [(r, -c) if flip else (r, c) for r, c in base]
        for _ in range(4):
            out.add(norm(cells))
            cells = [(c, -r) for r, c in cells]
    return out


def literal_legal(layout, camps_cells, piece, allow_reflection):
    rocks = {(r, c) for r in range(10) for c in range(10) if layout[r][c] == "R"}
    occ = set(camps_cells)
    out = set()
    for shape in literal_shapes(piece, allow_reflection):
        for dr in range(-4, 10):
            for dc in range(-4, 10):
                cells = frozenset((r + dr, c + dc) for r, c in shape)
                if not all(0 <= r < 10 and 0 <= c < 10 for r, c in cells):
                    continue
                if cells & rocks or cells & occ:
                    continue
                if not occ:
                    if not cells & CENTRE:
                        continue
                elif not any((r + a, c + b) in occ for r, c in cells
                             for a, b in ((0, 1), (1, 0), (0, -1), (-1, 0))):
                    continue
                out.add(cells)
    return out


def literal_regions(layout, occ):
    open_cells = {(r, c) for r in range(10) for c in range(10)
                  if layout[r][c] != "R" and (r, c) not in occ}
    out = set()
    while open_cells:
        start = open_cells.pop()
        region, stack = {start}, [start]
        while stack:
            r, c = stack.pop()
            for nb in ((r + 1, c), (r - 1, c), (r, c + 1), (r, c - 1)):
                if nb in open_cells:
                    open_cells.discard(nb)
                    region.add(nb)
                    stack.append(nb)
        out.add(frozenset(region))
    return out


# -- invariants checked at every step -----------------------------------------------------------
def check(g: LocalGame) -> None:
    state = g.state
    layout = state["layout"]
    mode = state["mode"]
    scarabs = {(r, c) for r in range(10) for c in range(10) if layout[r][c] == "S"}
    for i, site in enumerate(state["sites"]):
        seen = set()
        for k, camp in enumerate(site["camps"]):
            cells = {tuple(x) for x in camp["cells"]}
            assert len(cells) == 5
            assert not cells & seen, "camps overlap"
            assert all(layout[r][c] != "R" for r, c in cells), "camp on a rock"
            shape = S.normalize(cells)
            assert shape in S.SHAPES[(camp["piece"], state["allow_reflection"])]
            if k == 0:
                assert cells & CENTRE
            else:
                assert any((r + a, c + b) in seen for r, c in cells
                           for a, b in ((0, 1), (1, 0), (0, -1), (-1, 0)))
            seen |= cells
        pieces = [c["piece"] for c in site["camps"]] + site["discarded"]
        assert len(pieces) == len(set(pieces))
        for tok in site["tokens"]:
            cell = tuple(tok["cell"])
            assert cell in scarabs and cell not in seen and 1 <= tok["value"] <= 4
        assert len({tuple(t["cell"]) for t in site["tokens"]}) == len(site["tokens"])
        if mode == "standard":
            assert state["scores"][i] == sum(t["value"] for t in site["tokens"])
        elif mode == "duel":
            for seat in range(2):
                assert state["scores"][seat] == sum(t["value"] for t in site["tokens"]
                                                    if t["seat"] == seat)
        else:
            assert site["tokens"] == [] and state["scores"] == [0]
    # Pending placements are invisible to everybody else.
    for seat, pending in enumerate(state["pending"]):
        if pending is None:
            continue
        for viewer in [v for v in range(state["players"]) if v != seat] + [None]:
            view = GAME.view(state, viewer)
            assert "pending" not in view["seats"][seat]
            for entry in view["seats"]:  # the viewer's own pending may coincide
                entry.pop("pending", None)
            assert str(pending)[1:-1].replace(" ", "") not in str(view).replace(" ", "")
    # legal_actions agrees with the literal reading of section 7.
    if not state["over"]:
        for seat in GAME.awaiting(state):
            site = state["sites"][0 if mode != "standard" else seat]
            occ = {tuple(x) for c in site["camps"] for x in c["cells"]}
            expected = literal_legal(layout, occ, state["piece"], state["allow_reflection"])
            got = [frozenset(map(tuple, a["cells"])) for a in GAME.legal_actions(state, seat)]
            assert len(got) == len(set(got)) and set(got) == expected
            assert len(expected) >= 1  # otherwise it would have been discarded


def check_scoring_log(g: LocalGame) -> None:
    """Replay the log on the literal model: every RegionsScored matches section 8 exactly."""
    state = g.state
    layout = state["layout"]
    mode = state["mode"]
    scarabs = {(r, c) for r in range(10) for c in range(10) if layout[r][c] == "S"}
    occ: dict[int, set] = {}
    expected, got = [], []

    def place(site, seat, rnd, cells):
        before = literal_regions(layout, occ.setdefault(site, set()))
        occ[site] |= {tuple(x) for x in cells}
        after = literal_regions(layout, occ[site])
        new = sorted((sorted(reg) for reg in after - before if len(reg) <= 4))
        if new and mode != "solo":
            expected.append((seat, rnd, [
                (sorted(reg), sorted(set(reg) & scarabs), len(reg),
                 len(set(reg) & scarabs) * len(reg)) for reg in new]))

    for ev in g.events[1:]:
        d = ev["data"]
        if ev["type"] == "DuelGameStarted":
            occ = {}
        elif ev["type"] == "PlacementsRevealed":
            for seat, cells in enumerate(d["placements"]):
                if cells is not None:
                    place(seat, seat, d["round"], cells)
        elif ev["type"] == "CampPlaced":
            place(0, d["seat"], d["round"], d["cells"])
        elif ev["type"] == "RegionsScored":
            got.append((d["seat"], d["round"], [
                ([tuple(x) for x in reg["cells"]], [tuple(x) for x in reg["scarabs"]],
                 reg["size"], reg["points"]) for reg in d["regions"]]))
            assert d["points"] == sum(reg["points"] for reg in d["regions"])
    assert sorted(got, key=lambda x: (x[1], x[0])) == sorted(expected, key=lambda x: (x[1], x[0]))


def players(n):
    return [{"name": f"p{i}"} for i in range(n)]


seeds = st.binary(min_size=4, max_size=8)
picks = st.integers(0, 2 ** 32 - 1)


@SETTINGS
@given(seed=seeds, pick=picks, n=st.integers(2, 4), refl=st.booleans())
def test_random_standard(seed, pick, n, refl):
    g = random_playout(GAME, players(n), {"allow_reflection": refl}, seed, pick_seed=pick,
                       check=check)
    check_scoring_log(g)
    res = GAME.result(g.state)
    for seat in range(n):
        tokens = res["details"]["seats"][seat]["tokens"]
        assert res["scores"][seat] == sum(t["value"] for t in tokens)
    best = max(res["scores"])
    assert res["winners"] == [s for s in range(n) if res["scores"][s] == best]
    assert g.state["round"] == 12


@SETTINGS
@given(seed=seeds, pick=picks, games=st.sampled_from([1, 2]), refl=st.booleans())
def test_random_duel(seed, pick, games, refl):
    g = random_playout(GAME, players(2), {"mode": "duel", "duel_games": games,
                                          "allow_reflection": refl}, seed, pick_seed=pick,
                       check=check)
    check_scoring_log(g)
    res = GAME.result(g.state)
    assert len(res["details"]["games"]) == games
    assert res["scores"] == [sum(x["scores"][s] for x in res["details"]["games"])
                             for s in range(2)]
    assert [x["starter"] for x in res["details"]["games"]] == [0, 1][:games]
    revealed = [e["data"]["piece"] for e in g.events if e["type"] == "MissionRevealed"]
    assert revealed == g.state["deck"] * games


@SETTINGS
@given(seed=seeds, pick=picks, loses=st.booleans())
def test_random_solo(seed, pick, loses):
    g = random_playout(GAME, players(1), {"solo_discard_loses": loses}, seed, pick_seed=pick,
                       check=check)
    check_scoring_log(g)
    res = GAME.result(g.state)
    d = res["details"]
    assert d["covered"] + len(d["uncovered"]) == 24 and res["scores"] == [d["covered"]]
    assert d["won"] == (d["uncovered"] == []) and res["winners"] == ([0] if d["won"] else [])
    if d["won"]:
        assert d["rounds_played"] <= 12
    elif loses and d["discarded"]:
        assert g.events[-2]["type"] == "CampDiscarded"
        assert d["rounds_played"] == g.events[-2]["data"]["round"] and len(d["discarded"]) == 1
    else:
        assert d["rounds_played"] == 12


def test_greedy_solo_games_reach_both_outcomes_without_error():
    """A covering-greedy player: exercise early wins (ending before round 12) when they occur."""
    rnd = random.Random(3)
    outcomes, early = set(), []
    for i in range(40):
        g = LocalGame(GAME, players(1), {}, b"solo" + i.to_bytes(2, "big"))
        while not g.state["over"]:
            acts = g.legal(0)
            best = max(len([1 for r, c in a["cells"] if g.state["layout"][r][c] == "S"])
                       for a in acts)
            g.act(0, rnd.choice([a for a in acts if sum(
                1 for r, c in a["cells"] if g.state["layout"][r][c] == "S") == best]))
        res = GAME.result(g.state)
        d = res["details"]
        outcomes.add(d["won"])
        if d["won"]:
            assert g.events[-2]["type"] == "CampPlaced" and d["uncovered"] == []
            revealed = [e for e in g.events if e["type"] == "MissionRevealed"]
            assert d["rounds_played"] == len(revealed) == revealed[-1]["data"]["round"]
            if d["rounds_played"] < 12:
                early.append(d["rounds_played"])
        else:
            assert d["rounds_played"] == 12
    assert outcomes == {False, True} and early  # early wins really end the game at once


def test_views_for_every_viewer_after_end_show_everything():
    g = random_playout(GAME, players(3), {}, b"end-view", pick_seed=5)
    for viewer in (0, 1, 2, None, ALL):
        view = GAME.view(g.state, viewer)
        assert view["phase"] == "over" and view["deck"] == g.state["deck"]
        assert view["result"] == GAME.result(g.state)


json_values = st.recursive(
    st.none() | st.booleans() | st.integers(-2 ** 70, 2 ** 70) | st.floats(allow_nan=True)
    | st.text(max_size=4) | st.sampled_from(list(S.LETTERS)),
    lambda inner: st.lists(inner, max_size=6) | st.dictionaries(st.text(max_size=3), inner,
                                                                max_size=3),
    max_leaves=12)
cell = st.one_of(st.lists(st.integers(-3, 12), min_size=2, max_size=2), json_values)
actions = st.one_of(
    json_values,
    st.fixed_dictionaries({"type": st.just("place"), "piece": json_values,
                           "cells": st.one_of(json_values, st.lists(cell, max_size=7))}),
    st.fixed_dictionaries({"type": st.just("place"), "piece": st.just("X"),
                           "cells": st.lists(st.lists(st.integers(0, 9), min_size=2,
                                                      max_size=2), min_size=5, max_size=5)}),
)
_FUZZ_GAME = LocalGame(GAME, players(2), {}, b"fuzz")


@settings(max_examples=300, deadline=None)
@given(action=actions)
def test_fuzzed_actions_never_crash(action):
    from service.engine import IllegalAction
    from service.engine.fold import clone

    state = _FUZZ_GAME.state
    before = clone(state)
    try:
        events, _ = GAME.decide(state, 0, action, None)
    except IllegalAction as exc:
        assert isinstance(exc.code, str) and exc.code
        assert exc.code in {"malformed_action", "unknown_action", "unexpected_field",
                            "missing_field", "invalid_field", "not_current_piece",
                            "bad_cells", "off_board", "bad_shape", "covers_rock",
                            "piece_overlaps", "first_must_cover_center", "not_adjacent"}
    else:
        assert events[0]["type"] == "PlacementCommitted"
        got = frozenset(map(tuple, events[0]["data"]["cells"]))
        legal = {frozenset(map(tuple, a["cells"])) for a in GAME.legal_actions(state, 0)}
        assert got in legal
    assert state == before
