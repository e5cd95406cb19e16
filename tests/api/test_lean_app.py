"""The per-request shortcuts (service/api/fastpaths.py's LeanFlask, service/logs.py's rfc3339)
change nothing a client or an operator sees, and the application's observer hook
(GameService.observe) hears every command, refusal and conflict."""

import functools
import time

import pytest
from flask import Flask, session

from service import logs
from service.api.fastpaths import LeanFlask
from service.application.errors import NotYourTurn
from service.application.observer import Observer

from tests.api.helpers import act, auth, create


class Recorder(Observer):
    def __init__(self):
        self.commands, self.conflicts = [], []

    def command(self, game_type, exc, conflicts):
        self.commands.append((game_type, type(exc) if exc is not None else None, conflicts))

    def append_conflict(self, game_type):
        self.conflicts.append(game_type)


def test_an_observer_hears_each_command_with_its_outcome(svc, client):
    recorder = Recorder()
    svc.observe(recorder)
    gid, tokens, _ = create(client, 3)
    assert act(client, gid, tokens[0]).status_code == 201
    assert act(client, gid, tokens[0]).status_code == 409  # already decided this step
    assert recorder.commands == [("diamant", None, 0), ("diamant", NotYourTurn, 0)]


def test_an_observer_hears_a_lost_race_as_a_conflict_and_the_command_as_retried(
        redis_url, queue_url):
    from service.app import create_app
    from service.config import Config

    def make():
        return create_app(Config(redis_url=redis_url, queue_url=queue_url, snapshot_every=10))

    first, second = make(), make()
    recorder = Recorder()
    second.extensions["cartouche"].observe(recorder)
    a, b = first.test_client(), second.test_client()
    gid, tokens, _ = create(a, 3)
    assert b.get(f"/v1/games/{gid}", headers=auth(tokens[1])).status_code == 200  # cached
    assert act(a, gid, tokens[0]).status_code == 201
    assert act(b, gid, tokens[1]).status_code == 201  # decided again after the conflict
    assert recorder.conflicts == ["diamant"]
    assert recorder.commands == [("diamant", None, 1)]


def test_no_session_cookie_is_ever_set_and_the_session_refuses_writes(app, client):
    gid, tokens, _ = create(client, 3)
    r = act(client, gid, tokens[0])
    assert r.status_code == 201
    assert "Set-Cookie" not in r.headers and "Cookie" not in r.headers.get("Vary", "")
    with app.test_request_context("/"):
        app.preprocess_request()
        assert dict(session) == {}
        with pytest.raises(RuntimeError):  # Flask's NullSession: no secret key, no session
            session["x"] = 1


def test_ensure_sync_hands_back_plain_functions_and_leaves_the_rest_to_flask():
    lean, plain_flask = LeanFlask(__name__), Flask(__name__)

    def view():
        return "ok"

    async def async_view():
        return "ok"

    assert lean.ensure_sync(view) is view
    partial = functools.partial(view)
    assert lean.ensure_sync(partial) is plain_flask.ensure_sync(partial)
    # a coroutine function goes through Flask's own ensure_sync (wrapped, or refused without
    # the async extra), never handed back as it is
    try:
        expected = plain_flask.ensure_sync(async_view)
    except RuntimeError as exc:
        with pytest.raises(RuntimeError, match=str(exc)[:40]):
            lean.ensure_sync(async_view)
    else:
        assert lean.ensure_sync(async_view) is not async_view and expected is not async_view


def test_log_times_are_the_same_text_as_formatted_each_time_across_seconds():
    def slow(created):
        whole = int(created)
        return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(whole)) + \
            f".{int((created - whole) * 1000):03d}Z"

    now = 1_764_000_000.0
    # forwards over second boundaries, then back in time (a clock step), then forwards again
    for t in [now + k * 0.25 for k in range(12)] + [now - 3.5, now - 3.4, now + 0.999, now]:
        assert logs.rfc3339(t) == slow(t)
