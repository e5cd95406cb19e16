"""Shared pieces of the benchmarks: a throwaway Redis-compatible server, a live gunicorn with the
production configuration, a tiny asyncio HTTP/1.1 keep-alive client, and statistics.

Same recipe as ``tests/conftest.py``: ``service.embedded.start`` (the embedded Valkey, AOF with
``appendfsync everysec``, exactly what ``make run`` starts), and gunicorn with
``--config python:service.gunicorn_conf`` (gevent workers, ``WEB_CONCURRENCY`` 2 unless set).
"""

from __future__ import annotations

import asyncio
import contextlib
import gc
import os
import platform
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import orjson

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from service import embedded  # noqa: E402


@contextlib.contextmanager
def no_gc_pauses():
    """A timed phase of a load generator written in Python: its own full garbage collection
    (15 ms measured after a pool of games was created) would stall every request in flight
    and count as the server's latency. Collected and frozen before the phase, off during it
    (a phase is seconds long: the cyclic garbage it leaves is collected after)."""
    gc.collect()
    gc.freeze()
    gc.disable()
    try:
        yield
    finally:
        gc.enable()
        gc.unfreeze()


def percentile(values, q: float) -> float:
    values = sorted(values)
    if not values:
        return float("nan")
    k = min(len(values) - 1, max(0, round(q * (len(values) - 1))))
    return values[k]


def lat_stats(ms: list[float]) -> dict:
    if not ms:
        return {"n": 0}
    return {"n": len(ms), "median_ms": round(statistics.median(ms), 2),
            "p90_ms": round(percentile(ms, .90), 2), "p99_ms": round(percentile(ms, .99), 2),
            "max_ms": round(max(ms), 2)}


def machine() -> dict:
    return {"python": platform.python_version(), "machine": platform.machine(),
            "cpus": os.cpu_count()}


class Redis:
    """The embedded server in a temporary directory (removed on stop)."""

    def __init__(self, unix_socket: bool = True) -> None:
        self.dir = tempfile.mkdtemp(prefix="cartouche-bench-redis-")
        self.server = embedded.start(self.dir, unix_socket=unix_socket)
        self.url = self.server.url

    def db(self, n: int) -> str:
        if self.url.startswith("unix://"):
            base = self.url.split("?", 1)[0]
            return f"{base}?db={n}"
        return self.url.rsplit("/", 1)[0] + f"/{n}"

    def stop(self) -> None:
        self.server.stop()
        shutil.rmtree(self.dir, ignore_errors=True)


class Gunicorn:
    """gunicorn with the production config file, on a free port."""

    def __init__(self, redis_url: str, queue_url: str, *, app: str = "service.api.bench:wsgi()",
                 env: dict | None = None) -> None:
        self.port = embedded.free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.log_path = Path(tempfile.mkdtemp(prefix="cartouche-bench-gunicorn-")) / "gunicorn.log"
        full_env = dict(os.environ, REDIS_URL=redis_url, QUEUE_URL=queue_url,
                        CARTOUCHE_BENCH_ENDPOINTS="1")
        full_env.setdefault("WEB_CONCURRENCY", "2")
        # The write rate limiter (when the app has one) stays on and does its work on every POST,
        # but with limits no load generator on one address can reach.
        full_env.setdefault("CARTOUCHE_RATE_LIMIT_WRITES_PER_MINUTE", "1000000000")
        full_env.setdefault("CARTOUCHE_RATE_LIMIT_IP_WRITES_PER_MINUTE", "1000000000")
        full_env.setdefault("CARTOUCHE_STORED_BYTES_PER_MINUTE", "1000000000000")
        full_env.setdefault("CARTOUCHE_IP_STORED_BYTES_PER_MINUTE", "1000000000000")
        # Likewise the stream caps: the SSE benchmarks open hundreds of streams from 127.0.0.1.
        full_env.setdefault("CARTOUCHE_SSE_MAX_STREAMS_PER_ADDRESS", "0")
        full_env.update(env or {})
        self._log = open(self.log_path, "w")
        self.proc = subprocess.Popen(
            [str(Path(sys.executable).parent / "gunicorn"), "--config",
             "python:service.gunicorn_conf", "--bind", f"127.0.0.1:{self.port}", app],
            cwd=ROOT, env=full_env, stdout=self._log, stderr=subprocess.STDOUT,
            preexec_fn=embedded._die_with_parent)
        self._wait_ready()

    def _wait_ready(self) -> None:
        import urllib.request

        deadline = time.monotonic() + 30
        while True:
            try:
                with urllib.request.urlopen(self.url + "/readyz", timeout=1) as r:
                    if r.status == 200:
                        return
            except OSError:
                pass
            if self.proc.poll() is not None or time.monotonic() > deadline:
                self.proc.kill()
                raise RuntimeError("gunicorn did not start: " + self.log_path.read_text()[-3000:])
            time.sleep(0.1)

    def worker_pids(self) -> list[int]:
        out = subprocess.run(["pgrep", "-P", str(self.proc.pid)], capture_output=True, text=True)
        return [int(p) for p in out.stdout.split()]

    def stop(self) -> None:
        stop_process(self.proc)
        self._log.close()
        drop_log(self.log_path.parent)


#: Set (to anything) to keep the servers' and workers' logs of a benchmark: by default each is
#: removed when its process is stopped (P1 writes ~25 MB of access lines a run).
KEEP_LOGS = "CARTOUCHE_BENCH_KEEP_LOGS"


def drop_log(folder: Path) -> None:
    """Remove a stopped process's log folder, or say where it is with ``KEEP_LOGS``."""
    if os.environ.get(KEEP_LOGS):
        print(f"log kept: {folder}", file=sys.stderr)
    else:
        shutil.rmtree(folder, ignore_errors=True)


def stop_process(proc: subprocess.Popen) -> None:
    """SIGTERM, then SIGKILL after 10 s."""
    proc.terminate()
    try:
        proc.wait(10)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()


class Conn:
    """One keep-alive HTTP/1.1 connection (asyncio streams). Just enough HTTP for the API:
    Content-Length bodies (the API never chunks its JSON answers)."""

    def __init__(self, host: str, port: int) -> None:
        self.host, self.port = host, port
        self.reader = self.writer = None

    async def open(self) -> None:
        self.reader, self.writer = await asyncio.open_connection(self.host, self.port)

    async def request(self, method: str, path: str, body=None, headers: dict | None = None
                      ) -> tuple[int, bytes]:
        if self.writer is None:
            await self.open()
        payload = orjson.dumps(body) if body is not None else b""
        lines = [f"{method} {path} HTTP/1.1", f"Host: {self.host}:{self.port}",
                 f"Content-Length: {len(payload)}"]
        if body is not None:
            lines.append("Content-Type: application/json")
        for k, v in (headers or {}).items():
            lines.append(f"{k}: {v}")
        self.writer.write(("\r\n".join(lines) + "\r\n\r\n").encode() + payload)
        head = await self.reader.readuntil(b"\r\n\r\n")
        status_line, *header_lines = head.decode("latin-1").split("\r\n")
        status = int(status_line.split(" ", 2)[1])
        length, close = 0, False
        for h in header_lines:
            name, _, value = h.partition(":")
            name = name.strip().lower()
            if name == "content-length":
                length = int(value)
            elif name == "connection" and value.strip().lower() == "close":
                close = True
        data = await self.reader.readexactly(length) if length else b""
        if close:
            self.close()
        return status, data

    def close(self) -> None:
        if self.writer is not None:
            self.writer.close()
        self.reader = self.writer = None


class SseRecorder(asyncio.Protocol):
    """One event stream's connection that only timestamps the bytes it receives (parsed after
    the run, so that the load generator stays cheap)."""

    def __init__(self) -> None:
        self.chunks: list[tuple[float, float, bytes]] = []  # (perf time, wall time, bytes)
        self.connected = asyncio.get_running_loop().create_future()
        self.closed = False

    def connection_made(self, transport) -> None:
        self.transport = transport
        self.connected.set_result(True)

    def data_received(self, data: bytes) -> None:
        self.chunks.append((time.perf_counter(), time.time(), data))

    def connection_lost(self, exc) -> None:
        self.closed = True

    def matches(self, pattern: re.Pattern[bytes]) -> list[tuple[re.Match, float, float]]:
        """Each match of ``pattern`` in what was received, with the perf and wall times of the
        chunk that completed it. (The body is chunked: an SSE message is one HTTP chunk, so its
        lines are contiguous.)"""
        out, buf, pos = [], b"", 0
        for t, wall, data in self.chunks:
            buf += data
            for m in pattern.finditer(buf, pos):
                out.append((m, t, wall))
                pos = m.end()
        return out


async def open_sse(host: str, port: int, path: str,
                   headers: dict | None = None) -> SseRecorder:
    """A :class:`SseRecorder` on ``GET path`` (HTTP/1.1, the response read as it comes)."""
    loop = asyncio.get_running_loop()
    _, proto = await loop.create_connection(SseRecorder, host, port)
    await proto.connected
    lines = [f"GET {path} HTTP/1.1", f"Host: {host}:{port}", "Accept: text/event-stream",
             *(f"{k}: {v}" for k, v in (headers or {}).items())]
    proto.transport.write(("\r\n".join(lines) + "\r\n\r\n").encode())
    return proto


class Workers:
    """``n`` RQ workers (``python -m workers.main``), the first with RQ's scheduler; ``env``
    added to this process's environment."""

    def __init__(self, n: int, redis_url: str, queue_url: str, env: dict | None = None) -> None:
        full_env = dict(os.environ, REDIS_URL=redis_url, QUEUE_URL=queue_url, **(env or {}))
        self.log_dir = Path(tempfile.mkdtemp(prefix="cartouche-bench-workers-"))
        self.log = open(self.log_dir / "workers.log", "w")
        self.procs = [subprocess.Popen(
            [sys.executable, "-m", "workers.main"] + (["--with-scheduler"] if i == 0 else []),
            cwd=ROOT, env=full_env, stdout=self.log, stderr=subprocess.STDOUT,
            preexec_fn=embedded._die_with_parent) for i in range(n)]

    def stop(self) -> None:
        for p in self.procs:
            p.terminate()
        for p in self.procs:
            try:
                p.wait(10)
            except subprocess.TimeoutExpired:
                p.kill()
        self.log.close()
        drop_log(self.log_dir)


def split_url(url: str) -> tuple[str, int]:
    hostport = url.split("://", 1)[1].rstrip("/")
    host, port = hostport.rsplit(":", 1)
    return host, int(port)


def ratio(a: float, b: float) -> float:
    return round(a / b, 3) if b else float("nan")


class Profiler:
    """py-spy (sampling, from outside) on some processes for a while: collapsed stacks, then the
    top functions by self and by inclusive samples. ``--profile`` in the benchmarks."""

    def __init__(self, pids: list[int], seconds: float, out_dir: str | None = None,
                 rate: int = 200) -> None:
        self.dir = Path(out_dir or tempfile.mkdtemp(prefix="cartouche-bench-profile-"))
        self.dir.mkdir(parents=True, exist_ok=True)
        spy = str(Path(sys.executable).parent / "py-spy")
        self.files = []
        self.procs = []
        for pid in pids:
            f = self.dir / f"pyspy-{pid}.txt"
            self.files.append(f)
            self.procs.append(subprocess.Popen(
                [spy, "record", "-p", str(pid), "-d", str(int(seconds)), "-r", str(rate),
                 "-f", "raw", "-o", str(f), "--nonblocking"],
                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))

    def report(self, top: int = 25) -> dict:
        for p in self.procs:
            try:
                p.wait(60)
            except subprocess.TimeoutExpired:
                p.kill()
        own: dict[str, int] = {}
        incl: dict[str, int] = {}
        total = 0
        for f in self.files:
            if not f.exists():
                continue
            for line in f.read_text().splitlines():
                stack, _, n = line.rpartition(" ")
                if not stack:
                    continue
                n = int(n)
                frames = stack.split(";")
                total += n
                leaf = frames[-1]
                own[leaf] = own.get(leaf, 0) + n
                for fr in set(frames):
                    incl[fr] = incl.get(fr, 0) + n

        def topn(d):
            return [(round(100 * v / total, 1), k) for k, v in
                    sorted(d.items(), key=lambda kv: -kv[1])[:top]] if total else []

        return {"samples": total, "self_pct": topn(own), "inclusive_pct": topn(incl),
                "files": [str(f) for f in self.files]}


def print_profile(prof: dict, title: str) -> None:
    print(f"  profile ({title}): {prof['samples']} samples, files {prof['files']}")
    print("    top self:")
    for pct, name in prof["self_pct"][:15]:
        print(f"      {pct:5.1f}%  {name}")
    print("    top inclusive:")
    for pct, name in prof["inclusive_pct"][:30]:
        print(f"      {pct:5.1f}%  {name}")


def cpu_seconds(pids: list[int]) -> float:
    """utime + stime of these processes (their threads included), in seconds."""
    tick = os.sysconf("SC_CLK_TCK")
    total = 0
    for pid in pids:
        try:
            fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        total += int(fields[11]) + int(fields[12])
    return total / tick


def _info(url: str, section: str) -> dict:
    import redis as redis_py

    r = redis_py.Redis.from_url(url)
    try:
        return r.info(section)
    finally:
        r.close()


def redis_calls(url: str) -> dict[str, int]:
    return {k.removeprefix("cmdstat_"): v["calls"]
            for k, v in _info(url, "commandstats").items()}


def aof_state(url: str) -> tuple[int, int, bool]:
    """The server's AOF rewrites so far, the AOF's size, and whether a rewrite is running."""
    info = _info(url, "persistence")
    return (info.get("aof_rewrites", 0), info.get("aof_current_size", 0),
            bool(info.get("aof_rewrite_in_progress")))


def rewrite_aof(url: str, timeout: float = 60.0) -> float:
    """Rewrite the server's AOF now (``BGREWRITEAOF``) and wait until it has ended: the seconds
    it took. The AOF is then its base alone, so Redis's automatic rewrite (when the AOF has
    doubled since the last one, and is over ``auto-aof-rewrite-min-size``) is as far away as
    the data allow, whatever the phases before wrote."""
    import redis as redis_py

    r = redis_py.Redis.from_url(url)
    t0 = time.perf_counter()
    try:
        before = r.info("persistence").get("aof_rewrites", 0)
        try:
            r.bgrewriteaof()
        except redis_py.ResponseError:  # one already running: it counts as well
            before -= 1
        while True:
            info = r.info("persistence")
            if (info.get("aof_rewrites", 0) > before and not info.get("aof_rewrite_in_progress")
                    and not info.get("aof_rewrite_scheduled")):
                return time.perf_counter() - t0
            if time.perf_counter() - t0 > timeout:
                raise RuntimeError(f"the AOF rewrite did not end within {timeout} s")
            time.sleep(0.02)
    finally:
        r.close()


class Meter:
    """CPU of the gunicorn workers, of the Redis server and of this process, and the Redis
    commands run, between start() and stop(); the AOF rewrites that started or ran meanwhile
    (``aof_rewrites``: each forks the server, and its child takes a core for a fraction of a
    second, which the requests of that moment wait for) and the AOF bytes a request wrote (None
    across a rewrite, which starts the count again); and how the workers' CPU split between them
    (``worker_cpu_share``, largest first: the kernel hashes each new connection onto a worker,
    so a phase's clients are rarely split evenly, and the busier worker sets the tail; at
    saturation both workers are busy whatever the split, so it reads ~0.5 there and shows the
    split below saturation only)."""

    def __init__(self, gun: "Gunicorn", redis: "Redis") -> None:
        self.gun, self.redis = gun, redis

    def start(self) -> None:
        self.pids = self.gun.worker_pids()
        self.each0 = [cpu_seconds([pid]) for pid in self.pids]
        self.c0 = (sum(self.each0), cpu_seconds([self.redis.server.process.pid]),
                   time.process_time())
        self.r0 = redis_calls(self.redis.url)
        self.aof0 = aof_state(self.redis.url)

    def stop(self, requests: int) -> dict:
        each1 = [cpu_seconds([pid]) for pid in self.pids]
        c1 = (sum(each1), cpu_seconds([self.redis.server.process.pid]), time.process_time())
        r1 = redis_calls(self.redis.url)
        aof1 = aof_state(self.redis.url)
        # the rewrites that ended meanwhile, and one still running at the end
        rewrites = aof1[0] - self.aof0[0] + aof1[2]
        each = [b - a for a, b in zip(self.each0, each1)]
        n = max(requests, 1)
        calls = {k: round((v - self.r0.get(k, 0)) / n, 2) for k, v in r1.items()
                 if v - self.r0.get(k, 0) > 0 and k not in ("info",)}
        return {"cpu_ms_per_request": {
                    "gunicorn": round(1000 * (c1[0] - self.c0[0]) / n, 3),
                    "redis": round(1000 * (c1[1] - self.c0[1]) / n, 3),
                    "client": round(1000 * (c1[2] - self.c0[2]) / n, 3)},
                "redis_calls_per_request": dict(sorted(calls.items())),
                "aof_rewrites": rewrites,
                "aof_bytes_per_request": (None if rewrites else
                                          round((aof1[1] - self.aof0[1]) / n)),
                "worker_cpu_share": sorted((round(c / (sum(each) or 1), 3) for c in each),
                                           reverse=True)}
