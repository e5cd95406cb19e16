"""Every game ends: bot-only games of every game type, variant and bot level, for a while,
through the real API and workers.

    python bench/endless.py [--minutes 10] [--workers 2]

Starts its own embedded Valkey, one gunicorn (the production app) and ``W`` RQ workers (the
first with RQ's scheduler), then keeps one game of every (type, variant, level) in flight, each
a game whose every seat is a built-in bot of that level, a finished game replaced by another of
its class. At the end it reads every game it created and counts, per class, the games finished,
aborted (by reason) and still running, with their longest log; and over all of them the games
whose log went past the event cap (``CARTOUCHE_MAX_EVENTS_PER_GAME``, the server's default unless ``--max-events``):
the target is zero. The last stdout line is one JSON object with every figure.
"""

from __future__ import annotations

import argparse
import itertools
import json
import sys
import time
from collections import Counter, defaultdict

import requests

from _harness import Gunicorn, Redis, Workers, machine

from service.config import Config  # noqa: E402

LEVELS = ("random", "heuristic", "mcts")


def classes(url: str) -> list[tuple[str, str, dict, int]]:
    """(game type, variant id, options, seats) of every variant in the catalog; solo variants
    seat one bot, Diamant and Papyrus three, the others two."""
    out = []
    for g in requests.get(f"{url}/v1/game-types", timeout=30).json()["game_types"]:
        for v in g["variants"] or [{"id": "base", "options": {}}]:
            solo = v["options"].get("mode") == "solo" or v["options"].get("variant") == "solo"
            seats = 1 if solo else max(g["min_players"], 3 if g["id"] in ("diamant", "papyrus")
                                       else 2)
            out.append((g["id"], v["id"], v["options"], min(seats, g["max_players"])))
    return out


def run(url: str, minutes: float) -> dict[str, tuple[str, str, str]]:
    """One game of every (type, variant, level) in flight until ``minutes`` are up, a finished
    one replaced by another of its class; every game id created with its class."""
    created: dict[str, tuple[str, str, str]] = {}
    running: dict[str, tuple] = {}

    def start(cls) -> None:
        (game_type, variant, options, seats), level = cls
        r = requests.post(f"{url}/v1/games", timeout=30, json={
            "type": game_type, "options": options,
            "players": [{"name": f"{level}-{i}", "bot": {"level": level}}
                        for i in range(seats)]})
        r.raise_for_status()
        created[r.json()["id"]] = (game_type, variant, level)
        running[r.json()["id"]] = cls

    for cls in itertools.product(classes(url), LEVELS):
        start(cls)
    stop = time.monotonic() + minutes * 60
    while time.monotonic() < stop:
        time.sleep(2.0)
        for gid in list(running):
            if requests.get(f"{url}/v1/games/{gid}", timeout=30).json()["status"] != "active":
                start(running.pop(gid))
    return created


def outcome(url: str, gid: str, view: dict) -> str:
    """``finished``, ``active``, or ``aborted:<reason>`` (from the game's last event)."""
    if view["status"] != "aborted":
        return view["status"]
    last = requests.get(f"{url}/v1/games/{gid}/events?after={view['version'] - 1}",
                        timeout=30).json()["events"][-1]
    return f"aborted:{(last.get('data') or {}).get('reason') or 'request'}"


def report(url: str, created: dict[str, tuple[str, str, str]], cap: int) -> dict:
    per: dict[str, dict] = defaultdict(lambda: {"outcomes": Counter(), "longest": 0})
    over = []
    for gid, (game_type, variant, level) in created.items():
        view = requests.get(f"{url}/v1/games/{gid}", timeout=30).json()
        row = per[f"{game_type}/{variant}/{level}"]
        row["outcomes"][outcome(url, gid, view)] += 1
        row["longest"] = max(row["longest"], view["version"])
        if view["version"] > cap:
            over.append(gid)
    return {"classes": {k: {"outcomes": dict(v["outcomes"]), "longest": v["longest"]}
                        for k, v in sorted(per.items())},
            "games": len(created), "over_cap": len(over), "over_cap_ids": over[:20]}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--minutes", type=float, default=10)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--max-events", type=int, default=None,
                        help="CARTOUCHE_MAX_EVENTS_PER_GAME for the server and workers")
    args = parser.parse_args()
    cap = args.max_events or Config().max_events_per_game
    env = {"CARTOUCHE_MAX_EVENTS_PER_GAME": str(cap), "CARTOUCHE_ARCHIVE_AFTER_S": "0"}
    redis = Redis(unix_socket=False)
    server = Gunicorn(redis.db(0), redis.db(1), app="service.app:wsgi()", env=env)
    workers = Workers(args.workers, redis.db(0), redis.db(1), env)
    started = time.monotonic()
    try:
        created = run(server.url, args.minutes)
        out = report(server.url, created, cap)
    finally:
        workers.stop()
        server.stop()
        redis.stop()
    for name, row in out["classes"].items():
        print(f"{name:>40}: {row['outcomes']} longest {row['longest']}", file=sys.stderr)
    print(json.dumps({"bench": "endless", "machine": machine(), "max_events": cap,
                      "wall_s": round(time.monotonic() - started, 1), **out}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
