"""Arena: bot levels against each other, per game type.

    python bench/arena.py [--games N] [--types diamant tides-of-time ...] [--budget-ms MS]
                          [--iterations K] [--seed S] [--sims-seconds SEC]

For every registered game type (or those given with ``--types``) it plays ``N`` games per
matchup, every seat choosing from its observation only (built incrementally, as the server does:
:class:`service.engine.bots.SeatLog`):

* games that can be played by 2 seats: ``mcts`` vs ``heuristic`` and ``heuristic`` vs ``random``,
  the two levels alternating seats from game to game;
* games that need more seats (Diamant: 4 seats): one ``mcts`` seat against ``heuristic`` seats and
  one ``heuristic`` seat against ``random`` seats, the lone seat rotating round the table.

Per matchup it prints each level's win rate (a shared win of ``k`` winners counts ``1/k``) with a
95% Wilson score interval, the lone seat's ratio to its fair share (multi-seat games), and per
level the mean and p95 time of one decision (only real decisions: more than one legal action).
Then, for games whose AI module has a determinizer, the ISMCTS iterations per second over the
decision points of one heuristic game, next to a baseline measured in the same run on the same
points: plain uniform-random playouts (determinize + random moves to the end, no tree, no
policy) per second; the ratio makes figures comparable across machines and loads.

A game without bot hooks (``Game.bots``) is skipped with a note. A progress
bar goes to stderr; the last stdout line is one JSON object with every figure.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import random
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
if ROOT not in sys.path:
    sys.path.insert(0, ROOT)

from service.engine.bots import SeatLog, choose, observe  # noqa: E402
from service.engine import command  # noqa: E402
from service.engine.ismcts import search  # noqa: E402
from service.engine.local import LocalGame  # noqa: E402
from service.engine.rng import SimRng  # noqa: E402
from service.games import GAMES  # noqa: E402

MAX_STEPS = 20_000


def wilson(successes: float, n: int, z: float = 1.96) -> tuple[float, float]:
    if n == 0:
        return 0.0, 1.0
    p = successes / n
    denom = 1 + z * z / n
    centre = (p + z * z / (2 * n)) / denom
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / denom
    return max(0.0, centre - half), min(1.0, centre + half)


def p95(xs: list[float]) -> float:
    if not xs:
        return 0.0
    xs = sorted(xs)
    return xs[min(len(xs) - 1, max(0, math.ceil(0.95 * len(xs)) - 1))]


class Progress:
    def __init__(self, total: int, width: int = 30) -> None:
        self.total = max(1, total)
        self.done = 0
        self.width = width
        self.t0 = time.perf_counter()

    def tick(self, label: str) -> None:
        self.done += 1
        filled = int(self.width * self.done / self.total)
        el = time.perf_counter() - self.t0
        eta = el / self.done * (self.total - self.done)
        sys.stderr.write(f"\r[{'#' * filled}{'-' * (self.width - filled)}] "
                         f"{self.done}/{self.total} {el:6.0f}s eta {eta:5.0f}s {label[:40]:<40}")
        sys.stderr.flush()

    def close(self) -> None:
        sys.stderr.write("\n")
        sys.stderr.flush()


def seat_plan(game) -> tuple[int, bool]:
    """(number of seats, True for a 2-seat duel)."""
    if game.min_players <= 2 <= game.max_players:
        return 2, True
    return max(game.min_players, min(4, game.max_players)), False


def matchups(duel: bool) -> list[tuple[str, str]]:
    return [("mcts", "heuristic"), ("heuristic", "random")]


def play_one(game, levels: list[str], seed: bytes, rnd: random.Random, budget_ms: int,
             iterations: int | None, times: dict[str, list[float]]) -> dict:
    g = LocalGame(game, [{"name": f"{lv}{i}", "bot": {"level": lv}}
                         for i, lv in enumerate(levels)], {}, seed)
    created = g.events[0]["data"]
    logs = [SeatLog(game, created, s) for s in range(len(levels))]
    for _ in range(MAX_STEPS):
        awaiting = g.awaiting()
        if not awaiting:
            break
        seat = awaiting[0]
        obs = logs[seat].observe(g.events, g.state, g.version, log_start=1)
        level = levels[seat]
        t0 = time.perf_counter()
        if level == "mcts" and iterations is not None and len(obs.legal) > 1:
            action = search(obs, game.bots, rnd, budget_ms=None, iterations=iterations)
        else:
            action = choose(level, obs, rnd, budget_ms=budget_ms)
        if len(obs.legal) > 1:
            times.setdefault(level, []).append(time.perf_counter() - t0)
        if action not in obs.legal:
            raise AssertionError(f"{game.type_id}: {level} played an illegal action {action}")
        g.act(seat, action)
    else:
        raise AssertionError(f"{game.type_id}: game did not end")
    return game.result(g.state)


def decision_points(game, mod, n: int, seed: bytes, limit: int = 40) -> list:
    g = LocalGame(game, [{"name": f"h{i}"} for i in range(n)], {}, seed)
    created = g.events[0]["data"]
    rnd = random.Random(0)
    out = []
    for _ in range(MAX_STEPS):
        awaiting = g.awaiting()
        if not awaiting:
            break
        seat = awaiting[0]
        obs = observe(game, created, g.events[1:], g.state, seat, g.version)
        if len(obs.legal) > 1:
            out.append(obs)
        g.act(seat, mod.heuristic(obs, rnd) if len(obs.legal) > 1 else obs.legal[0])
    if len(out) > limit:
        stride = len(out) / limit
        out = [out[int(i * stride)] for i in range(limit)]
    return out


def random_playouts_per_second(points: list, mod, seconds: float) -> float:
    """Baseline: determinize, then uniformly random legal moves to the end (no tree)."""
    rnd = random.Random(1)
    done = 0
    t0 = time.perf_counter()
    while time.perf_counter() - t0 < seconds:
        for obs in points:
            if done and time.perf_counter() - t0 >= seconds:
                break
            game = obs.game
            state = mod.determinize(obs, rnd)
            prep = getattr(mod, "for_simulation", None)
            if prep is not None:
                state = prep(state)
            rng = SimRng(rnd)
            for _ in range(MAX_STEPS):
                if game.is_over(state):
                    break
                seat = game.awaiting(state)[0]
                moves = game.legal_actions(state, seat)
                state = command(game, state, seat, moves[rnd.randrange(len(moves))], rng)[1]
            done += 1
    return done / (time.perf_counter() - t0)


def ismcts_per_second(points: list, mod, seconds: float, per_point: int = 30) -> float:
    rnd = random.Random(2)
    done = 0
    t0 = time.perf_counter()
    while time.perf_counter() - t0 < seconds:
        for obs in points:
            if done and time.perf_counter() - t0 >= seconds:
                break
            search(obs, mod, rnd, budget_ms=None, iterations=per_point)
            done += per_point
    return done / (time.perf_counter() - t0)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--games", type=int, default=10, help="games per matchup and game type")
    ap.add_argument("--types", nargs="*", default=None, help="game type ids (default: all)")
    ap.add_argument("--budget-ms", type=int, default=200, help="mcts budget per decision")
    ap.add_argument("--iterations", type=int, default=None,
                    help="mcts iterations per decision instead of a time budget (reproducible)")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--sims-seconds", type=float, default=3.0,
                    help="seconds for each ISMCTS and baseline speed measurement (0: skip)")
    args = ap.parse_args(argv)

    types = args.types or list(GAMES)
    unknown = [t for t in types if t not in GAMES]
    if unknown:
        ap.error(f"unknown game types: {unknown}; known: {list(GAMES)}")

    plan = []
    notes: dict[str, str] = {}
    for tid in types:
        game = GAMES[tid]
        name, mod = tid, game.bots
        if mod is None:
            notes[tid] = f"skipped: {tid} has no bot hooks"
            continue
        n, duel = seat_plan(game)
        plan.append((tid, name, game, mod, n, duel))
    total = sum(len(matchups(duel)) * args.games for *_, duel in plan)
    bar = Progress(total)
    report: dict = {"games": args.games, "budget_ms": args.budget_ms,
                    "iterations": args.iterations, "seed": args.seed, "types": {}}
    lines: list[str] = []
    for tid, name, game, mod, n, duel in plan:
        entry = {"seats": n, "matchups": [], "decision_time_ms": {}}
        times: dict[str, list[float]] = {}
        for a, b in matchups(duel):
            share = {a: 0.0, b: 0.0}
            for i in range(args.games):
                if duel:
                    levels = [a, b] if i % 2 == 0 else [b, a]
                else:
                    levels = [b] * n
                    levels[i % n] = a
                seed = f"arena-{args.seed}-{tid}-{a}-{b}-{i}".encode()
                rnd = random.Random(f"{args.seed}-{tid}-{a}-{b}-{i}")
                res = play_one(game, levels, seed, rnd, args.budget_ms, args.iterations, times)
                winners = res["winners"]
                for s in winners:
                    share[levels[s]] += 1.0 / len(winners)
                bar.tick(f"{tid} {a} vs {b} #{i + 1}")
            m = {"levels": [a, b], "games": args.games}
            for lv in (a, b):
                seats_of_lv = 1 if (duel or lv == a) else n - 1
                rate = share[lv] / args.games
                lo, hi = wilson(share[lv], args.games)
                m[lv] = {"win_rate": round(rate, 4), "ci95": [round(lo, 4), round(hi, 4)],
                         "seats": seats_of_lv}
            if not duel:
                m["fair_share"] = round(1 / n, 4)
                m["lone_seat_vs_fair_share"] = round(m[a]["win_rate"] * n, 3)
            entry["matchups"].append(m)
        for lv, ts in sorted(times.items()):
            entry["decision_time_ms"][lv] = {"mean": round(1000 * sum(ts) / len(ts), 2),
                                             "p95": round(1000 * p95(ts), 2),
                                             "decisions": len(ts)}
        report["types"][tid] = entry
    bar.close()

    for tid, name, game, mod, n, duel in plan:
        entry = report["types"][tid]
        lines.append(f"== {tid} ({n} seats{'' if duel else ', one lone seat'})")
        for m in entry["matchups"]:
            a, b = m["levels"]
            for lv in (a, b):
                r = m[lv]
                who = (f"{lv}" if duel or lv == a else f"{lv} (x{n - 1} seats, together)")
                lines.append(f"   {a} vs {b}: {who:<28} win {100 * r['win_rate']:5.1f}% "
                             f"[{100 * r['ci95'][0]:5.1f}, {100 * r['ci95'][1]:5.1f}]")
            if not duel:
                lines.append(f"   {a} vs {b}: lone {a} seat = {m['lone_seat_vs_fair_share']:.2f}"
                             f" x fair share (1/{n})")
        for lv, t in entry["decision_time_ms"].items():
            lines.append(f"   decision time {lv:<9} mean {t['mean']:8.2f} ms   p95 "
                         f"{t['p95']:8.2f} ms   ({t['decisions']} decisions)")
        if args.sims_seconds > 0 and hasattr(mod, "determinize"):
            points = decision_points(game, mod, n, f"speed-{tid}".encode())
            base = random_playouts_per_second(points, mod, args.sims_seconds)
            sims = ismcts_per_second(points, mod, args.sims_seconds)
            entry["ismcts_sims_per_sec"] = round(sims, 1)
            entry["baseline_random_playouts_per_sec"] = round(base, 1)
            entry["sims_vs_baseline"] = round(sims / base, 3) if base else None
            lines.append(f"   ISMCTS {sims:8.0f} simulations/s; baseline random playouts "
                         f"{base:8.0f}/s; ratio {sims / base if base else float('nan'):.2f} "
                         f"({len(points)} decision points)")
    for tid, note in notes.items():
        lines.append(f"== {tid}: {note}")
        report["types"][tid] = {"skipped": note}
    print("\n".join(lines))
    print(json.dumps(report, sort_keys=True))
    return 0


if __name__ == "__main__":
    sys.exit(main())
