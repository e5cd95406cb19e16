"""The sweep as the backstop of a game's jobs: a turn whose job waits in the queue is not queued
again, however many sweeps pass (the queue stays as long as the turns waiting); a job lost, or
started by a worker that may have died, is queued again, once."""

from __future__ import annotations

import redis
from rq import Queue
from rq.job import Job, JobStatus

from service.app import create_app
from service.config import Config
from service.jobs import BOT_QUEUE
from tests.conftest import _db
from workers import jobs

#: queues of their own: no worker of another test (a module's, kept alive while tests of other
#: modules run in between) takes these jobs
QUEUE_DB = 7


def test_the_sweep_queues_a_waiting_bot_turn_once_and_a_lost_or_started_one_again(
        redis_server, redis_url, monkeypatch):
    queue_url = _db(redis_server.url, QUEUE_DB)
    queue = Queue(BOT_QUEUE, connection=redis.Redis.from_url(queue_url))
    queue.connection.flushdb()
    app = create_app(Config(redis_url=redis_url, queue_url=queue_url))
    client = app.test_client()
    monkeypatch.setattr(jobs, "_service", app.extensions["cartouche"])
    r = client.post("/v1/games", json={"type": "diamant", "players": [
        {"name": "Ada"}, *({"name": f"R{i}", "bot": {"level": "heuristic"}} for i in (1, 2))]})
    assert r.status_code == 201
    gid, version = r.get_json()["id"], r.get_json()["version"]
    turns = [f"bot-{gid}-{version}-{seat}" for seat in (1, 2)]  # the bots decide with Ada
    assert sorted(queue.job_ids) == turns
    for _ in range(3):  # no worker takes them: the sweeps find them waiting
        jobs.sweep()
    assert sorted(queue.job_ids) == turns
    Job.fetch(turns[0], connection=queue.connection).delete()  # lost
    assert queue.job_ids == [turns[1]]
    jobs.sweep()
    assert sorted(queue.job_ids) == turns
    # a worker takes the other one (off the queue, started) and may die with it
    queue.connection.lrem(queue.key, 0, turns[1])
    Job.fetch(turns[1], connection=queue.connection).set_status(JobStatus.STARTED)
    jobs.sweep()
    jobs.sweep()
    assert sorted(queue.job_ids) == turns
    assert Job.fetch(turns[1], connection=queue.connection).get_status() == JobStatus.QUEUED


def test_the_sweep_queues_the_jobs_of_a_game_another_process_moved_on(redis_server,
                                                                      redis_url, monkeypatch):
    """The sweep reads the games' versions in one round trip and takes a game from its cache
    only when the cache is at that version: a game another process moved on is loaded, and
    its jobs are those of its latest version."""
    queue_url = _db(redis_server.url, QUEUE_DB)
    queue = Queue(BOT_QUEUE, connection=redis.Redis.from_url(queue_url))
    queue.connection.flushdb()
    here, there = (create_app(Config(redis_url=redis_url, queue_url=queue_url))
                   for _ in range(2))
    monkeypatch.setattr(jobs, "_service", here.extensions["cartouche"])
    r = here.test_client().post("/v1/games", json={"type": "diamant", "players": [
        {"name": "Ada"}, *({"name": f"R{i}", "bot": {"level": "heuristic"}} for i in (1, 2))]})
    gid, version, token = r.get_json()["id"], r.get_json()["version"], \
        r.get_json()["seats"][0]["token"]
    jobs.sweep()  # this process holds the game at its first version
    r = there.test_client().post(f"/v1/games/{gid}/actions", headers={
        "Authorization": f"Bearer {token}"}, json={"action": {"type": "decide",
                                                              "choice": "continue"}})
    assert r.status_code == 201 and r.get_json()["version"] == version + 1
    queue.empty()  # the jobs of both versions lost
    for job_id in queue.connection.keys("rq:job:*"):
        queue.connection.delete(job_id)
    jobs.sweep()
    assert sorted(queue.job_ids) == [f"bot-{gid}-{version + 1}-{seat}" for seat in (1, 2)]
