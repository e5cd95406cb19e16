"""Against boardgame.io: the peer our users would pick, on the same machine, in the same run.

Installs boardgame.io 0.50.2 with npm into a temporary folder (its dependencies bring
socket.io and socket.io-client; ``node-persist`` for its FlatFile storage), copies the Node
sources of ``bench/peer/`` there and runs, alternating, for ``--rounds`` rounds:

* ``bgio-memory``: ``bench/peer/server.js`` (boardgame.io's ``Server``, ``NODE_ENV=production``)
  with its in-memory storage (nothing durable; one Node process);
* ``bgio-flatfile``: the same with its ``FlatFile`` storage (``node-persist``, one file per
  match key, in a temporary folder);
* ``cartouche``: Diamant actions (``POST /v1/games/{id}/actions``) on one gunicorn with the
  production configuration and the embedded Valkey (AOF ``everysec``: every action durable as
  in production), played as in ``bench/p1_throughput.py`` (``run_service``);
* ``flask_floor``: P1's floor, a bare Flask app (``bench/bare_app.py``) doing one stream read
  and one durable append per request (``POST /bench/append/<key>``, ``run_baseline``) on a
  second gunicorn with the same configuration and the same Valkey: what any durable action
  costs on this stack before any game or API code;
* ``flask_noop``: the ceiling of the stack itself -- ``GET /readyz`` of the same bare app (a
  constant answer, no Redis), the same number of keep-alive clients. No action can be served
  faster than a request that does nothing.

The peer game (``bench/peer/game.js``) is the comparable one: 4 seats choosing at the same
time (boardgame.io's ``activePlayers: ALL``), each seat's pending choice hidden from the others
(``playerView``), a random draw per step (the ``random`` of its ctx), 30 steps. Its load
(``bench/peer/driver.js``) is ``--clients`` seat clients (boardgame.io's own ``Client`` over
socket.io, websocket transport), 4 a match, matches created and joined beforehand; Cartouche's is
the same number of keep-alive HTTP clients, 4 seats a game, games created beforehand.

Printed per system: moves/s (requests/s for the no-op; median over rounds, and each round),
p50/p99 latency (client side; for boardgame.io from the send of a move to the update that shows
it), and the server's CPU per move (``/proc``: the Node process; gunicorn's workers plus the
Redis server). One JSON line last, with the load average.

    .venv/bin/python bench/peer_boardgameio.py [--clients 32] [--seconds 8] [--rounds 3]

Skips (exit 0, with a message) where ``node`` or ``npm`` is missing or npm cannot install.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from _harness import (Conn, Gunicorn, Redis, cpu_seconds, embedded,  # noqa: E402
                      lat_stats, machine, no_gc_pauses, ratio, split_url,
                      stop_process)
from p1_throughput import create_games, run_baseline, run_service  # noqa: E402

HERE = Path(__file__).resolve().parent
PEER = HERE / "peer"
PACKAGES = ["boardgame.io@0.50.2", "node-persist@3"]


def skip(message: str) -> None:
    print(f"peer_boardgameio: skipped: {message}")
    print(json.dumps({"bench": "peer_boardgameio", "skipped": message}))
    sys.exit(0)


def install(folder: Path) -> None:
    if not shutil.which("node") or not shutil.which("npm"):
        skip("node and npm are needed (boardgame.io is a Node package)")
    done = subprocess.run(["npm", "install", "--no-audit", "--no-fund", "--loglevel=error",
                           *PACKAGES], cwd=folder, capture_output=True, text=True)
    if done.returncode != 0:
        skip(f"npm install failed: {done.stderr.strip()[-500:]}")
    for src in PEER.glob("*.js"):
        shutil.copy(src, folder / src.name)


class NodeServer:
    def __init__(self, folder: Path, storage: str) -> None:
        self.port = embedded.free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.data = tempfile.mkdtemp(prefix="cartouche-bench-bgio-")
        self.proc = subprocess.Popen(
            ["node", "server.js", str(self.port), storage, self.data], cwd=folder,
            env=dict(os.environ, NODE_ENV="production"), stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT, text=True, preexec_fn=embedded._die_with_parent)
        line = self.proc.stdout.readline()
        if "listening" not in line:
            self.stop()
            raise RuntimeError(f"boardgame.io server did not start: {line}")

    def stop(self) -> None:
        stop_process(self.proc)
        shutil.rmtree(self.data, ignore_errors=True)


def run_bgio(folder: Path, storage: str, clients: int, seconds: float) -> dict:
    server = NodeServer(folder, storage)
    try:
        out = subprocess.run(["node", "driver.js", server.url, str(clients), str(seconds),
                              str(server.proc.pid)], cwd=folder, capture_output=True,
                             text=True, timeout=600)
    finally:
        server.stop()
    if out.returncode != 0:
        raise RuntimeError(f"driver failed: {out.stderr[-2000:]}")
    res = json.loads(out.stdout.strip().splitlines()[-1])
    moves = res["moves"]
    return {"moves_per_s": round(moves / res["wall_s"], 1), "moves": moves,
            "p50_ms": round(res["p50_ms"], 2) if res["p50_ms"] is not None else None,
            "p99_ms": round(res["p99_ms"], 2) if res["p99_ms"] is not None else None,
            "server_cpu_ms_per_move": round(1000 * res["server_cpu_s"] / max(moves, 1), 3),
            "driver_cpu_ms_per_move": round(1000 * res["driver_cpu_s"] / max(moves, 1), 3),
            "errors": res["errors"],
            "matches_finished": res["matches_finished"]}


def _row(lat: list[float], wall: float, cpu: float, errors: int, **extra) -> dict:
    """One phase of a system measured here: moves/s, latency and server CPU a move."""
    stats = lat_stats(lat)
    n = len(lat)
    return {"moves_per_s": round(n / wall, 1), "moves": n, "p50_ms": stats.get("median_ms"),
            "p99_ms": stats.get("p99_ms"),
            "server_cpu_ms_per_move": round(1000 * cpu / max(n, 1), 3), "errors": errors,
            **extra}


async def _measured(gun: Gunicorn, redis: Redis | None, phase) -> tuple:
    """``await phase`` and the CPU seconds it cost ``gun``'s workers (and ``redis``)."""
    pids = gun.worker_pids() + ([redis.server.process.pid] if redis else [])
    with no_gc_pauses():
        c0 = cpu_seconds(pids)
        out = await phase
    return out, cpu_seconds(pids) - c0


async def run_cartouche(gun: Gunicorn, redis: Redis, clients: int, seconds: float,
                        rnd: random.Random) -> dict:
    pool = await create_games(gun.url, clients * 2 + int(seconds * 100))
    (ph, wall), cpu = await _measured(gun, redis, run_service(gun.url, clients, seconds, pool,
                                                              rnd))
    return _row(ph.lat, wall, cpu, ph.errors, games_finished=ph.games_finished,
                out_of_games=not pool)


async def run_floor(gun: Gunicorn, redis: Redis, clients: int, seconds: float,
                    tag: str) -> dict:
    """P1's floor: ``POST /bench/append/<key>`` of the bare app on ``gun``."""
    (ph, wall), cpu = await _measured(gun, redis, run_baseline(gun.url, clients, seconds, tag))
    return _row(ph.lat, wall, cpu, ph.errors)


async def run_noop(gun: Gunicorn, clients: int, seconds: float) -> dict:
    """``GET /readyz`` of the bare app on ``gun``, ``clients`` keep-alive clients."""
    host, port = split_url(gun.url)
    lat: list[float] = []
    errors = 0
    stop_at = time.perf_counter() + seconds

    async def client():
        nonlocal errors
        c = Conn(host, port)
        await c.open()
        while time.perf_counter() < stop_at:
            t0 = time.perf_counter()
            st, _ = await c.request("GET", "/readyz")
            lat.append((time.perf_counter() - t0) * 1000)
            errors += st != 200
        c.close()

    async def phase():
        t0 = time.perf_counter()
        await asyncio.gather(*(client() for _ in range(clients)))
        return time.perf_counter() - t0

    wall, cpu = await _measured(gun, None, phase())
    return _row(lat, wall, cpu, errors)


def summary(rounds: list[dict]) -> dict:
    def med(key):
        values = [r[key] for r in rounds if r.get(key) is not None]
        return round(statistics.median(values), 3) if values else None

    return {"moves_per_s": med("moves_per_s"),
            "moves_per_s_per_round": [r["moves_per_s"] for r in rounds],
            "p50_ms": med("p50_ms"), "p99_ms": med("p99_ms"),
            "server_cpu_ms_per_move": med("server_cpu_ms_per_move"), "rounds": rounds}


async def main_async(args, folder: Path) -> dict:
    load_before = os.getloadavg()
    redis = Redis()
    gun = Gunicorn(redis.db(0), redis.db(1))
    bare = Gunicorn(redis.db(0), redis.db(1), app="bench.bare_app:wsgi()")
    rnd = random.Random(args.seed)
    results: dict[str, list[dict]] = {"bgio_memory": [], "bgio_flatfile": [], "cartouche": [],
                                      "flask_floor": [], "flask_noop": []}
    try:
        # warm-up: imports, caches, connection pools
        await run_cartouche(gun, redis, args.clients, 2.0, rnd)
        await run_noop(bare, args.clients, 1.0)
        await run_floor(bare, redis, args.clients, 1.0, "f0")
        order = list(results)
        for r in range(args.rounds):
            # alternating, the order turned each round so that drift hits all of them alike
            for name in order[r % len(order):] + order[:r % len(order)]:
                if name == "cartouche":
                    results[name].append(await run_cartouche(gun, redis, args.clients,
                                                             args.seconds, rnd))
                elif name == "flask_floor":
                    results[name].append(await run_floor(bare, redis, args.clients,
                                                         args.seconds, f"f{r + 1:x}"))
                elif name == "flask_noop":
                    results[name].append(await run_noop(bare, args.clients, args.seconds))
                else:
                    results[name].append(run_bgio(folder, name.removeprefix("bgio_"),
                                                  args.clients, args.seconds))
    finally:
        gun.stop()
        bare.stop()
        redis.stop()
    out = {name: summary(rounds) for name, rounds in results.items()}
    C, M, F = out["cartouche"], out["bgio_memory"], out["bgio_flatfile"]
    B, N = out["flask_floor"], out["flask_noop"]
    return {"bench": "peer_boardgameio", "clients": args.clients,
            "seconds_per_phase": args.seconds, "rounds": args.rounds,
            "boardgameio": PACKAGES[0], **out,
            "ratio_vs_memory": ratio(C["moves_per_s"], M["moves_per_s"]),
            "ratio_vs_flatfile": ratio(C["moves_per_s"], F["moves_per_s"]),
            "rounds_ratio_vs_memory": [ratio(c["moves_per_s"], m["moves_per_s"]) for c, m in
                                       zip(C["rounds"], M["rounds"])],
            # the stack against the peer: P1's floor (a durable append), a request doing nothing
            "floor_ratio_vs_memory": ratio(B["moves_per_s"], M["moves_per_s"]),
            "noop_ratio_vs_memory": ratio(N["moves_per_s"], M["moves_per_s"]),
            "loadavg": {"before": [round(x, 2) for x in load_before],
                        "after": [round(x, 2) for x in os.getloadavg()]},
            "node": subprocess.run(["node", "--version"], capture_output=True,
                                   text=True).stdout.strip(),
            **machine()}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--clients", type=int, default=32)
    ap.add_argument("--seconds", type=float, default=8.0)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--seed", type=int, default=1)
    args = ap.parse_args()
    folder = Path(tempfile.mkdtemp(prefix="cartouche-bench-bgio-npm-"))
    try:
        t0 = time.monotonic()
        install(folder)
        print(f"boardgame.io installed in {folder} ({time.monotonic() - t0:.0f} s)")
        res = asyncio.run(main_async(args, folder))
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    print(f"Against boardgame.io: {args.clients} clients, 4 seats a game, {args.rounds} rounds x "
          f"{args.seconds:g} s per system, load average {res['loadavg']['before']} -> "
          f"{res['loadavg']['after']}")
    for name, label in (("cartouche", "Cartouche Diamant actions (durable)"),
                        ("bgio_memory", "boardgame.io, in-memory storage"),
                        ("bgio_flatfile", "boardgame.io, FlatFile storage"),
                        ("flask_floor", "bare Flask read + append (P1's floor)"),
                        ("flask_noop", "Flask no-op GET, same gunicorn")):
        X = res[name]
        print(f"  {label:38s} {X['moves_per_s']:8.1f} moves/s (rounds "
              f"{X['moves_per_s_per_round']})  p50 {X['p50_ms']} ms  p99 {X['p99_ms']} ms  "
              f"server CPU {X['server_cpu_ms_per_move']} ms/move")
    print(f"  Cartouche / boardgame.io in-memory: {res['ratio_vs_memory']} (rounds "
          f"{res['rounds_ratio_vs_memory']}); / FlatFile: {res['ratio_vs_flatfile']}")
    print(f"  P1's floor / boardgame.io in-memory: {res['floor_ratio_vs_memory']}; "
          f"Flask no-op request / boardgame.io in-memory: {res['noop_ratio_vs_memory']}")
    print(json.dumps(res, sort_keys=True))


if __name__ == "__main__":
    main()
