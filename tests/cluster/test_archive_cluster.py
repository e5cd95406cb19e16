"""Archives on a real 3-master Redis Cluster: the swap script and the reads touch only the keys of
the game's hash tag (one slot), so games on every master archive and read back the same."""

import tempfile

import pytest

from service import embedded
from service.store import connect, keys
from service.store.events import EventStore


@pytest.fixture(scope="module")
def cluster_store():
    with tempfile.TemporaryDirectory() as tmp:
        cluster = embedded.start_cluster(tmp)
        try:
            yield EventStore(connect.client(cluster.url))
        finally:
            cluster.stop()


def test_games_on_every_master_archive_and_read_the_same(cluster_store):
    store = cluster_store
    gids = [f"{i:04x}cafe" for i in range(12)]
    wanted = {}
    for gid in gids:
        store.create(gid, {"type": "diamant", "created_ms": "1", "tokens": "[]",
                           "status": "active", "created_version": "1"}, "cd" * 32,
                     [{"type": "T", "seat": None, "data": {"i": 0}, "at": None, "schema": 1}])
        assert store.append(gid, 1, [{"type": "T", "seat": 0, "data": {"i": i}, "at": None,
                                      "schema": 1} for i in range(1, 40)],
                            status="finished").version == 40
        store.save_snapshot(gid, 20, {"state": {}, "shell": None})
        wanted[gid] = (store.read(gid), store.load(gid, with_meta=True))
    # three masters share the 16384 slots in three ranges: every one holds some of the games
    assert {store.r.keyslot(keys.events(g)) * 3 // 16384 for g in gids} == {0, 1, 2}
    for gid in gids:
        assert store.archive(gid) == "ok" and store.archive(gid) == "done"
    fresh = EventStore(store.r)  # no document held
    for gid in gids:
        events, loaded = wanted[gid]
        assert fresh.read(gid) == events and fresh.read(gid, 5, 9) == events[5:9]
        again = fresh.load(gid, with_meta=True)
        assert (again.meta, again.seed, again.first) == (loaded.meta, loaded.seed, loaded.first)
        assert (again.snapshot, again.events) == (loaded.snapshot, loaded.events)
        assert loaded.snapshot[0] == 20 and again.events == events[20:]
        assert fresh.version(gid) == 40 and fresh.seed(gid) == "cd" * 32
        assert fresh.append(gid, 40, [events[0].envelope]).version == 40  # a conflict
        assert store.r.exists(keys.events(gid)) == 0
