"""``make run`` supervises its children, and RQ's scheduler comes back after a Redis outage
(issue 21, finding 8: a ``kill -9`` of the RQ worker stopped gunicorn and Valkey too, and the
scheduler stayed dead for ~7 minutes after Redis came back). Real processes, real kills."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import tempfile
from datetime import timedelta
from pathlib import Path

import pytest
import redis
import requests
from rq import Queue

from service import embedded
from service.jobs import QUEUES

from .procs import (ROOT, db, kill9, pid_alive, port_of, start_redis, start_worker,
                    wait_until)


def cmdline(pid: int) -> str:
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            return f.read().replace(b"\0", b" ").decode(errors="replace")
    except OSError:
        return ""


def child_matching(parent: int, text: str) -> int | None:
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/stat") as f:
                    ppid = int(f.read().rsplit(")", 1)[1].split()[1])
            except OSError:
                continue
            if ppid == parent and text in cmdline(int(entry)) and pid_alive(int(entry)):
                return int(entry)
    return None


def ready(url: str) -> bool:
    try:
        return requests.get(url + "/readyz", timeout=1).status_code == 200
    except requests.RequestException:
        return False


@pytest.fixture
def devserver():
    home = Path(tempfile.mkdtemp(prefix="cartouche-devserver-"))
    port = embedded.free_port()
    env = dict(os.environ, CARTOUCHE_HOME=str(home), PORT=str(port), WEB_CONCURRENCY="1",
               CARTOUCHE_REDIS_MAXMEMORY="64mb", CARTOUCHE_REDIS_APPENDFSYNC="always")
    env.pop("REDIS_URL", None)
    env.pop("QUEUE_URL", None)
    log = open(home / "devserver.log", "w")
    proc = subprocess.Popen([sys.executable, "-m", "service.devserver"], cwd=ROOT, env=env,
                            stdout=log, stderr=subprocess.STDOUT,
                            preexec_fn=embedded._die_with_parent)
    url = f"http://127.0.0.1:{port}"
    wait_until(lambda: ready(url), 60, "make run to serve /readyz", 0.2)
    yield proc, url, home / "devserver.log"
    if proc.poll() is None:
        proc.send_signal(signal.SIGINT)
        proc.wait(30)
    log.close()


def test_make_run_restarts_a_killed_worker_and_server_and_only_ctrl_c_stops_it(devserver):
    proc, url, log = devserver
    worker = wait_until(lambda: child_matching(proc.pid, "workers.main"), 10, "the worker")
    gunicorn = child_matching(proc.pid, "gunicorn")
    kill9(worker)
    wait_until(lambda: child_matching(proc.pid, "workers.main") not in (None, worker), 10,
               "a new worker")
    assert ready(url) and child_matching(proc.pid, "gunicorn") == gunicorn  # untouched
    # dying again at once: a longer pause (backoff)
    kill9(child_matching(proc.pid, "workers.main"))
    wait_until(lambda: "starting it again in 2 s" in log.read_text(), 10, "the backoff")
    wait_until(lambda: child_matching(proc.pid, "workers.main"), 10, "the worker again")
    # the store itself: restarted on the same address and data, the API recovers
    valkey = child_matching(proc.pid, "valkey-server") or child_matching(proc.pid, "redis")
    assert valkey
    kill9(valkey)
    wait_until(lambda: not ready(url), 10, "/readyz to fail while the store is down", 0.1)
    wait_until(lambda: ready(url), 20, "/readyz to recover", 0.2)
    assert proc.poll() is None
    # the restarted store keeps its memory limit (CARTOUCHE_REDIS_MAXMEMORY), never evicting,
    # and its CARTOUCHE_REDIS_APPENDFSYNC
    store = redis.Redis.from_url(re.search(r"embedded Valkey on (\S+)", log.read_text())[1],
                                 decode_responses=True)
    assert store.config_get("maxmemory")["maxmemory"] == str(64 * 1024 * 1024)
    assert store.config_get("maxmemory-policy")["maxmemory-policy"] == "noeviction"
    assert store.config_get("appendfsync")["appendfsync"] == "always"  # and its fsync policy
    store.close()
    children = [child_matching(proc.pid, t) for t in ("workers.main", "gunicorn")]
    proc.send_signal(signal.SIGINT)  # Ctrl-C: everything stops, in order
    assert proc.wait(30) == 0
    wait_until(lambda: not any(pid_alive(p) for p in children if p), 10, "children to stop")
    assert "cartouche: stopped" in log.read_text()


def test_make_run_stops_when_its_parent_dies():
    home = Path(tempfile.mkdtemp(prefix="cartouche-devserver-"))
    port = embedded.free_port()
    env = dict(os.environ, CARTOUCHE_HOME=str(home), PORT=str(port), WEB_CONCURRENCY="1")
    env.pop("REDIS_URL", None)
    # a parent shell that runs make run in the background and waits: kill -9 the shell
    shell = subprocess.Popen(["sh", "-c", f"{sys.executable} -m service.devserver "
                              f"> {home}/devserver.log 2>&1 & echo $! > {home}/pid; wait"],
                             cwd=ROOT, env=env, start_new_session=True)
    url = f"http://127.0.0.1:{port}"
    try:
        wait_until(lambda: ready(url), 60, "make run to serve /readyz", 0.2)
        devserver = int((home / "pid").read_text())
        kill9(shell.pid)
        shell.wait()
        wait_until(lambda: not pid_alive(devserver), 30, "make run to stop", 0.2)
        assert not ready(url)
        assert "parent process died" in (home / "devserver.log").read_text()
    finally:
        if shell.poll() is None:
            kill9(shell.pid)


def a_scheduled_job_runs(server: embedded.EmbeddedServer, seconds: float,
                         interval: float) -> None:
    """A job scheduled one second ahead on ``server``'s queue database has run within
    ``seconds`` (asked every ``interval``)."""
    queues = redis.Redis.from_url(db(server.url, 1))
    job = Queue(QUEUES[0], connection=queues).enqueue_in(timedelta(seconds=1),
                                                         "workers.jobs.sweep")
    wait_until(lambda: job.get_status(refresh=True) == "finished", seconds,
               "the scheduled job to run", interval)


def test_the_worker_outlives_the_store_dying_under_a_job():
    """RQ's own loop ends on a Redis error anywhere but in its wait for a job (here: a job
    kills the store, so the job's end cannot be recorded). The worker process stays, starts a
    new loop once the store is back, and runs jobs again, scheduled ones included (the ended
    loop's scheduler locks are freed, not left to expire)."""
    data = tempfile.mkdtemp(prefix="cartouche-rel-redis-")
    server = start_redis(data)
    port = port_of(server)
    worker = start_worker(db(server.url, 0), db(server.url, 1), scheduler=True, name="keeper",
                          extra_env={"CARTOUCHE_SCHEDULER_WATCH_SECONDS": "1"})
    queue_conn = redis.Redis.from_url(db(server.url, 1))
    try:
        wait_until(lambda: queue_conn.exists(f"rq:scheduler-lock:{QUEUES[0]}"), 30,
                   "the scheduler to take its lock", 0.2)
        Queue(QUEUES[0], connection=queue_conn).enqueue("os.kill", server.process.pid,
                                                        signal.SIGKILL)
        wait_until(lambda: server.process.poll() is not None, 30, "the job to kill the store")
        wait_until(lambda: "stopped on an error" in worker.log_path.read_text(), 30,
                   "the worker's loop to end", 0.2)
        assert worker.p.poll() is None
        server = start_redis(data, port=port)  # the same data and address
        # well before the ended scheduler's lock (restored from the AOF) would expire
        a_scheduled_job_runs(server, 30, 0.2)
        assert worker.p.poll() is None
        # the ended worker could not record its end, so its name stays taken: a new one
        assert "worker keeper-1 starts in place of keeper" in worker.log_path.read_text()
    finally:
        worker.stop()
        server.stop()
    assert worker.p.returncode == 0  # SIGTERM still stops it


def test_the_scheduler_comes_back_after_the_store_is_killed_and_restarted():
    data = tempfile.mkdtemp(prefix="cartouche-rel-redis-")
    server = start_redis(data)
    port = port_of(server)
    worker = start_worker(db(server.url, 0), db(server.url, 1), scheduler=True,
                          extra_env={"CARTOUCHE_SCHEDULER_WATCH_SECONDS": "1"})
    queue_conn = redis.Redis.from_url(db(server.url, 1))
    lock = f"rq:scheduler-lock:{QUEUES[0]}"
    try:
        wait_until(lambda: queue_conn.exists(lock), 30, "the scheduler to take its lock", 0.2)
        server.kill()  # kill -9
        wait_until(lambda: child_matching(worker.pid, "workers.main") is None, 30,
                   "the scheduler process to die with the store", 0.2)
        server = start_redis(data, port=port)  # the same data and address
        # the dead scheduler's lock lives up to its interval + 60 s; then it is back
        a_scheduled_job_runs(server, 120, 0.5)
        assert worker.p.poll() is None
    finally:
        worker.stop()
        server.stop()
