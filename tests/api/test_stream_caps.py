"""service/api/streamcaps.py: the event streams a process holds are capped per bearer token, per
client address and in all -- game streams and player streams alike -- with 429
``too_many_streams`` / 503 ``streams_full`` and ``Retry-After`` past a cap; a closed stream
gives its place back. (The same on a real gunicorn, with 2,000 streams, and the Redis
connections they leave behind: tests/reliability/test_stream_connections.py.)"""

from __future__ import annotations

import pytest

from service.api import streamcaps
from service.api.streamcaps import StreamCapsConfig

from tests.api.helpers import auth, create, error, player

A, B = "10.0.0.1", "10.0.0.2"


def _stream(client, path, token=None, address=A):
    """Open a stream (its body is not read): the response, to close. (The test client serves
    every stream in this one thread, each holding its request context pushed until it is
    closed: close them last opened first.)"""
    return client.get(path, headers=auth(token), environ_base={"REMOTE_ADDR": address},
                      buffered=False)


def _close(responses):
    for res in reversed(responses):
        res.close()


def _refused(res, status, code, **details):
    assert res.status_code == status, res.data
    assert int(res.headers["Retry-After"]) >= 1
    assert error(res)["code"] == code
    assert error(res)["details"] == {**details, "retry_after_s": streamcaps.RETRY_AFTER_S}
    res.close()


@pytest.fixture
def game(client):
    gid, tokens, _ = create(client)
    return f"/v1/games/{gid}/events/stream", tokens


def test_per_address_a_spectator_is_counted_by_its_address(app, client, game):
    streamcaps.register(app, StreamCapsConfig(per_process=0, per_token=0, per_address=2))
    path, _ = game
    held = [_stream(client, path), _stream(client, path)]
    assert all(r.status_code == 200 for r in held)
    _refused(_stream(client, path), 429, "too_many_streams", per="address", max=2)
    other = _stream(client, path, address=B)  # another client is not affected
    assert other.status_code == 200
    other.close()
    held.pop().close()  # a closed stream gives its place back
    held.append(_stream(client, path))
    assert held[-1].status_code == 200
    _close(held)
    assert app.extensions["cartouche_stream_caps"].total == 0


def test_per_token_game_and_player_streams_alike(app, client, game):
    streamcaps.register(app, StreamCapsConfig(per_process=0, per_token=2, per_address=0))
    path, tokens = game
    me = player(client, "Ada")
    mine = "/v1/players/me/events/stream"
    held = [_stream(client, path, tokens[0]), _stream(client, mine, me["token"]),
            _stream(client, mine, me["token"], address=B)]
    assert [r.status_code for r in held] == [200, 200, 200]
    # the same token from another address is the same client
    _refused(_stream(client, mine, me["token"], address="10.0.0.3"), 429, "too_many_streams",
             per="token", max=2)
    _refused(_stream(client, path, me["token"]), 429, "too_many_streams", per="token", max=2)
    held.append(_stream(client, path, tokens[1]))  # another token
    held.append(_stream(client, path))  # a spectator: no token to count
    assert [r.status_code for r in held[3:]] == [200, 200]
    _close(held)


def test_per_process_503_streams_full(app, client, game):
    streamcaps.register(app, StreamCapsConfig(per_process=3, per_token=0, per_address=0))
    path, tokens = game
    me = player(client, "Ada")
    held = [_stream(client, path, address=A), _stream(client, path, tokens[0], address=B),
            _stream(client, "/v1/players/me/events/stream", me["token"], address=B)]
    assert [r.status_code for r in held] == [200, 200, 200]
    _refused(_stream(client, path, address="10.0.0.9"), 503, "streams_full", max=3)
    _refused(_stream(client, "/v1/players/me/events/stream", me["token"]), 503,
             "streams_full", max=3)
    # what is not a stream is not capped
    assert client.get(path.rsplit("/", 2)[0]).status_code == 200
    assert client.get("/readyz").status_code == 200
    held.pop().close()
    held.append(_stream(client, path))
    assert held[-1].status_code == 200
    _close(held)


def test_refusals_come_after_the_stream_own_checks(app, client, game):
    """A bad token or an unknown game answers as before and is not counted."""
    caps = streamcaps.register(app, StreamCapsConfig(per_process=1, per_token=1, per_address=1))
    path, _ = game
    assert _stream(client, path, "not-a-token").status_code == 401
    assert _stream(client, "/v1/games/" + "a" * 16 + "/events/stream").status_code == 404
    assert _stream(client, "/v1/players/me/events/stream").status_code == 401
    assert caps.total == 0 and not caps.held


def test_the_defaults_and_the_environment():
    assert StreamCapsConfig.from_env({}) == StreamCapsConfig(800, 50, 200)
    assert StreamCapsConfig.from_env({"WEB_WORKER_CONNECTIONS": "500"}).per_process == 400
    assert StreamCapsConfig.from_env({"WEB_WORKER_CLASS": "gthread"}).per_process == 6
    assert StreamCapsConfig.from_env({"CARTOUCHE_SSE_MAX_STREAMS": "0",
                                      "CARTOUCHE_SSE_MAX_STREAMS_PER_TOKEN": "3",
                                      "CARTOUCHE_SSE_MAX_STREAMS_PER_ADDRESS": "7"}) == \
        StreamCapsConfig(0, 3, 7)
    with pytest.raises(ValueError):
        StreamCapsConfig.from_env({"CARTOUCHE_SSE_MAX_STREAMS": "-1"})


def test_a_cap_on_streams_the_redis_pool_cannot_serve_stops_the_server_at_start(
        redis_url, monkeypatch):
    """Each followed game holds one of the hubs' Redis connections: with 6 and a cap of 10,
    streams 7 to 10 were answered 200, then ended with a logged error."""
    from service.app import create_app
    from service.application import NullScheduler
    from service.config import Config

    monkeypatch.setenv("CARTOUCHE_SSE_MAX_STREAMS", "10")
    with pytest.raises(ValueError, match="CARTOUCHE_REDIS_MAX_CONNECTIONS"):
        create_app(Config(redis_url=redis_url, redis_max_connections=6),
                   scheduler=NullScheduler())
    monkeypatch.setenv("CARTOUCHE_SSE_MAX_STREAMS", "5")
    create_app(Config(redis_url=redis_url, redis_max_connections=6), scheduler=NullScheduler())
