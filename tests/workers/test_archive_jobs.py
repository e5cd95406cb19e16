"""Games over are archived by a worker's sweep once ``CARTOUCHE_ARCHIVE_AFTER_S`` have passed
since they ended (the session's real RQ worker; with an injected clock: exact, oldest first, a
bounded number per sweep, each claimed by one sweep only); a rated game is rated the same when
its archive came first; ``CARTOUCHE_ARCHIVE=0`` archives nothing."""

from __future__ import annotations

import random

import pytest
import redis
from rq import Queue
from rq.job import Job
from rq.registry import ScheduledJobRegistry

from service.app import create_app
from service.application import GameService, NullScheduler, body_digest
from service.config import Config
from service.jobs import ARCHIVE_DUE, ARCHIVE_LEASE_MS, DEFAULT_QUEUE, RqScheduler
from service.store import keys

from tests.api.helpers import join, player, table
from tests.conftest import InjectedClock
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
    queues = redis.Redis.from_url(queue_url)
    # the game's end put it in the due set and enqueued nothing; due at once, the worker's sweep
    # may already have archived it and left the set
    assert queues.zscore(ARCHIVE_DUE, gid) is not None or (
        not after_s and archived(svc.store.r, gid))
    before = [client.get(path).data for path in (f"/v1/games/{gid}/export",
                                                 f"/v1/games/{gid}/events?limit=1000")]
    with pytest.raises(Exception):
        Job.fetch(f"archive-{gid}", connection=queues)
    if after_s:
        assert not archived(svc.store.r, gid)  # spectators have their time
    # the worker's sweep runs every 5 s (CARTOUCHE_SWEEP_SECONDS)
    wait_until(lambda: archived(svc.store.r, gid), after_s + 15, "the worker's sweep")
    wait_until(lambda: queues.zscore(ARCHIVE_DUE, gid) is None, 10, "the due set")
    svc.drop_caches()
    after = [client.get(path).data for path in (f"/v1/games/{gid}/export",
                                                f"/v1/games/{gid}/events?limit=1000")]
    assert after == before
    assert not archived(svc.store.r, live) and queues.zscore(ARCHIVE_DUE, live) is None



@pytest.mark.unswept
def test_the_sweep_archives_the_due_games_oldest_first_within_its_bound(redis_url, queue_url):
    """No worker serves these queues: the sweep, run here with an injected clock, archives no
    game before its archive is due, then at most its bound per run, the oldest first."""
    from workers import jobs

    queues = redis.Redis.from_url(queue_url)
    clock = InjectedClock()
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
    assert ScheduledJobRegistry(queue=Queue(DEFAULT_QUEUE, connection=queues)).count == 0
    jobs._service = svc
    try:
        clock.t += 300_000 - 3000 - 1  # the first is due in 1 ms
        jobs.sweep()
        assert not any(archived(svc.store.r, g) for g in games)
        clock.t += 1
        jobs.sweep()
        assert [archived(svc.store.r, g) for g in games] == [True, False, False]
        clock.t += 10_000
        jobs.sweep()  # two per run
        assert all(archived(svc.store.r, g) for g in games)
        assert queues.zcard(ARCHIVE_DUE) == 0 and not archived(svc.store.r, live)
        assert jobs.archive_game(games[0]) == "done"  # archiving again: harmless
    finally:
        jobs._service = None
        queues.flushdb()


@pytest.mark.unswept
def test_a_due_archive_is_claimed_by_one_sweep_until_its_lease_runs_out(redis_url, queue_url):
    """Two workers' schedulers on one due set: the first claims the due game and dies before
    archiving it; the second does not get it while the claim holds, and gets it (and archives
    it) once ARCHIVE_LEASE_MS have passed."""
    from workers import jobs

    queues = redis.Redis.from_url(queue_url)
    clock = InjectedClock()
    first, second = (RqScheduler(queues, archive_after_s=0, sweep_max=10, now_ms=clock)
                     for _ in range(2))
    svc = GameService.configured(Config(redis_url=redis_url), redis.Redis.from_url(redis_url),
                                 scheduler=second, now_ms=clock)
    gid = tides(svc)
    finish(svc, gid)
    jobs._service = svc
    try:
        assert first.claim_archives() == [gid]  # ... and that worker dies
        assert second.claim_archives() == []
        clock.t += ARCHIVE_LEASE_MS - 1
        jobs.sweep()
        assert not archived(svc.store.r, gid)
        clock.t += 1
        jobs.sweep()
        assert archived(svc.store.r, gid) and queues.zcard(ARCHIVE_DUE) == 0
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
    assert NullScheduler().claim_archives() == []


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
