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
2. Decision time against the game's length (``--scaling``): one 2-seat Papyrus game (seat 0
   heuristic, seat 1 random: > 2,000 events), every real decision timed (CPU time of this process)
   twice in the same run: with the observation built incrementally
   (:class:`service.engine.bots.SeatLog`, what the autoplay does) and, as the baseline, from
   scratch (:func:`service.engine.bots.observe` over the whole log). Per path, the median
   decision (observe + choose) among the decisions nearest event 50 and event 2,000; target:
   incremental ratio <= 1.2. The same for ``mcts`` at fixed iterations (``--scaling-iterations``).
3. The time of one decision at default settings, ``service.engine.bots.choose(level, obs)``
   (no budget given: the mcts level uses ``DEFAULT_BUDGET_MS``), for every game type and level,
   over several decision points each; the time of building the observation (``observe``) is reported
   apart. Target: every decision <= 1 s. This is a sample (a few points per game type, the
   default mode only); ``bench/decision_time.py`` times every decision of the mcts seat of whole
   games of every type and mode, as the autoplay makes them (incremental observation + choose).

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

from service.engine.bots import (DEFAULT_BUDGET_MS, LEVELS, SeatLog, choose,  # noqa: E402
                                 observe)
from service.engine.ismcts import search  # noqa: E402
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


SCALING_AT = (50, 2000)
SCALING_TARGET = 1.2


def scaling(args) -> dict:
    """Decision time near event 50 and near event 2,000 of one Papyrus game (see above)."""
    game = GAMES["papyrus"]
    g = LocalGame(game, [{"name": f"h{i}"} for i in range(args.scaling_seats)], {},
                  b"p4-scaling")
    created = g.events[0]["data"]
    logs = [SeatLog(game, created, s) for s in range(args.scaling_seats)]
    rnd = random.Random(5)
    levels = ["heuristic"] + (["mcts"] if args.scaling_iterations else [])
    rows: list[tuple[int, str, str, float]] = []   # (version, level, path, cpu ms)

    def decide(level, obs):
        if level == "mcts":
            return search(obs, game.bots, random.Random(6), budget_ms=None,
                          iterations=args.scaling_iterations)
        return choose(level, obs, random.Random(6))

    last = SCALING_AT[-1]
    for _ in range(20_000):
        awaiting = g.awaiting()
        if not awaiting:
            break
        seat = awaiting[0]
        real = len(g.legal(seat)) > 1
        near = any(abs(g.version - at) <= args.scaling_window for at in SCALING_AT)
        if real and near:
            for level in levels:
                t0 = time.process_time()
                obs = logs[seat].observe(g.events, g.state, g.version, log_start=1)
                decide(level, obs)
                rows.append((g.version, level, "incremental", 1000 * (time.process_time() - t0)))
                t0 = time.process_time()
                ref = observe(game, created, g.events[1:], g.state, seat, g.version)
                decide(level, ref)
                rows.append((g.version, level, "from_scratch", 1000 * (time.process_time() - t0)))
        obs = logs[seat].observe(g.events, g.state, g.version, log_start=1)
        # seat 0 plays the heuristic, the others at random: a long game (random seats conquer
        # little), every decision of every seat timed with the levels above
        if not real:
            g.act(seat, obs.legal[0])
        else:
            g.act(seat, game.bots.heuristic(obs, rnd) if seat == 0 else rnd.choice(obs.legal))
        if g.version > last + args.scaling_window:
            break
    out: dict = {"game_events": g.version, "window": args.scaling_window,
                 "iterations": args.scaling_iterations, "levels": {}}
    for level in levels:
        per: dict = {}
        for path in ("incremental", "from_scratch"):
            med = {}
            for at in SCALING_AT:
                xs = [ms for v, lv, p, ms in rows
                      if lv == level and p == path and abs(v - at) <= args.scaling_window]
                med[at] = statistics.median(xs) if xs else None
            r = (med[last] / med[SCALING_AT[0]]) if med[last] and med[SCALING_AT[0]] else None
            per[path] = {f"median_cpu_ms_at_{at}": None if m is None else round(m, 3)
                         for at, m in med.items()}
            per[path]["decisions"] = sum(1 for _, lv, p, _ in rows if lv == level and p == path)
            per[path]["ratio"] = None if r is None else round(r, 3)
        per["ok"] = (per["incremental"]["ratio"] is not None
                     and per["incremental"]["ratio"] <= SCALING_TARGET) if level == "heuristic" \
            else None
        out["levels"][level] = per
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seconds", type=float, default=3.0, help="per rate measurement")
    ap.add_argument("--points", type=int, default=6, help="decisions per game, random/heuristic")
    ap.add_argument("--mcts-points", type=int, default=4, help="decisions per game, mcts")
    ap.add_argument("--scaling", action="store_true",
                    help="only the decision time against the game's length")
    ap.add_argument("--scaling-window", type=int, default=40,
                    help="events either side of 50 and 2,000 whose decisions are timed")
    ap.add_argument("--scaling-seats", type=int, default=2, help="seats of the Papyrus game")
    ap.add_argument("--scaling-iterations", type=int, default=0,
                    help="also time mcts at this many iterations (0: heuristic only)")
    args = ap.parse_args()
    if args.scaling:
        res = {"bench": "p4_bots", "scaling": scaling(args), "target_ratio": SCALING_TARGET,
               **machine()}
        print(f"P4 bots: decision time near events {SCALING_AT} of one Papyrus game "
              f"({res['scaling']['game_events']} events played), CPU ms, median")
        for level, per in res["scaling"]["levels"].items():
            for path in ("incremental", "from_scratch"):
                v = per[path]
                print(f"  {level:9s} {path:12s} " + "  ".join(
                    f"@{at}: {v[f'median_cpu_ms_at_{at}']}" for at in SCALING_AT)
                    + f"  ratio {v['ratio']}  ({v['decisions']} decisions)")
        print(json.dumps(res, sort_keys=True))
        return
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
