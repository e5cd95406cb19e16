"""Benchmark P5: delivery delay of live event streams with 500 subscribers on one game.

Starts its own embedded Valkey and one gunicorn with the production configuration (gevent
workers, ``WEB_CONCURRENCY`` 2, default keep-alive). One Papyrus game (2 seats; random play makes
it run for thousands of events) is played at full rate by a driver (``GET`` the game for who is
awaited, ``GET /legal-actions`` as that seat, ``POST`` a random legal action; one command in
flight), while ``--background`` other clients play Diamant games as fast as they can (the P1
load). Meanwhile N spectators follow the game on ``GET /v1/games/{id}/events/stream``.

Subscribers are raw asyncio protocols that only timestamp the bytes they receive (parsed after the
run, so the load generator stays cheap). For every event the driver's command produced, the delay
of each subscriber is measured two ways:

* ``from_at`` (the figure held against the target): receipt wall time minus the event's ``at``
  (the server's clock just before the append script runs, millisecond resolution; the same
  machine's clock);
* ``from_201``: receipt time minus the time the driver received the POST's 201 (the same clock; a
  lower bound of the delay since the append, negative when the stream was faster than the 201).

Phases: baseline with 1 subscriber, then N subscribers (default 500), same duration. Every
subscriber is checked to have received every event exactly once and in order. Target: p99 delay
<= 250 ms with N subscribers while actions continue at full rate.

    .venv/bin/python bench/p5_sse.py [--subscribers 500] [--seconds 10] [--background 4]

Prints a human summary, then one JSON line (the last line of output).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import re
import sys
import time
from datetime import datetime

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from _harness import (Conn, Gunicorn, Meter, Profiler, Redis, SseRecorder,  # noqa: E402
                      lat_stats, machine, open_sse, print_profile, ratio, split_url)
from p1_throughput import create_games, run_service  # noqa: E402

ID_RE = re.compile(rb"id: (\d+)\nevent: game_event\n")


def events(sub: SseRecorder) -> list[tuple[int, float, float]]:
    """(version, perf time, wall time) of each game_event a subscriber received."""
    return [(int(m.group(1)), t, wall) for m, t, wall in sub.matches(ID_RE)]


async def subscribe(host: str, port: int, game_id: str, after: int) -> SseRecorder:
    return await open_sse(host, port, f"/v1/games/{game_id}/events/stream?after={after}")


async def drive(url: str, game: dict, seconds: float, rnd: random.Random) -> dict:
    """Play the watched game as fast as one client can; record each produced version's 201 time
    and ``at``."""
    host, port = split_url(url)
    c = Conn(host, port)
    tokens = [s["token"] for s in game["seats"]]
    produced: dict[int, tuple[float, float]] = {}  # version -> (t_201 perf, at wall)
    post_ms = []
    stop_at = time.perf_counter() + seconds
    while time.perf_counter() < stop_at:
        st, body = await c.request("GET", f"/v1/games/{game['id']}")
        view = json.loads(body)
        if view["status"] != "active":
            break
        seat = view["awaiting"][0]["seat"]
        auth = {"Authorization": f"Bearer {tokens[seat]}"}
        st, body = await c.request("GET", f"/v1/games/{game['id']}/legal-actions", None, auth)
        actions = json.loads(body)["actions"]
        if not actions:
            continue
        t0 = time.perf_counter()
        st, body = await c.request("POST", f"/v1/games/{game['id']}/actions",
                                   {"action": rnd.choice(actions)}, auth)
        t1 = time.perf_counter()
        post_ms.append((t1 - t0) * 1000)
        if st != 201:
            continue
        out = json.loads(body)
        for ev in out["events"]:
            at = datetime.fromisoformat(ev["at"].replace("Z", "+00:00")).timestamp()
            produced[ev["version"]] = (t1, at)
    c.close()
    return {"produced": produced, "post_ms": post_ms}


async def phase(url: str, game_id: str, tokens_game: dict, n_subs: int, seconds: float,
                background: int, rnd: random.Random, meter: Meter | None,
                profile_pids: list[int] | None) -> dict:
    host, port = split_url(url)
    # subscribe from the current version (nothing old to replay)
    c = Conn(host, port)
    st, body = await c.request("GET", f"/v1/games/{game_id}")
    start_version = json.loads(body)["version"]
    c.close()
    subs = []
    for i in range(0, n_subs, 50):  # connect in batches
        subs += await asyncio.gather(*(subscribe(host, port, game_id, start_version)
                                       for _ in range(min(50, n_subs - i))))
    await asyncio.sleep(1.0 + n_subs / 500)  # let every subscriber catch up and join its hub
    pool = await create_games(url, background * 20) if background else []
    load_before = os.getloadavg()[0]  # the machine is shared: how busy it was
    prof = Profiler(profile_pids, seconds - 1) if profile_pids else None
    if meter:
        meter.start()
    tasks = [drive(url, tokens_game, seconds, rnd)]
    if background:
        tasks.append(run_service(url, background, seconds, pool, rnd))
    results = await asyncio.gather(*tasks)
    load_after = os.getloadavg()[0]
    await asyncio.sleep(2.0)  # let the last events arrive
    d = results[0]
    bg = results[1][0] if background else None
    m = meter.stop(len(d["post_ms"]) + (len(bg.lat) if bg else 0)) if meter else None
    produced = d["produced"]
    from_201, from_at = [], []
    missing = dupes = disorder = 0
    for s in subs:
        evs = events(s)
        seen = [v for v, _, _ in evs]
        if seen != sorted(seen):
            disorder += 1
        if len(seen) != len(set(seen)):
            dupes += 1
        got = {v: (t, w) for v, t, w in evs}
        for v, (t201, at) in produced.items():
            if v not in got:
                missing += 1
                continue
            t, w = got[v]
            from_201.append((t - t201) * 1000)
            from_at.append((w - at) * 1000)
        s.transport.close()
    out = {"subscribers": n_subs, "events_produced": len(produced),
           "commands": len(d["post_ms"]),
           "commands_per_s": round(len(d["post_ms"]) / seconds, 1),
           "events_per_s": round(len(produced) / seconds, 1),
           "post": lat_stats(d["post_ms"]),
           "deliveries": len(from_201), "missing": missing, "subscribers_with_duplicates": dupes,
           "subscribers_out_of_order": disorder,
           "delay_from_201": lat_stats(from_201), "delay_from_at": lat_stats(from_at),
           "loadavg_1min": [round(load_before, 2), round(load_after, 2)]}
    if bg:
        out["background"] = {"clients": background, "actions": len(bg.lat),
                             "actions_per_s": round(len(bg.lat) / seconds, 1),
                             "latency": lat_stats(bg.lat)}
    if m:
        out["meter"] = m
    if prof:
        out["profile"] = prof.report()
    return out


async def main_async(args) -> dict:
    redis = Redis()
    gun = Gunicorn(redis.db(0), redis.db(1))
    rnd = random.Random(args.seed)
    meter = Meter(gun, redis)
    try:
        host, port = split_url(gun.url)
        results = {}
        for name, n in (("baseline", 1), ("loaded", args.subscribers)):
            c = Conn(host, port)
            st, body = await c.request("POST", "/v1/games", {
                "type": "papyrus", "players": [{"name": "a"}, {"name": "b"}]})
            assert st == 201, body
            game = json.loads(body)
            c.close()
            # a few commands first (warm-up of this game in both workers)
            await drive(gun.url, game, 1.0, rnd)
            results[name] = await phase(gun.url, game["id"], game, n, args.seconds,
                                        args.background, rnd, meter,
                                        gun.worker_pids() if args.profile and n > 1 else None)
    finally:
        gun.stop()
        redis.stop()
    B, L = results["baseline"], results["loaded"]
    res = {"bench": "p5_sse", "seconds": args.seconds, "background_clients": args.background,
           "baseline": B, "loaded": L,
           "p99_delay_ms": L["delay_from_at"].get("p99_ms"),
           "p99_delay_from_201_ms": L["delay_from_201"].get("p99_ms"),
           "ratio_p99_vs_baseline": ratio(L["delay_from_at"].get("p99_ms", 0),
                                          B["delay_from_at"].get("p99_ms", 0)),
           "ratio_commands_per_s": ratio(L["commands_per_s"], B["commands_per_s"]),
           "target_p99_ms": 250, **machine()}
    res["ok"] = (res["p99_delay_ms"] is not None and res["p99_delay_ms"] <= 250
                 and L["missing"] == 0)
    return res


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--subscribers", type=int, default=500)
    ap.add_argument("--seconds", type=float, default=10.0)
    ap.add_argument("--background", type=int, default=4,
                    help="other clients playing Diamant at full rate meanwhile")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--profile", action="store_true",
                    help="py-spy the gunicorn workers during the loaded phase")
    args = ap.parse_args()
    res = asyncio.run(main_async(args))
    print(f"P5 live streams: Papyrus game played at full rate for {args.seconds:g} s, "
          f"{args.background} background Diamant clients, gunicorn gevent x2")
    for name in ("baseline", "loaded"):
        X = res[name]
        d, a = X["delay_from_201"], X["delay_from_at"]
        print(f"  {X['subscribers']:4d} subscriber(s): {X['commands_per_s']} commands/s "
              f"({X['events_per_s']} events/s), POST median {X['post'].get('median_ms')} ms; "
              f"delay after `at` median {a.get('median_ms')} ms p99 {a.get('p99_ms')} ms "
              f"max {a.get('max_ms')} ms; after the 201 median {d.get('median_ms')} ms p99 "
              f"{d.get('p99_ms')} ms; "
              f"{X['deliveries']} deliveries, {X['missing']} missing, "
              f"{X['subscribers_with_duplicates']} with duplicates, "
              f"{X['subscribers_out_of_order']} out of order; load average "
              f"{X['loadavg_1min'][0]} -> {X['loadavg_1min'][1]}")
        if "background" in X:
            b = X["background"]
            print(f"       background: {b['actions_per_s']} Diamant actions/s, p99 "
                  f"{b['latency'].get('p99_ms')} ms")
        if "meter" in X:
            print(f"       CPU per command (all requests counted): {X['meter']['cpu_ms_per_request']}")
    print(f"  p99 delay {res['p99_delay_ms']} ms with {args.subscribers} subscribers "
          f"({res['ratio_p99_vs_baseline']}x the 1-subscriber baseline; command rate "
          f"{res['ratio_commands_per_s']}x); target <= 250 ms: {'OK' if res['ok'] else 'MISSED'}")
    if "profile" in res["loaded"]:
        print_profile(res["loaded"]["profile"], "gunicorn workers, loaded phase")
    print(json.dumps(res, sort_keys=True))


if __name__ == "__main__":
    main()
