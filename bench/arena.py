"""Arena: bot levels against each other, per game type.

    python bench/arena.py [--games N] [--types diamant tides-of-time ...] [--budget-ms MS]
                          [--iterations K] [--seed S] [--sims-seconds SEC]
                          [--mode default duel solo curse sphinx ...] [--matchups mcts:heuristic]
                          [--seats 3 4 5]

For every registered game type (or those given with ``--types``) it plays ``N`` games per
matchup, every seat choosing from its observation only (built incrementally, as the server does:
:class:`service.engine.bots.SeatLog`):

* games that can be played by 2 seats: ``mcts`` vs ``heuristic`` and ``heuristic`` vs ``random``,
  the two levels alternating seats from game to game;
* games that need more seats (Diamant: 4 seats): one ``mcts`` seat against ``heuristic`` seats and
  one ``heuristic`` seat against ``random`` seats, the lone seat rotating round the table.

``--seats N ...`` plays each game type at each of these seat counts it allows instead (2: the
duel above; 3 or more: the lone seat against the others, e.g. ``--types diamant papyrus --seats
3 4 5``); a count outside the game's range is skipped with a note.

``--mode`` plays each game type in the given variants (the ids of ``Game.variants``: ``duel``,
``solo``, ``curse``, ``sphinx``...; ``default`` is the game without options); a type without
such a variant is skipped with a note. A ``solo`` variant is played by one seat alone against
the game's own target (Papyrus: beat the Pharaoh; Scarabya: cover the scarabs): each level is
measured on its own (mcts, heuristic; not random, whose solo games may not end), its win rate
being the share of games it won, every level on the same seeds.

Per matchup it prints each level's win rate (a shared win of ``k`` winners counts ``1/k``) with a
95% Wilson score interval, the lone seat's ratio to its fair share (multi-seat games), and per
level the mean, p95 and max time of one decision (only real decisions: more than one legal
action), the wall time of one whole game (mean, median, p95, max), and the machine's 1-minute
load average read after each game (min, mean, max), and the first level's win rate by the seat
it held (a seat-order advantage shows there); the JSON also lists per game the wall time, the
load average, the first level's seat and its share of the win, so that runs on other seeds can
be pooled.
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
from statistics import median

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
             iterations: int | None, times: dict[str, list[float]],
             options: dict | None = None) -> dict:
    g = LocalGame(game, [{"name": f"{lv}{i}", "bot": {"level": lv}}
                         for i, lv in enumerate(levels)], dict(options or {}), seed)
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


def mode_options(game, mode: str | None) -> dict | None:
    """The options of ``game``'s variant ``mode`` ({} for None), or None if it has no such
    variant."""
    if mode is None:
        return {}
    for v in game.variants:
        if v["id"] == mode:
            return dict(v["options"])
    return None


def plan_for(game, mode: str | None,
             seats: int | None = None) -> tuple[int, str, list[tuple[str, ...]]]:
    """(seats, kind, matchups): kind ``duel`` (2 seats, levels alternating), ``table`` (one
    lone seat against the others), ``solo`` (one seat alone against the game's target: each
    level on its own). ``seats`` forces the number of seats (2: duel, more: table); by default
    :func:`seat_plan` chooses."""
    if mode == "solo":
        return 1, "solo", [("mcts",), ("heuristic",)]  # random: a solo game may never end
    if seats is not None:
        n, duel = seats, seats == 2
    else:
        n, duel = seat_plan(game)
    return n, "duel" if duel else "table", matchups(duel)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--games", type=int, default=10, help="games per matchup and game type")
    ap.add_argument("--types", nargs="*", default=None, help="game type ids (default: all)")
    ap.add_argument("--mode", nargs="*", default=None,
                    help="variant ids (e.g. duel solo curse sphinx; 'default' for no option): "
                         "each game type is played in each of them it has")
    ap.add_argument("--matchups", nargs="*", default=None,
                    help="only these matchups, e.g. mcts:heuristic heuristic:random heuristic")
    ap.add_argument("--budget-ms", type=int, default=200, help="mcts budget per decision")
    ap.add_argument("--iterations", type=int, default=None,
                    help="mcts iterations per decision instead of a time budget (reproducible)")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--seats", type=int, nargs="*", default=None,
                    help="seat counts to play each game type at (2: duel; 3 or more: one lone "
                         "seat against the others); default: 2 if the game allows it, else 4")
    ap.add_argument("--sims-seconds", type=float, default=3.0,
                    help="seconds for each ISMCTS and baseline speed measurement (0: skip)")
    args = ap.parse_args(argv)

    types = args.types or list(GAMES)
    unknown = [t for t in types if t not in GAMES]
    if unknown:
        ap.error(f"unknown game types: {unknown}; known: {list(GAMES)}")
    modes = [None if m == "default" else m for m in (args.mode or ["default"])]

    plan = []
    notes: dict[str, str] = {}
    for tid in types:
        game = GAMES[tid]
        mod = game.bots
        if mod is None:
            notes[tid] = f"skipped: {tid} has no bot hooks"
            continue
        for mode in modes:
            key = tid if mode is None else f"{tid}/{mode}"
            options = mode_options(game, mode)
            if options is None:
                notes[key] = f"skipped: {tid} has no variant {mode!r}"
                continue
            for seats in (args.seats or [None]):
                skey = key if seats is None else f"{key}@{seats}"
                if seats is not None and not game.min_players <= seats <= game.max_players:
                    notes[skey] = (f"skipped: {tid} seats {game.min_players}-"
                                   f"{game.max_players}, not {seats}")
                    continue
                n, kind, ms = plan_for(game, mode, seats)
                if args.matchups:
                    ms = [m for m in ms if ":".join(m) in args.matchups]
                plan.append((skey, tid, mode, options, game, mod, n, kind, ms))
    total = sum(len(p[-1]) * args.games for p in plan)
    bar = Progress(total)
    report: dict = {"games": args.games, "budget_ms": args.budget_ms,
                    "iterations": args.iterations, "seed": args.seed, "modes": args.mode,
                    "types": {}}
    lines: list[str] = []
    for key, tid, mode, options, game, mod, n, kind, ms in plan:
        entry = {"seats": n, "mode": mode, "kind": kind, "matchups": [],
                 "decision_time_ms": {}}
        times: dict[str, list[float]] = {}
        for levels_ab in ms:
            a, b = levels_ab[0], levels_ab[-1]
            share = {a: 0.0, b: 0.0}
            walls: list[float] = []
            loads: list[float] = []
            # per game: the seat the first level held and its share of the win
            firsts: list[tuple[int, float]] = []
            for i in range(args.games):
                if kind == "solo":
                    levels = [a]
                elif kind == "duel":
                    levels = [a, b] if i % 2 == 0 else [b, a]
                else:
                    levels = [b] * n
                    levels[i % n] = a
                # solo: every level plays the same seeds (the same deals), so they compare
                tag = mode if kind == "solo" else \
                    "-".join(levels_ab) + ("" if mode is None else f"-{mode}")
                seed = f"arena-{args.seed}-{tid}-{tag}-{i}".encode()
                rnd = random.Random(f"{args.seed}-{tid}-{tag}-{i}")
                t0 = time.perf_counter()
                res = play_one(game, levels, seed, rnd, args.budget_ms, args.iterations, times,
                               options)
                walls.append(time.perf_counter() - t0)
                loads.append(os.getloadavg()[0])
                winners = res["winners"]
                for s in winners:
                    share[levels[s]] += 1.0 / len(winners)
                firsts.append((levels.index(a),
                               sum(1.0 / len(winners) for s in winners if levels[s] == a)))
                bar.tick(f"{key} {' vs '.join(levels_ab)} #{i + 1}")
            m = {"levels": list(levels_ab), "games": args.games,
                 "game_wall_s": {"mean": round(sum(walls) / len(walls), 3),
                                 "median": round(median(walls), 3),
                                 "p95": round(p95(walls), 3), "max": round(max(walls), 3)},
                 "load_avg_1min": {"min": round(min(loads), 2),
                                   "mean": round(sum(loads) / len(loads), 2),
                                   "max": round(max(loads), 2)},
                 # every game's wall time and load average, in order (to pool several runs)
                 "per_game": {"wall_s": [round(w, 3) for w in walls],
                              "load_avg_1min": [round(x, 2) for x in loads],
                              "first_seat": [seat for seat, _ in firsts],
                              "first_share": [round(won, 4) for _, won in firsts]}}
            for lv in dict.fromkeys(levels_ab):
                seats_of_lv = 1 if (kind != "table" or lv == a) else n - 1
                rate = share[lv] / args.games
                lo, hi = wilson(share[lv], args.games)
                m[lv] = {"win_rate": round(rate, 4), "ci95": [round(lo, 4), round(hi, 4)],
                         "seats": seats_of_lv}
            if kind != "solo":  # the first level's win rate by the seat it held
                by_seat = {}
                for seat in sorted({seat for seat, _ in firsts}):
                    won = [w for st, w in firsts if st == seat]
                    by_seat[str(seat)] = {"games": len(won),
                                          "win_rate": round(sum(won) / len(won), 4)}
                m[a]["by_seat"] = by_seat
            if kind == "table":
                m["fair_share"] = round(1 / n, 4)
                m["lone_seat_vs_fair_share"] = round(m[a]["win_rate"] * n, 3)
            entry["matchups"].append(m)
        for lv, ts in sorted(times.items()):
            entry["decision_time_ms"][lv] = {"mean": round(1000 * sum(ts) / len(ts), 2),
                                             "p95": round(1000 * p95(ts), 2),
                                             "max": round(1000 * max(ts), 2),
                                             "decisions": len(ts)}
        report["types"][key] = entry
    bar.close()

    for key, tid, mode, options, game, mod, n, kind, ms in plan:
        entry = report["types"][key]
        what = {"duel": "", "table": ", one lone seat", "solo": ", alone against the target"}
        lines.append(f"== {key} ({n} seat{'s' if n > 1 else ''}{what[kind]})")
        for m in entry["matchups"]:
            a, b = m["levels"][0], m["levels"][-1]
            title = f"{a} vs {b}" if kind != "solo" else f"{a} solo"
            for lv in dict.fromkeys(m["levels"]):
                r = m[lv]
                who = (f"{lv}" if kind != "table" or lv == a
                       else f"{lv} (x{n - 1} seats, together)")
                lines.append(f"   {title}: {who:<28} win {100 * r['win_rate']:5.1f}% "
                             f"[{100 * r['ci95'][0]:5.1f}, {100 * r['ci95'][1]:5.1f}]")
            if kind != "solo":
                seats_line = ", ".join(f"seat {st}: {100 * v['win_rate']:.1f}% of {v['games']}"
                                       for st, v in m[a]["by_seat"].items())
                lines.append(f"   {title}: {a} by seat: {seats_line}")
            if kind == "table":
                lines.append(f"   {title}: lone {a} seat = {m['lone_seat_vs_fair_share']:.2f}"
                             f" x fair share (1/{n})")
            w = m["game_wall_s"]
            la = m["load_avg_1min"]
            lines.append(f"   {title}: game wall time mean {w['mean']:.2f} s, median "
                         f"{w['median']:.2f} s, p95 {w['p95']:.2f} s, max {w['max']:.2f} s; "
                         f"load average {la['min']:.2f}-{la['max']:.2f} (mean {la['mean']:.2f})")
        for lv, t in entry["decision_time_ms"].items():
            lines.append(f"   decision time {lv:<9} mean {t['mean']:8.2f} ms   p95 "
                         f"{t['p95']:8.2f} ms   max {t['max']:8.2f} ms   "
                         f"({t['decisions']} decisions)")
        if args.sims_seconds > 0 and hasattr(mod, "determinize") and mode is None:
            points = decision_points(game, mod, n, f"speed-{tid}".encode())
            base = random_playouts_per_second(points, mod, args.sims_seconds)
            sims = ismcts_per_second(points, mod, args.sims_seconds)
            entry["ismcts_sims_per_sec"] = round(sims, 1)
            entry["baseline_random_playouts_per_sec"] = round(base, 1)
            entry["sims_vs_baseline"] = round(sims / base, 3) if base else None
            lines.append(f"   ISMCTS {sims:8.0f} simulations/s; baseline random playouts "
                         f"{base:8.0f}/s; ratio {sims / base if base else float('nan'):.2f} "
                         f"({len(points)} decision points)")
    for key, note in notes.items():
        lines.append(f"== {key}: {note}")
        report["types"][key] = {"skipped": note}
    print("\n".join(lines))
    print(json.dumps(report, sort_keys=True))
    return 0


if __name__ == "__main__":
    sys.exit(main())
