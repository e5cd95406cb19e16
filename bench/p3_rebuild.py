"""Benchmark P3: cold rebuild of a 2,000-event game vs the ``eventsourcing`` library.

Starts its own embedded Valkey and the application in process, and builds one Papyrus game (2
seats, random legal actions through ``GameService.act``, the API's command path) up to the first
command that takes it to version >= 2,000. Then, in the same process and interleaved:

* ``cartouche``: ``GameService.load(id)`` with no snapshot (deleted) and no cache (the process's
  state, meta and seed caches cleared before every rebuild): the creation event, one ``XRANGE``
  of every event, orjson decoding, the schema/upcast check and the rules' ``apply`` per event;
* ``eventsourcing``: the Python ``eventsourcing`` library (``pip install eventsourcing``), SQLite
  file persistence (``PERSISTENCE_MODULE=eventsourcing.sqlite``, a file in a temporary
  directory), no snapshotting, no aggregate cache, a new ``Application`` for every rebuild (cold).
  Its aggregate holds the same rules state and applies the very same events with the same
  ``apply`` (one aggregate event per Cartouche event after creation, the creation event being
  the aggregate's ``Created``), so both sides do the same domain work and differ only in the
  event store and the rebuild machinery. The rebuilt states are checked equal.

Target: Cartouche >= 4x faster (ratio of the medians). Prints a human summary, then one JSON line.

    .venv/bin/python bench/p3_rebuild.py [--events 2000] [--repeat 15]
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import statistics
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from _harness import Redis, machine, ratio  # noqa: E402
from p2_read_cost import build, clear_caches  # noqa: E402

from service.app import create_app  # noqa: E402
from service.config import Config  # noqa: E402
from service.games import GAMES  # noqa: E402

GAME_TYPE = "papyrus"
GAME = GAMES[GAME_TYPE]


def eventsourcing_classes():
    from eventsourcing.application import Application
    from eventsourcing.domain import Aggregate, event

    class Table(Aggregate):
        """One game: the rules' state, evolved by the same events with the same ``apply``."""

        def __init__(self, players: list, options: dict) -> None:
            self.state = GAME.initial(players, options)

        @event("Applied")
        def apply_event(self, type: str, seat, data: dict) -> None:  # noqa: A002
            GAME.apply(self.state, {"type": type, "seat": seat, "data": data})

    class Games(Application):
        pass

    return Games, Table


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--events", type=int, default=2000)
    ap.add_argument("--repeat", type=int, default=15)
    ap.add_argument("--seed", type=int, default=1)
    args = ap.parse_args()

    tmp = tempfile.mkdtemp(prefix="cartouche-bench-es-")
    redis = Redis()
    try:
        app = create_app(Config(redis_url=redis.db(0), queue_url=redis.db(1)))
        svc = app.extensions["cartouche"]
        t0 = time.perf_counter()
        g = build(svc, args.events, random.Random(args.seed), "33" * 32)
        build_s = time.perf_counter() - t0
        gid, version = g["id"], g["version"]
        stored = svc.store.read(gid, 0, version)
        assert len(stored) == version
        svc.store.delete_snapshots(gid)
        created = stored[0].envelope["data"]
        own = [s.envelope for s in stored[1:] if s.envelope["type"] not in
               ("SeatResigned", "SeatForfeited", "GameAborted")]

        # eventsourcing: write the same events once (one aggregate, one transaction)
        env = {"PERSISTENCE_MODULE": "eventsourcing.sqlite",
               "SQLITE_DBNAME": os.path.join(tmp, "events.sqlite"),
               "IS_SNAPSHOTTING_ENABLED": "n"}
        Games, Table = eventsourcing_classes()
        es_app = Games(env=env)
        agg = Table(created["players"], created["options"])
        for e in own:
            agg.apply_event(e["type"], e.get("seat"), e.get("data", {}))
        es_app.save(agg)
        agg_id = agg.id
        es_app.close()

        def cartouche():
            clear_caches(svc)
            return svc.load(gid).state

        def eventsourcing():
            es = Games(env=env)
            try:
                return es.repository.get(agg_id).state
            finally:
                es.close()

        opened = Games(env=env)  # stricter variant: one open Application (no aggregate cache)

        def eventsourcing_open():
            return opened.repository.get(agg_id).state

        a, b, c = cartouche(), eventsourcing(), eventsourcing_open()
        assert a == b == c, "the rebuilds disagree"
        fns = (("cartouche", cartouche), ("eventsourcing", eventsourcing),
               ("eventsourcing_open", eventsourcing_open))
        times = {name: [] for name, _ in fns}
        for _ in range(2):  # warm-up (imports, SQLite page cache, script cache)
            for _, fn in fns:
                fn()
        for _ in range(args.repeat):
            for name, fn in fns:
                t0 = time.perf_counter_ns()
                fn()
                times[name].append((time.perf_counter_ns() - t0) / 1e6)
        # where Cartouche's time goes: the XRANGE + decode alone
        opened.close()
        read_ms = []
        for _ in range(args.repeat):
            t0 = time.perf_counter_ns()
            svc.store.read(gid, 0, version)
            read_ms.append((time.perf_counter_ns() - t0) / 1e6)
    finally:
        redis.stop()
        shutil.rmtree(tmp, ignore_errors=True)

    med = {k: round(statistics.median(v), 3) for k, v in times.items()}
    res = {"bench": "p3_rebuild", "game_type": GAME_TYPE, "events": version,
           "repeat": args.repeat, "cartouche_ms": med["cartouche"],
           "eventsourcing_ms": med["eventsourcing"],
           "eventsourcing_open_app_ms": med["eventsourcing_open"],
           "speedup_vs_open_app": ratio(med["eventsourcing_open"], med["cartouche"]),
           "cartouche_read_decode_ms": round(statistics.median(read_ms), 3),
           "cartouche_ms_all": [round(x, 2) for x in times["cartouche"]],
           "eventsourcing_ms_all": [round(x, 2) for x in times["eventsourcing"]],
           "speedup": ratio(med["eventsourcing"], med["cartouche"]), "target_speedup": 4.0,
           "eventsourcing_version": __import__("eventsourcing").__version__
           if hasattr(__import__("eventsourcing"), "__version__") else None,
           "build_seconds": round(build_s, 1), **machine()}
    res["ok"] = res["speedup"] >= 4.0
    res["ok_vs_open_app"] = res["speedup_vs_open_app"] >= 4.0
    print(f"P3 cold rebuild of a {GAME_TYPE} game of {version} events (no snapshot, no cache), "
          f"{args.repeat} interleaved rebuilds each")
    print(f"  cartouche      median {med['cartouche']:.2f} ms  (of which XRANGE + decode "
          f"{res['cartouche_read_decode_ms']:.2f} ms)")
    print(f"  eventsourcing  median {med['eventsourcing']:.2f} ms  (SQLite file, new Application "
          f"per rebuild)")
    print(f"  eventsourcing  median {med['eventsourcing_open']:.2f} ms  (same, one Application "
          f"kept open: no connection set-up; still no snapshot, no aggregate cache)")
    print(f"  speedup {res['speedup']}x cold, {res['speedup_vs_open_app']}x vs the open "
          f"Application (target >= 4x: {'OK' if res['ok'] else 'MISSED'}, "
          f"{'OK' if res['ok_vs_open_app'] else 'MISSED'})")
    print(json.dumps(res, sort_keys=True))


if __name__ == "__main__":
    main()
