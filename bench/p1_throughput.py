"""Benchmark P1: action throughput and latency against the bare Flask floor, same run.

Starts its own embedded Valkey (the ``make run`` server: AOF, ``appendfsync everysec``, unix
socket) and two gunicorns with the production configuration (``service/gunicorn_conf.py``: gevent
workers, ``WEB_CONCURRENCY`` 2) on that same Redis: one serving ``bench/bare_app.py`` (a bare
Flask app with one route doing the read and the Lua append below, nothing else: the floor), one
serving ``service.api.bench:wsgi()`` = the production app plus the benchmark-only
``POST /bench/append/<key>`` (``CARTOUCHE_BENCH_ENDPOINTS=1``). Then an asyncio load generator
(one keep-alive connection per client, one request in flight per client) runs alternating timed
phases:

* ``floor``: every client loops ``POST /bench/append/<key>`` on the bare app, on its own key: one
  stream read and one Lua expected-version append (``EventStore.append``, ``append.lua``);
* ``baseline``: the same request on the production app's in-app endpoint: the same read and
  append, plus the production app's per-request machinery (hooks, error handlers, limiter
  plumbing, logs, metrics; no rules, no auth, no validation);
* ``service``: every client plays 4-seat Diamant games (created beforehand, untimed) with
  ``POST /v1/games/{id}/actions`` as the awaited seats, a seat's token each, choosing "continue"
  with probability 0.75; it tracks who is awaited from the events each 201 returns (a GET of the
  game resynchronises after any non-201, counted as an error). Only the actions are timed.

Throughput = requests completed / phase wall time; latency per request (client side). Phases
alternate (floor, baseline, service, floor, ...) so that drift hits all three; the figures are
medians over the rounds, and the ratios are service / floor (``ratio_*``, the targets: throughput
≥ 0.9x the floor, p99 ≤ 1.5x) and, as a second line, service / in-app baseline
(``inapp_ratio_*``) and in-app baseline / floor (``inapp_vs_floor_*``: what the production
app's machinery costs before any game code runs). Per-round ratios are in ``rounds``, the load
average (``os.getloadavg()``) before and after the run in ``loadavg``.

At saturation (a closed loop of N clients) latency is about N / throughput, so the p99 ratio there
mostly mirrors the throughput ratio; paced rounds follow (same number of clients, both at the same
offered rate, ``--paced-fraction`` of the service's saturated throughput) and compare p99 at equal
load (floor, baseline and service paced alike). Per phase it also reports the CPU per request of
the gunicorn workers, of the Redis server and of the load generator (``/proc``), the Redis
commands per request (``INFO commandstats``), and the busiest worker's share of the workers' CPU
(each phase opens new connections and the kernel hashes each onto a worker, so the split, and
with it the tail, moves from phase to phase; it shows in the paced phases, while at saturation
both workers stay busy and it reads ~0.5): the figures that say where the difference comes from
on a shared machine.

Redis rewrites its AOF when the file has doubled since the last rewrite; the rewrite's child
takes a core for a fraction of a second, the tail of whichever 8 s phase it lands in, and where
it lands follows the bytes every phase before wrote. By default (``--aof-rewrites between``)
each timed phase starts on a freshly rewritten AOF (untimed), so none is due inside one, and
``paced_aof_rewrite_cost`` says what they cost instead: how long one took, and how often Redis
would run one at the paced rate of the floor's and of the service's bytes (its share of the
time). ``--aof-rewrites anywhere`` leaves Redis's schedule alone.

    .venv/bin/python bench/p1_throughput.py [--clients 32] [--seconds 8] [--rounds 5]
        [--aof-rewrites between|anywhere]

Prints a human summary, then one JSON line (the last line of output).
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

import orjson

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from _harness import (Conn, Gunicorn, Meter, Profiler, Redis, lat_stats,  # noqa: E402
                      aof_state, machine, no_gc_pauses, percentile, print_profile, ratio,
                      rewrite_aof, split_url)

SEATS = 4
P_CONTINUE = 0.75


async def create_games(url: str, n: int, conns: int = 8) -> list[dict]:
    host, port = split_url(url)
    out: list[dict] = []

    async def worker(k: int):
        c = Conn(host, port)
        while len(out) < n:
            st, body = await c.request("POST", "/v1/games", {
                "type": "diamant", "players": [{"name": f"p{i}"} for i in range(SEATS)]})
            assert st == 201, (st, body)
            out.append(json.loads(body))
        c.close()

    await asyncio.gather(*(worker(k) for k in range(conns)))
    return out[:n]


class Phase:
    def __init__(self) -> None:
        self.lat: list[float] = []
        self.errors = 0
        self.games_finished = 0
        self.meter: dict = {}


class Pace:
    """Open-ish loop at ``rate`` requests/s over all clients (None: as fast as possible):
    each client waits for its next slot; a late client sends at once."""

    def __init__(self, rate: float | None, clients: int) -> None:
        self.interval = clients / rate if rate else 0.0

    async def start(self, k: int) -> float:
        if not self.interval:
            return 0.0
        await asyncio.sleep(self.interval * random.random())
        return time.perf_counter()

    async def wait(self, slot: float) -> float:
        if not self.interval:
            return 0.0
        slot += self.interval
        delay = slot - time.perf_counter()
        if delay > 0:
            await asyncio.sleep(delay)
        return slot


async def run_baseline(url: str, clients: int, seconds: float, tag: str,
                       rate: float | None = None) -> tuple[Phase, float]:
    host, port = split_url(url)
    ph = Phase()
    stop_at = time.perf_counter() + seconds
    pace = Pace(rate, clients)

    async def client(k: int):
        c = Conn(host, port)
        await c.open()
        key = f"{tag}{k:04x}"
        slot = await pace.start(k)
        while time.perf_counter() < stop_at:
            slot = await pace.wait(slot) if slot else slot
            t0 = time.perf_counter()
            st, _ = await c.request("POST", f"/bench/append/{key}")
            ph.lat.append((time.perf_counter() - t0) * 1000)
            if st != 201:
                ph.errors += 1
        c.close()

    t0 = time.perf_counter()
    await asyncio.gather(*(client(k) for k in range(clients)))
    return ph, time.perf_counter() - t0


async def resync(c: Conn, game: dict) -> tuple[list[int], bool]:
    st, body = await c.request("GET", f"/v1/games/{game['id']}")
    view = json.loads(body)
    return [a["seat"] for a in view["awaiting"]], view["status"] != "active"


async def run_service(url: str, clients: int, seconds: float, pool: list[dict],
                      rnd: random.Random, rate: float | None = None) -> tuple[Phase, float]:
    host, port = split_url(url)
    ph = Phase()
    stop_at = time.perf_counter() + seconds
    pace = Pace(rate, clients)

    async def client(k: int):
        c = Conn(host, port)
        await c.open()
        slot = await pace.start(k)
        while time.perf_counter() < stop_at and pool:
            game = pool.pop()
            tokens = [s["token"] for s in game["seats"]]
            in_cave = set(range(SEATS))
            pending = sorted(in_cave)
            done = False
            while not done and time.perf_counter() < stop_at:
                if not pending:
                    pending, done = await resync(c, game)
                    continue
                slot = await pace.wait(slot) if slot else slot
                seat = pending.pop(0)
                choice = "continue" if rnd.random() < P_CONTINUE else "return"
                t0 = time.perf_counter()
                st, body = await c.request(
                    "POST", f"/v1/games/{game['id']}/actions",
                    {"action": {"type": "decide", "choice": choice}},
                    {"Authorization": f"Bearer {tokens[seat]}"})
                ph.lat.append((time.perf_counter() - t0) * 1000)
                if st != 201:
                    ph.errors += 1
                    pending, done = await resync(c, game)
                    continue
                types = {}
                for ev in orjson.loads(body)["events"]:  # the generator's CPU is the machine's
                    types.setdefault(ev["type"], ev)
                if "GameEnded" in types:
                    done = True
                elif "ChoicesRevealed" in types:
                    if "RoundStarted" in types:
                        in_cave = set(range(SEATS))
                    elif "PlayersReturned" in types:
                        in_cave -= set(types["PlayersReturned"]["data"]["seats"])
                    pending = sorted(in_cave)
            if done:
                ph.games_finished += 1
        c.close()

    t0 = time.perf_counter()
    await asyncio.gather(*(client(k) for k in range(clients)))
    return ph, time.perf_counter() - t0


#: ``--aof-rewrites``: where Redis's AOF rewrites may land (see ``metered``)
BETWEEN, ANYWHERE = "between", "anywhere"


async def metered(meter: Meter, phase, *, resyncs: bool = False, aof_rewrites: str = BETWEEN,
                  on_start=None) -> tuple[Phase, float]:
    """``await phase`` (a timed phase: ``run_baseline``, ``run_service``) with ``meter`` around
    it and the load generator's gc off; the meter's figures are per request sent: every timed
    one and, with ``resyncs``, the GET that resynchronises a game after each error.

    With ``aof_rewrites`` :data:`BETWEEN` the AOF is rewritten just before the phase (untimed):
    Redis rewrites it by itself when it has doubled since the last rewrite, so where a rewrite
    lands depends on the bytes every phase before wrote, not on the phase it lands in, and its
    child takes a core for a fraction of a second (0.3-0.4 s at ~30 MB of AOF here), the tail
    of that phase's requests. Rewritten before each phase, none is due within one (a phase would
    have to write more than the data it starts with); one that still runs is counted in
    ``aof_rewrites``. :data:`ANYWHERE` leaves Redis's own schedule alone. ``on_start`` (e.g. a
    profiler's start) is called once the rewrite is done, as the phase starts."""
    rewrite = None
    if aof_rewrites == BETWEEN:
        seconds = rewrite_aof(meter.redis.url)
        rewrite = {"seconds": round(seconds, 3), "aof_bytes": aof_state(meter.redis.url)[1]}
    if on_start is not None:
        on_start()
    with no_gc_pauses():
        meter.start()
        ph = await phase
    ph[0].meter = meter.stop(len(ph[0].lat) + (ph[0].errors if resyncs else 0))
    ph[0].meter["aof_rewrite_before"] = rewrite
    return ph


def rewrite_share(url: str, rewrite: dict | None, rate: float, bytes_per_request: float | None,
                  ) -> dict | None:
    """How much of the time Redis would spend rewriting its AOF, at ``rate`` requests/s of
    ``bytes_per_request`` each, with rewrites as long as ``rewrite`` (one measured before a
    phase: its seconds, and the AOF's size after it). Redis rewrites when the AOF has grown by
    ``auto-aof-rewrite-percentage`` of its size after the last rewrite and is over
    ``auto-aof-rewrite-min-size``: one rewrite every ``interval_s``. While one runs the requests
    of that moment wait (a core is the child's); under 1% of the time, a p99 taken over many
    rewrites' intervals is not theirs."""
    if not rewrite or not bytes_per_request:
        return None
    import redis as redis_py

    r = redis_py.Redis.from_url(url)
    try:
        config = r.config_get("auto-aof-rewrite-*")
    finally:
        r.close()
    percentage = int(config["auto-aof-rewrite-percentage"])
    min_size = int(config["auto-aof-rewrite-min-size"])
    base = rewrite["aof_bytes"]
    growth = max(base * percentage / 100, min_size - base)
    interval = growth / (rate * bytes_per_request)
    return {"rewrite_s": rewrite["seconds"], "aof_mb": round(base / 1e6, 1),
            "interval_s": round(interval, 1),
            "share_of_time": round(rewrite["seconds"] / interval, 4)}


def summarize(phases: list[tuple[Phase, float]]) -> dict:
    tps = [len(p.lat) / wall for p, wall in phases]
    p99s = [percentile(p.lat, .99) for p, _ in phases]
    meds = [statistics.median(p.lat) for p, _ in phases]
    all_lat = [x for p, _ in phases for x in p.lat]
    cpu = {k: round(statistics.median(p.meter["cpu_ms_per_request"][k] for p, _ in phases), 3)
           for k in ("gunicorn", "redis", "client")}
    return {"cpu_ms_per_request": cpu,
            "redis_calls_per_request": phases[-1][0].meter["redis_calls_per_request"],
            "busiest_worker_cpu_share_per_round": [p.meter["worker_cpu_share"][0]
                                                   for p, _ in phases],
            "throughput_rps_per_round": [round(t, 1) for t in tps],
            "throughput_rps": round(statistics.median(tps), 1),
            "p99_ms_per_round": [round(x, 2) for x in p99s],
            "p99_ms": round(statistics.median(p99s), 2),
            "aof_rewrites_per_round": [p.meter["aof_rewrites"] for p, _ in phases],
            # the rounds no AOF rewrite touched (None: every round had one)
            "p99_ms_without_rewrites": _median_or_none(
                [x for x, (p, _) in zip(p99s, phases) if not p.meter["aof_rewrites"]]),
            "aof_bytes_per_request": _median_or_none(
                [p.meter["aof_bytes_per_request"] for p, _ in phases
                 if p.meter["aof_bytes_per_request"] is not None]),
            "median_ms": round(statistics.median(meds), 2),
            "pooled": lat_stats(all_lat),
            "errors": sum(p.errors for p, _ in phases),
            "games_finished": sum(p.games_finished for p, _ in phases)}


def _median_or_none(values: list[float]) -> float | None:
    return round(statistics.median(values), 2) if values else None


def _per_round(num: list[tuple[Phase, float]], den: list[tuple[Phase, float]]) -> dict:
    """Round by round: throughput and p99 of ``num`` over ``den`` (same round)."""
    return {"throughput": [ratio(len(a.lat) / wa, len(b.lat) / wb)
                           for (a, wa), (b, wb) in zip(num, den)],
            "p99": [ratio(percentile(a.lat, .99), percentile(b.lat, .99))
                    for (a, _), (b, _) in zip(num, den)]}


def _ratios(prefix: str, X: dict, Y: dict) -> dict:
    """X over Y: throughput, p99, median and requests per gunicorn CPU second."""
    return {f"{prefix}throughput": ratio(X["throughput_rps"], Y["throughput_rps"]),
            f"{prefix}p99": ratio(X["p99_ms"], Y["p99_ms"]),
            f"{prefix}median": ratio(X["median_ms"], Y["median_ms"]),
            # robust to other jobs on the machine: requests per gunicorn CPU second
            f"{prefix}per_cpu": ratio(Y["cpu_ms_per_request"]["gunicorn"],
                                      X["cpu_ms_per_request"]["gunicorn"])}


async def main_async(args) -> dict:
    load_before = os.getloadavg()
    redis = Redis()
    gun = Gunicorn(redis.db(0), redis.db(1))
    # the floor: the bare app (bench/bare_app.py), same gunicorn config, same Redis and database
    bare = Gunicorn(redis.db(0), redis.db(1), app="bench.bare_app:wsgi()")
    meter, bare_meter = Meter(gun, redis), Meter(bare, redis)
    rnd = random.Random(args.seed)
    profile = None
    try:
        # games take ~40-80 actions each (68 on average at P_CONTINUE): enough for 100 games/s
        # (~6,800 actions/s) besides the ones in play, created untimed. A phase that runs out
        # plays its end with fewer clients than the baseline had: it warns (see below).
        per_round = args.clients * 2 + int(args.seconds * 100)
        # warm-up: imports, caches, connection pools in every worker
        pool = await create_games(gun.url, args.clients)
        await run_service(gun.url, args.clients, 2.0, pool, rnd)
        await run_baseline(gun.url, args.clients, 1.0, "ff")
        await run_baseline(bare.url, args.clients, 1.0, "fe")
        floor, base, serv = [], [], []

        def timed(m: Meter, phase, **kw):
            return metered(m, phase, aof_rewrites=args.aof_rewrites, **kw)

        # the first floor phase's and the first service phase's, each started with its phase
        profiled: dict[str, Profiler] = {}

        def profiler(name: str, server: Gunicorn):
            def start() -> None:
                profiled[name] = Profiler(server.worker_pids(), args.seconds - 1)
            return start if args.profile else None

        starved = 0  # service phases whose pool of games ran dry before the phase ended
        for r in range(args.rounds):
            floor.append(await timed(bare_meter, run_baseline(
                bare.url, args.clients, args.seconds, f"b{r:02x}"),
                on_start=profiler("floor", bare) if r == 0 else None))
            base.append(await timed(meter, run_baseline(
                gun.url, args.clients, args.seconds, f"{r:02x}")))
            pool = await create_games(gun.url, per_round)
            ph = await timed(meter, run_service(gun.url, args.clients, args.seconds, pool, rnd),
                             resyncs=True,
                             on_start=profiler("service", gun) if r == 0 else None)
            if profiled and profile is None:
                profile = {name: p.report() for name, p in profiled.items()}
            starved += not pool
            serv.append(ph)
        F, B, S = summarize(floor), summarize(base), summarize(serv)
        # equal offered load, below saturation: latency compared at the same rate
        rate = args.paced_fraction * S["throughput_rps"]
        pf, pb, ps = [], [], []
        for r in range(args.rounds):
            pf.append(await timed(bare_meter, run_baseline(
                bare.url, args.clients, args.seconds, f"c{r:01x}", rate)))
            pb.append(await timed(meter, run_baseline(
                gun.url, args.clients, args.seconds, f"a{r:01x}", rate)))
            pool = await create_games(gun.url, per_round)
            ps.append(await timed(meter, run_service(
                gun.url, args.clients, args.seconds, pool, rnd, rate), resyncs=True))
            starved += not pool
        PF, PB, PS = summarize(pf), summarize(pb), summarize(ps)
        # the rewrites taken out of the phases, at the paced rate (the last round's: most data)
        rewrite_cost = {name: rewrite_share(redis.url, phases[-1][0].meter["aof_rewrite_before"],
                                            rate, X["aof_bytes_per_request"])
                        for name, phases, X in (("floor", pf, PF), ("service", ps, PS))}
    finally:
        gun.stop()
        bare.stop()
        redis.stop()
    rounds_service_vs_floor = _per_round(serv, floor)
    res = {
        "bench": "p1_throughput",
        "clients": args.clients, "seconds_per_phase": args.seconds, "rounds": args.rounds,
        "aof_rewrites": args.aof_rewrites,
        "web_concurrency": int(os.environ.get("WEB_CONCURRENCY", "2")),
        "floor": F, "baseline": B, "service": S,
        "paced_rate_rps": round(rate, 1), "paced_floor": PF, "paced_baseline": PB,
        "paced_service": PS,
        # Redis's AOF rewrites at the paced rate: how long one took, how often it would come
        "paced_aof_rewrite_cost": rewrite_cost,
        # the targets: service against the bare floor
        **_ratios("ratio_", S, F),
        "paced_ratio_p99": ratio(PS["p99_ms"], PF["p99_ms"]),
        "paced_ratio_median": ratio(PS["median_ms"], PF["median_ms"]),
        # where the equal-load tail comes from: the same ratio over the paced rounds that no AOF
        # rewrite touched (the service writes more bytes, so rewrites land in its phases more)
        "paced_ratio_p99_without_rewrites": (
            ratio(PS["p99_ms_without_rewrites"], PF["p99_ms_without_rewrites"])
            if PS["p99_ms_without_rewrites"] and PF["p99_ms_without_rewrites"] else None),
        # second line: service against the in-app endpoint, and that endpoint against the floor
        **_ratios("inapp_ratio_", S, B),
        "inapp_paced_ratio_p99": ratio(PS["p99_ms"], PB["p99_ms"]),
        **_ratios("inapp_vs_floor_", B, F),
        "inapp_vs_floor_paced_p99": ratio(PB["p99_ms"], PF["p99_ms"]),
        "rounds_service_vs_floor": rounds_service_vs_floor,
        # the throughput ratio over the rounds where no AOF rewrite touched either phase: a
        # rewrite takes a core from whichever phase it lands in (which one depends on the bytes
        # written so far, so it tends to repeat from run to run)
        "ratio_throughput_without_rewrites": _median_or_none(
            [t for t, (s_ph, _), (f_ph, _)
             in zip(rounds_service_vs_floor["throughput"], serv, floor)
             if not s_ph.meter["aof_rewrites"] and not f_ph.meter["aof_rewrites"]]),
        "rounds_inapp_vs_floor": _per_round(base, floor),
        "target_throughput_ratio": 0.9, "target_p99_ratio": 1.5,
        "phases_out_of_games": starved,
        "loadavg": {"before": [round(x, 2) for x in load_before],
                    "after": [round(x, 2) for x in os.getloadavg()]},
        **machine(),
    }
    if profile:
        res["profile"] = profile
    res["throughput_ok"] = res["ratio_throughput"] >= 0.9
    res["p99_ok"] = res["ratio_p99"] <= 1.5
    res["paced_p99_ok"] = res["paced_ratio_p99"] <= 1.5
    return res


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--clients", type=int, default=32)
    ap.add_argument("--seconds", type=float, default=8.0)
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--paced-fraction", type=float, default=0.5,
                    help="paced rounds: this fraction of the service's saturated throughput")
    ap.add_argument("--aof-rewrites", choices=(BETWEEN, ANYWHERE), default=BETWEEN,
                    help="between: rewrite Redis's AOF before each timed phase (untimed), so "
                         "that none lands in one phase because of what the phases before "
                         "wrote; anywhere: leave Redis's own schedule alone")
    ap.add_argument("--profile", action="store_true",
                    help="py-spy the gunicorn workers during the first floor phase and the "
                         "first service phase (JSON: profile.floor, profile.service)")
    args = ap.parse_args()
    res = asyncio.run(main_async(args))
    F, B, S = res["floor"], res["baseline"], res["service"]
    print(f"P1 action throughput: {args.clients} clients, {args.rounds} rounds x "
          f"{args.seconds:g} s per phase, gunicorn gevent x{res['web_concurrency']}, "
          f"{res['cpus']} CPUs, load average {res['loadavg']['before']} -> "
          f"{res['loadavg']['after']}; AOF rewritten "
          + ("before each phase" if args.aof_rewrites == BETWEEN else "when Redis decides"))
    for name, X in (("floor    (bare Flask app: read + Lua append)", F),
                    ("baseline (in-app /bench/append)", B),
                    ("service  (Diamant actions)", S)):
        print(f"  {name}: {X['throughput_rps']:.0f} req/s  median {X['median_ms']:.1f} ms  "
              f"p99 {X['p99_ms']:.1f} ms  (rounds {X['throughput_rps_per_round']})")
    print(f"  service: {S['games_finished']} games finished, {S['errors']} errors")
    for name, X in (("floor", F), ("baseline", B), ("service", S)):
        c = X["cpu_ms_per_request"]
        print(f"  {name:8s} CPU per request: gunicorn {c['gunicorn']:.2f} ms, redis "
              f"{c['redis']:.3f} ms, load generator {c['client']:.3f} ms; redis calls per "
              f"request {X['redis_calls_per_request']}")
    PF, PB, PS = res["paced_floor"], res["paced_baseline"], res["paced_service"]
    print(f"  paced at {res['paced_rate_rps']} req/s for all (equal load, below saturation): "
          f"floor median {PF['median_ms']} ms p99 {PF['p99_ms']} ms; baseline median "
          f"{PB['median_ms']} ms p99 {PB['p99_ms']} ms; service median {PS['median_ms']} ms "
          f"p99 {PS['p99_ms']} ms")
    print("  AOF rewrites per round (each forks Redis; its child takes a core): "
          + "; ".join(f"{name} {X['aof_rewrites_per_round']}"
                      for name, X in (("floor", F), ("baseline", B), ("service", S),
                                      ("paced floor", PF), ("paced baseline", PB),
                                      ("paced service", PS)))
          + f"; AOF bytes per request: floor {F['aof_bytes_per_request']}, service "
          f"{S['aof_bytes_per_request']}; over the rounds without a rewrite: throughput ratio "
          f"{res['ratio_throughput_without_rewrites']}, equal-load p99 ratio "
          f"{res['paced_ratio_p99_without_rewrites']}")
    for name, cost in res["paced_aof_rewrite_cost"].items():
        if cost:
            print(f"  {name}'s AOF rewrite at the paced rate: {cost['rewrite_s']} s for "
                  f"{cost['aof_mb']} MB, one every {cost['interval_s']} s: "
                  f"{100 * cost['share_of_time']:.2f}% of the time")
    print("  busiest gunicorn worker's share of the workers' CPU, per round (0.5: even): "
          + "; ".join(f"{name} {X['busiest_worker_cpu_share_per_round']}"
                      for name, X in (("floor", F), ("service", S), ("paced floor", PF),
                                      ("paced service", PS))))
    print(f"  service / floor: throughput {res['ratio_throughput']} (target >= 0.9: "
          f"{'OK' if res['throughput_ok'] else 'MISSED'}; rounds "
          f"{res['rounds_service_vs_floor']['throughput']}), per gunicorn CPU second "
          f"{res['ratio_per_cpu']}, p99 {res['ratio_p99']} at saturation, "
          f"{res['paced_ratio_p99']} at equal load (target <= 1.5: "
          f"{'OK' if res['p99_ok'] else 'MISSED'}, {'OK' if res['paced_p99_ok'] else 'MISSED'})")
    print(f"  service / in-app baseline: throughput {res['inapp_ratio_throughput']}, p99 "
          f"{res['inapp_ratio_p99']}, equal load p99 {res['inapp_paced_ratio_p99']}; in-app "
          f"baseline / floor: throughput {res['inapp_vs_floor_throughput']}, per CPU "
          f"{res['inapp_vs_floor_per_cpu']}")
    if res["phases_out_of_games"]:
        print(f"  warning: {res['phases_out_of_games']} service phase(s) ran out of games before "
              f"their end (fewer clients than the baseline at the end: a low figure)")
    for name, prof in res.get("profile", {}).items():
        print_profile(prof, f"gunicorn workers, {name} phase")
    print(json.dumps(res, sort_keys=True))


if __name__ == "__main__":
    main()
