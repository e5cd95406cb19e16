"""/metrics on a real gunicorn with 2 workers and an RQ worker sharing its metrics directory
(prometheus-client's multiprocess mode, as ``make run`` runs them): whichever process answers a
scrape counts every process's requests, the worker's jobs and bot decisions, and the event
streams open in any process."""

from __future__ import annotations

import os
import re
import shutil
import tempfile
from contextlib import contextmanager

import pytest
import redis
import requests
from prometheus_client.parser import text_string_to_metric_families

from service import embedded
from service.jobs import QUEUES

from .procs import children, db, start_gunicorn, start_worker, wait_until

pytestmark = pytest.mark.redis


def snapshot(text: str) -> dict[tuple, float]:
    """Prometheus text as {(sample name, sorted labels): value}."""
    return {(s.name, tuple(sorted(s.labels.items()))): s.value
            for family in text_string_to_metric_families(text) for s in family.samples}


def scrape(url: str) -> dict[tuple, float]:
    with requests.Session() as fresh:  # a new connection: any worker may answer
        return snapshot(fresh.get(f"{url}/metrics", timeout=5).text)


def value(snapshot, name, **labels) -> float:
    return snapshot.get((name, tuple(sorted(labels.items()))), 0.0)


def _requests_counted(url: str, n: int) -> None:
    for _ in range(n):  # one connection each: SO_REUSEPORT spreads them over the workers
        with requests.Session() as s:
            assert s.get(f"{url}/v1/game-types", timeout=5).status_code == 200


def test_both_workers_requests_and_the_rq_workers_jobs_are_counted(own_redis):
    server = own_redis["server"]
    store_url, queue_url = db(server.url, 0), db(server.url, 1)
    metrics_dir = tempfile.mkdtemp(prefix="cartouche-test-metrics-")
    env = {"PROMETHEUS_MULTIPROC_DIR": metrics_dir}
    gunicorn, url = start_gunicorn(store_url, queue_url, env, workers=2)
    worker = start_worker(store_url, queue_url, scheduler=True, extra_env=env)
    try:
        requests_n = 40
        _requests_counted(url, requests_n)
        # both gunicorn workers served some and wrote their own files ...
        pids = set(children(gunicorn.pid))
        written = {int(m.group(1)) for m in (re.match(r"counter_(\d+)\.db$", f)
                                             for f in os.listdir(metrics_dir)) if m}
        assert pids <= written, (pids, written)
        # ... and every scrape, whichever worker answers, sums them all: each worker writes its
        # counts within WEB_METRICS_WRITE_SECONDS (1 s), the one answering at once
        def counted():
            return value(scrape(url), "cartouche_http_requests_total", method="GET",
                         route="/v1/game-types", status="200")

        wait_until(lambda: counted() == requests_n, 3, "every worker's counts", 0.1)
        assert {counted() for _ in range(6)} == {requests_n}

        # a bot game played by the RQ worker: its jobs and decisions show in gunicorn's scrape
        r = requests.post(f"{url}/v1/games", json={"type": "diamant", "players": [
            {"name": f"bot{i}", "bot": {"level": "random"}} for i in range(3)]}, timeout=5)
        assert r.status_code == 201
        played = lambda snapshot: (  # noqa: E731
            value(snapshot, "cartouche_jobs_total", function="workers.jobs.bot_turn",
                  outcome="ok") >= 3
            and value(snapshot, "cartouche_bot_decision_seconds_count", game_type="diamant",
                      level="random") >= 3)
        wait_until(lambda: played(scrape(url)), 30, "the worker's bot jobs in the scrape", 0.2)
        assert value(scrape(url), "cartouche_games", status="active") + \
            value(scrape(url), "cartouche_games", status="finished") == 1

        # the open streams are served from the start, at 0 (a dashboard finds the series)...
        before = scrape(url)
        assert [before.get(("cartouche_sse_subscribers", (("kind", kind),)))
                for kind in ("game", "player")] == [0, 0], before
        # ... and an event stream open in one worker shows in every worker's scrape, until it
        # closes
        r = requests.post(f"{url}/v1/games", json={"type": "diamant", "players": [
            {"name": "a"}, {"name": "b"}, {"name": "c"}]}, timeout=5)
        with requests.get(f"{url}/v1/games/{r.json()['id']}/events/stream", stream=True,
                          timeout=10) as stream:
            next(stream.iter_lines())
            assert {value(scrape(url), "cartouche_sse_subscribers", kind="game")
                    for _ in range(4)} == {1}
        wait_until(lambda: value(scrape(url), "cartouche_sse_subscribers", kind="game") == 0,
                   10, "the closed stream to be uncounted")
    finally:
        worker.stop()
        gunicorn.stop()
        shutil.rmtree(metrics_dir, ignore_errors=True)
    assert "Listening at: " + url in gunicorn.log()


def test_a_worker_on_its_own_serves_its_job_counts(own_redis):
    """Without a shared directory (a worker in a container of its own) the worker's counts are
    on its own port."""
    from rq import Queue

    server = own_redis["server"]
    store_url, queue_url = db(server.url, 0), db(server.url, 1)
    port = embedded.free_port()
    assert "PROMETHEUS_MULTIPROC_DIR" not in os.environ
    worker = start_worker(store_url, queue_url,
                          extra_env={"CARTOUCHE_WORKER_METRICS_PORT": str(port)})
    queue = Queue(QUEUES[-1], connection=redis.Redis.from_url(queue_url))
    try:
        for _ in range(3):
            queue.enqueue("workers.jobs.sweep")

        def swept():
            try:
                return value(scrape(f"http://127.0.0.1:{port}"), "cartouche_jobs_total",
                             function="workers.jobs.sweep", outcome="ok") == 3
            except requests.RequestException:
                return False

        wait_until(swept, 30, "the worker to count its three jobs", 0.2)
    finally:
        worker.stop()


def _files_count(metrics_dir: str) -> float:
    """The requests to /v1/game-types counted in ``metrics_dir``'s files (every process's)."""
    from prometheus_client import CollectorRegistry, generate_latest
    from prometheus_client.multiprocess import MultiProcessCollector

    registry = CollectorRegistry()
    MultiProcessCollector(registry, path=metrics_dir)
    return value(snapshot(generate_latest(registry).decode()), "cartouche_http_requests_total",
                 method="GET", route="/v1/game-types", status="200")


@contextmanager
def _gunicorn_writing_every(own_redis, seconds: str):
    """A gunicorn with ``WEB_METRICS_WRITE_SECONDS=seconds`` and a metrics directory of its
    own: yields ``(gunicorn, url, metrics_dir)``; stops it (if the test has not) and removes
    the directory."""
    server = own_redis["server"]
    metrics_dir = tempfile.mkdtemp(prefix="cartouche-test-metrics-")
    gunicorn, url = start_gunicorn(db(server.url, 0), db(server.url, 1), {
        "PROMETHEUS_MULTIPROC_DIR": metrics_dir, "WEB_METRICS_WRITE_SECONDS": seconds})
    try:
        yield gunicorn, url, metrics_dir
    finally:
        gunicorn.stop()
        shutil.rmtree(metrics_dir, ignore_errors=True)


def test_a_worker_that_stops_writes_the_counts_it_held(own_redis):
    """With a write interval longer than the test, the workers hold their counts in memory; a
    gunicorn stopped right after the requests still leaves every one of them in the files."""
    with _gunicorn_writing_every(own_redis, "10") as (gunicorn, url, metrics_dir):
        _requests_counted(url, 30)
        assert _files_count(metrics_dir) < 30  # held (a scrape would write its worker's)
        gunicorn.stop()
        assert _files_count(metrics_dir) == 30


def test_an_interval_of_0_writes_every_count_at_once(own_redis):
    with _gunicorn_writing_every(own_redis, "0") as (_, url, metrics_dir):
        _requests_counted(url, 20)
        assert _files_count(metrics_dir) == 20


def test_a_bad_interval_stops_the_start(own_redis):
    server = own_redis["server"]
    with pytest.raises(RuntimeError, match="WEB_METRICS_WRITE_SECONDS must be"):
        start_gunicorn(db(server.url, 0), db(server.url, 1),
                       {"WEB_METRICS_WRITE_SECONDS": "soon"})
