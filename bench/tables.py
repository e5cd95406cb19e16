"""Benchmark: what a table costs to start. Join-to-start latency against creating the same game
directly, measured in the same run.

Starts its own embedded Valkey and one gunicorn with the production configuration. Each round
makes one table of ``--seats`` seats (Diamant: the creator's seat and open seats), joined seat by
seat by other players; the last join starts the game (``SeatJoined``, ``GameStarted`` and the
setup in one append). Interleaved with each round, the baseline: ``POST /v1/games`` creating the
same game with every seat held (a platform-less creation by one of the players, every seat
named), i.e. what a table's start replaces.

Reported, per phase, median and p99 latency of the request as the client sees it:

* ``join`` — a join that does not fill the table;
* ``join_start`` — the join that fills it and starts the game (join-to-start latency);
* ``create`` — the baseline: creating the full game at once.

The figure to read is ``ratios.join_start_over_create`` (how much dearer starting through a
lobby is than creating the game outright).

    .venv/bin/python bench/tables.py [--rounds 300] [--seats 4] [--concurrency 8]

Prints a human summary, then one JSON line (the last line of output).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import time

import orjson

from _harness import Conn, Gunicorn, Redis, lat_stats, machine, ratio, split_url


async def make_players(conn: Conn, n: int) -> list[dict]:
    out = []
    for i in range(n):
        status, body = await conn.request("POST", "/v1/players", {"name": f"P{i}"})
        assert status == 201, body
        out.append(orjson.loads(body))
    return out


async def one_round(conn: Conn, players: list[dict], seats: int, times: dict) -> None:
    host, guests = players[0], players[1:seats]
    auth = {"Authorization": f"Bearer {host['token']}"}
    # the baseline: the same game created with every seat held at once
    t = time.perf_counter()
    status, body = await conn.request("POST", "/v1/games", {
        "type": "diamant", "players": [{"name": p["name"]} for p in players[:seats]]},
        headers=auth)
    times["create"].append((time.perf_counter() - t) * 1000)
    assert status == 201, body
    # the table: the host's seat and open seats, then one join per guest
    status, body = await conn.request("POST", "/v1/games", {
        "type": "diamant", "players": [{"player": host["id"]}] + [{"open": True}] * len(guests)},
        headers=auth)
    assert status == 201, body
    gid = orjson.loads(body)["id"]
    for i, guest in enumerate(guests):
        t = time.perf_counter()
        status, body = await conn.request("POST", f"/v1/games/{gid}/join", {},
                                          headers={"Authorization": f"Bearer {guest['token']}"})
        ms = (time.perf_counter() - t) * 1000
        assert status == 201, body
        last = i == len(guests) - 1
        assert orjson.loads(body)["status"] == ("active" if last else "waiting"), body
        times["join_start" if last else "join"].append(ms)


async def run(url: str, rounds: int, seats: int, concurrency: int) -> dict:
    host, port = split_url(url)
    times: dict[str, list[float]] = {"create": [], "join": [], "join_start": []}
    setup = Conn(host, port)
    groups = [await make_players(setup, seats) for _ in range(concurrency)]
    setup.close()

    async def client(players: list[dict], n: int) -> None:
        conn = Conn(host, port)
        for _ in range(n):
            await one_round(conn, players, seats, times)
        conn.close()

    per = max(1, rounds // concurrency)
    t = time.perf_counter()
    await asyncio.gather(*(client(g, per) for g in groups))
    wall = time.perf_counter() - t
    stats = {k: lat_stats(v) for k, v in times.items()}
    return {
        "bench": "tables", "machine": machine(), "rounds": per * concurrency, "seats": seats,
        "concurrency": concurrency, "wall_s": round(wall, 2), "latency": stats,
        "ratios": {
            "join_start_over_create": ratio(stats["join_start"]["median_ms"],
                                            stats["create"]["median_ms"]),
            "join_start_over_join": ratio(stats["join_start"]["median_ms"],
                                          stats["join"]["median_ms"]),
            "join_start_over_create_p99": ratio(stats["join_start"]["p99_ms"],
                                                stats["create"]["p99_ms"]),
        },
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=300)
    parser.add_argument("--seats", type=int, default=4)
    parser.add_argument("--concurrency", type=int, default=8)
    args = parser.parse_args()
    redis = Redis()
    server = Gunicorn(redis.db(0), redis.db(1), app="service.app:wsgi()")
    try:
        out = asyncio.run(run(server.url, args.rounds, args.seats, args.concurrency))
    finally:
        server.stop()
        redis.stop()
    for phase, s in out["latency"].items():
        print(f"{phase:>11}: median {s['median_ms']} ms, p99 {s['p99_ms']} ms (n={s['n']})",
              file=sys.stderr)
    print(json.dumps(out))
    return 0


if __name__ == "__main__":
    sys.exit(main())
