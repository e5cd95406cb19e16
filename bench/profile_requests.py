"""Where a request's time goes: the production app against the bare Flask floor, in process.

Starts the embedded Valkey, builds the bare app (``bench/bare_app.py``) and the production app
(``service.api.bench:wsgi()``'s app: ``create_app()`` plus ``POST /bench/append/<key>``), and
calls each WSGI callable directly in a loop (no sockets, no gunicorn, one thread), with the
environ of every request built beforehand so that only the app's own work is timed:

* ``bare``: ``POST /bench/append/<key>`` on the bare app;
* ``inapp``: the same request on the production app (its hooks, limiter, logs, metrics);
* ``action``: ``POST /v1/games/{id}/actions`` (Diamant, 4 seats, the awaited seats in turn);
* ``action_two_processes``: the same through two instances of the production app in turn (two
  processes behind a balancer: each one's cached game is one command behind at every action).

Prints this process's CPU microseconds per request for each (best of ``--repeat`` timed loops,
and the median over the rounds of each loop's ratio to the bare loop of its round;
CPU time, not wall time: waiting for Redis and for other jobs on the machine is not counted,
Redis's own CPU is not either), then a cProfile (CPU time) of one more loop of each (top functions by own time and by cumulative time), and one JSON line.
The access log goes to the handler a deployment logs with (``logs.StderrHandler``, JSON), writing
to ``/dev/null``: what a real deployment pays, minus the pipe to its log collector.

    .venv/bin/python bench/profile_requests.py [--requests 3000] [--repeat 3] [--top 25]
"""

from __future__ import annotations

import argparse
import cProfile
import io
import json
import logging
import os
import pstats
import random
import statistics
import sys
import time

import orjson

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from _harness import Redis  # noqa: E402

SEATS = 4


def environ(method: str, path: str, body: bytes = b"", headers: dict | None = None) -> dict:
    from werkzeug.test import EnvironBuilder

    b = EnvironBuilder(method=method, path=path, data=body, headers=headers or {},
                       content_type="application/json" if body else None,
                       environ_base={"REMOTE_ADDR": "127.0.0.1"})
    try:
        return b.get_environ()
    finally:
        b.close()


def call(app, env: dict) -> tuple[int, bytes]:
    status = []

    def start_response(s, h, exc_info=None):
        status.append(s)

    it = app(env, start_response)
    try:
        body = b"".join(it)
    finally:
        if hasattr(it, "close"):
            it.close()
    return int(status[0].split(" ", 1)[0]), body


def bench_environs(n: int, tag: str) -> list[dict]:
    return [environ("POST", f"/bench/append/{tag}{k % 64:02x}") for k in range(n)]


class Player:
    """Plays Diamant games through the app, one action per call to ``next_environ``."""

    def __init__(self, app, rnd: random.Random) -> None:
        self.app, self.rnd = app, rnd
        self.game = None

    def new_game(self):
        body = orjson.dumps({"type": "diamant",
                             "players": [{"name": f"p{i}"} for i in range(SEATS)]})
        st, out = call(self.app, environ("POST", "/v1/games", body))
        assert st == 201, (st, out)
        self.game = orjson.loads(out)
        self.pending = list(range(SEATS))
        self.in_cave = set(range(SEATS))

    def resync(self):
        st, out = call(self.app, environ("GET", f"/v1/games/{self.game['id']}"))
        view = orjson.loads(out)
        if view["status"] != "active":
            self.new_game()
        else:
            self.pending = sorted(a["seat"] for a in view["awaiting"])

    def action(self) -> dict:
        while self.game is None or not self.pending:
            self.new_game() if self.game is None else self.resync()
        seat = self.pending.pop(0)
        choice = "continue" if self.rnd.random() < 0.75 else "return"
        return environ("POST", f"/v1/games/{self.game['id']}/actions",
                       orjson.dumps({"action": {"type": "decide", "choice": choice}}),
                       {"Authorization": f"Bearer {self.game['seats'][seat]['token']}"})

    def answered(self, status: int, body: bytes) -> None:
        if status != 201:
            self.pending = []
            return
        types = {}
        for ev in orjson.loads(body)["events"]:
            types.setdefault(ev["type"], ev)
        if "GameEnded" in types:
            self.game = None
        elif "ChoicesRevealed" in types:
            if "RoundStarted" in types:
                self.in_cave = set(range(SEATS))
            elif "PlayersReturned" in types:
                self.in_cave -= set(types["PlayersReturned"]["data"]["seats"])
            self.pending = sorted(self.in_cave)


def run_actions(app, player: Player, n: int, profile: cProfile.Profile | None = None,
                other=None) -> tuple[float, int]:
    """n actions; returns the seconds spent inside the app on them and the non-201 count.
    With ``other`` (a second app on the same store) every other action goes through it."""
    spent, errors = 0.0, 0
    for i in range(n):
        player.app = other if other is not None and i % 2 else app
        env = player.action()
        if profile:
            profile.enable()
        t0 = time.process_time()
        st, body = call(player.app, env)
        spent += time.process_time() - t0
        if profile:
            profile.disable()
        errors += st != 201
        player.answered(st, body)
    return spent, errors


def run_environs(app, envs: list[dict], profile: cProfile.Profile | None = None
                 ) -> tuple[float, int]:
    errors = 0
    if profile:
        profile.enable()
    t0 = time.process_time()
    for env in envs:
        st, _ = call(app, env)
        errors += st != 201
    spent = time.process_time() - t0
    if profile:
        profile.disable()
    return spent, errors


def top(profile: cProfile.Profile, n: int, key: str) -> list[str]:
    out = io.StringIO()
    pstats.Stats(profile, stream=out).strip_dirs().sort_stats(key).print_stats(n)
    lines = out.getvalue().splitlines()
    start = next(i for i, line in enumerate(lines) if line.lstrip().startswith("ncalls"))
    return [line.rstrip() for line in lines[start:] if line.strip()]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--requests", type=int, default=3000)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--top", type=int, default=25)
    ap.add_argument("--dump", help="also write each cProfile to DIR/<name>.prof (pstats)")
    args = ap.parse_args()

    redis = Redis()
    os.environ.update(REDIS_URL=redis.db(0), QUEUE_URL=redis.db(1),
                      CARTOUCHE_BENCH_ENDPOINTS="1")
    os.environ.pop("PROMETHEUS_MULTIPROC_DIR", None)  # this process's own metrics
    for name in ("CARTOUCHE_RATE_LIMIT_WRITES_PER_MINUTE",
                 "CARTOUCHE_RATE_LIMIT_IP_WRITES_PER_MINUTE"):
        os.environ.setdefault(name, "1000000000")
    for name in ("CARTOUCHE_STORED_BYTES_PER_MINUTE", "CARTOUCHE_IP_STORED_BYTES_PER_MINUTE"):
        os.environ.setdefault(name, "1000000000000")
    try:
        import bare_app

        from service import logs
        from service.api.bench import wsgi as prod_wsgi

        bare = bare_app.create_app(os.environ["REDIS_URL"])
        prod = prod_wsgi()
        root = logging.getLogger()
        for h in list(root.handlers):  # the access log formatted and written to /dev/null
            root.removeHandler(h)
        sink = logs.StderrHandler(open(os.devnull, "w"))
        sink.setFormatter(logs.JsonFormatter())
        root.addHandler(sink)
        root.setLevel(logging.INFO)

        player = Player(prod, random.Random(1))
        prod2 = prod_wsgi()
        player2 = Player(prod, random.Random(2))
        n = args.requests
        # warm-up
        run_environs(bare, bench_environs(300, "aa"))
        run_environs(prod, bench_environs(300, "bb"))
        run_actions(prod, player, 300)
        run_actions(prod, player2, 300, other=prod2)
        best = {"bare": [], "inapp": [], "action": [], "action_two_processes": []}
        errors = 0
        for r in range(args.repeat):
            s, e = run_environs(bare, bench_environs(n, f"{r:x}c"))
            best["bare"].append(s)
            errors += e
            s, e = run_environs(prod, bench_environs(n, f"{r:x}d"))
            best["inapp"].append(s)
            errors += e
            s, e = run_actions(prod, player, n)
            best["action"].append(s)
            errors += e
            s, e = run_actions(prod, player2, n, other=prod2)
            best["action_two_processes"].append(s)
            errors += e
        us = {k: round(1e6 * min(v) / n, 1) for k, v in best.items()}
        # each loop against the bare loop of the same round, a few ms earlier: a neighbour's
        # load that comes and goes slows both alike, which the best-of figures do not cancel
        median_ratio = {k: round(statistics.median(x / b for x, b in zip(best[k], best["bare"])),
                                 3) for k in ("inapp", "action", "action_two_processes")}
        profiles = {}
        for name, runner in (("bare", lambda p: run_environs(bare, bench_environs(n, "ee"), p)),
                             ("inapp", lambda p: run_environs(prod, bench_environs(n, "ef"), p)),
                             ("action", lambda p: run_actions(prod, player, n, p))):
            prof = cProfile.Profile(time.process_time)
            runner(prof)
            profiles[name] = prof
            if args.dump:
                os.makedirs(args.dump, exist_ok=True)
                prof.dump_stats(os.path.join(args.dump, f"{name}.prof"))
    finally:
        redis.stop()

    print(f"in-process WSGI calls, CPU per request, {n} requests per loop, best of {args.repeat}:")
    for k, v in us.items():
        print(f"  {k:7s} {v:8.1f} us per request  ({v / us['bare']:.2f}x bare"
              + (f"; median of the rounds' ratios {median_ratio[k]:.2f}x)" if k in median_ratio
                 else ")"))
    for name, prof in profiles.items():
        print(f"\n== cProfile {name} ({n} requests): by own time")
        print("\n".join(top(prof, args.top, "tottime")))
        print(f"\n== cProfile {name}: by cumulative time")
        print("\n".join(top(prof, args.top, "cumulative")))
    print(json.dumps({"bench": "profile_requests", "requests": n, "repeat": args.repeat,
                      "cpu_us_per_request": us, "errors": errors,
                      "ratio_inapp_to_bare": round(us["inapp"] / us["bare"], 3),
                      "ratio_action_to_bare": round(us["action"] / us["bare"], 3),
                      "ratio_two_processes_to_action": round(
                          us["action_two_processes"] / us["action"], 3),
                      "median_round_ratio_to_bare": median_ratio,
                      "loadavg": [round(x, 2) for x in os.getloadavg()]}, sort_keys=True))


if __name__ == "__main__":
    main()
