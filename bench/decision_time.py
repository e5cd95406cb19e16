"""Decision time at the default budget, every decision of whole games (issue 24's target).

    python bench/decision_time.py [--types T ...] [--mode M ...] [--games 1] [--seed 1]
                                  [--budget-ms MS]

Target: every decision of the ``mcts`` level at the default budget (``DEFAULT_BUDGET_MS``)
<= 1 s, and the p95 <= 850 ms, at any point of any game. ``bench/p4_bots.py`` times ``choose``
at a few decision points per game type; this plays whole games instead, for every game type
and every mode it has (the ids of ``Game.variants``, as ``bench/arena.py --mode`` lists them;
a type without variants is played once without options), with the seats ``bench/arena.py``
gives the mode (:func:`arena.plan_for`): one ``mcts`` seat (seat 0) against ``heuristic``
seats, or alone in a solo mode.

Every decision of the mcts seat is timed end to end, the work of the autoplay's bot turn
(``service.application.autoplay.Autoplay._bot_choice``, run by ``workers.jobs.bot_turn``) once
the table is loaded: the decision's random stream (``secret_random``), the seat's observation
from its cached log plus the new events (``SeatLogs.observe``, the events copied as
``game_event`` copies a stored envelope), then ``choose("mcts", obs, rnd, budget_ms,
started)`` — with ``budget_ms`` None unless ``--budget-ms`` is given, i.e. the default budget,
and ``started`` the decision's start, as the autoplay passes it (the budget covers the
observation too). Reading the events
from Redis and loading the table are not included (no store here). Wall time
(``time.perf_counter``) and CPU time of this process (``time.process_time``) are both taken.

Per type/mode: the number of decisions (real ones, more than one legal action; forced ones
are timed and counted apart, their max reported), p50, p95 and max of wall and CPU time, and
the game's event index (version) of the slowest decision (by wall time) and its CPU time; the 1-minute load average at the start
and the end of each game. The last line of output is one JSON object with every figure.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import random
import statistics
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from _harness import machine  # noqa: E402
from arena import mode_options, plan_for  # noqa: E402

from service.engine.bots import (DEFAULT_BUDGET_MS, SeatLog, SeatLogs, choose,  # noqa: E402
                                 secret_random)
from service.engine.local import LocalGame  # noqa: E402
from service.games import GAMES  # noqa: E402

TARGET_MAX_MS = 1000.0
TARGET_P95_MS = 850.0
MAX_STEPS = 50_000


def p95(xs: list[float]) -> float:
    """The nearest-rank 95th percentile (as ``bench/arena.py``'s)."""
    xs = sorted(xs)
    return xs[min(len(xs) - 1, max(0, math.ceil(0.95 * len(xs)) - 1))] if xs else 0.0


def modes_of(game) -> list[str | None]:
    """The variant ids of ``game`` (None: a game without variants, played without options)."""
    return [v["id"] for v in game.variants] or [None]


def play(game, mode: str | None, seed: bytes, budget_ms: int | None) -> dict:
    """One game, the mcts seat's decisions timed as the autoplay makes them."""
    options = mode_options(game, mode)
    n, kind, _ = plan_for(game, mode)
    levels = ["mcts"] + ["heuristic"] * (n - 1)
    g = LocalGame(game, [{"name": f"{lv}{i}", "bot": {"level": lv}}
                         for i, lv in enumerate(levels)], options, seed)
    created = g.events[0]["data"]
    game_id = seed.decode()
    mcts_logs = SeatLogs()            # what the autoplay keeps between its bot turns
    others = {s: SeatLog(game, created, s) for s in range(1, n)}
    hrnd = random.Random(seed)
    real: list[tuple[float, float, int]] = []     # (wall ms, cpu ms, version)
    forced: list[float] = []

    def read(after: int) -> list[dict]:
        # the game's own events with a version in (after, g.version], copied as game_event
        # copies a stored envelope (LocalGame.events[i] is version i + 1)
        return [{"type": ev["type"], "seat": ev.get("seat"), "data": ev.get("data", {}),
                 **({"forced": True} if ev.get("forced") else {})}
                for ev in g.events[after:g.version]]

    for _ in range(MAX_STEPS):
        awaiting = g.awaiting()
        if not awaiting:
            break
        seat = awaiting[0]
        if seat == 0:
            w0, c0 = time.perf_counter(), time.process_time()
            rnd = secret_random(seed, game_id, g.version, seat)
            obs = mcts_logs.observe(game_id, game, created, seat, g.state, g.version, read)
            action = choose("mcts", obs, rnd, budget_ms, started=w0)
            w1, c1 = time.perf_counter(), time.process_time()
            if len(obs.legal) > 1:
                real.append(((w1 - w0) * 1000, (c1 - c0) * 1000, g.version))
            else:
                forced.append((w1 - w0) * 1000)
        else:
            obs = others[seat].observe(g.events, g.state, g.version, log_start=1)
            action = choose("heuristic", obs, hrnd)
        if action not in obs.legal:
            raise AssertionError(f"{game.type_id}: seat {seat} played an illegal {action}")
        g.act(seat, action)
    else:
        raise AssertionError(f"{game.type_id}/{mode}: game did not end in {MAX_STEPS} steps")
    return {"seats": n, "kind": kind, "events": g.version, "real": real, "forced": forced,
            "winners": game.result(g.state)["winners"]}


def summary(real: list[tuple[float, float, int, int]], forced: list[float]) -> dict:
    walls = [w for w, _, _, _ in real]
    cpus = [c for _, c, _, _ in real]
    out: dict = {"decisions": len(real), "forced_decisions": len(forced),
                 "forced_max_ms": round(max(forced), 2) if forced else None}
    if not real:
        return out
    slow = max(real)
    out.update({
        "wall_ms": {"p50": round(statistics.median(walls), 2), "p95": round(p95(walls), 2),
                    "max": round(max(walls), 2)},
        "cpu_ms": {"p50": round(statistics.median(cpus), 2), "p95": round(p95(cpus), 2),
                   "max": round(max(cpus), 2)},
        "max_at_event": slow[2], "max_in_game": slow[3], "max_cpu_ms": round(slow[1], 2),
        "ok": max(walls) <= TARGET_MAX_MS and p95(walls) <= TARGET_P95_MS})
    return out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--types", nargs="*", default=None, help="game type ids (default: all)")
    ap.add_argument("--mode", nargs="*", default=None,
                    help="variant ids (default: every variant of each type)")
    ap.add_argument("--games", type=int, default=1, help="games per type and mode")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--budget-ms", type=int, default=None,
                    help="the mcts budget (default: none given, i.e. DEFAULT_BUDGET_MS)")
    args = ap.parse_args(argv)
    types = args.types or list(GAMES)
    report: dict = {"bench": "decision_time", "default_budget_ms": DEFAULT_BUDGET_MS,
                    "budget_ms": args.budget_ms, "games": args.games, "seed": args.seed,
                    "target_max_ms": TARGET_MAX_MS, "target_p95_ms": TARGET_P95_MS,
                    "load_avg_1min_start": round(os.getloadavg()[0], 2), "types": {},
                    **machine()}
    budget = args.budget_ms or DEFAULT_BUDGET_MS
    print(f"Decision time of the mcts seat, every decision of whole games, budget {budget} ms "
          f"({'given' if args.budget_ms else 'default'}); wall (CPU) ms")
    for tid in types:
        game = GAMES[tid]
        if game.bots is None:
            report["types"][tid] = {"skipped": f"{tid} has no bot hooks"}
            continue
        for mode in modes_of(game):
            if args.mode and (mode or "default") not in args.mode:
                continue
            key = tid if mode is None else f"{tid}/{mode}"
            real, forced, games = [], [], []
            for i in range(args.games):
                load0 = os.getloadavg()[0]
                t0 = time.perf_counter()
                res = play(game, mode, f"dtime-{args.seed}-{key}-{i}".encode(), args.budget_ms)
                real += [(w, c, v, i) for w, c, v in res["real"]]
                forced += res["forced"]
                games.append({"events": res["events"], "seats": res["seats"],
                              "kind": res["kind"], "mcts_won": 0 in res["winners"],
                              "wall_s": round(time.perf_counter() - t0, 2),
                              "load_avg_1min": [round(load0, 2),
                                                round(os.getloadavg()[0], 2)]})
            s = summary(real, forced)
            s["games"] = games
            report["types"][key] = s
            loads = [x for gm in games for x in gm["load_avg_1min"]]
            if s["decisions"]:
                w, c = s["wall_ms"], s["cpu_ms"]
                print(f"  {key:28s} {s['decisions']:5d} decisions  p50 {w['p50']:7.1f} "
                      f"({c['p50']:7.1f})  p95 {w['p95']:7.1f} ({c['p95']:7.1f})  max "
                      f"{w['max']:7.1f} ({s['max_cpu_ms']:7.1f}) at event {s['max_at_event']}  "
                      f"{sum(gm['events'] for gm in games)} events, load "
                      f"{min(loads):.2f}-{max(loads):.2f}  {'OK' if s['ok'] else 'MISSED'}",
                      flush=True)
            else:
                print(f"  {key:28s} no real decision", flush=True)
    rows = [v for v in report["types"].values() if v.get("decisions")]
    report["ok"] = all(v["ok"] for v in rows)
    report["worst_ms"] = max(v["wall_ms"]["max"] for v in rows) if rows else None
    report["worst_p95_ms"] = max(v["wall_ms"]["p95"] for v in rows) if rows else None
    report["load_avg_1min_end"] = round(os.getloadavg()[0], 2)
    print(f"  worst decision {report['worst_ms']} ms, worst p95 {report['worst_p95_ms']} ms; "
          f"target max <= {TARGET_MAX_MS:.0f}, p95 <= {TARGET_P95_MS:.0f}: "
          f"{'OK' if report['ok'] else 'MISSED'}; load average "
          f"{report['load_avg_1min_start']} -> {report['load_avg_1min_end']}")
    print(json.dumps(report, sort_keys=True))
    return 0


if __name__ == "__main__":
    sys.exit(main())
