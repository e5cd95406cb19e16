"""The bot ladder: the built-in bot levels as rated players, through the real API.

    python bench/ladder.py [--types diamant tides-of-time ...] [--games N] [--parallel P]
                           [--workers W] [--timeout-s S]

Starts its own embedded Valkey, one gunicorn (the production app) and ``W`` RQ workers (the
first with RQ's scheduler), then, per rating type, creates rated games whose every seat is a
built-in bot player (``{"player": "bot-random"}``, ...) with ``POST /v1/games`` and lets the
workers play them (``P`` games in flight). The rating jobs rate each finished game; the ladder
reads ``GET /v1/leaderboards/{type}`` at the end.

Matchups: a rating type whose games take 2 seats plays every pair of levels, both seat orders
in turn; Diamant (3 seats at least) seats the three levels together, the order rotating.

Per rating type it prints each level's rating (mu, sigma, ordinal = mu - 3 sigma, games), the
head-to-head win rates from the same games (a shared win of k winners counts 1/k), and whether
the order holds: ``mcts`` above ``heuristic`` above ``random`` by at least one rating interval,
read as: the higher level's ordinal exceeds the lower's by at least 3 sigma (the larger sigma
of the two). The last stdout line is one JSON object with every figure.
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
import sys
import time

import requests

from _harness import Gunicorn, Redis, Workers, machine

LEVELS = ("random", "heuristic", "mcts")
#: rating type -> (game type, options, seats per game)
TYPES = {
    "diamant": ("diamant", {}, 3),
    "tides-of-time": ("tides-of-time", {}, 2),
    "pharaohs-wall": ("pharaohs-wall", {}, 2),
    "scarabya": ("scarabya", {"mode": "standard"}, 2),
    "scarabya-duel": ("scarabya", {"mode": "duel"}, 2),
    "papyrus": ("papyrus", {}, 2),
}


def seatings(seats: int):
    """The level of each seat, game after game: every pair both ways (2 seats), or the three
    levels rotating (3 seats)."""
    if seats == 2:
        pairs = [p for a, b in itertools.combinations(LEVELS, 2) for p in ((a, b), (b, a))]
        return itertools.cycle(pairs)
    rotations = [LEVELS[i:] + LEVELS[:i] for i in range(len(LEVELS))]
    return itertools.cycle(rotations)


def play(url: str, rating_type: str, games: int, parallel: int, deadline: float) -> list[dict]:
    """Create ``games`` rated bot games of ``rating_type``, ``parallel`` at a time; the finished
    games as ``{"levels": [...], "result": ...}``."""
    game_type, options, seats = TYPES[rating_type]
    order = seatings(seats)
    running: dict[str, tuple[str, ...]] = {}
    done: list[dict] = []
    created = 0
    while (created < games or running) and time.monotonic() < deadline:
        while created < games and len(running) < parallel:
            levels = next(order)
            r = requests.post(f"{url}/v1/games", timeout=30, json={
                "type": game_type, "options": {**options, "rated": True},
                "players": [{"player": f"bot-{level}"} for level in levels]})
            r.raise_for_status()
            running[r.json()["id"]] = levels
            created += 1
        time.sleep(0.5)
        for gid in list(running):
            view = requests.get(f"{url}/v1/games/{gid}", timeout=30).json()
            if view["status"] != "active":
                done.append({"id": gid, "levels": running.pop(gid), "status": view["status"],
                             "result": view["result"]})
    return done


def head_to_head(done: list[dict]) -> dict:
    """Win share of each level against each other level in the games they met."""
    out: dict[str, dict] = {}
    for a, b in itertools.permutations(LEVELS, 2):
        share, met = 0.0, 0
        for g in done:
            if a not in g["levels"] or b not in g["levels"] or not g["result"]:
                continue
            met += 1
            winners = g["result"]["winners"]
            if winners and g["levels"].index(a) in winners:
                share += 1 / len(winners)
        if met:
            out.setdefault(a, {})[b] = {"games": met, "win_share": round(share / met, 3)}
    return out


def ratings(url: str, rating_type: str, expected_games: int, deadline: float) -> dict:
    """The levels' ratings once every finished game is rated (or at the deadline)."""
    while True:
        board = requests.get(f"{url}/v1/leaderboards/{rating_type}?limit=100", timeout=30).json()
        rows = {p["id"]: p for p in board["players"] + board["provisional"]}
        counted = sum(rows.get(f"bot-{lv}", {}).get("games", 0) for lv in LEVELS)
        seats = TYPES[rating_type][2]
        if counted >= expected_games * seats or time.monotonic() > deadline:
            return {lv: {k: rows[f"bot-{lv}"][k] for k in ("mu", "sigma", "ordinal", "games")}
                    for lv in LEVELS if f"bot-{lv}" in rows}
        time.sleep(0.5)


def order_holds(levels: dict) -> dict:
    out = {}
    for low, high in (("random", "heuristic"), ("heuristic", "mcts")):
        if low in levels and high in levels:
            gap = levels[high]["ordinal"] - levels[low]["ordinal"]
            needed = 3 * max(levels[high]["sigma"], levels[low]["sigma"])
            out[f"{high}_over_{low}"] = {"ordinal_gap": round(gap, 2),
                                         "needed": round(needed, 2), "holds": gap >= needed}
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--types", nargs="*", default=list(TYPES), choices=list(TYPES))
    parser.add_argument("--games", type=int, default=30, help="games per rating type")
    parser.add_argument("--games-of", action="append", default=[], metavar="TYPE=N",
                        help="another count for one rating type (Papyrus games with an mcts "
                             "seat take minutes each), e.g. papyrus=4")
    parser.add_argument("--parallel", type=int, default=4)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--timeout-s", type=float, default=1800,
                        help="per rating type: stop creating and report what finished")
    args = parser.parse_args()
    redis = Redis(unix_socket=False)
    env = {"CARTOUCHE_RATING_MIN_GAMES": "1"}
    server = Gunicorn(redis.db(0), redis.db(1), app="service.app:wsgi()", env=env)
    os.environ.update(env)
    workers = Workers(args.workers, redis.db(0), redis.db(1))
    report = {"bench": "ladder", "machine": machine(), "types": {}}
    counts = {rating_type: args.games for rating_type in args.types}
    for item in args.games_of:
        rating_type, _, n = item.partition("=")
        counts[rating_type] = int(n)
    try:
        for rating_type in args.types:
            t = time.monotonic()
            deadline = t + args.timeout_s
            done = play(server.url, rating_type, counts[rating_type], args.parallel, deadline)
            finished = [g for g in done if g["status"] == "finished"]
            levels = ratings(server.url, rating_type, len(finished), deadline + 60)
            report["types"][rating_type] = {
                "games": len(finished), "wall_s": round(time.monotonic() - t, 1),
                "levels": levels, "order": order_holds(levels),
                "head_to_head": head_to_head(finished)}
            row = " ".join(f"{lv} {v['ordinal']:.1f} (mu {v['mu']:.1f} sigma {v['sigma']:.1f})"
                           for lv, v in levels.items())
            print(f"{rating_type:>14} ({len(finished)} games): {row}", file=sys.stderr)
    finally:
        workers.stop()
        server.stop()
        redis.stop()
    print(json.dumps(report))
    return 0


if __name__ == "__main__":
    sys.exit(main())
