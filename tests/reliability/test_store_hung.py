"""A store that stops answering (a hung server, a network partition): every request answers 503
``store_unavailable`` after one store timeout, not one per store call it would have made."""

from __future__ import annotations

import shutil
import signal
import tempfile
import time

import pytest

from service import embedded
from service.app import create_app
from service.config import Config

from tests.api.helpers import auth

TIMEOUT_S = 1.0


@pytest.fixture
def hung():
    """A server of the test's own, and a function that stops (SIGSTOP) or resumes it."""
    data = tempfile.mkdtemp(prefix="cartouche-hung-")
    server = embedded.start(data)

    def pause(stopped: bool) -> None:
        server.process.send_signal(signal.SIGSTOP if stopped else signal.SIGCONT)

    yield server, pause
    pause(False)
    server.stop()
    shutil.rmtree(data, ignore_errors=True)


def timed(call):
    start = time.monotonic()
    res = call()
    return res, time.monotonic() - start


def test_a_hung_store_costs_a_write_one_timeout(hung):
    server, pause = hung
    config = Config(redis_url=server.url, queue_url=server.url + "?db=1",
                    redis_timeout_s=TIMEOUT_S)
    client = create_app(config).test_client()
    game = {"type": "diamant", "players": [{"name": "a"}] * 3}
    made = client.post("/v1/games", json=game).get_json()
    token = made["seats"][0]["token"]
    pause(True)
    try:
        for res, seconds in (timed(lambda: client.post("/v1/games", json=game)),
                             timed(lambda: client.post(f"/v1/games/{made['id']}/resign",
                                                       headers=auth(token))),
                             timed(lambda: client.get(f"/v1/games/{made['id']}"))):
            assert res.status_code == 503 and res.headers["Retry-After"] == "1", res.get_json()
            assert res.get_json()["error"]["code"] == "store_unavailable"
            assert TIMEOUT_S <= seconds < 1.6 * TIMEOUT_S, seconds
    finally:
        pause(False)
    assert client.post("/v1/games", json=game).status_code == 201
