"""The sweep as the backstop of a game's jobs: a turn whose job waits in the queue is not queued
again, however many sweeps pass (the queue stays as long as the turns waiting); a job lost, or
started by a worker that may have died, is queued again, once. Their games and queues are
in databases no worker reads (``unswept``): another worker's sweep would queue and play those
turns."""

from __future__ import annotations

import pytest
import redis
from rq import Queue
from rq.job import Job, JobStatus

from service import metrics
from service.app import create_app
from service.config import Config
from service.jobs import BOT_QUEUE
from workers import jobs
from workers import main as worker_main

pytestmark = pytest.mark.unswept

SWEEP_METRICS = ("cartouche_swept_games_total", "cartouche_sweep_duration_seconds_count")


def test_the_sweep_queues_a_waiting_bot_turn_once_and_a_lost_or_started_one_again(
        redis_url, queue_url, monkeypatch):
    queue = Queue(BOT_QUEUE, connection=redis.Redis.from_url(queue_url))
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
    # one still "queued" but in no list (a store that lost its last writes): queued again
    queue.connection.lrem(queue.key, 0, turns[0])
    assert Job.fetch(turns[0], connection=queue.connection).get_status() == JobStatus.QUEUED
    jobs.sweep()
    assert sorted(queue.job_ids) == turns
    # one a worker has just taken (its intermediate list, still "queued"): left alone
    queue.connection.lmove(queue.key, queue.intermediate_queue_key, "LEFT", "RIGHT")
    taken = queue.connection.lrange(queue.intermediate_queue_key, 0, -1)[0].decode()
    jobs.sweep()
    assert sorted([*queue.job_ids, taken]) == turns


def test_the_sweep_queues_the_jobs_of_a_game_another_process_moved_on(
        redis_url, queue_url, monkeypatch):
    """The sweep reads the games' versions in one round trip and takes a game from its cache
    only when the cache is at that version: a game another process moved on is loaded, and
    its jobs are those of its latest version."""
    queue = Queue(BOT_QUEUE, connection=redis.Redis.from_url(queue_url))
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


def test_the_sweep_reaches_every_active_game_a_page_at_a_time(redis_url, queue_url,
                                                              monkeypatch):
    """More active games than a sweep looks at: each sweep takes the next page of them, so
    the oldest game's lost turn is queued again within a rotation, as the newest one's."""
    queue = Queue(BOT_QUEUE, connection=redis.Redis.from_url(queue_url))
    app = create_app(Config(redis_url=redis_url, queue_url=queue_url))
    svc = app.extensions["cartouche"]
    monkeypatch.setattr(jobs, "_service", svc)
    games = []
    for _ in range(7):
        r = app.test_client().post("/v1/games", json={"type": "diamant", "players": [
            {"name": "Ada"}, {"name": "Bo"}, {"name": "Bot", "bot": {"level": "heuristic"}}]})
        games.append(f"bot-{r.get_json()['id']}-{r.get_json()['version']}-2")
    queue.empty()  # every turn's job lost
    for job_id in queue.connection.keys("rq:job:*"):
        queue.connection.delete(job_id)
    loaded = []
    monkeypatch.setattr(svc, "latest", lambda ids, latest=svc.latest: loaded.append(ids)
                        or latest(ids))
    queued = []
    for _ in range(3):
        assert jobs.sweep(games=3) <= 3 + len(queue.job_ids)
        queued.append(set(queue.job_ids))
    assert [len(ids) for ids in loaded] == [3, 3, 1]
    assert [len(q) for q in queued] == [3, 6, 7] and queued[-1] == set(games)
    assert queued[0] == set(games[-3:])  # newest first
    jobs.sweep(games=3)  # the next rotation: queued already, nothing added
    assert sorted(queue.job_ids) == sorted(games) and loaded[-1] == loaded[0]


def test_one_worker_a_window_reads_the_active_games(redis_url, queue_url, monkeypatch):
    """Every worker's sweeper runs every few seconds; the page of active games is read by the
    first of them in each window only, the rest of the sweep by all."""
    now = [1_000_000_000]
    workers = [create_app(Config(redis_url=redis_url, queue_url=queue_url),
                          now_ms=lambda: now[0]).extensions["cartouche"] for _ in range(2)]
    r = create_app(Config(redis_url=redis_url, queue_url=queue_url)).test_client().post(
        "/v1/games", json={"type": "diamant", "players": [{"name": n} for n in "ABC"]})
    assert r.status_code == 201
    sample = metrics.REGISTRY.get_sample_value
    before = [sample(name) or 0 for name in SWEEP_METRICS]
    looked = []
    for step in range(3):
        for svc in workers:
            monkeypatch.setattr(jobs, "_service", svc)
            looked.append(jobs.sweep_window(5.0))
        now[0] += 5_000
    assert looked == [1, 0] * 3
    assert [(sample(name) or 0) - b for name, b in zip(SWEEP_METRICS, before)] == [3, 6]


@pytest.mark.parametrize("games", ["0", "-3", "many"])
def test_a_worker_refuses_a_sweep_of_no_games(games, monkeypatch, capsys):
    monkeypatch.setenv("REDIS_URL", "redis://127.0.0.1:1/0")  # never reached
    monkeypatch.setenv("CARTOUCHE_SWEEP_GAMES", games)
    assert worker_main.main([]) == 2
    assert capsys.readouterr().err == (f"worker: CARTOUCHE_SWEEP_GAMES must be an integer from 1 "
                                       f"to 1,000,000,000: {games!r}\n")
