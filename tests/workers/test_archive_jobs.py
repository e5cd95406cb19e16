"""Games over are archived by a job ``CARTOUCHE_ARCHIVE_AFTER_S`` after they end (the session's
real RQ worker runs it), or by the sweep when that job was lost (an injected clock: exact); a
rated game is rated the same when its archive came first; ``CARTOUCHE_ARCHIVE=0`` archives
nothing."""

from __future__ import annotations

import random

import pytest
import redis
from rq.job import Job

from service.app import create_app
from service.application import GameService, NullScheduler, body_digest
from service.config import Config
from service.jobs import ARCHIVE_DUE, ARCHIVE_GRACE_MS, RqScheduler
from service.store import keys

from tests.api.helpers import join, player, table
from tests.reliability.procs import wait_until


def finish(svc, gid, seed=1) -> int:
    """Random legal actions until the game ends; its last version."""
    rnd = random.Random(seed)
    while not (t := svc.load(gid)).over:
        seat = rnd.choice(t.awaiting())
        action = rnd.choice(t.game.legal_actions(t.state, seat))
        svc.act(gid, seat, action, None, None, body_digest({"action": action}))
    return t.version


def tides(svc) -> str:
    return svc.create("tides-of-time", [{"name": "a"}, {"name": "b"}], {}, None)["id"]


def archived(r, gid) -> bool:
    return r.exists(keys.archive(gid)) == 1 and r.exists(keys.events(gid)) == 0


@pytest.mark.parametrize("after_s", [0, 1])
def test_the_worker_archives_a_game_after_it_ends(redis_url, queue_url, worker, after_s):
    app = create_app(Config(redis_url=redis_url, queue_url=queue_url, archive_after_s=after_s))
    svc, client = app.extensions["cartouche"], app.test_client()
    gid, live = tides(svc), tides(svc)
    finish(svc, gid)
    before = [client.get(path).data for path in (f"/v1/games/{gid}/export",
                                                 f"/v1/games/{gid}/events?limit=1000")]
    queues = redis.Redis.from_url(queue_url)
    if after_s:
        assert not archived(svc.store.r, gid)  # spectators have their time
    wait_until(lambda: archived(svc.store.r, gid), after_s + 15, "the archive job")
    job = Job.fetch(f"archive-{gid}", connection=queues)
    assert wait_until(lambda: job.return_value(), 10, "the job's answer") == "ok"
    assert queues.zscore(ARCHIVE_DUE, gid) is None
    svc.drop_caches()
    after = [client.get(path).data for path in (f"/v1/games/{gid}/export",
                                                f"/v1/games/{gid}/events?limit=1000")]
    assert after == before
    assert not archived(svc.store.r, live) and queues.zscore(ARCHIVE_DUE, live) is None


class Clock:
    def __init__(self) -> None:
        self.t = 1_800_000_000_000

    def __call__(self) -> int:
        return self.t


def test_the_sweep_archives_the_games_whose_job_was_lost(redis_url, redis_server):
    """The jobs are scheduled on a queue no worker serves (lost); the sweep leaves each game to
    its job until its archive has been due ARCHIVE_GRACE_MS, then archives at most its bound
    per run, the oldest first."""
    from workers import jobs

    queue_url = redis_server.url.rsplit("/", 1)[0] + "/6"
    queues = redis.Redis.from_url(queue_url)
    queues.flushdb()
    clock = Clock()
    scheduler = RqScheduler(queues, archive_after_s=300, sweep_max=2, now_ms=clock)
    svc = GameService.configured(Config(redis_url=redis_url), redis.Redis.from_url(redis_url),
                                 scheduler=scheduler, now_ms=clock)
    games = []
    for _ in range(3):
        games.append(tides(svc))
        finish(svc, games[-1])
        clock.t += 1000
    live = tides(svc)
    assert queues.zcard(ARCHIVE_DUE) == 3
    jobs._service = svc
    try:
        clock.t += 300_000 + ARCHIVE_GRACE_MS - 3000 - 1  # the first is due, not for long
        jobs.sweep()
        assert not any(archived(svc.store.r, g) for g in games)
        clock.t += 1
        jobs.sweep()
        assert [archived(svc.store.r, g) for g in games] == [True, False, False]
        clock.t += 10_000
        jobs.sweep()  # two per run
        assert all(archived(svc.store.r, g) for g in games)
        assert queues.zcard(ARCHIVE_DUE) == 0 and not archived(svc.store.r, live)
        assert jobs.archive_game(games[0]) == "done"  # the lost job, late: harmless
    finally:
        jobs._service = None
        queues.flushdb()


def test_a_game_archived_before_its_rating_is_rated_the_same(redis_url):
    app = create_app(Config(redis_url=redis_url), scheduler=NullScheduler())  # no rating job
    client, svc = app.test_client(), app.extensions["cartouche"]
    ada, bob = player(client, "Ada"), player(client, "Bob")
    rated = []
    for _ in range(2):
        gid = table(client, ada, [{"player": ada["id"]}, {"open": True}],
                    type_="tides-of-time")["id"]
        assert join(client, gid, bob).status_code == 201
        finish(svc, gid)
        rated.append(gid)
    assert svc.archive(rated[1]) == "ok"
    svc.drop_caches()
    first, second = svc.rate(rated[0]), svc.rate(rated[1])
    assert second is not None and second["game_id"] == rated[1]
    assert second["players"] == first["players"]
    assert svc.rate(rated[1]) is None


def test_archiving_off_schedules_nothing(redis_url, queue_url):
    app = create_app(Config(redis_url=redis_url, queue_url=queue_url, archive=False))
    svc = app.extensions["cartouche"]
    assert svc.scheduler.archive_after_s is None
    gid = tides(svc)
    finish(svc, gid)
    with pytest.raises(Exception):
        Job.fetch(f"archive-{gid}", connection=redis.Redis.from_url(queue_url))
    assert redis.Redis.from_url(queue_url).zscore(ARCHIVE_DUE, gid) is None
    assert NullScheduler().archive_due() == []


def test_the_view_of_an_archived_game_needs_no_call_once_read(svc, client):
    """An archived game read again by the same process costs no Redis call (its document is
    kept; archived games never change)."""
    from tests.api.helpers import record_commands

    gid = tides(svc)
    finish(svc, gid)
    assert svc.archive(gid) == "ok"
    svc.drop_caches()
    first = client.get(f"/v1/games/{gid}/events?limit=1000")
    sent = record_commands(svc.store.r)
    again = client.get(f"/v1/games/{gid}/events?limit=1000")
    assert again.data == first.data and len(again.get_json()["events"]) > 10
    assert sent == []
