"""Benchmark: matchmaking. Seek-to-game latency with ``--waiting`` (200) seeks waiting, against a
plain game creation measured in the same run, and the matching throughput of one process.

Starts its own embedded Valkey and one gunicorn with the production configuration. Two
scenarios, each on an emptied store with its ``--waiting`` seeks opened first, seeks nobody
can match:

* ``clogged`` — in the very pool the measured seeks go to (Tides of Time, 2 seats, default
  options), with rating ranges nobody meets: every matching reads all of them before it reaches
  its partner (the worst case);
* ``apart`` — each in a pool of its own (another clock): the common case.

Latency (HTTP): each round, on each of ``--concurrency`` clients, two baselines creating the
same 2-seat game with ``POST /v1/games`` — ``create``, a plain creation (seats named), and
``create_seated``, the two players' seats held at once (a platform key seats them: what a match
makes, with the players' notices) —, then a seek of each of the two players; the seek whose
answer says ``matched`` is timed as ``seek_to_game`` (its request created and started the
game), the one that waits as ``seek_open``.

Throughput (one process, in this one, no HTTP: ``GameService`` on the same server): per round,
``--batch`` games created each way (the baselines), then ``2 x --batch`` seeks written
unmatched (as requests that died before matching leave them) and matched one after another by
``Seeks.first_match``, what the sweep does (``match``): seeks matched per second, and games per
second against the creations'.

    .venv/bin/python bench/seeks.py [--rounds 150] [--waiting 200] [--concurrency 4]

Prints a human summary, then one JSON line (the last line of output).
"""

from __future__ import annotations

import argparse
import asyncio
import dataclasses
import json
import sys
import time

import orjson

from _harness import Conn, Gunicorn, Redis, lat_stats, machine, ratio, split_url

#: The platform key of the run (its digest configures the server): it seats players directly.
PLATFORM_KEY = "bench-seeks-platform-key"
GAME = {"type": "tides-of-time", "players": [{"name": "A"}, {"name": "B"}]}
SEEK = {"type": "tides-of-time", "seats": 2}


def background(scenario: str, i: int) -> dict:
    """The ``i``-th seek nobody matches."""
    if scenario == "clogged":
        return {**SEEK, "rating_range": [1000, 2000]}
    return {**SEEK, "options": {"clock": {"per_decision_ms": 10_000 + i}}}


# -- latency over HTTP ----------------------------------------------------------------------
def bearer(token: str) -> dict:
    return {"Authorization": f"Bearer {token}"}


async def new_player(conn: Conn, name: str) -> dict:
    status, body = await conn.request("POST", "/v1/players", {"name": name},
                                      headers=bearer(PLATFORM_KEY))
    assert status == 201, body
    return orjson.loads(body)


async def post_seek(conn: Conn, who: dict, body: dict) -> tuple[float, dict]:
    t = time.perf_counter()
    status, raw = await conn.request("POST", "/v1/seeks", body, headers=bearer(who["token"]))
    ms = (time.perf_counter() - t) * 1000
    assert status == 201, raw
    return ms, orjson.loads(raw)


async def latency(url: str, scenario: str, waiting: int, rounds: int,
                  concurrency: int) -> dict:
    host, port = split_url(url)
    setup = Conn(host, port)
    for i in range(waiting):
        _, seek = await post_seek(setup, await new_player(setup, f"W{i}"),
                                  background(scenario, i))
        assert seek["status"] == "waiting", seek
    pairs = [(await new_player(setup, f"A{c}"), await new_player(setup, f"B{c}"))
             for c in range(concurrency)]
    setup.close()
    times: dict[str, list[float]] = {"create": [], "create_seated": [], "seek_open": [],
                                     "seek_to_game": []}

    async def client(a: dict, b: dict, n: int) -> None:
        conn = Conn(host, port)
        seated = {"type": GAME["type"], "players": [{"player": a["id"]}, {"player": b["id"]}]}
        for _ in range(n):
            for phase, body in (("create", GAME), ("create_seated", seated)):
                t = time.perf_counter()
                status, raw = await conn.request("POST", "/v1/games", body,
                                                 headers=bearer(PLATFORM_KEY))
                times[phase].append((time.perf_counter() - t) * 1000)
                assert status == 201, raw
            for who in (a, b):
                ms, seek = await post_seek(conn, who, SEEK)
                times["seek_to_game" if seek["status"] == "matched" else "seek_open"].append(ms)
        conn.close()

    per = max(1, rounds // concurrency)
    await asyncio.gather(*(client(a, b, per) for a, b in pairs))
    check = Conn(host, port)
    status, body = await check.request("GET", "/v1/seeks?limit=1")
    check.close()
    stats = {k: lat_stats(v) for k, v in times.items()}
    return {"rounds": per * concurrency, "concurrency": concurrency,
            "waiting_after": orjson.loads(body)["total"], "latency": stats,
            "ratios": {f"seek_to_game_over_{base}{suffix}": ratio(
                stats["seek_to_game"][f"{q}_ms"], stats[base][f"{q}_ms"])
                for base in ("create", "create_seated")
                for q, suffix in (("median", ""), ("p99", "_p99"))}}


# -- matching throughput in one process -----------------------------------------------------
def throughput(redis_url: str, scenario: str, waiting: int, rounds: int, batch: int) -> dict:
    import redis as redis_py

    from service.application import GameService, NullScheduler
    from service.application.players import PLATFORM
    from service.application.seeks import Seeks
    from service.store.events import EventStore

    svc = GameService(EventStore(redis_py.Redis.from_url(redis_url)), scheduler=NullScheduler())

    class Unmatched(Seeks):
        """Writes seeks as a request that dies before matching leaves them."""

        def _first_match(self, seek):
            return seek

    writer = Unmatched(**{f.name: getattr(svc.seeks, f.name)
                          for f in dataclasses.fields(Seeks)})

    def new_player() -> str:
        return svc.players.create("P", "human")["id"]

    def open_seek(seek: dict, by: Seeks) -> dict:
        return by.open(new_player(), seek["type"], (2, 2), seek.get("options", {}),
                       seek.get("rating_range"))

    for i in range(waiting):
        assert open_seek(background(scenario, i), svc.seeks)["status"] == "waiting"
    seated = [{"player": new_player()}, {"player": new_player()}]
    spent = {"create": 0.0, "create_seated": 0.0, "match": 0.0}
    matched = 0
    for _ in range(rounds):
        for phase, players, creator in (("create", GAME["players"], None),
                                        ("create_seated", seated, PLATFORM)):
            t = time.perf_counter()
            for _ in range(batch):
                svc.create(GAME["type"], players, {}, None, creator)
            spent[phase] += time.perf_counter() - t
        ids = [open_seek(SEEK, writer)["id"] for _ in range(2 * batch)]
        t = time.perf_counter()
        for seek_id in ids:
            svc.seeks.first_match(seek_id)
        spent["match"] += time.perf_counter() - t
        matched += sum(svc.seeks.get(i).status == "matched" for i in ids)
    games = rounds * batch
    out = {"rounds": rounds, "batch": batch, "games_created": games, "seeks_matched": matched,
           "create_games_per_s": round(games / spent["create"], 1),
           "create_seated_games_per_s": round(games / spent["create_seated"], 1),
           "match_seeks_per_s": round(matched / spent["match"], 1),
           "match_games_per_s": round(matched / 2 / spent["match"], 1)}
    out["ratios"] = {f"match_games_over_{base}_games": ratio(out["match_games_per_s"],
                                                             out[f"{base}_games_per_s"])
                     for base in ("create", "create_seated")}
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=150)
    parser.add_argument("--waiting", type=int, default=200)
    parser.add_argument("--concurrency", type=int, default=4)
    parser.add_argument("--batch", type=int, default=20, help="games per throughput round")
    parser.add_argument("--throughput-rounds", type=int, default=10)
    args = parser.parse_args()
    import redis as redis_py

    redis = Redis()
    import hashlib

    server = Gunicorn(redis.db(0), redis.db(1), app="service.app:wsgi()", env={
        "CARTOUCHE_API_KEY_SHA256": hashlib.sha256(PLATFORM_KEY.encode()).hexdigest()})
    out = {"bench": "seeks", "machine": machine(), "waiting": args.waiting, "scenarios": {}}
    try:
        for scenario in ("clogged", "apart"):
            redis_py.Redis.from_url(redis.db(0)).flushdb()
            result = asyncio.run(latency(server.url, scenario, args.waiting, args.rounds,
                                         args.concurrency))
            redis_py.Redis.from_url(redis.db(0)).flushdb()
            result["throughput"] = throughput(redis.db(0), scenario, args.waiting,
                                              args.throughput_rounds, args.batch)
            out["scenarios"][scenario] = result
    finally:
        server.stop()
        redis.stop()
    for scenario, r in out["scenarios"].items():
        for phase, s in r["latency"].items():
            print(f"{scenario:>8} {phase:>12}: median {s['median_ms']} ms, p99 {s['p99_ms']} ms "
                  f"(n={s['n']})", file=sys.stderr)
        t = r["throughput"]
        print(f"{scenario:>8} matching: {t['match_seeks_per_s']} seeks/s "
              f"({t['match_games_per_s']} games/s; creation {t['create_games_per_s']}, "
              f"seated {t['create_seated_games_per_s']} games/s)", file=sys.stderr)
    print(json.dumps(out))
    return 0


if __name__ == "__main__":
    sys.exit(main())
