"""Benchmark P2: the cost of reading a game is flat in its length.

Starts its own embedded Valkey and the application in process (``create_app`` with the
production defaults: ``CARTOUCHE_SNAPSHOT_EVERY`` 100, cache 2048), then builds two Papyrus games
(2 seats, default options: random play makes Papyrus games run for thousands of events) by
playing random legal actions through ``GameService.act``, the command path of the API:

* ``short``: stopped at the first command that takes it to version >= 50;
* ``long``: stopped at the first command that takes it to version >= 5,000.

Then it times ``GET /v1/games/{id}`` (Flask test client: routing, auth, load, view, schema
serialisation; no network) and ``GameService.load`` alone, interleaved short/long, in three modes:

* ``warm``: the process's state cache holds the game (realistic: each API process caches);
  a load is one ``XRANGE`` for newer events, none found;
* ``cold``: the process's caches are cleared before every request (state, meta and seed caches,
  as in a freshly started process) but snapshots are present: newest snapshot + replay of the
  events after it;
* ``replay`` (reference only, no target): caches cleared and snapshots deleted, full replay.

Reported: median per mode and the ratio long / short. Target: ratio <= 1.2 warm and cold.

    .venv/bin/python bench/p2_read_cost.py [--long 5000] [--short 50] [--repeat 300]

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

from _harness import Redis, machine, percentile, ratio  # noqa: E402

from service.app import create_app  # noqa: E402
from service.config import Config  # noqa: E402
from service.application import body_digest  # noqa: E402

GAME_TYPE = "papyrus"


def build(svc, target: int, rnd: random.Random, seed_hex: str) -> dict:
    created = svc.create(GAME_TYPE, [{"name": "a"}, {"name": "b"}], {}, seed_hex)
    gid = created["id"]
    while True:
        table = svc.load(gid)
        if table.version >= target or table.over:
            break
        seat = rnd.choice(table.awaiting())
        action = rnd.choice(table.game.legal_actions(table.state, seat))
        svc.act(gid, seat, action, None, None, body_digest({"action": action}))
    table = svc.load(gid)
    if table.version < target:
        raise RuntimeError(f"the game ended at version {table.version} before {target}")
    return {"id": gid, "token": created["seats"][0]["token"], "version": table.version}


def clear_caches(svc) -> None:
    svc.drop_caches()


def timed(fn, before=None) -> float:
    if before:
        before()
    t0 = time.perf_counter_ns()
    fn()
    return (time.perf_counter_ns() - t0) / 1e6


def measure(games: dict, repeat: int, make_fn, before=None) -> dict[str, list[float]]:
    out = {k: [] for k in games}
    for name, g in games.items():  # warm-up
        for _ in range(5):
            timed(make_fn(g), before)
    for _ in range(repeat):
        for name, g in games.items():  # interleaved: drift hits both
            out[name].append(timed(make_fn(g), before))
    return out


def summary(xs: list[float]) -> dict:
    return {"median_ms": round(statistics.median(xs), 4), "p90_ms": round(percentile(xs, .9), 4)}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--long", type=int, default=5000)
    ap.add_argument("--short", type=int, default=50)
    ap.add_argument("--repeat", type=int, default=300)
    ap.add_argument("--seed", type=int, default=1)
    args = ap.parse_args()

    redis = Redis()
    try:
        app = create_app(Config(redis_url=redis.db(0), queue_url=redis.db(1)))
        svc = app.extensions["cartouche"]
        client = app.test_client()
        rnd = random.Random(args.seed)
        t0 = time.perf_counter()
        games = {"short": build(svc, args.short, rnd, "11" * 32),
                 "long": build(svc, args.long, rnd, "22" * 32)}
        build_s = time.perf_counter() - t0
        for g in games.values():
            snap = svc.store.load(g["id"]).snapshot
            g["snapshot_version"] = snap[0] if snap else None
            g["replayed_cold"] = g["version"] - (snap[0] if snap else 1)
            g["view_bytes"] = len(client.get(f"/v1/games/{g['id']}",
                                             headers={"Authorization": f"Bearer {g['token']}"}).data)

        def http(g):
            url, hdr = f"/v1/games/{g['id']}", {"Authorization": f"Bearer {g['token']}"}

            def go():
                r = client.get(url, headers=hdr)
                assert r.status_code == 200, r.data
            return go

        def load(g):
            return lambda: svc.load(g["id"])

        res_modes = {}
        cold = lambda: clear_caches(svc)  # noqa: E731
        for mode, before in (("warm", None), ("cold", cold)):
            for what, fn in (("http", http), ("load", load)):
                m = measure(games, args.repeat, fn, before)
                res_modes[f"{mode}_{what}"] = {
                    "short": summary(m["short"]), "long": summary(m["long"]),
                    "ratio": ratio(statistics.median(m["long"]), statistics.median(m["short"]))}
        # worst case for the long game: just before its next snapshot (~90-99 events replayed)
        lg = games["long"]
        k = svc.snapshot_every
        while True:
            table = svc.load(lg["id"])
            if table.over or (table.version % k >= k - 10 and
                              table.version // k == (table.version + 4) // k):
                break
            seat = rnd.choice(table.awaiting())
            action = rnd.choice(table.game.legal_actions(table.state, seat))
            svc.act(lg["id"], seat, action, None, None, body_digest({"action": action}))
        snap = svc.store.load(lg["id"]).snapshot
        worst = {"id": lg["id"], "token": lg["token"], "version": table.version,
                 "snapshot_version": snap[0] if snap else None,
                 "replayed_cold": table.version - (snap[0] if snap else 1)}
        m = measure({"short": games["short"], "long": worst}, args.repeat, http, cold)
        res_modes["cold_http_worst"] = {
            "short": summary(m["short"]), "long": summary(m["long"]),
            "ratio": ratio(statistics.median(m["long"]), statistics.median(m["short"]))}
        games["long_worst"] = worst
        # reference: no snapshot, no cache (full replay) — snapshots are deleted last
        for g in games.values():
            svc.store.delete_snapshots(g["id"])
        m = measure(games, max(20, args.repeat // 10), http, cold)
        res_modes["replay_http"] = {
            "short": summary(m["short"]), "long": summary(m["long"]),
            "ratio": ratio(statistics.median(m["long"]), statistics.median(m["short"]))}
    finally:
        redis.stop()

    for g in games.values():
        g.pop("token", None)
    res = {"bench": "p2_read_cost", "game_type": GAME_TYPE, "repeat": args.repeat,
           "snapshot_every": svc.snapshot_every, "games": games, "modes": res_modes,
           "ratio_warm": res_modes["warm_http"]["ratio"],
           "ratio_cold": res_modes["cold_http"]["ratio"],
           "ratio_cold_worst": res_modes["cold_http_worst"]["ratio"], "target_ratio": 1.2,
           "build_seconds": round(build_s, 1), **machine()}
    res["warm_ok"] = res["ratio_warm"] <= 1.2
    res["cold_ok"] = res["ratio_cold"] <= 1.2
    res["cold_worst_ok"] = res["ratio_cold_worst"] <= 1.2
    S, L = games["short"], games["long"]
    print(f"P2 read cost: GET /v1/games/{{id}} of a {GAME_TYPE} game at version {L['version']} "
          f"vs one at version {S['version']} (snapshots every {svc.snapshot_every}), "
          f"{args.repeat} interleaved requests each")
    print(f"  view sizes: short {S['view_bytes']} B, long {L['view_bytes']} B; cold replays "
          f"{S['replayed_cold']} events (short, snapshot {S['snapshot_version']}) vs "
          f"{L['replayed_cold']} (long, snapshot {L['snapshot_version']})")
    for key, label in (("warm_http", "warm cache  GET"), ("warm_load", "warm cache  load"),
                       ("cold_http", "cold cache  GET"), ("cold_load", "cold cache  load"),
                       ("cold_http_worst", "cold GET, long ~99 behind"),
                       ("replay_http", "no snapshot GET (reference)")):
        x = res_modes[key]
        print(f"  {label:28s} short {x['short']['median_ms']:.3f} ms  long "
              f"{x['long']['median_ms']:.3f} ms  ratio {x['ratio']}")
    W = games["long_worst"]
    print(f"  (worst case: the long game played on to version {W['version']}, "
          f"{W['replayed_cold']} events after its snapshot {W['snapshot_version']})")
    print(f"  target ratio <= 1.2: warm {'OK' if res['warm_ok'] else 'MISSED'}, cold "
          f"{'OK' if res['cold_ok'] else 'MISSED'}, cold worst case "
          f"{'OK' if res['cold_worst_ok'] else 'MISSED'}")
    print(json.dumps(res, sort_keys=True))


if __name__ == "__main__":
    main()
