"""``python -m workers.main --queues``: a worker serves only the queues it is given, so an
operator can give webhook deliveries workers of their own (docs/operations.md)."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest
import redis
from rq import Queue

from service.jobs import BOT_QUEUE, DEFAULT_QUEUE, WEBHOOK_QUEUE
from workers import main as worker_main


@pytest.mark.unswept  # the session's worker would take the jobs too
def test_a_worker_serves_only_the_queues_it_is_given(queue_url):
    conn = redis.Redis.from_url(queue_url)
    queues = {q: Queue(q, connection=conn) for q in (BOT_QUEUE, DEFAULT_QUEUE, WEBHOOK_QUEUE)}
    for q in queues.values():
        q.empty()
    jobs = {name: q.enqueue("os.getpid") for name, q in queues.items()}
    env = dict(os.environ, REDIS_URL=queue_url)
    for served in ([WEBHOOK_QUEUE], [BOT_QUEUE, DEFAULT_QUEUE]):
        out = subprocess.run([sys.executable, "-m", "workers.main", "--burst",
                              "--queues", ",".join(served)], env=env, capture_output=True,
                             text=True, timeout=60)
        assert out.returncode == 0, out.stderr
        status = {name: job.get_status(refresh=True) for name, job in jobs.items()}
        assert {name for name, st in status.items() if st == "finished"} >= set(served)
        if served == [WEBHOOK_QUEUE]:  # the others wait for a worker serving them
            assert status[BOT_QUEUE] == status[DEFAULT_QUEUE] == "queued"
    conn.close()


@pytest.mark.parametrize("given", ["", "cartouche-low", f"{BOT_QUEUE},webhooks"])
def test_a_worker_refuses_queues_it_does_not_know(given, monkeypatch, capsys):
    monkeypatch.setenv("REDIS_URL", "redis://127.0.0.1:1/0")  # never reached
    assert worker_main.main(["--queues", given]) == 2
    assert "--queues takes some of cartouche-high" in capsys.readouterr().err
