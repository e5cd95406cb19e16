"""Soak: the service under steady load for a while, and whether what it holds stays bounded.

Starts its own embedded Valkey and one gunicorn with the production configuration
(``service/gunicorn_conf.py``: gevent workers, ``WEB_CONCURRENCY`` 2; the rate limits set out of
reach of one load generator, as in P1), then runs loops until ``--minutes`` are up. Each loop:

* creates ``--games`` fresh four-seat Diamant games (untimed) and plays them with P1's service
  load for ``--loop-seconds`` (32 clients, ``POST /v1/games/{id}/actions`` as the awaited seats);
* meanwhile opens ``--streams`` event streams on those games (every other one with a seat
  token), reads their first bytes, holds each 0-2 s and drops it without a goodbye (a client
  that goes away: what the server must clean up after);
* after a settle of one second records: the actions and their errors (any answer but 201), the
  streams that failed to open or answer, each gunicorn worker's resident memory and open file
  descriptors, and Redis's used memory and connected / blocked clients.

The summary says whether the per-process resources stayed bounded over the second half of the
run, the last loop against the middle one (the first loops fill the game cache and the
connection pools): each worker's resident memory (``rss_growth_second_half_pct``), its file
descriptors (``fds_growth``) and Redis's clients (``clients_growth``), with the first, largest
and last figures beside them. Redis's memory grows with the games stored: it
is reported per game, not judged (no RQ worker runs here, so no finished game is archived:
docs/operations.md, "Workers").

    .venv/bin/python bench/soak.py [--minutes 10] [--loop-seconds 8] [--games 400] [--streams 300]

Prints a line per loop, then one JSON line (the last line of output).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import statistics
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from _harness import Gunicorn, Redis, machine, split_url
from p1_throughput import create_games, run_service

#: a stream opened that sends nothing within this many seconds counts as failed
STREAM_ANSWER_S = 5.0


def rss_mb(pid: int) -> float:
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return round(int(line.split()[1]) / 1024, 1)
    return 0.0


def open_fds(pid: int) -> int:
    return len(os.listdir(f"/proc/{pid}/fd"))


async def churn_stream(host: str, port: int, path: str, token: str | None, hold: float) -> None:
    """Open an event stream, read its first bytes, hold it ``hold`` s, drop it without a
    goodbye. Raises when the stream does not answer within :data:`STREAM_ANSWER_S`, or not
    with a 200."""
    reader, writer = await asyncio.open_connection(host, port)
    try:
        head = f"GET {path} HTTP/1.1\r\nHost: {host}:{port}\r\nAccept: text/event-stream\r\n"
        if token:
            head += f"Authorization: Bearer {token}\r\n"
        writer.write((head + "\r\n").encode())
        first = await asyncio.wait_for(reader.read(200), STREAM_ANSWER_S)
        if not first.startswith(b"HTTP/1.1 200"):
            raise RuntimeError(f"stream answered {first[:40]!r}")
        await asyncio.sleep(hold)
    finally:
        writer.transport.abort()


async def loop_once(url: str, args, rnd: random.Random) -> dict:
    host, port = split_url(url)
    pool = await create_games(url, args.games)
    streams = []
    for k in range(args.streams):
        game = rnd.choice(pool)
        token = rnd.choice(game["seats"])["token"] if k % 2 else None
        streams.append(churn_stream(host, port, f"/v1/games/{game['id']}/events/stream", token,
                                    2 * rnd.random()))
    play = run_service(url, 32, args.loop_seconds, list(pool), rnd)
    results = await asyncio.gather(play, *streams, return_exceptions=True)
    if isinstance(results[0], BaseException):
        raise results[0]
    phase, wall = results[0]
    return {"actions": len(phase.lat), "actions_per_s": round(len(phase.lat) / wall, 1),
            "action_errors": phase.errors,
            "stream_errors": sum(isinstance(r, BaseException) for r in results[1:])}


def summarize(rows: list[dict]) -> dict:
    """The run's verdicts from its loops (each: ``rss_mb`` and ``fds`` per worker,
    ``redis_clients``, the error counts, ``games``, ``redis_mb``)."""
    first, middle, last = rows[0], rows[len(rows) // 2], rows[-1]
    workers = range(len(last["rss_mb"]))
    growth = [round(100 * (last["rss_mb"][w] - middle["rss_mb"][w]) / middle["rss_mb"][w], 1)
              for w in workers]
    stored = last["games"] - first["games"]
    return {
        "loops": len(rows),
        "actions": sum(r["actions"] for r in rows),
        "actions_per_s_median": statistics.median(r["actions_per_s"] for r in rows),
        "errors": sum(r["action_errors"] + r["stream_errors"] for r in rows),
        "rss_mb_first_middle_last": [[r["rss_mb"][w] for r in (first, middle, last)]
                                     for w in workers],
        "rss_growth_second_half_pct": growth,
        "fds_first_max_last": [[first["fds"][w], max(r["fds"][w] for r in rows),
                                last["fds"][w]] for w in workers],
        "fds_growth": [last["fds"][w] - middle["fds"][w] for w in workers],
        "clients_first_max_last": [first["redis_clients"],
                                   max(r["redis_clients"] for r in rows),
                                   last["redis_clients"]],
        "clients_growth": last["redis_clients"] - middle["redis_clients"],
        "redis_kb_per_game": (round(1024 * (last["redis_mb"] - first["redis_mb"]) / stored, 2)
                              if stored > 0 else None),
    }


async def main_async(args) -> dict:
    import redis as redislib

    redis = Redis()
    server = Gunicorn(redis.db(0), redis.db(1))
    client = redislib.Redis.from_url(redis.db(0))
    rnd = random.Random(args.seed)
    rows: list[dict] = []
    games = 0
    ends = time.monotonic() + 60 * args.minutes
    try:
        while not rows or time.monotonic() < ends:
            row = await loop_once(server.url, args, rnd)
            games += args.games
            await asyncio.sleep(1.0)  # the dropped streams' greenlets notice and end
            pids = server.worker_pids()
            clients = client.info("clients")
            row.update(loop=len(rows), games=games, rss_mb=[rss_mb(p) for p in pids],
                       fds=[open_fds(p) for p in pids],
                       redis_mb=round(client.info("memory")["used_memory"] / 2**20, 1),
                       redis_clients=clients["connected_clients"],
                       redis_blocked=clients["blocked_clients"])
            rows.append(row)
            print(json.dumps(row), flush=True)
    finally:
        client.close()
        server.stop()
        redis.stop()
    return {"bench": "soak", "minutes": args.minutes, "loop_seconds": args.loop_seconds,
            "games_per_loop": args.games, "streams_per_loop": args.streams, "seed": args.seed,
            **summarize(rows), "rows": rows, "machine": machine(),
            "loadavg": [round(x, 2) for x in os.getloadavg()]}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--minutes", type=float, default=10.0)
    ap.add_argument("--loop-seconds", type=float, default=8.0)
    ap.add_argument("--games", type=int, default=400, help="fresh games a loop")
    ap.add_argument("--streams", type=int, default=300, help="event streams opened a loop")
    ap.add_argument("--seed", type=int, default=1)
    args = ap.parse_args()
    out = asyncio.run(main_async(args))
    print(f"{out['loops']} loops, {out['actions']} actions "
          f"({out['actions_per_s_median']} a second, median), {out['errors']} errors; "
          f"workers' RSS first/middle/last {out['rss_mb_first_middle_last']} MB, second half "
          f"{out['rss_growth_second_half_pct']} %, fds {out['fds_growth']}, Redis clients "
          f"{out['clients_growth']}")
    print(json.dumps(out, sort_keys=True))


if __name__ == "__main__":
    main()
