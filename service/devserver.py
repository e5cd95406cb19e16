"""``make run``: the whole service on one machine, supervised.

Starts (unless ``REDIS_URL`` is set) an embedded Valkey server with AOF under ``./var/redis``,
then gunicorn serving the API on ``HOST``:``PORT`` and one RQ worker with its scheduler. A child
that dies, whatever killed it, is started again (the embedded server on the same address and
data), after a pause that doubles with each quick death (1 s, 2 s, 4 s ... at most
:data:`MAX_BACKOFF_S`; back to 1 s once a child has run :data:`HEALTHY_S`). Only Ctrl-C (or
SIGTERM), or this process's parent dying, stops everything, in order; every child also dies
with this process (``PR_SET_PDEATHSIG``), even on ``kill -9``.

The console is for a person: logs in text (``CARTOUCHE_LOG_FORMAT`` unless set), one access
line per request (request id, method, path, status, duration), RQ's per-job lines off
(``workers.main``). gunicorn and the worker share one metrics directory
(``service.metricsdir``: ``./var/metrics`` unless ``PROMETHEUS_MULTIPROC_DIR`` or
``CARTOUCHE_METRICS_DIR`` is set; a previous run's files are removed at start), so
``/metrics`` counts the worker's jobs too.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable
from urllib.parse import urlparse

from . import embedded, metricsdir
from .config import redis_appendfsync, redis_maxmemory

#: The longest pause before starting a child that keeps dying again.
MAX_BACKOFF_S = 30.0
#: A child that ran this long before it died is restarted after the shortest pause.
HEALTHY_S = 60.0


@dataclass
class Supervised:
    """One child process, started by ``start`` and started again when it exits."""

    name: str
    start: Callable[[], subprocess.Popen]
    process: subprocess.Popen | None = None
    started_at: float = 0.0
    #: quick deaths in a row (the backoff's exponent)
    failures: int = 0
    #: when to start it again (None: it is running)
    restart_at: float | None = field(default=None)

    def launch(self, now: float) -> None:
        self.process = self.start()
        self.started_at, self.restart_at = now, None

    def check(self, now: float) -> None:
        """Start the child again if it has died and its pause is over."""
        if self.restart_at is None and self.process is not None \
                and self.process.poll() is not None:
            self.failures = 0 if now - self.started_at >= HEALTHY_S else self.failures + 1
            delay = min(MAX_BACKOFF_S, 2.0 ** max(self.failures - 1, 0))
            print(f"cartouche: {self.name} exited with {self.process.returncode}; starting it "
                  f"again in {delay:g} s", file=sys.stderr, flush=True)
            self.restart_at = now + delay
        if self.restart_at is not None and now >= self.restart_at:
            try:
                self.launch(now)
            except Exception as exc:  # noqa: BLE001 - e.g. the server's address still busy
                print(f"cartouche: {self.name} did not start ({exc}); trying again",
                      file=sys.stderr, flush=True)
                self.failures += 1
                self.restart_at = now + min(MAX_BACKOFF_S, 2.0 ** self.failures)

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)

    def wait(self) -> None:
        if self.process is None:
            return
        try:
            self.process.wait(15)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()


def _spawn(args: list[str], env: dict) -> Callable[[], subprocess.Popen]:
    return lambda: subprocess.Popen(args, env=env, preexec_fn=embedded._die_with_parent)


def _embedded(data_dir: Path) -> tuple[str, Callable[[], subprocess.Popen]]:
    """The embedded server's URL, and how to start it (again) on that URL and data, with
    ``maxmemory`` CARTOUCHE_REDIS_MAXMEMORY (past it writes answer 503 ``store_full``) and
    ``appendfsync`` CARTOUCHE_REDIS_APPENDFSYNC."""
    maxmemory, appendfsync = redis_maxmemory(), redis_appendfsync()
    first = embedded.start(data_dir, maxmemory=maxmemory, appendfsync=appendfsync)
    port = urlparse(first.url).port if first.url.startswith("redis://") else None
    started = [first]

    def start() -> subprocess.Popen:
        if started:
            return started.pop().process
        return embedded.start(data_dir, port=port, maxmemory=maxmemory,
                              appendfsync=appendfsync).process

    return first.url, start


def main() -> int:
    root = Path(os.environ.get("CARTOUCHE_HOME", Path.cwd()))
    host = os.environ.get("HOST", "127.0.0.1")
    port = os.environ.get("PORT", "8000")
    env = dict(os.environ)
    env.setdefault("CARTOUCHE_LOG_FORMAT", "text")
    env.setdefault("CARTOUCHE_METRICS_DIR", str(root / "var" / "metrics"))
    metricsdir.prepare(env)
    children: list[Supervised] = []
    if not env.get("REDIS_URL"):
        env["REDIS_URL"], start_server = _embedded(root / "var" / "redis")
        children.append(Supervised("valkey", start_server))
        print(f"cartouche: embedded Valkey on {env['REDIS_URL']} (AOF in "
              f"{root / 'var' / 'redis'})", flush=True)
    else:
        print("cartouche: using REDIS_URL from the environment", flush=True)
    bin_dir = Path(sys.executable).parent
    children.append(Supervised("gunicorn", _spawn(
        [str(bin_dir / "gunicorn"), "--config", "python:service.gunicorn_conf",
         "--bind", f"{host}:{port}", "service.app:wsgi()"], env)))
    children.append(Supervised("worker", _spawn(
        [sys.executable, "-m", "workers.main", "--with-scheduler"], env)))
    now = time.monotonic()
    for child in children:
        child.launch(now)
    print(f"cartouche: serving http://{host}:{port}/ (docs at /docs); Ctrl-C stops", flush=True)

    stopping = False

    def stop(signum, frame):  # noqa: ARG001
        nonlocal stopping
        stopping = True

    signal.signal(signal.SIGINT, stop)
    signal.signal(signal.SIGTERM, stop)
    parent = os.getppid()
    while not stopping:
        if os.getppid() != parent:
            print("cartouche: the parent process died; stopping", file=sys.stderr, flush=True)
            break
        for child in children:
            child.check(time.monotonic())
        time.sleep(0.2)
    for child in reversed(children):  # the worker and the API first, the store last
        child.stop()
        child.wait()
    print("cartouche: stopped", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
