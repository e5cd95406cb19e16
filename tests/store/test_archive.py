"""Archives in the store: one script swaps a game over for its compressed document only when the
stream is at the version the document holds; every read answers the same from it; running the
archive twice, concurrently, or killed (the archiving process, or the server) at any point
leaves either the live game or the archived one, never a mix."""

from __future__ import annotations

import os
import random
import subprocess
import sys
import tempfile
import threading
import time

import orjson
import pytest
import redis
import zstandard

from service import embedded
from service.store import keys
from service.store.archive import decode, encode
from service.store.events import EventStore

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


@pytest.fixture
def store(redis_url):
    return EventStore(redis.Redis.from_url(redis_url))


def env(i, **extra):
    return {"type": "Test", "seat": None, "data": {"i": i, **extra}, "at": None, "schema": 1}


def game(store, gid, n=30, status="finished"):
    """A game of ``n`` versions (its last append sets ``status``), snapshots at 10 and 20."""
    store.create(gid, {"type": "diamant", "created_ms": "1", "tokens": "[]",
                       "status": "active", "created_version": "1"}, "ab" * 32, [env(0)])
    for v in range(1, n - 1):
        assert store.append(gid, v, [env(v, text="é" * (v % 7))]).outcome == "ok"
        if v % 10 == 0:
            store.save_snapshot(gid, v, {"state": {"v": v}, "shell": None})
    assert store.append(gid, n - 1, [env(n - 1)], status=status).version == n
    return gid


def quick_game(store, gid, n=30):
    """A finished game of ``n`` versions written in one call (the crash tests make many)."""
    store.create(gid, {"type": "diamant", "created_ms": "1", "tokens": "[]",
                       "status": "finished", "created_version": "1"}, "ab" * 32,
                 [env(v) for v in range(n)])
    return gid


def everything(store, gid):
    """What the store answers about a game, in a form to compare."""
    full = store.load(gid, with_meta=True)
    return {"read": store.read(gid), "some": store.read(gid, 3, 17, count=5),
            "tail": store.read(gid, 25), "none": store.read(gid, 30),
            "version": store.version(gid), "seed": store.seed(gid), "meta": store.meta(gid),
            "first": full.first, "events": [e.envelope for e in full.events][-1],
            "at 12": store.load(gid, upto=12, after=5).events,
            "newest snapshot": store.load(gid).snapshot,  # the document keeps the newest
            "at 25": (store.load(gid, upto=25).snapshot, store.load(gid, upto=25).events),
            "meta only": store.load(gid, upto=1, after=1, with_meta=True).meta}


def test_a_finished_game_reads_the_same_archived_from_a_fresh_process(store, redis_url):
    gid = game(store, "a1")
    before = everything(store, gid)
    assert store.archive(gid) == "ok"
    r = store.r
    assert r.exists(keys.events(gid), keys.seed(gid), keys.snapshots(gid),
                    keys.snapshot_versions(gid)) == 0
    fresh = EventStore(redis.Redis.from_url(redis_url))  # holds no document yet
    assert fresh.read(gid, 3, 17, count=5) == before["some"]  # a read before any load
    assert everything(fresh, gid) == before
    assert everything(store, gid) == before
    doc = decode(r.get(keys.archive(gid)))
    assert (doc.version, doc.seed, len(doc.envelopes)) == (30, "ab" * 32, 30)


def test_the_swap_refuses_what_is_not_a_game_over_at_the_documents_version(store):
    live = game(store, "b1", status="active")
    assert store.archive(live) == "live"
    assert store.archive("ffff") == "missing"
    gid = game(store, "b2")
    rows = store.r.xrange(keys.events(gid))
    old = encode(29, "ab" * 32, [f[b"e"] for _, f in rows[:29]])  # made before the last append
    assert store.swap(gid, 29, old) == "stale"
    assert store.swap(live, 30, encode(30, "ab" * 32, [f[b"e"] for _, f in rows])) == "live"
    for g in (gid, live):  # nothing changed
        assert store.r.exists(keys.archive(g)) == 0 and store.version(g) == 30
        assert store.seed(g) == "ab" * 32
    assert store.archive(gid) == "ok"
    assert store.archive(gid) == "done"
    assert store.swap(gid, 30, old) == "done"  # the document stays the one written
    assert [e.envelope for e in store.read(gid)] == [
        e.envelope for e in EventStore(store.r).read(gid)]
    assert len(store.read(gid)) == 30


def test_an_archived_game_takes_no_append(store):
    gid = game(store, "c1")
    assert store.archive(gid) == "ok"
    for expected in (0, 29, 30):
        res = store.append(gid, expected, [env(99)])
        assert (res.outcome, res.version) == ("conflict", 30)
    assert store.r.exists(keys.events(gid)) == 0 and store.version(gid) == 30


def test_concurrent_archives_write_one_document(store, redis_url):
    gids = [game(store, f"d{i}") for i in range(4)]
    outcomes = []

    def archive_all():
        mine = EventStore(redis.Redis.from_url(redis_url))
        outcomes.extend(mine.archive(g) for g in gids)

    threads = [threading.Thread(target=archive_all) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sorted(outcomes).count("ok") == 4 and set(outcomes) <= {"ok", "done"}
    for g in gids:
        assert len(store.read(g)) == 30 and store.r.exists(keys.events(g)) == 0


ARCHIVER = """
import sys, redis
from service.store.events import EventStore
store = EventStore(redis.Redis.from_url(sys.argv[1]))
for i, gid in enumerate(sys.argv[2:]):
    store.archive(gid)
    if i == 0:
        print("running", flush=True)
"""


def live_or_archived(store, gid, want):
    """The game is whole, live or archived, and reads as ``want``."""
    r = store.r
    archived = r.exists(keys.archive(gid)) == 1
    if archived:
        assert r.exists(keys.events(gid), keys.seed(gid), keys.snapshots(gid)) == 0, gid
    else:
        assert r.xlen(keys.events(gid)) == 30 and r.exists(keys.seed(gid)) == 1, gid
    assert EventStore(r).read(gid) == want, gid
    return archived


def test_an_archiver_killed_mid_run_leaves_each_game_live_or_archived(store, redis_url):
    gids = [quick_game(store, f"e{i:03}") for i in range(300)]
    want = store.read(gids[0])
    proc = subprocess.Popen([sys.executable, "-c", ARCHIVER, redis_url, *gids], cwd=ROOT,
                            stdout=subprocess.PIPE, env=dict(os.environ, PYTHONPATH=ROOT))
    assert proc.stdout.readline() == b"running\n"
    time.sleep(random.uniform(0.005, 0.05))
    proc.kill()  # SIGKILL, wherever it is
    proc.wait()
    archived = [live_or_archived(store, g, want) for g in gids]
    print(f"killed after archiving {sum(archived)} of {len(gids)}")
    assert archived[0] and not all(archived)  # killed mid-run
    assert {store.archive(g) for g in gids} <= {"ok", "done"}  # the sweep finishes the job
    assert all(live_or_archived(store, g, want) for g in gids)


@pytest.mark.redis
def test_a_server_killed_mid_archiving_restarts_with_each_game_live_or_archived():
    binary = os.environ.get("CARTOUCHE_TEST_REDIS_SERVER")
    with tempfile.TemporaryDirectory() as data:
        server = embedded.start(data, binary=binary, unix_socket=False)
        port = int(server.url.rsplit(":", 1)[1].split("/")[0])
        store = EventStore(redis.Redis.from_url(server.url))
        gids = [quick_game(store, f"f{i:03}") for i in range(100)]
        store.r.config_set("appendfsync", "always")  # what is acknowledged is on disk
        want = store.read(gids[0])
        done = []

        def archive_all():
            try:
                for g in gids:
                    done.append(store.archive(g))
            except redis.RedisError:
                pass  # the server died under us

        worker = threading.Thread(target=archive_all)
        worker.start()
        time.sleep(random.uniform(0.02, 0.15))
        server.kill()
        worker.join()
        server = embedded.start(data, binary=binary, unix_socket=False, port=port)
        try:
            store = EventStore(redis.Redis.from_url(server.url))
            archived = [live_or_archived(store, g, want) for g in gids]
            print(f"server killed after {len(done)} archives acknowledged, {sum(archived)} kept")
            assert sum(archived) >= done.count("ok")  # appendfsync always: acknowledged stays
            assert {store.archive(g) for g in gids} <= {"ok", "done"}
            assert all(live_or_archived(store, g, want) for g in gids)
        finally:
            server.stop()


def test_a_document_reads_with_the_dictionary_it_was_written_with(monkeypatch, tmp_path):
    """Each type's document is compressed with its type's dictionary (its id in the frame);
    after a new dictionary is shipped (the old one kept as archive-<id>.zdict) old documents
    still read, new ones use the new dictionary; a type without one compresses plainly."""
    from service.store import archive

    envelopes = [orjson.dumps(env(i, text="x" * i)) for i in range(40)]
    old = encode(40, "ab" * 32, envelopes, None, "diamant")
    assert zstandard.get_frame_parameters(old).dict_id == 4001
    plain = encode(40, "ab" * 32, envelopes, None, "no-such-type")
    assert zstandard.get_frame_parameters(plain).dict_id == 0
    assert len(old) < len(plain)

    shipped = archive.dictionary_path("diamant").read_bytes()
    folder = tmp_path / "diamant" / "data"
    folder.mkdir(parents=True)
    (folder / "archive-4001.zdict").write_bytes(shipped)
    newer = bytearray(shipped)
    newer[4:8] = (4002).to_bytes(4, "little")  # the dictionary id, after the magic number
    (folder / "archive.zdict").write_bytes(bytes(newer))
    monkeypatch.setattr(archive, "GAMES_DIR", tmp_path)
    archive._dictionaries.cache_clear()
    try:
        new = encode(40, "ab" * 32, envelopes, None, "diamant")
        assert zstandard.get_frame_parameters(new).dict_id == 4002
        for blob in (old, new, plain):
            assert decode(blob).envelopes == tuple(envelopes)
        (folder / "archive-4001.zdict").unlink()  # a dictionary no longer shipped
        archive._dictionaries.cache_clear()
        with pytest.raises(ValueError, match="no archive dictionary 4001"):
            decode(old)
    finally:
        archive._dictionaries.cache_clear()


def test_every_game_type_ships_a_dictionary_with_its_own_id():
    from service.games import GAMES
    from service.store import archive

    missing = [t for t in GAMES if archive.dictionary(t) is None]
    assert not missing, (
        f"no {archive.dictionary_path(missing[0])}: train it with "
        f"`.venv/bin/python bench/train_archive_dicts.py {' '.join(missing)}` (it starts its "
        "own Valkey; seconds a type) and commit the file")
    ids = {archive.dictionary(t).dict_id() for t in GAMES}
    assert len(ids) == len(GAMES) and 0 not in ids


def test_documents_kept_in_files_read_the_same(redis_url, tmp_path):
    """With CARTOUCHE_ARCHIVE_DIR the document is a file and the key a small pointer; every
    read answers the same from a fresh process with the folder; without it, or with the file
    changed, the read fails with a clear error instead of answering something else."""
    store = EventStore(redis.Redis.from_url(redis_url), archive_dir=str(tmp_path))
    gid = game(store, "c0ffee")
    before = everything(store, gid)
    assert store.archive(gid) == "ok" and store.archive(gid) == "done"
    pointer = store.r.get(keys.archive(gid))
    path = tmp_path / "c0" / "c0ffee.zst"
    assert pointer.startswith(b"file:c0/c0ffee.zst:") and len(pointer) < 100
    assert decode(path.read_bytes()).version == 30
    assert everything(EventStore(store.r, archive_dir=str(tmp_path)), gid) == before
    with pytest.raises(ValueError, match="CARTOUCHE_ARCHIVE_DIR is not set"):
        EventStore(store.r).read(gid)
    path.write_bytes(path.read_bytes()[:-1])
    with pytest.raises(ValueError, match="not the document written"):
        EventStore(store.r, archive_dir=str(tmp_path)).read(gid)
