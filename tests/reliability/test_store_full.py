"""A store at its memory limit (maxmemory with noeviction, on a small real server this module
starts): every write answers 503 ``store_full`` with Retry-After, from the one error layer;
reads go on; /readyz says why; a write refused half-way leaves nothing half-written; and once
memory is freed everything works again."""

from __future__ import annotations

import shutil
import tempfile
import time

import pytest
import redis

from service import embedded
from service.app import create_app
from service.config import Config

from tests.api.helpers import auth

GAME = {"type": "diamant", "players": [{"name": "a"}] * 3}


@pytest.fixture(scope="module")
def small_server():
    data = tempfile.mkdtemp(prefix="cartouche-full-")
    server = embedded.start(data, maxmemory="4mb")
    yield server
    server.stop()
    shutil.rmtree(data, ignore_errors=True)


@pytest.fixture
def store(small_server):
    r = redis.Redis.from_url(small_server.url)
    r.config_set("maxmemory", "4mb")
    r.flushall()
    yield r
    r.flushall()
    r.close()


@pytest.fixture
def client(small_server, store):
    url = small_server.url
    return create_app(Config(redis_url=url, queue_url=url + "?db=1")).test_client()


def fill(r: redis.Redis) -> int:
    """Ballast until the server refuses writes; how many keys it took. Then the limit is set
    512 KB below what the server holds, so that what the server frees later on its own (idle
    clients' query buffers, ~30 KB each; the connections of earlier tests' apps, closed when
    they are collected) cannot make room again."""
    n = 0
    for size in (20_000, 1000, 50):  # a refused write's own arguments count: smaller ones
        with pytest.raises(redis.exceptions.OutOfMemoryError):
            while True:
                r.set(f"ballast:{n}", b"x" * size)
                n += 1
    r.config_set("maxmemory", r.info("memory")["used_memory"] - 512 * 1024)
    return n


def free(r: redis.Redis) -> None:
    for key in r.scan_iter("ballast:*"):
        r.delete(key)


def assert_full(res) -> None:
    assert res.status_code == 503, res.get_json()
    assert res.get_json()["error"]["code"] == "store_full"
    assert int(res.headers["Retry-After"]) >= 1


def games_stored(r: redis.Redis) -> set[str]:
    return {k.decode().split("{")[1].split("}")[0] for k in r.scan_iter("cartouche:{*}:meta")}


def indexed(r: redis.Redis) -> set[str]:
    return {m.decode() for m in r.zrange("cartouche:index:all", 0, -1)}


def test_a_full_store_refuses_every_write_and_keeps_reading(client, store):
    game = client.post("/v1/games", json=GAME).get_json()
    gid, tokens = game["id"], [s["token"] for s in game["seats"]]
    player = client.post("/v1/players", json={"name": "ada", "kind": "human"}).get_json()
    before = games_stored(store)
    assert client.get("/readyz").status_code == 200
    assert fill(store) > 0

    assert_full(client.post("/v1/games", json=GAME))
    assert_full(client.post("/v1/games/bulk", json={"games": [GAME] * 5}))
    assert_full(client.post(f"/v1/games/{gid}/actions", headers=auth(tokens[0]),
                            json={"action": {"type": "decide", "choice": "continue"}}))
    assert_full(client.post("/v1/players", json={"name": "bob", "kind": "human"}))
    assert_full(client.post("/v1/seeks", json={"type": "diamant", "seats": 3},
                            headers=auth(player["token"])))
    ready = client.get("/readyz")
    assert_full(ready)
    # reads go on
    assert client.get(f"/v1/games/{gid}").status_code == 200
    assert client.get(f"/v1/games/{gid}/events").status_code == 200
    assert client.get("/v1/games").get_json()["total"] == 1
    assert client.get(f"/v1/players/{player['id']}").status_code == 200
    # nothing was written by the refused requests
    assert games_stored(store) == before == indexed(store)
    assert client.get(f"/v1/games/{gid}").get_json()["version"] == game["version"]
    assert not list(store.scan_iter("cartouche:seek*"))

    free(store)
    assert client.get("/readyz").status_code == 200
    assert client.post("/v1/games", json=GAME).status_code == 201
    assert client.post("/v1/games/bulk", json={"games": [GAME] * 5}).status_code == 201
    res = client.post(f"/v1/games/{gid}/actions", headers=auth(tokens[0]),
                      json={"action": {"type": "decide", "choice": "continue"}})
    assert res.status_code == 201, res.get_json()
    assert client.post("/v1/players", json={"name": "bob", "kind": "human"}).status_code == 201
    assert client.post("/v1/seeks", json={"type": "diamant", "seats": 3},
                       headers=auth(player["token"])).status_code == 201
    assert len(games_stored(store)) == 7 and games_stored(store) == indexed(store)


def _created(res, before: set[str], store: redis.Redis) -> bool:
    """Whether ``res`` created a game; either way, the store holds exactly what it says: a
    201's game stored and listed, nothing more after a 503."""
    now = games_stored(store)
    assert now == indexed(store)
    if res.status_code == 201:
        assert now - before == {res.get_json()["id"]}
        return True
    assert_full(res)
    assert now == before
    return False


def test_seeks_past_their_time_read_expired_on_a_full_store(small_server, store):
    """Expiring a seek as it is read is a write, which a full store refuses: the reads answer
    all the same, the seek expired and out of the listings; the write comes once there is
    room."""
    from service.application import NullScheduler
    from tests.conftest import InjectedClock

    clock = InjectedClock()
    client = create_app(Config(redis_url=small_server.url, seek_ttl_s=60),
                        scheduler=NullScheduler(), now_ms=clock).test_client()
    ada = client.post("/v1/players", json={"name": "ada", "kind": "human"}).get_json()
    r = client.post("/v1/seeks", json={"type": "diamant", "seats": 3}, headers=auth(ada["token"]))
    assert r.status_code == 201, r.get_json()
    sid = r.get_json()["id"]
    assert fill(store) > 0
    clock.t += 61_000
    listed = client.get("/v1/seeks?type=diamant")
    assert listed.status_code == 200 and listed.get_json() == {"seeks": [], "total": 0}
    me = client.get("/v1/players/me", headers=auth(ada["token"]))
    assert me.status_code == 200 and me.get_json()["seeks"] == []
    one = client.get(f"/v1/seeks/{sid}")
    assert one.status_code == 200 and one.get_json()["status"] == "expired"
    free(store)
    assert client.get(f"/v1/seeks/{sid}").get_json()["status"] == "expired"
    assert client.get("/v1/seeks?type=diamant").get_json()["total"] == 0


def test_a_creation_that_starts_under_the_limit_is_stored_and_listed_whole(client, store):
    """The limit is set a little above what the server holds, and games are created until one
    is refused: a creation's one script runs once started (it may finish past the limit) and
    lists the game as it writes it, so every creation is stored and listed whole, and the
    first one over the limit is refused whole.

    The server's memory moves on its own (an idle client's ~30 KB query buffer is more than a
    game's ~5 KB): a setup whose first creation is refused is made again, with a wider margin
    (1.5 KB, doubling up to 48 KB), for up to 20 s."""
    client.post("/v1/games", json=GAME)
    deadline = time.monotonic() + 20
    tries = 0
    while time.monotonic() < deadline:
        margin = 1500 * 2 ** (tries % 6)
        tries += 1
        store.config_set("maxmemory", store.info("memory")["used_memory"] + margin)
        try:
            created = 0
            for _ in range(40):  # 40 games hold ~200 KB, past the widest margin
                before = games_stored(store)
                if not _created(client.post("/v1/games", json=GAME), before, store):
                    break
                created += 1
            else:
                pytest.fail(f"40 creations past a margin of {margin} bytes")
        finally:
            store.config_set("maxmemory", "4mb")
        if created:
            break
    else:
        pytest.fail("no creation at the limit was followed by a refusal in 20 s")
    assert client.post("/v1/games", json=GAME).status_code == 201


def test_a_player_refused_half_way_leaves_its_external_id_free(small_server, store):
    """A player is four writes (its external id, its profile, its fields, its token): a
    refusal after the first deletes what was written, so the external id is free again."""
    from service.store.players import PlayerStore, by_external, profile

    players = PlayerStore(store)
    calls = store.info("commandstats")
    sets, hsetnxs = (calls.get(c, {}).get("calls", 0) for c in ("cmdstat_set", "cmdstat_hsetnx"))
    # a long external id: its claim fits under the limit, then the profile's fields, which
    # repeat it, take the server past it
    ext = ("site", "x" * 50_000)
    store.config_set("maxmemory", store.info("memory")["used_memory"] + 150_000)
    with pytest.raises(redis.exceptions.OutOfMemoryError):
        players.create("p-0123456789abcdef", {"name": "n" * 50_000, "kind": "human",
                                              "external_id": ext[1]}, "d" * 64, ext)
    stats = store.info("commandstats")
    assert stats["cmdstat_set"]["calls"] == sets + 1  # the claim was written
    assert stats["cmdstat_hsetnx"]["calls"] == hsetnxs + 1  # and the profile
    assert store.get(by_external(*ext)) is None
    assert not store.exists(profile("p-0123456789abcdef"))


def _refusals(r: redis.Redis) -> int:
    return r.info("errorstats").get("errorstat_OOM", {}).get("count", 0)


def test_jobs_refused_by_a_full_queue_server_never_fail_a_stored_write(redis_url, small_server,
                                                                        store):
    """RQ on its own server, full: creating a game with a bot (its first bot job), acting in
    it (the bot's next job), opening a seek (its expiry job) are answered 201 and stored; the
    jobs lost are the sweep's work."""
    app = create_app(Config(redis_url=redis_url, queue_url=small_server.url))
    c = app.test_client()
    fill(store)
    refused = _refusals(store)
    res = c.post("/v1/games", json={"type": "diamant", "players": [
        {"name": "a"}, {"name": "b"}, {"name": "r", "bot": {"level": "random"}}]})
    assert res.status_code == 201, res.get_json()
    game = res.get_json()
    res = c.post(f"/v1/games/{game['id']}/actions", headers=auth(game["seats"][0]["token"]),
                 json={"action": {"type": "decide", "choice": "continue"}})
    assert res.status_code == 201, res.get_json()
    assert c.get(f"/v1/games/{game['id']}").get_json()["version"] == game["version"] + 1
    player = c.post("/v1/players", json={"name": "ada", "kind": "human"}).get_json()
    res = c.post("/v1/seeks", json={"type": "diamant", "seats": 3},
                 headers=auth(player["token"]))
    assert res.status_code == 201 and res.get_json()["status"] == "waiting"
    assert _refusals(store) >= refused + 3  # every job was refused by the queue's server


def test_a_rematch_refused_by_a_full_store_is_neither_created_nor_linked(client, store):
    from tests.api.test_replays import play_to_end

    gid, tokens = play_to_end(client, "tides-of-time", 2)
    before = games_stored(store)
    fill(store)
    assert_full(client.post(f"/v1/games/{gid}/rematch", headers=auth(tokens[0])))
    assert games_stored(store) == before == indexed(store)
    assert "rematch" not in client.get(f"/v1/games/{gid}").get_json()
    free(store)
    res = client.post(f"/v1/games/{gid}/rematch", headers=auth(tokens[0]))
    assert res.status_code == 201, res.get_json()
    assert client.get(f"/v1/games/{gid}").get_json()["rematch"] == res.get_json()["id"]


def test_a_process_started_while_the_store_is_full_signs_exports(small_server, store):
    """The signing key is kept in the store; a process reads it without writing (a full store
    refuses every write, even a SET NX of a key it holds). The API's start generates it."""
    from service.signing import STORED_KEY, ensure_stored_key

    url = small_server.url
    ensure_stored_key({"REDIS_URL": url})
    assert store.exists(STORED_KEY)
    first = create_app(Config(redis_url=url, queue_url=url + "?db=1")).test_client()
    game = first.post("/v1/games", json=GAME).get_json()
    assert first.post(f"/v1/games/{game['id']}/abort",
                      headers=auth(game["seats"][0]["token"])).status_code == 200
    fill(store)
    later = create_app(Config(redis_url=url, queue_url=url + "?db=1")).test_client()
    doc = later.get(f"/v1/games/{game['id']}/export")
    assert doc.status_code == 200, doc.get_json()
    keys = later.get("/v1/replays/keys")
    assert keys.status_code == 200
    assert doc.get_json()["signature"]["key_id"] == keys.get_json()["keys"][0]["key_id"]
