"""Benchmark P6: what archiving a finished game saves, and what it costs to read one.

Starts its own embedded Valkey and the application in process (``create_app`` with the
production defaults: snapshots every 100 versions, cache 2048), then, per game type, plays
``--games`` games to the end with random legal actions through ``GameService.act`` (the API's
command path; each type's first variant and smallest table of two or more, Papyrus with its
``turn_limit`` at 30 so that random play ends like a real game). Each finished game is copied
key by key (``DUMP``/``RESTORE``) to a twin that stays live, then archived (``EventStore.archive``:
read, zstd-compress, one Lua swap). Reported per type, medians over its games:

* resident bytes (``MEMORY USAGE`` summed over the game's keys): live (stream, meta, seed,
  snapshots), the stream alone, archived (meta + document); the ratios live stream / archived
  and all live keys / archived. Target: the archived game <= 1/8 of the live stream (stretch
  1/16);
* read latency, archived game vs its live twin, ``--repeat`` requests each, interleaved
  (Flask test client: routing, auth, load, serialisation; no network): ``GET /v1/games/{id}``
  (a spectator's view), ``GET /v1/games/{id}/events?limit=1000`` and ``GET .../export``, with
  the process's caches warm (as a server reading a game again) and cleared before every request
  (``cold``: state cache, meta and seed memos, decoded documents; the live game loads its newest
  snapshot and the events after it, the archived one fetches and decompresses its document and
  replays from version 1). Target: archived <= 1.5x live;
* archive throughput of one worker: games archived per second (``EventStore.archive`` in a loop,
  one process, the games of every type);
* the same documents compressed without their type's dictionary (``bench/train_archive_dicts.py``
  trained them on other games): their length, and the resident ratio they would give.

    .venv/bin/python bench/p6_storage.py [--games 8] [--repeat 60] [--seed 1]

Prints a human summary, then one JSON line (the last line of output).
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from _harness import Redis, machine, ratio  # noqa: E402

from service.app import create_app  # noqa: E402
from service.application import NullScheduler, body_digest  # noqa: E402
from service.config import Config  # noqa: E402
from service.games import GAMES  # noqa: E402
from service.store import archive, keys  # noqa: E402

EXTRA = {"papyrus": {"turn_limit": 30}}
READS = {"view": "/v1/games/{}", "events": "/v1/games/{}/events?limit=1000",
         "export": "/v1/games/{}/export"}
TARGET_BYTES, STRETCH_BYTES, TARGET_READ = 8, 16, 1.5


def play(svc, type_: str, rnd: random.Random) -> str:
    game = GAMES[type_]
    options = {**(game.variants[0]["options"] if game.variants else {}), **EXTRA.get(type_, {})}
    n = max(2, game.min_players)
    gid = svc.create(type_, [{"name": f"p{i}"} for i in range(n)], options,
                     rnd.randbytes(32).hex())["id"]
    while not (table := svc.load(gid)).over:
        seat = rnd.choice(table.awaiting())
        action = rnd.choice(table.game.legal_actions(table.state, seat))
        svc.act(gid, seat, action, None, None, body_digest({"action": action}))
    return gid


def twin(r, gid: str, rnd: random.Random) -> str:
    """A live copy of game ``gid`` under a new id (every key, as stored)."""
    copy = rnd.randbytes(10).hex()
    for key in keys.all_of_game(gid):
        dumped = r.dump(key)
        if dumped is not None:
            r.restore(key.replace(f"{{{gid}}}", f"{{{copy}}}"), 0, dumped)
    return copy


def resident(r, gid: str) -> dict:
    sizes = {key.rsplit(":", 1)[1]: r.memory_usage(key, samples=0) or 0
             for key in keys.all_of_game(gid)}
    return {"total": sum(sizes.values()), **sizes}


def timed(fn, before=None) -> float:
    if before:
        before()
    t0 = time.perf_counter_ns()
    fn()
    return (time.perf_counter_ns() - t0) / 1e6


def med(xs) -> float:
    return round(statistics.median(xs), 3)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--games", type=int, default=8)
    ap.add_argument("--repeat", type=int, default=60)
    ap.add_argument("--seed", type=int, default=1)
    args = ap.parse_args()

    server = Redis()
    try:
        app = create_app(Config(redis_url=server.db(0), queue_url=server.db(1)),
                         scheduler=NullScheduler())
        svc, client = app.extensions["cartouche"], app.test_client()
        r = svc.store.r
        rnd = random.Random(args.seed)
        t0 = time.perf_counter()
        games = {t: [play(svc, t, rnd) for _ in range(args.games)] for t in GAMES}
        build_s = time.perf_counter() - t0
        live = {t: [twin(r, g, rnd) for g in gids] for t, gids in games.items()}
        before = {g: resident(r, g) for gids in games.values() for g in gids}
        versions = {g: svc.load(g).version for gids in games.values() for g in gids}

        t0 = time.perf_counter()
        outcomes = [svc.archive(g) for gids in games.values() for g in gids]
        archive_s = time.perf_counter() - t0
        assert set(outcomes) == {"ok"}, outcomes
        after = {g: resident(r, g) for gids in games.values() for g in gids}
        for g in after:  # the same document compressed without its type's dictionary
            blob = r.get(keys.archive(g))
            after[g]["blob"] = len(blob)
            after[g]["no_dict"] = len(archive.raw_compress(archive.plain(blob), None))

        def get(path):
            def go():
                resp = client.get(path)
                assert resp.status_code == 200, resp.data
            return go

        per_type = {}
        cold = svc.drop_caches
        for t, gids in games.items():
            stream = [before[g]["events"] for g in gids]
            live_total = [before[g]["total"] for g in gids]
            archived = [after[g]["total"] for g in gids]
            entry = {
                "versions": med(versions[g] for g in gids),
                "live_bytes": med(live_total), "live_stream_bytes": med(stream),
                "archived_bytes": med(archived),
                "archived_document_bytes": med(after[g]["archive"] for g in gids),
                "meta_bytes": med(after[g]["meta"] for g in gids),
                "document_length": med(after[g]["blob"] for g in gids),
                "document_length_no_dictionary": med(after[g]["no_dict"] for g in gids),
                # resident bytes had the document been written without the dictionary
                "stream_over_archived_no_dictionary": round(min(
                    before[g]["events"] / (after[g]["total"] - after[g]["blob"]
                                           + after[g]["no_dict"]) for g in gids), 2),
                # per game, then the worst of the type
                "stream_over_archived": round(min(s / a for s, a in zip(stream, archived)), 2),
                "live_over_archived": round(min(s / a for s, a in zip(live_total, archived)), 2),
                "reads": {},
            }
            for mode, before_fn in (("warm", None), ("cold", cold)):
                for what, path in READS.items():
                    samples = {"live": [], "archived": []}
                    pairs = list(zip(live[t], gids))
                    for lg, ag in pairs:  # warm-up
                        get(path.format(lg))(), get(path.format(ag))()
                    for i in range(args.repeat):
                        lg, ag = pairs[i % len(pairs)]
                        order = [("live", lg), ("archived", ag)]
                        if i % 2:
                            order.reverse()  # interleaved, each first half the time
                        for kind, g in order:
                            samples[kind].append(timed(get(path.format(g)), before_fn))
                    entry["reads"][f"{mode}_{what}"] = {
                        "live_ms": med(samples["live"]), "archived_ms": med(samples["archived"]),
                        "ratio": ratio(statistics.median(samples["archived"]),
                                       statistics.median(samples["live"]))}
            per_type[t] = entry
    finally:
        server.stop()

    n_games = sum(len(g) for g in games.values())
    res = {"bench": "p6_storage", "games_per_type": args.games, "repeat": args.repeat,
           "types": per_type, "archive_games_per_s": round(n_games / archive_s, 1),
           "target_stream_over_archived": TARGET_BYTES, "stretch": STRETCH_BYTES,
           "target_read_ratio": TARGET_READ, "build_seconds": round(build_s, 1), **machine()}
    res["bytes_ok"] = all(e["stream_over_archived"] >= TARGET_BYTES for e in per_type.values())
    res["bytes_stretch_ok"] = all(e["stream_over_archived"] >= STRETCH_BYTES
                                  for e in per_type.values())
    res["reads_ok"] = all(x["ratio"] <= TARGET_READ for e in per_type.values()
                          for x in e["reads"].values())
    print(f"P6 storage: {args.games} finished games per type, archived vs live; "
          f"{args.repeat} interleaved requests per read")
    for t, e in per_type.items():
        print(f"  {t:14s} v{e['versions']:<6g} live {e['live_bytes']:>7g} B (stream "
              f"{e['live_stream_bytes']:g}) -> archived {e['archived_bytes']:g} B (document "
              f"{e['archived_document_bytes']:g}, meta {e['meta_bytes']:g}); worst game: "
              f"stream/archived {e['stream_over_archived']}x, all/archived "
              f"{e['live_over_archived']}x; without the dictionary: document "
              f"{e['document_length_no_dictionary']:g} B instead of {e['document_length']:g}, "
              f"stream/archived {e['stream_over_archived_no_dictionary']}x")
        print("  " + " " * 14 + "  ".join(
            f"{k} {x['live_ms']:.2f}->{x['archived_ms']:.2f} ms ({x['ratio']}x)"
            for k, x in e["reads"].items()))
    print(f"  archive throughput, one process: {res['archive_games_per_s']} games/s")
    print(f"  targets: archived <= 1/{TARGET_BYTES} of the stream "
          f"{'OK' if res['bytes_ok'] else 'MISSED'} (1/{STRETCH_BYTES}: "
          f"{'OK' if res['bytes_stretch_ok'] else 'MISSED'}); reads <= {TARGET_READ}x live "
          f"{'OK' if res['reads_ok'] else 'MISSED'}")
    print(json.dumps(res, sort_keys=True))


if __name__ == "__main__":
    main()
