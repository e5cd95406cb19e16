"""A player's notice stream against a real server: pages after an id (exclusive, up to an id
inclusive), whether the stream had dropped notices when a page was read, and the blocking read
the hubs use."""

import threading

import pytest
import redis

from service.store.events import StreamFollower
from service.store.players import PlayerStore


@pytest.fixture
def client(redis_url):
    c = redis.Redis.from_url(redis_url)
    yield c
    c.close()


def test_a_page_is_exclusive_after_and_inclusive_up_to(client):
    players = PlayerStore(client)
    ids = [players.notify("p-1", "x", {"i": i}) for i in range(5)]
    page = players.page("p-1", "0-0", count=10)
    assert [n.id for n in page.notices] == ids and page.oldest is None
    assert [n.data["i"] for n in players.page("p-1", ids[1], ids[3], count=10).notices] == [2, 3]
    assert [n.id for n in players.page("p-1", ids[0], count=2).notices] == ids[1:3]
    assert players.page("p-1", ids[-1], count=10).notices == []


def test_a_page_of_a_stream_never_written_is_empty(client):
    page = PlayerStore(client).page("p-nobody", "0-0", count=10)
    assert page.notices == [] and page.oldest is None


def test_a_page_says_when_the_stream_had_dropped_notices(client):
    players = PlayerStore(client, stream_max=5)  # MAXLEN ~ keeps whole nodes: 100 entries here
    ids = [players.notify("p-1", "x", {"i": i}) for i in range(300)]
    page = players.page("p-1", "0-0", count=1000)
    kept = [n.id for n in page.notices]
    assert 5 <= len(kept) < 300 and kept == ids[-len(kept):]
    assert page.oldest == kept[0]
    # the same answer from any position: the reader compares its own position with it
    assert players.page("p-1", kept[10], count=1).oldest == kept[0]


def test_the_blocking_read_waits_for_the_next_notice(redis_url, client):
    players = PlayerStore(client)
    first = players.notify("p-1", "x", {"i": 0})
    follower = StreamFollower(redis.Redis.from_url(redis_url))
    assert follower.read_notices("p-1", first, count=10, block_ms=50) == []
    later = threading.Timer(0.2, players.notify, ("p-1", "y", {"i": 1}))
    later.start()
    got = follower.read_notices("p-1", first, count=10, block_ms=5000)
    later.join()
    assert [(n.type, n.data) for n in got] == [("y", {"i": 1})]
