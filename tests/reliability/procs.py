"""Processes the fault tests own: their own Redis-compatible server (AOF, so it can be killed
and restarted on the same data), their own gunicorn and their own RQ workers, so a kill -9 never
touches the session's shared fixtures. Every wait polls with a deadline."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import tempfile
import time
from contextlib import contextmanager
from pathlib import Path

import redis
import requests

from service import embedded

ROOT = Path(__file__).resolve().parent.parent.parent
BIN = Path(sys.executable).parent


def db(url: str, n: int) -> str:
    return url.rsplit("/", 1)[0] + f"/{n}"


def start_redis(data_dir, port: int | None = None,
                appendfsync: str = "everysec") -> embedded.EmbeddedServer:
    return embedded.start(data_dir, binary=os.environ.get("CARTOUCHE_TEST_REDIS_SERVER"),
                          unix_socket=False, port=port, appendfsync=appendfsync)


def port_of(server: embedded.EmbeddedServer) -> int:
    return int(server.url.rsplit(":", 1)[1].split("/")[0])


def wait_until(predicate, seconds: float, what: str, interval: float = 0.05):
    deadline = time.monotonic() + seconds
    while True:
        value = predicate()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {seconds}s waiting for {what}")
        time.sleep(interval)


class Proc:
    """A child process with its combined output in a log file."""

    def __init__(self, args, env, log_path: Path) -> None:
        self.log_path = log_path
        self._log = open(log_path, "w")
        self.p = subprocess.Popen(args, cwd=ROOT, env=env, stdout=self._log,
                                  stderr=subprocess.STDOUT,
                                  preexec_fn=embedded._die_with_parent)

    @property
    def pid(self) -> int:
        return self.p.pid

    def log(self) -> str:
        if not self._log.closed:
            self._log.flush()
        return self.log_path.read_text(errors="replace")

    def stop(self, timeout: float = 10, kill_children: bool = False) -> None:
        if kill_children:  # RQ work horses run in their own process group: not our signal
            for pid in children(self.pid):
                kill9(pid)
        if self.p.poll() is None:
            self.p.terminate()
            try:
                self.p.wait(timeout)
            except subprocess.TimeoutExpired:
                self.p.kill()
                self.p.wait()
        self._log.close()


def _env(redis_url: str, queue_url: str, extra: dict | None) -> dict:
    env = dict(os.environ, REDIS_URL=redis_url, QUEUE_URL=queue_url)
    env.update(extra or {})
    return env


def start_gunicorn(redis_url: str, queue_url: str, extra_env: dict | None = None,
                   workers: int = 2) -> tuple[Proc, str]:
    port = embedded.free_port()
    env = _env(redis_url, queue_url, {"WEB_CONCURRENCY": str(workers),
                                      "CARTOUCHE_SSE_KEEPALIVE_MS": "1000", **(extra_env or {})})
    log = Path(tempfile.mkdtemp(prefix="cartouche-rel-gunicorn-")) / "gunicorn.log"
    proc = Proc([str(BIN / "gunicorn"), "--config", "python:service.gunicorn_conf",
                 "--bind", f"127.0.0.1:{port}", "service.app:wsgi()"], env, log)
    url = f"http://127.0.0.1:{port}"

    def ready():
        if proc.p.poll() is not None:
            raise RuntimeError("gunicorn exited: " + proc.log()[-3000:])
        try:
            return requests.get(url + "/readyz", timeout=1).status_code == 200
        except requests.RequestException:
            return False

    wait_until(ready, 30, "gunicorn to answer /readyz", 0.1)
    return proc, url


def start_worker(redis_url: str, queue_url: str, *, scheduler: bool = False,
                 name: str | None = None, extra_env: dict | None = None) -> Proc:
    log = Path(tempfile.mkdtemp(prefix="cartouche-rel-worker-")) / "worker.log"
    args = [sys.executable, "-m", "workers.main"]
    if scheduler:
        args.append("--with-scheduler")
    if name:
        args += ["--name", name]
    return Proc(args, _env(redis_url, queue_url, extra_env), log)


@contextmanager
def service_pair(server_url: str, store_db: int, queue_db: int, env: dict):
    """A gunicorn and a worker with RQ's scheduler, both with ``env``, on two emptied
    databases of ``server_url`` (the session's shared pair keeps 0 and 1): yields
    ``(url, store_url, queue_url)``."""
    store, queues = db(server_url, store_db), db(server_url, queue_db)
    flush(store), flush(queues)
    web, url = start_gunicorn(store, queues, env)
    worker = start_worker(store, queues, scheduler=True, extra_env=env)
    try:
        yield url, store, queues
    finally:
        worker.stop()
        web.stop()


def children(pid: int) -> list[int]:
    """Direct children of ``pid`` (from /proc)."""
    out = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as f:
                fields = f.read().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[1]) == pid:
            out.append(int(entry))
    return out


def kill9(pid: int) -> None:
    try:
        os.kill(pid, signal.SIGKILL)
    except ProcessLookupError:
        pass


def pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    try:  # a zombie is dead for our purposes
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


def flush(url: str) -> None:
    c = redis.Redis.from_url(url)
    c.flushdb()
    c.close()


def response_head(sock: socket.socket) -> bytes:
    """A response read from ``sock``: its status line and headers, and its body when it gives
    a length (a chunked body, a stream's, is left unread); what came before a close, if the
    server closes first."""
    data = b""
    while b"\r\n\r\n" not in data:
        chunk = sock.recv(4096)
        if not chunk:
            return data
        data += chunk
    head, _, body = data.partition(b"\r\n\r\n")
    length = [int(line.split(b":")[1]) for line in head.split(b"\r\n")
              if line.lower().startswith(b"content-length:")]
    while length and len(body) < length[0]:
        body += sock.recv(4096)
    return head + b"\r\n\r\n" + body
