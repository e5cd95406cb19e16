"""Benchmark: Scarabya ``legal_actions`` on reachable boards (must stay under 5 ms).

Plays random games in every mode (standard 2-4 seats, duel match, solo; with and without
reflection) through the engine exactly as the server does (``LocalGame``), keeps every state in
which a seat is awaited together with that seat, then times ``GAME.legal_actions(state, seat)`` on
each of them, several times. Two baselines are measured in the same run on the same states:

* ``copy_state``: ``service.engine.clone(state)`` (one orjson round trip, what the engine pays
  on every command anyway);
* ``raw_orientations``: walking the precomputed table of every orientation x translation of the
  current piece (one bitmask test each, no rule checks, no action objects).

Prints a human summary, then one JSON line (the last line of output).

    .venv/bin/python bench/scarabya_legal_actions.py [--games 60] [--repeat 15] [--seed 1]
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import random
import statistics
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from service.engine import clone  # noqa: E402
from service.engine.local import LocalGame  # noqa: E402
from service.games import scarabya as S  # noqa: E402

GAME = S.GAME
LIMIT_MS = 5.0

CONFIGS = [
    ("standard-2", 2, {}),
    ("standard-3", 3, {}),
    ("standard-4", 4, {"allow_reflection": False}),
    ("duel", 2, {"mode": "duel"}),
    ("solo", 1, {}),
    ("solo-norefl", 1, {"allow_reflection": False}),
]


def collect(games: int, seed: int) -> list[tuple[dict, int]]:
    rnd = random.Random(seed)
    out = []
    for i in range(games):
        name, n, opts = CONFIGS[i % len(CONFIGS)]
        g = LocalGame(GAME, [{"name": f"p{k}"} for k in range(n)], dict(opts),
                      f"bench-{seed}-{i}".encode())
        while not GAME.is_over(g.state):
            awaiting = GAME.awaiting(g.state)
            for seat in awaiting:
                out.append((g.state, seat))
            seat = rnd.choice(awaiting)
            g.act(seat, rnd.choice(g.legal(seat)))  # g.state is replaced, never mutated
    return out


def percentile(values: list[float], q: float) -> float:
    values = sorted(values)
    k = min(len(values) - 1, max(0, round(q * (len(values) - 1))))
    return values[k]


def time_calls(fn, samples, repeat: int) -> tuple[list[float], list[float]]:
    """All call times (ms) and each sample's median (ms)."""
    calls, per_sample = [], []
    clock = time.perf_counter_ns
    for args in samples:
        mine = []
        for _ in range(repeat):
            t0 = clock()
            fn(*args)
            mine.append((clock() - t0) / 1e6)
        calls.extend(mine)
        per_sample.append(statistics.median(mine))
    return calls, per_sample


def raw_orientations(state: dict, seat: int) -> int:
    rocks, _ = S.layout_masks(tuple(state["layout"]))
    hits = 0
    for p in S.PLACEMENTS[(state["piece"], state["allow_reflection"])]:
        if p.mask & rocks:
            hits += 1
    return hits


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--games", type=int, default=60)
    ap.add_argument("--repeat", type=int, default=15)
    ap.add_argument("--seed", type=int, default=1)
    args = ap.parse_args()

    t0 = time.perf_counter()
    samples = collect(args.games, args.seed)
    collect_s = time.perf_counter() - t0
    counts = [len(GAME.legal_actions(s, seat)) for s, seat in samples]

    # Warm-up (imports, caches), then the measurements, interleaved per kind.
    for s, seat in samples[:50]:
        GAME.legal_actions(s, seat)
        clone(s)
    legal, legal_per = time_calls(GAME.legal_actions, samples, args.repeat)
    copy, _ = time_calls(lambda s, seat: clone(s), samples, args.repeat)
    raw, _ = time_calls(raw_orientations, samples, args.repeat)

    def stats(xs):
        return {"median_ms": round(statistics.median(xs), 4),
                "p99_ms": round(percentile(xs, .99), 4), "max_ms": round(max(xs), 4), "mean_ms": round(statistics.fmean(xs), 4)}

    res = {
        "bench": "scarabya_legal_actions",
        "states": len(samples),
        "games": args.games,
        "repeat": args.repeat,
        "calls": len(legal),
        "legal_actions": stats(legal),
        "worst_state_median_ms": round(max(legal_per), 4),
        "actions_per_state": {"median": statistics.median(counts), "max": max(counts),
                              "min": min(counts)},
        "baseline_copy_state": stats(copy),
        "baseline_raw_orientations": stats(raw),
        "ratio_median_vs_copy_state": round(statistics.median(legal) / statistics.median(copy), 2),
        "ratio_median_vs_raw_orientations": round(statistics.median(legal)
                                                  / statistics.median(raw), 2),
        "limit_ms": LIMIT_MS,
        "within_limit": percentile(legal, .99) < LIMIT_MS and max(legal_per) < LIMIT_MS,
        "python": platform.python_version(),
        "machine": platform.machine(),
        "collect_seconds": round(collect_s, 2),
    }
    L, C, R = res["legal_actions"], res["baseline_copy_state"], res["baseline_raw_orientations"]
    print(f"Scarabya legal_actions over {res['states']} reachable (state, seat) pairs from "
          f"{args.games} random games, {args.repeat} calls each ({res['calls']} calls)")
    print(f"  legal placements per state: median {res['actions_per_state']['median']}, "
          f"max {res['actions_per_state']['max']}")
    print(f"  legal_actions     median {L['median_ms']:.4f} ms  p99 {L['p99_ms']:.4f} ms  "
          f"max {L['max_ms']:.4f} ms  (worst state's median {res['worst_state_median_ms']:.4f} ms)")
    print(f"  baseline copy     median {C['median_ms']:.4f} ms  p99 {C['p99_ms']:.4f} ms "
          f"(clone of the state)")
    print(f"  baseline raw      median {R['median_ms']:.4f} ms  p99 {R['p99_ms']:.4f} ms "
          f"(walk every orientation x translation once)")
    print(f"  ratio: {res['ratio_median_vs_copy_state']} x a state copy, "
          f"{res['ratio_median_vs_raw_orientations']} x the raw walk; limit {LIMIT_MS} ms: "
          f"{'OK' if res['within_limit'] else 'EXCEEDED'}")
    print(json.dumps(res, sort_keys=True))


if __name__ == "__main__":
    main()
