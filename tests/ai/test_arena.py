"""bench/arena.py's seat counts (``--seats``), median game wall time and load average.

Only fast matchups (heuristic against random) are played, a couple of games each.
"""

from __future__ import annotations

import contextlib
import io
import json

import pytest

from tests.ai.support import load_bench


@pytest.fixture(scope="module")
def arena():
    return load_bench("arena")


def run(arena, *argv) -> tuple[dict, str]:
    out = io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(io.StringIO()):
        assert arena.main(list(argv)) == 0
    lines = out.getvalue().splitlines()
    return json.loads(lines[-1]), "\n".join(lines[:-1])


def test_median(arena):
    assert arena.median([3.0]) == 3.0
    assert arena.median([4.0, 1.0, 3.0]) == 3.0
    assert arena.median([4.0, 1.0, 3.0, 2.0]) == 2.5


def test_plan_for_seats(arena):
    from service.games import GAMES
    papyrus, diamant = GAMES["papyrus"], GAMES["diamant"]
    assert arena.plan_for(papyrus, None)[:2] == (2, "duel")  # default: 2 when allowed
    assert arena.plan_for(diamant, None)[:2] == (4, "table")
    assert arena.plan_for(papyrus, None, 2)[:2] == (2, "duel")
    assert arena.plan_for(papyrus, None, 3)[:2] == (3, "table")
    assert arena.plan_for(diamant, None, 5)[:2] == (5, "table")
    assert arena.plan_for(papyrus, "solo", 3)[:2] == (1, "solo")  # solo stays one seat


def test_seats_play_a_lone_seat_at_each_count_and_skip_counts_out_of_range(arena):
    report, text = run(arena, "--types", "diamant", "--seats", "3", "5", "9", "--matchups",
                       "heuristic:random", "--games", "3", "--sims-seconds", "0")
    types = report["types"]
    assert set(types) == {"diamant@3", "diamant@5", "diamant@9"}
    assert "skipped" in types["diamant@9"] and "not 9" in types["diamant@9"]["skipped"]
    for n in (3, 5):
        entry = types[f"diamant@{n}"]
        assert entry["seats"] == n and entry["kind"] == "table"
        (m,) = entry["matchups"]
        assert m["levels"] == ["heuristic", "random"] and m["games"] == 3
        assert m["fair_share"] == round(1 / n, 4)
        assert m["heuristic"]["seats"] == 1 and m["random"]["seats"] == n - 1
        # every game has a winner share of 1 in all
        assert m["heuristic"]["win_rate"] + m["random"]["win_rate"] == pytest.approx(1.0)
        assert m["lone_seat_vs_fair_share"] == round(m["heuristic"]["win_rate"] * n, 3)
        w = m["game_wall_s"]
        assert 0 < w["median"] <= w["max"] and w["mean"] <= w["max"]
        la = m["load_avg_1min"]
        assert 0 <= la["min"] <= la["mean"] <= la["max"]
        assert len(m["per_game"]["wall_s"]) == len(m["per_game"]["load_avg_1min"]) == 3
        assert max(m["per_game"]["wall_s"]) == w["max"]
        # the lone seat goes round the table, and its share by seat adds up to its win rate
        assert m["per_game"]["first_seat"] == [0, 1, 2]
        by_seat = m["heuristic"]["by_seat"]
        assert [by_seat[str(s)]["games"] for s in range(3)] == [1, 1, 1]
        assert [by_seat[str(s)]["win_rate"] for s in range(3)] == m["per_game"]["first_share"]
        assert sum(m["per_game"]["first_share"]) / 3 == pytest.approx(
            m["heuristic"]["win_rate"], abs=1e-4)
        assert f"== diamant@{n} ({n} seats, one lone seat)" in text
    assert "== diamant@9: skipped" in text


def test_two_seats_given_is_the_duel(arena):
    report, _ = run(arena, "--types", "tides-of-time", "--seats", "2", "--matchups",
                    "heuristic:random", "--games", "2", "--sims-seconds", "0")
    entry = report["types"]["tides-of-time@2"]
    assert entry["seats"] == 2 and entry["kind"] == "duel"
    assert entry["matchups"][0]["heuristic"]["seats"] == 1
    # the levels alternate seats: game 0 the first level sits at seat 0, game 1 at seat 1
    assert entry["matchups"][0]["per_game"]["first_seat"] == [0, 1]
    assert set(entry["matchups"][0]["heuristic"]["by_seat"]) == {"0", "1"}
