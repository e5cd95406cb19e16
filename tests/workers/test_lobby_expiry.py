"""Waiting tables expire: a table nobody completes is aborted ``CARTOUCHE_LOBBY_TTL_S`` after its
creation, by the RQ job its creation scheduled or, when that job is lost, by the worker's sweep.

The rules of expiry run against an injected clock (exact); the job and the sweep run in a real
gunicorn and a real RQ worker of this module's own, with a two-second TTL. An expiry racing the
last join is run a hundred times with threads against real Redis: the table is either aborted
and never started, or started and never aborted.
"""

from __future__ import annotations

import copy
import random
import threading
import time
from collections import Counter

import pytest
import redis
from rq.exceptions import NoSuchJobError
from rq.job import Job

from service.application import GameService
from service.config import Config
from service.engine.lobby import SeatUnavailable
from service.replay import verify
from service.timestamps import rfc3339

from tests.api.helpers import Live, error, event_types, join, player, table
from tests.conftest import InjectedClock
from tests.reliability.procs import service_pair, start_worker, wait_until

TTL_S = 2
#: The job alone: the sweep of this module's worker never runs during a test.
ENV = {"CARTOUCHE_LOBBY_TTL_S": str(TTL_S), "CARTOUCHE_SWEEP_SECONDS": "3600"}
TIDES = "tides-of-time"


# ---------------------------------------------------------------- the rules, on an injected clock


@pytest.fixture
def clock():
    return InjectedClock()


def service(redis_url: str, clock: InjectedClock, ttl_s: int = 60) -> GameService:
    """A service of its own (its own caches, as another process would have)."""
    return GameService.configured(Config(redis_url=redis_url, lobby_ttl_s=ttl_s),
                                  redis.Redis.from_url(redis_url), now_ms=clock)


def waiting_table(svc: GameService, creator: dict, type_: str = TIDES, seats: int = 2) -> str:
    """A table with the creator's seat and ``seats - 1`` open ones."""
    return svc.create(type_, [{"player": creator["id"]}] + [{"open": True}] * (seats - 1), {},
                      None, creator=creator["id"])["id"]


def kinds(svc: GameService, gid: str) -> list[str]:
    return [e.envelope["type"] for e in svc.store.read(gid, 0)]


def test_expire_aborts_only_a_table_still_waiting_at_its_deadline(redis_url, clock):
    svc = service(redis_url, clock)
    ada, bob = svc.players.create("Ada", "human"), svc.players.create("Bob", "human")
    gid = waiting_table(svc, ada)
    clock.t += 60_000 - 1
    assert svc.expire_table(gid) is False and svc.load(gid).status == "waiting"
    clock.t += 1
    assert svc.expire_table(gid) is True
    assert svc.expire_table(gid) is False  # idempotent: the job and the sweep may both come
    assert svc.load(gid).status == "aborted"
    assert kinds(svc, gid) == ["GameCreated", "GameAborted"]
    assert svc.store.read(gid, 1)[0].envelope["data"] == {"by": "lobby", "reason": "expired"}
    assert svc.list_games(None, "waiting", 1, 10)["games"] == []
    assert verify(svc.export(gid))["valid"]
    with pytest.raises(SeatUnavailable) as refused:
        svc.join(gid, None, bob["id"], None)
    assert refused.value.code == "game_aborted"

    started = waiting_table(svc, ada)
    svc.join(started, None, bob["id"], None)
    clock.t += 3_600_000
    assert svc.expire_table(started) is False and svc.load(started).status == "active"


def test_a_table_keeps_the_wait_it_was_created_with(redis_url, clock):
    """The creation event records how long the table may wait (``lobby_ttl_s``): services set
    to a shorter or a longer wait expire it at its own (a sweep lists it as overdue only
    then), and verification refuses an expiry before it."""
    ada = service(redis_url, clock).players.create("Ada", "human")
    created = clock.t
    gid = waiting_table(service(redis_url, clock, ttl_s=60), ada)
    shorter, longer = service(redis_url, clock, ttl_s=10), service(redis_url, clock, ttl_s=600)
    assert shorter.store.read(gid, 0)[0].envelope["data"]["lobby_ttl_s"] == 60
    clock.t += 60_000 - 1
    assert shorter.expire_table(gid) is False and longer.expire_table(gid) is False
    assert shorter.overdue_tables(10) == []  # its sweep reads the deadline, loads nothing
    clock.t += 1
    assert shorter.overdue_tables(10) == [gid] and longer.overdue_tables(10) == []
    assert longer.expire_table(gid) is True
    doc = longer.export(gid)
    doc.pop("signature", None)
    assert verify(doc)["valid"]
    early = copy.deepcopy(doc)
    early["events"][-1]["at"] = rfc3339(created + 60_000 - 1)
    outcome = verify(early)
    assert (outcome["reason"], outcome["version"]) == ("lobby_expiry_not_allowed", 2)
    # without a recorded wait (a table created without one): an expiry at any time
    old = copy.deepcopy(early)
    del old["events"][0]["data"]["lobby_ttl_s"]
    assert verify(old)["valid"]


def test_overdue_lists_the_oldest_waiting_tables_past_their_time(redis_url, clock):
    svc = service(redis_url, clock)
    ada, bob = svc.players.create("Ada", "human"), svc.players.create("Bob", "human")
    tables = []
    for _ in range(5):
        tables.append(waiting_table(svc, ada))
        clock.t += 10_000
    svc.join(tables[1], None, bob["id"], None)  # started: no longer waiting
    svc.create(TIDES, [{"name": "x"}, {"name": "y"}], {}, None)  # an active game
    # now = the first table's creation + 50 s; the TTL is 60 s
    assert svc.overdue_tables(10) == []
    clock.t += 20_000  # tables 0-2 are 70, 60 and 50 s old
    assert svc.overdue_tables(10) == [tables[0]]
    clock.t += 20_000
    assert svc.overdue_tables(10) == [tables[0], tables[2], tables[3]]
    assert svc.overdue_tables(2) == [tables[0], tables[2]]  # one sweep's bound


def test_an_expiry_racing_the_last_join_never_half_starts_a_table(redis_url, clock):
    """Two services (two processes' caches) on one store: one joins the last seat while the
    other expires the table, released together by a barrier, a hundred times."""
    expiring, joining = service(redis_url, clock), service(redis_url, clock)
    ada = expiring.players.create("Ada", "human")
    rnd = random.Random(5)
    seen: Counter = Counter()
    for i in range(100):
        bob = joining.players.create(f"Bob {i}", "human")
        gid = waiting_table(expiring, ada)
        joining.load(gid)  # both sides have the waiting table in hand
        clock.t += 60_000
        barrier = threading.Barrier(2)
        answers: dict = {}

        def join_last():
            barrier.wait()
            time.sleep(rnd.random() / 500)  # up to 2 ms either way: both orders happen
            try:
                answers["join"] = joining.join(gid, None, bob["id"], None)["status"]
            except SeatUnavailable as exc:
                answers["join"] = exc.code

        def expire():
            barrier.wait()
            time.sleep(rnd.random() / 500)
            answers["expire"] = expiring.expire_table(gid)

        threads = [threading.Thread(target=join_last), threading.Thread(target=expire)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(30)
        logged = kinds(expiring, gid)
        status = expiring.store.meta_field(gid, "status")  # written with the winning append
        if answers["expire"]:
            assert (status, answers["join"]) == ("aborted", "game_aborted"), logged
            assert "GameStarted" not in logged and "SeatJoined" not in logged
        else:
            assert (status, answers["join"]) == ("active", "active"), logged
            assert logged.count("GameStarted") == 1 and "GameAborted" not in logged
        seen[status] += 1
    print(f"expiry vs last join: {dict(seen)}")
    assert set(seen) == {"aborted", "active"}, seen


# ---------------------------------------------------------------- the job and the sweep, for real

@pytest.fixture(scope="module")
def lobby(redis_server):
    """A gunicorn and a worker (with RQ's scheduler) of this module, TTL two seconds."""
    with service_pair(redis_server.url, 4, 5, ENV) as (url, store, queues):
        yield Live(url), store, queues


def job(queues: str, gid: str) -> Job:
    return Job.fetch(f"lobby-{gid}", connection=redis.Redis.from_url(queues))


def status(live: Live, gid: str) -> str:
    return live.get(f"/v1/games/{gid}").get_json()["status"]


def test_the_job_aborts_a_table_nobody_completes(lobby):
    live, _, queues = lobby
    ada = player(live, "Ada")
    gid = table(live, ada, [{"player": ada["id"]}, {"open": True}], type_=TIDES)["id"]
    created = live.get(f"/v1/games/{gid}").get_json()["created_at"]
    scheduled = job(queues, gid)
    assert scheduled.func_name == "workers.jobs.lobby_due" and scheduled.args[0] == gid
    wait_until(lambda: status(live, gid) == "aborted", TTL_S + 10, "the table to expire")
    assert event_types(live, gid) == ["GameCreated", "GameAborted"]
    aborted = live.get(f"/v1/games/{gid}/events?after=1").get_json()["events"][0]
    assert aborted["data"] == {"by": "lobby", "reason": "expired"} and aborted["at"] > created
    assert wait_until(lambda: job(queues, gid).return_value() is not None, 10,
                      "the job's answer") is True  # the job did it, not the sweep
    assert live.get("/v1/games?status=waiting").get_json()["games"] == []
    assert error(join(live, gid, player(live, "Bob")))["code"] == "game_aborted"
    assert verify(live.get(f"/v1/games/{gid}/export").get_json())["valid"]


def test_a_table_filled_in_time_is_left_alone_and_scheduled_once(lobby):
    live, _, queues = lobby
    ada, bob, cy = (player(live, name) for name in ("Ada", "Bob", "Cy"))
    gid = table(live, ada, [{"player": ada["id"]}, {"open": True}, {"open": True}])["id"]
    first = job(queues, gid).enqueued_at or job(queues, gid).created_at
    assert join(live, gid, bob).status_code == 201  # a join schedules no second expiry
    assert (job(queues, gid).enqueued_at or job(queues, gid).created_at) == first
    assert join(live, gid, cy).get_json()["status"] == "active"
    assert wait_until(lambda: job(queues, gid).is_finished, TTL_S + 10, "the job to run")
    assert job(queues, gid).return_value() is False
    assert status(live, gid) == "active" and "GameAborted" not in event_types(live, gid)
    # a game created with every seat held gets no expiry job at all
    active = table(live, None, [{"name": "x"}, {"name": "y"}], type_=TIDES)["id"]
    with pytest.raises(NoSuchJobError):
        job(queues, active)


def test_the_sweep_expires_tables_whose_job_was_lost(lobby):
    """Tables written by a service that schedules nothing (their jobs lost): a second worker,
    sweeping every half second, aborts them; the one completed in time stays active."""
    _, store, queues = lobby
    svc = GameService.configured(Config(redis_url=store, lobby_ttl_s=TTL_S),
                                 redis.Redis.from_url(store))
    ada, bob = svc.players.create("Ada", "human"), svc.players.create("Bob", "human")
    lost = [waiting_table(svc, ada) for _ in range(4)]
    filled = waiting_table(svc, ada)
    svc.join(filled, None, bob["id"], None)
    for gid in lost:
        with pytest.raises(NoSuchJobError):
            job(queues, gid)
    sweeper = start_worker(store, queues, extra_env={**ENV, "CARTOUCHE_SWEEP_SECONDS": "0.5"})
    try:
        wait_until(lambda: all(svc.load(g).status == "aborted" for g in lost), TTL_S + 15,
                   "the sweep to expire the tables")
    finally:
        sweeper.stop()
    assert svc.load(filled).status == "active"
    for gid in lost:
        assert kinds(svc, gid) == ["GameCreated", "GameAborted"]


def test_the_worker_takes_every_setting_from_its_environment(redis_url, queue_url,
                                                             monkeypatch):
    """The worker builds its service as the API does (``GameService.configured``): its jobs
    expire tables after the configured TTL and bound player streams as configured."""
    from workers import jobs

    for name, value in {"REDIS_URL": redis_url, "QUEUE_URL": queue_url,
                        "CARTOUCHE_LOBBY_TTL_S": "7", "CARTOUCHE_PLAYER_STREAM_MAX": "5",
                        "CARTOUCHE_SNAPSHOT_EVERY": "3"}.items():
        monkeypatch.setenv(name, value)
    monkeypatch.setattr(jobs, "_service", None)
    svc = jobs.service()
    assert (svc.lobby_ttl_s, svc.player_store.stream_max, svc.snapshot_every) == (7, 5, 3)
