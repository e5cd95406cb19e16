"""The event store against a real server: atomic appends, dense versions, races, idempotency
records, snapshots as a pure optimisation, and durability across a SIGKILL."""

import tempfile
import threading
import time
from pathlib import Path

import pytest
import redis

from service import embedded
from service.store import keys
from service.store.events import EventStore

#: No worker sweeps these stores: the sweep's cursor and windows are the test's.
pytestmark = pytest.mark.unswept


@pytest.fixture
def store(redis_url):
    return EventStore(redis.Redis.from_url(redis_url))


def env(i, **extra):
    return {"type": "Test", "seat": None, "data": {"i": i, **extra}, "at": None, "schema": 1}


def aof_holding(data_dir, marker: bytes, seconds: float = 10) -> bytes:
    """The server's AOF once it holds ``marker``. appendfsync everysec writes the AOF before it
    replies, except while a background fsync runs: then it holds writes back (up to 2 s) and
    still replies, and a kill in that window loses them (docs/architecture.md, "Durability");
    a test that kills the server waits for what it acknowledged to reach the AOF first."""
    deadline = time.monotonic() + seconds
    while marker not in (aof := b"".join(
            f.read_bytes() for f in Path(data_dir, "appendonlydir").glob("*.aof"))):
        assert time.monotonic() < deadline, f"{marker!r} never reached the AOF"
        time.sleep(0.05)
    return aof


def make(store, gid="aa01"):
    store.create(gid, {"type": "diamant", "created_ms": "1", "tokens": "[]",
                       "status": "active", "created_version": "1"}, "00" * 32, [env(0)])
    return gid


def test_versions_are_dense_from_one_and_appends_are_atomic(store):
    gid = make(store)
    assert store.append(gid, 1, [env(1), env(2), env(3)]).version == 4
    assert [e.version for e in store.read(gid)] == [1, 2, 3, 4]
    assert [e.envelope["data"]["i"] for e in store.read(gid, 1, 3)] == [1, 2]
    assert store.version(gid) == 4


def test_stale_expected_version_appends_nothing(store):
    gid = make(store)
    store.append(gid, 1, [env(1)])
    res = store.append(gid, 1, [env(9), env(10)])
    assert (res.outcome, res.version) == ("conflict", 2)
    assert store.version(gid) == 2


def test_append_to_unknown_game_is_refused(store):
    assert store.append("ffff", 0, [env(1)]).outcome == "missing"
    assert store.r.exists(keys.events("ffff")) == 0


def test_create_twice_is_refused(store):
    gid = make(store)
    with pytest.raises(KeyError):
        make(store, gid)
    assert store.version(gid) == 1


def test_every_key_of_a_game_shares_its_hash_slot():
    from redis.crc import key_slot
    gid = "0123456789abcdef0123"
    slots = {key_slot(k.encode()) for k in keys.all_of_game(gid) + [keys.idempotency(gid, "x")]}
    assert len(slots) == 1


def test_idempotency_record_wins_over_a_second_append(store):
    gid = make(store)
    first = store.append(gid, 1, [env(1), env(2)], idempotency=("k1", "bodyhash"))
    assert first.outcome == "ok"
    again = store.append(gid, 3, [env(3)], idempotency=("k1", "bodyhash"))
    assert again.outcome == "idem" and again.record == "bodyhash|2|3"
    assert store.version(gid) == 3
    assert store.r.ttl(keys.idempotency(gid, "k1")) > 3600


def test_race_16_threads_x_200_appends_dense_and_complete(store):
    gid = make(store)
    acked: list[tuple[int, str]] = []
    lock = threading.Lock()

    def writer(t):
        client = EventStore(redis.Redis.from_url(_url(store)))
        for i in range(200):
            tag = f"{t}-{i}"
            while True:
                v = client.version(gid)
                res = client.append(gid, v, [env(0, tag=tag)])
                if res.outcome == "ok":
                    with lock:
                        acked.append((res.version, tag))
                    break
                assert res.outcome == "conflict"

    threads = [threading.Thread(target=writer, args=(t,)) for t in range(16)]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    log = store.read(gid)
    assert [e.version for e in log] == list(range(1, 16 * 200 + 2))
    tags = [e.envelope["data"].get("tag") for e in log[1:]]
    assert len(set(tags)) == len(tags) == 3200
    by_version = {e.version: e.envelope["data"].get("tag") for e in log}
    assert all(by_version[v] == tag for v, tag in acked) and len(acked) == 3200


def _url(store):
    kw = store.r.connection_pool.connection_kwargs
    return f"redis://{kw['host']}:{kw['port']}/{kw['db']}"


def test_snapshots_round_trip_and_floor_lookup(store):
    gid = make(store)
    store.save_snapshot(gid, 10, {"v": 10})
    store.save_snapshot(gid, 20, {"v": 20})
    assert store.load(gid, upto=15).snapshot == (10, {"v": 10})
    assert store.load(gid, upto=25).snapshot == (20, {"v": 20})
    assert store.load(gid, upto=5).snapshot is None
    store.delete_snapshots(gid)
    assert store.load(gid, upto=25).snapshot is None


@pytest.mark.redis
def test_acknowledged_events_survive_sigkill_and_restart():
    import os
    binary = os.environ.get("CARTOUCHE_TEST_REDIS_SERVER")
    with tempfile.TemporaryDirectory() as data:
        server = embedded.start(data, binary=binary, unix_socket=False)
        port = server.url.rsplit(":", 1)[1].split("/")[0]
        store = EventStore(redis.Redis.from_url(server.url))
        gid = make(store)
        acked = []
        for i in range(1, 501):
            res = store.append(gid, i, [env(i)])
            assert res.outcome == "ok"
            acked.append(res.version)
        aof_holding(data, b'"i":500')  # acknowledged appends reach the AOF, then the kill
        server.kill()  # SIGKILL: no shutdown, no final fsync by the server
        server = embedded.start(data, binary=binary, unix_socket=False, port=int(port))
        try:
            store = EventStore(redis.Redis.from_url(server.url))
            log = store.read(gid)
            assert [e.version for e in log] == list(range(1, 502))
            assert [e.envelope["data"]["i"] for e in log[1:]] == list(range(1, 501))
            assert store.append(gid, 501, [env(501)]).version == 502  # play resumes
        finally:
            server.stop()


def test_reads_ride_with_the_append_and_see_it(store):
    gid = make(store)
    store.r.hset("cartouche:test:h", "k", "v")
    res = store.append(gid, 1, [env(1)], reads=[("HGETALL", "cartouche:test:h"),
                                                 ("XLEN", keys.events(gid))])
    assert (res.outcome, res.version) == ("ok", 2)
    assert res.reads == ({b"k": b"v"}, 2)  # the read ran after the append
    # a lost race still answers its reads; a failed read is None, never an exception
    res = store.append(gid, 1, [env(9)], reads=[("GET", "cartouche:test:h")])
    assert res.outcome == "conflict" and res.reads == (None,)
    assert store.version(gid) == 2


def everywhere(score, game_type, status):
    """Where a game of ``game_type`` with ``status`` is listed: :func:`listed`'s answer."""
    return {"all": score, f"type:{game_type}": score, f"status:{status}": score,
            f"type-status:{game_type}:{status}": score}


def listed(store, gid):
    """The indexes that list ``gid``, each with its score."""
    found = {}
    for key in store.r.scan_iter("cartouche:index:*"):
        score = store.r.zscore(key, gid)
        if score is not None:
            found[key.decode().removeprefix("cartouche:index:")] = score
    return found


def test_a_status_change_moves_the_games_listing_with_the_append(store):
    gid = make(store)
    store.index(gid, "diamant", "active", 5)
    assert listed(store, gid) == everywhere(5, "diamant", "active")
    # a lost race moves nothing
    res = store.append(gid, 0, [env(9)], status="finished", listing=("diamant", 5))
    assert res.outcome == "conflict"
    assert listed(store, gid) == everywhere(5, "diamant", "active")
    # with an idempotency record and reads around it: every key in its place
    store.r.hset("cartouche:test:h", "k", "v")
    res = store.append(gid, 1, [env(1), env(2)], status="finished", listing=("diamant", 5),
                       idempotency=("k1", "rec"), reads=[("HGETALL", "cartouche:test:h")])
    assert (res.outcome, res.version, res.reads) == ("ok", 3, ({b"k": b"v"},))
    assert listed(store, gid) == everywhere(5, "diamant", "finished")
    assert store.r.hget(keys.meta(gid), "status") == b"finished"
    assert store.r.get(keys.idempotency(gid, "k1")) == b"rec|2|3"
    # without a status the listing stays as it is
    store.append(gid, 3, [env(3)], listing=("diamant", 5))
    assert listed(store, gid) == everywhere(5, "diamant", "finished")


def test_a_creation_lists_the_game_in_its_own_write(store, monkeypatch):
    """On a single server the creation script lists a new game: no second write that could
    fail (or never run, the process gone) and leave a stored game no listing shows and no
    sweep finds."""
    def no_second_write(*args):
        raise AssertionError("the index written apart from the creation")

    monkeypatch.setattr(store, "index", no_second_write)
    meta = {"type": "diamant", "created_ms": "7", "tokens": "[]", "status": "active",
            "created_version": "1"}
    assert store.create("aa02", meta, "00" * 32, [env(0)], ("diamant", 7)) == 1
    assert listed(store, "aa02") == everywhere(7, "diamant", "active")
    assert store.r.hget(keys.meta("aa02"), "version") == b"1"
    # an id already taken: nothing written, nothing listed under the newcomer's type
    with pytest.raises(KeyError):
        store.create("aa02", {**meta, "type": "papyrus"}, "11" * 32, [env(0)], ("papyrus", 8))
    assert listed(store, "aa02") == everywhere(7, "diamant", "active")
    # several games in one transaction, each under its own type and status
    store.create_many([(gid, {**meta, "type": t, "status": st}, "00" * 32, [env(0), env(1)],
                        (t, ms)) for gid, t, st, ms in
                       (("ab01", "diamant", "active", 9), ("ab02", "papyrus", "waiting", 10))])
    assert listed(store, "ab01") == everywhere(9, "diamant", "active")
    assert listed(store, "ab02") == everywhere(10, "papyrus", "waiting")
    assert [e.version for e in store.read("ab02")] == [1, 2]
    # without a listing (a game written by hand, the tests'), nothing is listed
    make(store, "ab03")
    assert listed(store, "ab03") == {}


def test_a_creation_runs_its_reads_and_survives_a_flushed_script_cache(store):
    """Reads ride in the creation's transaction, after the games (a failed read answers None,
    the games stand); a server that lost the creation script (restarted) gets it again."""
    store.r.hset("cartouche:test:h", "k", "v")
    store.r.set("cartouche:test:s", "x")
    meta = {"type": "diamant", "created_ms": "3", "tokens": "[]", "status": "active",
            "created_version": "1"}
    store.r.script_flush()
    replies = store.create_many(
        [(gid, meta, "00" * 32, [env(0)], ("diamant", 3)) for gid in ("ac01", "ac02")],
        [("HGETALL", "cartouche:test:h"), ("HGETALL", "cartouche:test:s"),
         ("XLEN", keys.events("ac02"))])
    assert replies == ({b"k": b"v"}, None, 1)
    assert [store.version(g) for g in ("ac01", "ac02")] == [1, 1]
    assert listed(store, "ac02") == everywhere(3, "diamant", "active")
    # one game, with reads: the same transaction
    assert store.create_many([("ac03", meta, "00" * 32, [env(0)], None)],
                             [("XLEN", keys.events("ac03"))]) == (1,)


def test_reads_with_the_append_survive_a_flushed_script_cache(store):
    gid = make(store)
    store.r.script_flush()  # e.g. the server restarted: EVALSHA answers NOSCRIPT
    res = store.append(gid, 1, [env(1)], reads=[("XLEN", keys.events(gid))])
    assert (res.outcome, res.version, res.reads) == ("ok", 2, (2,))
    assert [e.version for e in store.read(gid)] == [1, 2]


def quota(limit, tag="t", elapsed=0.0):
    from service.store.quota import Quota
    return Quota(((f"cartouche:rl:{{{tag}}}:1", f"cartouche:rl:{{{tag}}}:0"),), (limit,),
                 60_000, elapsed)


def test_a_quota_rides_in_the_append_and_stops_it_when_over(store):
    """The rate-limit counters are charged by the append's own script: within the limit the
    events are appended, over it nothing is appended or read and the counts come back."""
    gid = make(store)
    q = quota(2)
    res = store.append(gid, 1, [env(1)], quota=q, reads=[("XLEN", keys.events(gid))])
    assert (res.outcome, res.version, res.reads) == ("ok", 2, (2,)) and q.charged
    assert int(store.r.get("cartouche:rl:{t}:1")) == 1
    assert store.append(gid, 2, [env(2)], quota=quota(2)).outcome == "ok"
    res = store.append(gid, 3, [env(3)], quota=quota(2), reads=[("XLEN", keys.events(gid))])
    assert res.outcome == "limited" and res.reads == ()
    assert res.charged.over and res.charged.counts == ((3, 0),)
    assert store.version(gid) == 3  # nothing appended
    assert 0 < store.r.pttl("cartouche:rl:{t}:1") <= 120_000  # expires after two windows


@pytest.mark.redis
def test_the_counters_stay_in_memory_and_a_restart_starts_the_windows_again():
    """The rate-limit counters are written neither to the AOF nor to replicas: an action's AOF
    record is its events and version, and a server restarted from its AOF has every game and
    no counter."""
    import os

    from service.store.quota import Counters
    binary = os.environ.get("CARTOUCHE_TEST_REDIS_SERVER")
    with tempfile.TemporaryDirectory() as data:
        server = embedded.start(data, binary=binary, unix_socket=False)
        port = int(server.url.rsplit(":", 1)[1].split("/")[0])
        try:
            store = EventStore(redis.Redis.from_url(server.url))
            gid = make(store)
            assert store.append(gid, 1, [env(1)], quota=quota(5, "in-append")).outcome == "ok"
            assert not Counters(store.r).charge(quota(5, "alone")).over
            assert [store.r.get(f"cartouche:rl:{{{t}}}:1") for t in ("in-append", "alone")] \
                == [b"1", b"1"]
            aof = aof_holding(data, b'"i":1')
            assert keys.events(gid).encode() in aof and b"cartouche:rl:" not in aof
        finally:
            server.kill()  # SIGKILL: what the AOF holds is all a restart has
        server = embedded.start(data, binary=binary, unix_socket=False, port=port)
        try:
            store = EventStore(redis.Redis.from_url(server.url))
            assert [e.version for e in store.read(gid)] == [1, 2]
            assert store.r.keys("cartouche:rl:*") == []
        finally:
            server.stop()


def test_the_previous_window_weighs_by_what_is_left_of_it(store):
    gid = make(store)
    store.r.set("cartouche:rl:{w}:0", 4)  # 4 writes in the previous window
    # half of the previous window still inside the sliding one: 4 * 0.5 + 1 = 3 > 2
    assert store.append(gid, 1, [env(1)], quota=quota(2, "w", 0.5)).outcome == "limited"
    # three quarters gone: 4 * 0.25 + 2 = 3 <= 3
    assert store.append(gid, 1, [env(1)], quota=quota(3, "w", 0.75)).outcome == "ok"


def test_a_quota_is_charged_once_across_retries(store):
    """A command that loses a race appends again with the same quota: counted once."""
    gid = make(store)
    store.append(gid, 1, [env(1)])
    q = quota(5)
    assert store.append(gid, 1, [env(9)], quota=q).outcome == "conflict"  # lost a race
    assert store.append(gid, 2, [env(9)], quota=q).outcome == "ok"  # the retry
    assert int(store.r.get("cartouche:rl:{t}:1")) == 1


def test_a_quota_is_charged_even_for_a_missing_game_and_counts_every_identity(store):
    from service.store.quota import Quota
    q = Quota((("cartouche:rl:{a}:1", "cartouche:rl:{a}:0"),
               ("cartouche:rl:{b}:1", "cartouche:rl:{b}:0")), (10, 1), 60_000, 0.0)
    assert store.append("nosuchgame", 0, [env(1)], quota=q).outcome == "missing"
    q = Quota(q.counters, q.limits, 60_000, 0.0)
    res = store.append("nosuchgame", 0, [env(1)], quota=q)
    assert res.outcome == "limited" and res.charged.counts == ((2, 0), (2, 0))


def test_each_identity_weighs_its_own_previous_window(store):
    """An identity charged nothing sits between charged ones: each charged one is checked
    against its own previous count, and the counts come back in the identities' order."""
    import orjson

    from service.store.quota import BYTES, WRITES, Quota

    for tag, previous in (("p", 5), ("q", 7), ("s", 9)):
        store.r.set(f"cartouche:rl:{{{tag}}}:0", previous)
    counters = tuple((f"cartouche:rl:{{{t}}}:1", f"cartouche:rl:{{{t}}}:0") for t in "pqs")
    size = len(orjson.dumps(env(1)))
    # writes cost 0 here: the middle identity is neither charged nor checked
    q = Quota(counters, (1000, 1, size + 8), 60_000, 0.0, cost=0, kinds=(BYTES, WRITES, BYTES))
    res = store.append("nosuchgame", 0, [env(1)], quota=q)
    # the last identity alone is over: its 9 previous bytes + size > size + 8
    assert res.outcome == "limited"
    assert res.charged.counts == ((size, 5), (0, 0), (size, 9))
    q = Quota(counters, (1000, 1, 2 * size + 5), 60_000, 0.5, cost=0,
              kinds=(BYTES, WRITES, BYTES))
    # half of the previous window left: 9 * 0.5 + 2 * size <= 2 * size + 5
    assert store.append("nosuchgame", 0, [env(1)], quota=q).outcome == "missing"


def test_a_budget_of_bytes_is_charged_by_what_the_append_stores(store):
    """A bytes identity counts the serialized envelopes the append stores; over its budget
    nothing is appended. An identity charged 0 (no bytes yet) is neither charged nor
    checked."""
    import orjson

    from service.store.quota import BYTES, WRITES, Quota

    gid = make(store)
    size = len(orjson.dumps(env(1))) + len(orjson.dumps(env(2)))
    counters = (("cartouche:rl:{bt}:1", "cartouche:rl:{bt}:0"),)
    q = Quota(counters, (3 * size,), 60_000, 0.0, kinds=(BYTES,))
    assert store.append(gid, 1, [env(1), env(2)], quota=q).outcome == "ok"
    assert q.stored == size and int(store.r.get("cartouche:rl:{bt}:1")) == size
    q = Quota(counters, (3 * size,), 60_000, 0.0, kinds=(BYTES,))
    big = [env(i) for i in range(3, 10)]
    res = store.append(gid, 3, big, quota=q)
    assert res.outcome == "limited" and store.version(gid) == 3
    # writes and bytes side by side; nothing stored yet (0 bytes): only the writes count
    q = Quota((("cartouche:rl:{w2}:1", "cartouche:rl:{w2}:0"), counters[0]), (5, 1), 60_000,
              0.0, kinds=(WRITES, BYTES))
    reply = store._charge(keys=q.keys(), args=q.args())
    assert reply == [0, 1, 0, 0, 0] and store.r.get("cartouche:rl:{w2}:1") == b"1"


def test_load_reads_a_game_in_one_call(store):
    gid = make(store)
    store.append(gid, 1, [env(1), env(2)])
    store.save_snapshot(gid, 3, {"state": {"s": 3}, "shell": {}})
    store.append(gid, 3, [env(3), env(4)])
    got = store.load(gid, with_meta=True)
    assert got.meta["type"] == "diamant" and got.seed == "00" * 32
    assert got.first.version == 1 and got.first.envelope["data"] == {"i": 0}
    assert got.snapshot == (3, {"state": {"s": 3}, "shell": {}})
    assert [e.version for e in got.events] == [4, 5]
    # up to a version below the snapshot: no snapshot, the events after the creation
    got = store.load(gid, upto=2)
    assert got.meta is None and got.snapshot is None and [e.version for e in got.events] == [2]
    # after a version the caller already has: no snapshot lookup
    got = store.load(gid, after=4)
    assert got.snapshot is None and [e.version for e in got.events] == [5]
    assert store.load(gid, after=5).events == [] and store.load(gid, upto=1).events == []
    missing = store.load("nosuchgame", with_meta=True)
    assert missing.meta is None and missing.first is None and missing.events == []


def test_load_leaves_a_long_range_to_xrange_and_gets_the_same_events(store, monkeypatch):
    from service.store import events as events_mod
    gid = make(store)
    store.append(gid, 1, [env(i) for i in range(1, 40)])
    store.save_snapshot(gid, 10, {"state": {}, "shell": {}})
    short = store.load(gid, with_meta=True)
    monkeypatch.setattr(events_mod, "LOAD_INLINE_EVENTS", 5)
    long = store.load(gid, with_meta=True)
    assert long == short and [e.version for e in long.events] == list(range(11, 41))
    assert [e.version for e in store.load(gid, upto=20).events] == list(range(11, 21))
    assert [e.version for e in store.load(gid, after=30, upto=33).events] == [31, 32, 33]


@pytest.mark.parametrize("cluster", [False, True])
def test_a_listing_by_type_and_status_pages_through_chunks_newest_first(store, monkeypatch,
                                                                      cluster):
    """``GET /v1/games?type=&status=``: the smaller index read a chunk at a time and checked
    against the other; every page and the count agree with the two indexes' intersection,
    across chunk boundaries, ties by id descending (on a cluster the count comes from reading
    every chunk instead of ``ZINTERCARD``)."""
    import random

    from service.store import events

    monkeypatch.setattr(events, "LIST_CHUNK", 7)
    monkeypatch.setattr(store, "cluster", cluster)
    rnd = random.Random(5)
    pipe = store.r.pipeline()
    truth = []
    for i in range(120):
        gid, ms = f"{i:020x}", i // 3  # three games a millisecond
        game_type, status = rnd.choice(["diamant", "papyrus"]), rnd.choice(["active", "finished"])
        pipe.zadd(keys.index_type(game_type), {gid: ms})
        pipe.zadd(keys.index_status(status), {gid: ms})
        if (game_type, status) == ("diamant", "finished"):
            truth.append((ms, gid))
    pipe.execute()
    newest = [gid for _, gid in sorted(truth, reverse=True)]
    assert 20 < len(newest) < 100
    for offset, limit in ((0, 5), (5, 9), (13, 1), (0, 200), (len(newest) - 2, 10),
                          (len(newest), 10)):
        assert store.list_ids("diamant", "finished", offset, limit) == \
            (newest[offset:offset + limit], len(newest))
    assert store.list_ids("papyrus", "waiting", 0, 10) == ([], 0)


@pytest.mark.parametrize("cluster", [False, True])
def test_the_type_and_status_index_serves_listings_and_is_rebuilt_when_it_disagrees(
        redis_url, monkeypatch, cluster):
    """``GET /v1/games?type=&status=`` reads one page of the type-and-status index, kept by
    every creation and status change. Games indexed without it (by a version before it, or by
    a process of that version still running during an upgrade) make its sums disagree with the
    type and status indexes: listings then answer from those (the same pages), and a rebuild
    (once per REBUILD_EVERY_S across processes) makes it exact again. With ``cluster`` the
    rebuild copies chunk by chunk (the sets live in other slots there)."""
    import random

    from service.store import events

    monkeypatch.setattr(events, "LIST_CHUNK", 7)
    store = EventStore(redis.Redis.from_url(redis_url), game_types=("diamant", "papyrus"))
    rnd = random.Random(3)
    truth = {}  # gid -> (type, status, ms)
    for i in range(60):
        gid, ms = f"{i:020x}", i // 2
        game_type = rnd.choice(["diamant", "papyrus"])
        store.create(gid, {"type": game_type, "created_ms": str(ms), "tokens": "[]",
                           "status": "active", "created_version": "1"}, "00" * 32, [env(0)],
                     listing=(game_type, ms))
        status = rnd.choice(["active", "finished", "aborted"])
        if status != "active":
            store.append(gid, 1, [env(1)], status=status, listing=(game_type, ms))
        truth[gid] = (game_type, status, ms)

    def expected(game_type, status):
        return [g for g, (t, s, ms) in sorted(truth.items(), key=lambda kv: (kv[1][2], kv[0]),
                                              reverse=True) if (t, s) == (game_type, status)]

    def pages_agree():
        for game_type in ("diamant", "papyrus"):
            for status in ("active", "finished", "aborted", "waiting"):
                want = expected(game_type, status)
                for offset, limit in ((0, 4), (3, 5), (0, 100), (len(want), 3)):
                    assert store.list_ids(game_type, status, offset, limit) == \
                        (want[offset:offset + limit], len(want)), (game_type, status, offset)

    # kept by every write: consistent, and the listing is one page of one set
    assert store.type_status_consistent()
    with monkeypatch.context() as m:  # (the fallback's commands: not called)
        m.setattr(store.r, "zmscore", None)
        m.setattr(store.r, "zintercard", None)
        pages_agree()
    # an upgrade: every game indexed before the type-and-status index existed
    store.r.delete(*(keys.index_type_status(t, s) for t in ("diamant", "papyrus")
                     for s in events.STATUSES))
    assert not store.type_status_consistent()
    pages_agree()
    monkeypatch.setattr(store, "cluster", cluster)
    assert store.repair_type_status_index() is True
    assert store.type_status_consistent()
    assert store.repair_type_status_index() is False  # nothing to repair
    with monkeypatch.context() as m:  # (the fallback's commands: not called)
        m.setattr(store.r, "zmscore", None)
        m.setattr(store.r, "zintercard", None)
        pages_agree()
    # a process of the older version, still running, creates a game and ends another
    new, old = f"{99:020x}", next(g for g, (t, s, _) in truth.items() if s == "active")
    store.r.zadd(keys.index_all(), {new: 40})
    store.r.zadd(keys.index_type("papyrus"), {new: 40})
    store.r.zadd(keys.index_status("active"), {new: 40})
    truth[new] = ("papyrus", "active", 40)
    store.r.zadd(keys.index_status("finished"), {old: truth[old][2]})
    store.r.zrem(keys.index_status("active"), old)
    truth[old] = (truth[old][0], "finished", truth[old][2])
    assert not store.type_status_consistent()
    pages_agree()  # from the type and status indexes
    assert store.repair_type_status_index() is False  # one rebuild per REBUILD_EVERY_S
    assert 0 < store.r.ttl(keys.index_rebuild_lock()) <= events.REBUILD_EVERY_S
    store.r.delete(keys.index_rebuild_lock())  # ... later
    assert store.repair_type_status_index() is True
    assert store.type_status_consistent()
    with monkeypatch.context() as m:  # (the fallback's commands: not called)
        m.setattr(store.r, "zmscore", None)
        m.setattr(store.r, "zintercard", None)
        pages_agree()
    # a game unlisted leaves it too
    store.unindex(new, "papyrus")
    del truth[new]
    assert store.type_status_consistent()
    pages_agree()


def test_the_sweeps_pages_go_through_every_active_game_once_a_rotation(store):
    """However many games were created in the same millisecond, a rotation of pages holds
    every active game once; after its last (short) page the next starts at the newest."""
    created = {"g5a": 5, "g5b": 5, "g5c": 5, "g5d": 5, "g5e": 5, "g4a": 4, "g4b": 4,
               "g3": 3, "g2": 2, "g1": 1}
    store.r.zadd(keys.index_status("active"), created)
    store.r.zadd(keys.index_status("finished"), {"done": 6})  # not active: never in a page
    for _ in range(2):
        pages = []
        while not pages or len(pages[-1]) == 3:
            pages.append(store.sweep_page(3))
        seen = [game_id for page in pages for game_id, _ in page]
        assert len(pages) == 4 and sorted(seen) == sorted(created)
        assert all(created[game_id] == at for page in pages for game_id, at in page)
        assert [at for page in pages for _, at in page] == sorted(created.values(),
                                                                   reverse=True)
    # a game ends and one is created meanwhile: the rotation goes on from where it stood
    first = store.sweep_page(3)
    assert [at for _, at in first] == [5, 5, 5]
    store.r.zrem(keys.index_status("active"), first[0][0])
    store.r.zadd(keys.index_status("active"), {"g7": 7})
    rest = store.sweep_page(10)
    assert sorted(g for g, _ in rest) == sorted(set(created) - {g for g, _ in first})
    assert store.sweep_page(10)[0] == ("g7", 7)


def test_one_caller_claims_each_window_of_the_sweep(store):
    assert store.claim_sweep_window(5, 100.0) is True
    assert store.claim_sweep_window(5, 100.0) is False
    assert store.claim_sweep_window(5, 104.99) is False
    assert store.claim_sweep_window(5, 105.0) is True
    assert 1 <= store.r.ttl(keys.sweep_window(21)) <= 11
