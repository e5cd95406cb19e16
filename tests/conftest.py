"""Fixtures: a real, throwaway Redis-compatible server (never a mock), the app, a live gunicorn.

The server binary is the embedded Valkey unless CARTOUCHE_TEST_REDIS_SERVER names another
(``make test`` runs the store and API tests again with Debian's redis-server that way).
"""

from __future__ import annotations

import atexit
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest
import redis
import requests

from service import embedded
from service.app import create_app
from service.config import Config

ROOT = Path(__file__).resolve().parent.parent

# Load tests hammer one game from one address; the rate limits have their own tests
# (tests/reliability/test_ratelimit.py) and are lifted out of the way of every other test.
os.environ.setdefault("CARTOUCHE_RATE_LIMIT_WRITES_PER_MINUTE", "100000000")
os.environ.setdefault("CARTOUCHE_RATE_LIMIT_IP_WRITES_PER_MINUTE", "100000000")
os.environ.setdefault("CARTOUCHE_RATE_LIMIT_VERIFIES_PER_MINUTE", "100000000")
os.environ.setdefault("CARTOUCHE_STORED_BYTES_PER_MINUTE", "100000000000")
os.environ.setdefault("CARTOUCHE_IP_STORED_BYTES_PER_MINUTE", "100000000000")
# Likewise the per-address cap on open event streams (tests/api/test_stream_caps.py has its own).
os.environ.setdefault("CARTOUCHE_SSE_MAX_STREAMS_PER_ADDRESS", "0")


def _signing_key_file() -> str:
    """One Ed25519 key for the session's servers: the store is emptied between tests, and a
    key kept there would differ between processes that read it before and after."""
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

    folder = tempfile.mkdtemp(prefix="cartouche-test-key-")
    # Removed when this process ends: with pytest-xdist it is the controller, whose workers
    # inherit the variable and are gone by then.
    atexit.register(shutil.rmtree, folder, ignore_errors=True)
    path = Path(folder) / "signing.pem"
    path.write_bytes(Ed25519PrivateKey.generate().private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
        serialization.NoEncryption()))
    return str(path)


if "CARTOUCHE_SIGNING_KEY" not in os.environ:
    os.environ["CARTOUCHE_SIGNING_KEY"] = _signing_key_file()


#: Test folders whose tests start fleets of processes (servers killed and restarted, thousands of
#: connections, a Redis Cluster) and bound how long things take: ``make test`` runs them alone,
#: after the rest has run on several pytest workers (pytest-xdist).
SERIAL = ("reliability", "cluster")


def pytest_collection_modifyitems(items):
    for item in items:
        # Tests that use the server are the "redis" tests (the ones re-run against Redis 7).
        if {"redis_server", "redis_url", "app", "client", "live_url", "svc", "worker"} \
                & set(getattr(item, "fixturenames", ())):
            item.add_marker(pytest.mark.redis)
        if Path(item.path).relative_to(ROOT / "tests").parts[0] in SERIAL:
            item.add_marker(pytest.mark.serial)


@pytest.fixture(scope="session")
def redis_server():
    data = tempfile.mkdtemp(prefix="cartouche-test-redis-")
    server = embedded.start(data, binary=os.environ.get("CARTOUCHE_TEST_REDIS_SERVER"),
                            unix_socket=False)
    yield server
    server.stop()
    shutil.rmtree(data, ignore_errors=True)


def _db(url: str, db: int) -> str:
    return url.rsplit("/", 1)[0] + f"/{db}"


#: The databases of the tests' Redis server no process a test starts ever reads. The processes
#: some tests keep alive (the session's ``worker`` on db 0 and 1; a module's service pair, on
#: databases of its own) work on their databases until they stop, and a worker's sweep queues
#: and runs the jobs of every active game there, advances its tournaments and moves the sweep's
#: cursor: a test that runs the sweep, the bots or the tournaments itself, or counts what a queue
#: holds, is marked ``unswept`` and its ``redis_url`` and ``queue_url`` are these.
PRIVATE_STORE_DB, PRIVATE_QUEUE_DB = 2, 3

#: 2100-01-01T00:00:00Z, where the clocks the tests inject start: after any real now, so that a
#: worker the session keeps alive, sweeping by the real clock, never finds a game or a table of a
#: test's injected clock overdue, idle or expired.
INJECTED_EPOCH_MS = 4_102_444_800_000


class InjectedClock:
    """A service's ``now_ms`` that a test moves by hand (``clock.t += ms``)."""

    def __init__(self) -> None:
        self.t = INJECTED_EPOCH_MS

    def __call__(self) -> int:
        return self.t


def _unswept(request) -> bool:
    return request.node.get_closest_marker("unswept") is not None


def _emptied(redis_server, db: int) -> str:
    url = _db(redis_server.url, db)
    client = redis.Redis.from_url(url)
    client.flushdb()
    client.close()
    return url


@pytest.fixture
def redis_url(request, redis_server):
    """The event store (db 0), emptied for each test; :data:`PRIVATE_STORE_DB` if the test is
    marked ``unswept``."""
    return _emptied(redis_server, PRIVATE_STORE_DB if _unswept(request) else 0)


@pytest.fixture
def queue_url(request, redis_server):
    """The queues (db 1, where the session's ``worker`` takes jobs); :data:`PRIVATE_QUEUE_DB`,
    emptied for each test, if the test is marked ``unswept``."""
    if _unswept(request):
        return _emptied(redis_server, PRIVATE_QUEUE_DB)
    return _db(redis_server.url, 1)


@pytest.fixture
def app(redis_url, queue_url):
    return create_app(Config(redis_url=redis_url, queue_url=queue_url, snapshot_every=10))


@pytest.fixture
def svc(app):
    return app.extensions["cartouche"]


@pytest.fixture(scope="session", autouse=True)
def temporary_files(tmp_path_factory):
    """Every temporary file of the session -- the logs and data of the servers, workers and
    clusters the tests start, which outlive a killed process -- goes under pytest's base
    directory (``tempfile`` here, ``TMPDIR`` for the processes started): pytest keeps the last
    three runs' (a failed run's logs stay to read) and removes older ones, so runs do not pile
    up in the system's temporary directory."""
    folder = tmp_path_factory.mktemp("tmp", numbered=False)
    before = tempfile.tempdir, os.environ.get("TMPDIR")
    tempfile.tempdir = os.environ["TMPDIR"] = str(folder)
    yield folder
    tempfile.tempdir = before[0]
    if before[1] is None:
        os.environ.pop("TMPDIR", None)
    else:
        os.environ["TMPDIR"] = before[1]


@pytest.fixture
def client(app):
    return app.test_client()


@pytest.fixture(scope="session")
def live_url(redis_server):
    """A real gunicorn serving the app on a free port (for concurrency and contract tests)."""
    port = embedded.free_port()
    env = dict(os.environ, REDIS_URL=_db(redis_server.url, 0),
               QUEUE_URL=_db(redis_server.url, 1), WEB_CONCURRENCY="2",
               CARTOUCHE_SSE_KEEPALIVE_MS="1000")
    log_path = Path(tempfile.mkdtemp(prefix="cartouche-gunicorn-")) / "gunicorn.log"
    log = open(log_path, "w")
    proc = subprocess.Popen(
        [str(Path(sys.executable).parent / "gunicorn"), "--config", "python:service.gunicorn_conf",
         "--bind", f"127.0.0.1:{port}", "service.app:wsgi()"],
        cwd=ROOT, env=env, stdout=log, stderr=subprocess.STDOUT,
        preexec_fn=embedded._die_with_parent)
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 30
    while True:
        try:
            if requests.get(url + "/readyz", timeout=1).status_code == 200:
                break
        except requests.RequestException:
            pass
        if proc.poll() is not None or time.monotonic() > deadline:
            proc.kill()
            raise RuntimeError("gunicorn did not start: " + log_path.read_text()[-3000:])
        time.sleep(0.1)
    yield url
    proc.terminate()
    proc.wait(10)
    log.close()
    print(f"gunicorn log: {log_path}")


@pytest.fixture(scope="session")
def worker(redis_server):
    """A real RQ worker with its scheduler (clocks and bots), for the whole session."""
    env = dict(os.environ, REDIS_URL=_db(redis_server.url, 0),
               QUEUE_URL=_db(redis_server.url, 1))
    log = open(tempfile.mktemp(prefix="cartouche-worker-", suffix=".log"), "w")
    proc = subprocess.Popen([sys.executable, "-m", "workers.main", "--with-scheduler"],
                            cwd=ROOT, env=env, stdout=log, stderr=subprocess.STDOUT,
                            preexec_fn=embedded._die_with_parent)
    yield proc
    proc.terminate()
    try:
        proc.wait(10)
    except subprocess.TimeoutExpired:
        proc.kill()
    log.close()
