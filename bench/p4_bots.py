"""Benchmark P4: ISMCTS simulation rate and the time of one bot decision.

No server: bots are pure functions of an observation (``service.engine.bots``). Decision points
come from one heuristic game per game type (``bench/arena.py``'s ``decision_points``: the
observations a seat really gets, only those with more than one legal action).

1. Simulations per second of ``service.engine.ismcts.search`` for Diamant and Tides of Time (30
   iterations per call, cycling over up to 40 decision points), next to a baseline measured in the
   same run on the same points: plain uniform-random playouts (determinize + random moves to the
   end, no tree, no policy). Both are reported per wall-clock second and per CPU second of this
   process (``time.process_time``: robust when other processes share the cores). Target: >= 2,000
   simulations per second.
2. The time of one decision at default settings, ``service.engine.bots.choose(level, obs)``
   (no budget given: the mcts level uses ``DEFAULT_BUDGET_MS``), for every game type and level,
   over several decision points each; the time of building the observation (``observe``) is reported
   apart. Target: every decision <= 1 s.

A game without bot hooks is skipped with a note.

    .venv/bin/python bench/p4_bots.py [--seconds 3] [--points 6] [--mcts-points 4]

Prints a human summary, then one JSON line (the last line of output).
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from _harness import machine, ratio  # noqa: E402
from arena import decision_points, seat_plan  # noqa: E402

from service.engine.bots import DEFAULT_BUDGET_MS, LEVELS, choose, observe  # noqa: E402
from service.engine.local import LocalGame  # noqa: E402
from service.games import GAMES  # noqa: E402

SIM_GAMES = ("diamant", "tides-of-time")
TARGET_SIMS = 2000
TARGET_DECISION_S = 1.0


def rate(fn, points, seconds: float, per_call: int) -> tuple[float, float]:
    """(per wall second, per CPU second) of ``fn(obs)``, which does ``per_call`` units."""
    done = 0
    w0, c0 = time.perf_counter(), time.process_time()
    while time.perf_counter() - w0 < seconds:
        for obs in points:
            fn(obs)
            done += per_call
            if time.perf_counter() - w0 >= seconds:
                break
    return done / (time.perf_counter() - w0), done / max(time.process_time() - c0, 1e-9)


def sims(args) -> dict:
    try:
        from service.engine import command
        from service.engine.ismcts import search
        from service.engine.rng import SimRng
    except ModuleNotFoundError as exc:
        return {"skipped": f"service/engine/ismcts.py is missing ({exc})"}
    out = {}
    for tid in SIM_GAMES:
        game = GAMES[tid]
        mod = game.bots
        if mod is None:
            out[tid] = {"skipped": f"{tid} has no bot hooks"}
            continue
        n, _ = seat_plan(game)
        points = decision_points(game, mod, n, f"p4-{tid}".encode())
        rnd = random.Random(1)

        def ismcts(obs):
            search(obs, mod, rnd, budget_ms=None, iterations=30)

        def playout(obs):
            state = mod.for_simulation(mod.determinize(obs, rnd))
            rng = SimRng(rnd)
            for _ in range(20_000):
                if game.is_over(state):
                    break
                seat = game.awaiting(state)[0]
                moves = game.legal_actions(state, seat)
                state = command(game, state, seat, moves[rnd.randrange(len(moves))], rng)[1]

        s_wall, s_cpu = rate(ismcts, points, args.seconds, 30)
        b_wall, b_cpu = rate(playout, points, args.seconds, 1)
        out[tid] = {"points": len(points), "seats": n,
                    "ismcts_sims_per_s": round(s_wall), "ismcts_sims_per_cpu_s": round(s_cpu),
                    "random_playouts_per_s": round(b_wall),
                    "random_playouts_per_cpu_s": round(b_cpu),
                    "ratio_vs_random_playouts": ratio(s_cpu, b_cpu),
                    "ok": s_wall >= TARGET_SIMS}
    return out


def decisions(args) -> dict:
    out = {}
    for tid, game in GAMES.items():
        mod = game.bots
        n, _ = seat_plan(game)
        if mod is None:
            out[tid] = {"skipped": f"{tid} has no bot hooks"}
            continue
        # decision points of one heuristic game, with the log each seat saw
        g = LocalGame(game, [{"name": f"h{i}"} for i in range(n)], {}, f"p4d-{tid}".encode())
        created = g.events[0]["data"]
        rnd = random.Random(3)
        raw = []
        for _ in range(20_000):
            awaiting = g.awaiting()
            if not awaiting:
                break
            seat = awaiting[0]
            if len(g.legal(seat)) > 1:
                raw.append((list(g.events[1:]), g.state, seat, g.version))
            obs = observe(game, created, g.events[1:], g.state, seat, g.version)
            g.act(seat, mod.heuristic(obs, rnd) if len(obs.legal) > 1 else obs.legal[0])
        per = {}
        for level in LEVELS:
            k = args.mcts_points if level == "mcts" else args.points
            stride = max(1, len(raw) // k)
            picks = raw[::stride][:k]
            obs_ms, choose_ms = [], []
            for events, state, seat, version in picks:
                t0 = time.perf_counter()
                obs = observe(game, created, events, state, seat, version)
                t1 = time.perf_counter()
                if level == "mcts" and not hasattr(mod, "determinize"):
                    break
                choose(level, obs, random.Random(4))
                t2 = time.perf_counter()
                obs_ms.append((t1 - t0) * 1000)
                choose_ms.append((t2 - t1) * 1000)
            if not choose_ms:
                per[level] = {"skipped": "no determinizer"}
                continue
            per[level] = {"decisions": len(choose_ms),
                          "median_ms": round(statistics.median(choose_ms), 2),
                          "max_ms": round(max(choose_ms), 2),
                          "observe_max_ms": round(max(obs_ms), 2),
                          "ok": max(choose_ms) + max(obs_ms) <= TARGET_DECISION_S * 1000}
        out[tid] = {"seats": n, "decision_points": len(raw), "levels": per}
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seconds", type=float, default=3.0, help="per rate measurement")
    ap.add_argument("--points", type=int, default=6, help="decisions per game, random/heuristic")
    ap.add_argument("--mcts-points", type=int, default=4, help="decisions per game, mcts")
    args = ap.parse_args()
    S = sims(args)
    D = decisions(args)
    sims_ok = all(v.get("ok", False) for v in S.values()) if "skipped" not in S else None
    dec_ok = all(lv.get("ok", True) for g in D.values() for lv in g.get("levels", {}).values())
    worst = max((lv["max_ms"] + lv["observe_max_ms"], f"{tid}/{name}")
                for tid, g in D.items() for name, lv in g.get("levels", {}).items()
                if "max_ms" in lv)
    res = {"bench": "p4_bots", "default_budget_ms": DEFAULT_BUDGET_MS, "sims": S,
           "decisions": D, "sims_ok": sims_ok, "decisions_ok": dec_ok,
           "worst_decision_ms": round(worst[0], 1), "worst_decision": worst[1],
           "target_sims_per_s": TARGET_SIMS, "target_decision_ms": TARGET_DECISION_S * 1000,
           **machine()}
    print(f"P4 bots: ISMCTS simulations per second ({args.seconds:g} s each), decisions at "
          f"default settings (mcts budget {DEFAULT_BUDGET_MS} ms)")
    if "skipped" in S:
        print(f"  simulations: SKIPPED - {S['skipped']}")
    for tid, v in S.items():
        if isinstance(v, dict) and "skipped" in v:
            print(f"  {tid}: SKIPPED - {v['skipped']}")
        elif isinstance(v, dict):
            print(f"  {tid:14s} ISMCTS {v['ismcts_sims_per_s']:6d} sims/s ({v['ismcts_sims_per_cpu_s']} "
                  f"per CPU s)  baseline random playouts {v['random_playouts_per_s']}/s "
                  f"({v['random_playouts_per_cpu_s']} per CPU s), ratio {v['ratio_vs_random_playouts']}"
                  f"  target >= {TARGET_SIMS}: {'OK' if v['ok'] else 'MISSED'}")
    for tid, g in D.items():
        if "skipped" in g:
            print(f"  {tid}: SKIPPED - {g['skipped']}")
            continue
        parts = []
        for name, lv in g["levels"].items():
            if "skipped" in lv:
                parts.append(f"{name} skipped")
            else:
                parts.append(f"{name} median {lv['median_ms']:.1f} max {lv['max_ms']:.1f} ms")
        print(f"  {tid:14s} decisions: " + "; ".join(parts))
    print(f"  worst decision (choose + observe): {res['worst_decision_ms']} ms ({worst[1]}); "
          f"target <= {TARGET_DECISION_S * 1000:.0f} ms: {'OK' if dec_ok else 'MISSED'}")
    print(json.dumps(res, sort_keys=True))


if __name__ == "__main__":
    main()
