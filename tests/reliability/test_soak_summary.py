"""bench/soak.py's verdicts: growth over the run's second half, Redis memory per stored game."""

from __future__ import annotations

from tests.ai.support import load_bench


def row(loop, rss, fds, clients, redis_mb, errors=(0, 0)):
    return {"loop": loop, "games": 100 * (loop + 1), "actions": 1000, "actions_per_s": 500.0,
            "action_errors": errors[0], "stream_errors": errors[1], "rss_mb": rss, "fds": fds,
            "redis_clients": clients, "redis_mb": redis_mb}


def test_growth_is_measured_from_the_middle_loop_not_the_cold_start():
    soak = load_bench("soak")
    rows = [row(0, [60.0, 62.0], [40, 41], 20, 1.0),  # cold: caches and pools fill
            row(1, [80.0, 81.0], [60, 60], 50, 2.0, errors=(2, 1)),
            row(2, [100.0, 100.0], [70, 72], 80, 3.0),  # the middle loop
            row(3, [101.0, 100.0], [72, 70], 80, 4.0),
            row(4, [102.0, 110.0], [70, 90], 81, 5.0)]
    out = soak.summarize(rows)
    assert out["loops"] == 5 and out["actions"] == 5000 and out["errors"] == 3
    assert out["rss_growth_second_half_pct"] == [2.0, 10.0]
    assert out["rss_mb_first_middle_last"] == [[60.0, 100.0, 102.0], [62.0, 100.0, 110.0]]
    assert out["fds_growth"] == [0, 18]
    assert out["fds_first_max_last"] == [[40, 72, 70], [41, 90, 90]]
    assert out["clients_growth"] == 1 and out["clients_first_max_last"] == [20, 81, 81]
    assert out["redis_kb_per_game"] == 10.24  # 4 MB over the 400 games stored after the first loop
