"""The action route in front of Flask (``service.api.fastpaths.ActionRoute``): answers exactly
what the Flask route answers (same statuses, bodies, headers, rate limits, request ids, access
log and metrics), stands aside for any body it does not take as is, and is not installed when
the app has a hook it does not stand in for; a body the server cannot read to its end is a 400
there and on Flask's routes."""

from __future__ import annotations

import io
import json
import re

import pytest
import redis
from werkzeug.test import EnvironBuilder, run_wsgi_app

from service.api.fastpaths import ActionRoute
from service.app import create_app
from service.config import Config, OpsConfig

from .helpers import auth, json_log_lines

SEED = "5e" * 32
ROUTE = "/v1/games/<gid:game_id>/actions"


def flask_only(app):
    """The same app with requests going straight to Flask."""
    assert isinstance(app.wsgi_app, ActionRoute)
    app.wsgi_app = app.wsgi_app.wsgi_app
    return app


def script(client) -> list:
    """One game played through a scripted series of requests, good and bad; what each answer
    says (status line, body, headers), request ids and game ids left out (they are random)."""
    r = client.post("/v1/games", json={"type": "diamant", "seed": SEED,
                                       "players": [{"name": f"p{i}"} for i in range(3)]})
    game = r.get_json()
    gid, tokens = game["id"], [s["token"] for s in game["seats"]]
    url = f"/v1/games/{gid}/actions"
    decide = {"action": {"type": "decide", "choice": "continue"}}
    requests = [
        (url, decide, auth(tokens[0])),
        (url, decide, auth(tokens[0])),  # 409: already decided this step
        (url, {"action": {"type": "decide", "choice": "dance"}}, auth(tokens[1])),  # 422
        (url, decide, {}),  # 403: a spectator
        (url, decide, {"Authorization": "Basic abc"}),  # 401
        (url, decide, auth("not-a-token")),  # 401
        (f"/v1/games/{'0' * 20}/actions", decide, auth(tokens[1])),  # 404
        (url, {**decide, "expected_version": 1}, auth(tokens[1])),  # 409 version conflict
        (url, {**decide, "expected_version": 1.0}, auth(tokens[1])),  # Flask's: 422
        (url, {**decide, "extra": 1}, auth(tokens[1])),  # Flask's: 400
        (url, decide, {**auth(tokens[1]), "Idempotency-Key": "k1"}),
        (url, decide, {**auth(tokens[1]), "Idempotency-Key": "k1"}),  # the same answer
        (url, {**decide, "expected_version": 99}, {**auth(tokens[2]), "Idempotency-Key": "k1"}),  # 409
        (url, decide, {**auth(tokens[2]), "Idempotency-Key": ""}),  # 400
        (url, decide, {**auth(tokens[2]), "X-Request-ID": "trace-9"}),
    ]
    out = []
    for path, body, headers in requests:
        r = client.post(path, json=body, headers=headers)
        rid = r.headers.get("X-Request-ID")
        assert rid and (headers.get("X-Request-ID") in (None, rid))
        out.append((r.status_code, r.get_json(), sorted(
            (k, v) for k, v in r.headers.items() if k not in ("X-Request-ID",)), r.status))
    raw = client.post(url, data=b'{"action": ', headers={**auth(tokens[0]),
                                                         "Content-Type": "application/json"})
    out.append((raw.status_code, raw.get_json()))
    text = client.post(url, data=json.dumps(decide), headers={**auth(tokens[0]),
                                                              "Content-Type": "text/plain"})
    out.append((text.status_code, text.get_json()))
    text = re.sub(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z", "TIME", json.dumps(out))
    return json.loads(text.replace(gid, "GID"))


def test_the_route_answers_what_flask_answers(redis_url, queue_url):
    config = Config(redis_url=redis_url, queue_url=queue_url)
    with_route = script(create_app(config).test_client())
    redis.Redis.from_url(redis_url).flushdb()
    flask = script(flask_only(create_app(config)).test_client())
    assert with_route == flask
    assert [answer[0] for answer in with_route] == [
        201, 409, 422, 403, 401, 401, 404, 409, 422, 400, 201, 201, 409, 400, 201, 400, 415]


def test_the_route_is_installed_only_when_it_stands_in_for_every_hook(redis_url, queue_url):
    config = Config(redis_url=redis_url, queue_url=queue_url)
    assert isinstance(create_app(config).wsgi_app, ActionRoute)
    with_cors = create_app(config, ops=OpsConfig(cors_origins=("https://a.example",)))
    assert not isinstance(with_cors.wsgi_app, ActionRoute)


def test_its_access_line_and_metrics_are_the_routes(redis_url, queue_url):
    app = create_app(Config(redis_url=redis_url, queue_url=queue_url), ops=OpsConfig())
    client = app.test_client()
    game = client.post("/v1/games", json={"type": "diamant", "seed": SEED,
                                          "players": [{"name": f"p{i}"} for i in range(3)]})
    gid, token = game.get_json()["id"], game.get_json()["seats"][0]["token"]
    with json_log_lines() as lines:
        r = client.post(f"/v1/games/{gid}/actions", headers={**auth(token), "X-Request-ID": "a-1"},
                        json={"action": {"type": "decide", "choice": "continue"}})
    assert r.status_code == 201 and r.headers["X-Request-ID"] == "a-1"
    (line,) = [x for x in lines if x["logger"] == "cartouche.access"]
    assert line["request_id"] == "a-1" and line["route"] == ROUTE and line["status"] == 201
    assert line["method"] == "POST" and line["path"] == f"/v1/games/{gid}/actions"
    metrics = client.get("/metrics").get_data(as_text=True)
    assert f'cartouche_http_requests_total{{method="POST",route="{ROUTE}",status="201"}}' \
        in metrics


def test_an_unexpected_error_is_a_json_500_with_the_request_id(redis_url, queue_url,
                                                               monkeypatch):
    app = create_app(Config(redis_url=redis_url, queue_url=queue_url))
    client = app.test_client()
    game = client.post("/v1/games", json={"type": "diamant",
                                          "players": [{"name": f"p{i}"} for i in range(3)]})
    gid, token = game.get_json()["id"], game.get_json()["seats"][0]["token"]

    def broken(*args, **kwargs):
        raise RuntimeError("boom")

    monkeypatch.setattr(app.extensions["cartouche"], "act", broken)
    r = client.post(f"/v1/games/{gid}/actions", headers=auth(token),
                    json={"action": {"type": "decide", "choice": "continue"}})
    assert r.status_code == 500 and r.get_json()["error"]["code"] == "internal_error"
    assert r.headers["X-Request-ID"]


@pytest.mark.parametrize("limit", [1])
def test_its_rate_limit_is_the_apps(redis_url, queue_url, monkeypatch, limit):
    monkeypatch.setenv("CARTOUCHE_RATE_LIMIT_WRITES_PER_MINUTE", str(limit + 1))
    app = create_app(Config(redis_url=redis_url, queue_url=queue_url))
    assert isinstance(app.wsgi_app, ActionRoute)
    client = app.test_client()
    game = client.post("/v1/games", json={"type": "diamant",
                                          "players": [{"name": f"p{i}"} for i in range(3)]})
    gid, tokens = game.get_json()["id"], [s["token"] for s in game.get_json()["seats"]]
    body = {"action": {"type": "decide", "choice": "continue"}}
    assert client.post(f"/v1/games/{gid}/actions", json=body,
                       headers=auth(tokens[0])).status_code == 201
    assert client.post(f"/v1/games/{gid}/actions", json=body,
                       headers=auth(tokens[0])).status_code == 409
    r = client.post(f"/v1/games/{gid}/actions", json=body, headers=auth(tokens[0]))
    assert r.status_code == 429 and r.get_json()["error"]["code"] == "rate_limited"
    assert int(r.headers["Retry-After"]) >= 1


class _CutShort(io.RawIOBase):
    """A WSGI input whose client went away: what another worker class's server gives the app
    (gunicorn's own parser raises its ``NoMoreData``, an OSError)."""

    def readable(self) -> bool:
        return True

    def readinto(self, buffer) -> int:
        raise OSError("unexpected end of file while reading the body")


@pytest.mark.parametrize("path", ["/v1/games", "/v1/games/0123abcd/actions"],
                         ids=["flask route", "action route"])
@pytest.mark.parametrize("chunked", [False, True], ids=["a length", "chunked"])
def test_a_body_the_server_cannot_read_to_its_end_is_a_400_not_a_500(client, path, chunked):
    environ = EnvironBuilder(path=path, method="POST", content_type="application/json",
                             headers={"Authorization": "Bearer nobody"}).get_environ()
    environ["wsgi.input"] = io.BufferedReader(_CutShort())
    if chunked:
        environ.pop("CONTENT_LENGTH", None)
        environ["HTTP_TRANSFER_ENCODING"] = "chunked"
        environ["wsgi.input_terminated"] = True
    else:
        environ["CONTENT_LENGTH"] = "80"
    body, status, _ = run_wsgi_app(client.application, environ, buffered=True)
    assert status.startswith("400 ")
    assert json.loads(b"".join(body))["error"]["code"] == "malformed_request"
