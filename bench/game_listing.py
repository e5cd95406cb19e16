"""Benchmark: ``GET /v1/games?type=&status=`` in the store, with and without the index by type
and status, measured in the same run on the same games.

Starts the embedded Valkey, indexes ``--games`` games as a store written before the
type-and-status index would hold them (every game in the index of all games, of its type -- one
of five -- and of its status: ``--finished`` of them finished, the rest active), then:

* ``check_ms``: one consistency check of the type-and-status index (the sweep's, every few
  seconds on each worker), which finds it missing;
* ``rebuild``: the rebuild the sweep then makes (``EventStore.rebuild_type_status_index``): its
  wall time, and its ``ZINTERSTORE`` commands from the server's own statistics (the longest
  one is the longest the server is held);
* per query (a first page, a page 50 deep, an active listing): the median of ``--calls`` calls
  to ``EventStore.list_ids`` on a store without game types (``chunked``: the smaller of the
  two indexes read a chunk at a time against the other, and a ``ZINTERCARD`` count; the
  baseline) and on one with them (``index``: one page of one set), the same answer checked;
  ``ratio`` = chunked / index.

    .venv/bin/python bench/game_listing.py [--games 100000] [--finished 0.9] [--calls 15]

Prints one JSON line.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from _harness import Redis  # noqa: E402

from service.store import connect, keys  # noqa: E402
from service.store.events import EventStore  # noqa: E402

TYPES = ("diamant", "papyrus", "scarabya", "tides-of-time", "pharaohs-wall")


def fill(r, games: int, finished: float, rnd: random.Random) -> None:
    """Index ``games`` games as a version without the type-and-status index did."""
    pipe = r.pipeline(transaction=False)
    for i in range(games):
        gid, game_type = f"{i:020x}", rnd.choice(TYPES)
        status = "finished" if rnd.random() < finished else "active"
        for key in (keys.index_all(), keys.index_type(game_type), keys.index_status(status)):
            pipe.zadd(key, {gid: i})
        if i % 5000 == 4999:
            pipe.execute()
    pipe.execute()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--games", type=int, default=100_000)
    ap.add_argument("--finished", type=float, default=0.9)
    ap.add_argument("--calls", type=int, default=15)
    args = ap.parse_args()
    redis = Redis(unix_socket=False)
    try:
        r = connect.client(redis.db(0))
        chunked, indexed = EventStore(r), EventStore(r, game_types=TYPES)
        fill(r, args.games, args.finished, random.Random(1))
        t0 = time.perf_counter()
        consistent = indexed.type_status_consistent()
        check_ms = (time.perf_counter() - t0) * 1000
        r.config_resetstat()
        r.slowlog_reset()
        t0 = time.perf_counter()
        indexed.rebuild_type_status_index()
        rebuild_ms = (time.perf_counter() - t0) * 1000
        stats = r.info("commandstats")["cmdstat_zinterstore"]
        longest = max((e["duration"] for e in r.slowlog_get(1000)
                        if e["command"].upper().startswith(b"ZINTERSTORE")), default=None)
        out = {"bench": "game_listing", "games": args.games, "finished": args.finished,
               "check_ms": round(check_ms, 3), "consistent_before": consistent,
               "consistent_after": indexed.type_status_consistent(),
               "rebuild": {"ms": round(rebuild_ms, 1), "zinterstore_calls": stats["calls"],
                           "zinterstore_mean_ms": round(stats["usec_per_call"] / 1000, 2),
                           "longest_ms": None if longest is None else round(longest / 1000, 2)},
               "queries": {}}
        for game_type, status, offset in (("diamant", "finished", 0),
                                          ("diamant", "finished", 980),
                                          ("diamant", "active", 0)):
            row, answers = {}, []
            for name, store in (("chunked", chunked), ("index", indexed)):
                times = []
                for _ in range(args.calls):
                    t0 = time.perf_counter()
                    answer = store.list_ids(game_type, status, offset, 20)
                    times.append((time.perf_counter() - t0) * 1000)
                row[f"{name}_ms"] = round(statistics.median(times), 3)
                answers.append(answer)
            assert answers[0] == answers[1], (game_type, status, offset)
            row["total"] = answers[1][1]
            row["ratio"] = round(row["chunked_ms"] / row["index_ms"], 1)
            out["queries"][f"type={game_type}&status={status}&offset={offset}"] = row
        out["loadavg"] = [round(x, 2) for x in os.getloadavg()]
        print(json.dumps(out))
    finally:
        redis.stop()


if __name__ == "__main__":
    main()
