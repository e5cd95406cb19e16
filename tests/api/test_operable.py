"""An operable service (issue 22): CORS for browser front ends, request ids on every response
and log line, JSON logs, and ``/metrics`` counting what happens (in-process; the multiprocess
side is tests/reliability/test_metrics_gunicorn.py)."""

from __future__ import annotations

import hashlib
import io
import json
import logging
import re

import pytest
import redis
from prometheus_client.parser import text_string_to_metric_families

from service.app import create_app
from service.config import Config, OpsConfig
from service.logs import JsonFormatter

from .helpers import act, auth, create, json_log_lines

ALLOWED = "https://play.example.org"
PREFLIGHT = {"Access-Control-Request-Method": "POST",
             "Access-Control-Request-Headers": "Authorization, Content-Type"}


def samples(client) -> dict[tuple, float]:
    """/metrics as {(sample name, sorted labels): value}."""
    r = client.get("/metrics")
    assert r.status_code == 200 and r.content_type.startswith("text/plain")
    return {(s.name, tuple(sorted(s.labels.items()))): s.value
            for family in text_string_to_metric_families(r.get_data(as_text=True))
            for s in family.samples}


def value(snapshot, name, **labels) -> float:
    return snapshot.get((name, tuple(sorted(labels.items()))), 0.0)


def app_with(redis_url, queue_url, **ops):
    return create_app(Config(redis_url=redis_url, queue_url=queue_url), ops=OpsConfig(**ops))


# -- CORS ---------------------------------------------------------------------------------------

def test_a_preflight_from_an_allowed_origin_gets_the_cors_headers(redis_url, queue_url):
    client = app_with(redis_url, queue_url, cors_origins=(ALLOWED,)).test_client()
    r = client.options("/v1/games/0abc/actions", headers={"Origin": ALLOWED, **PREFLIGHT})
    assert r.status_code == 200
    assert r.headers["Access-Control-Allow-Origin"] == ALLOWED
    assert "POST" in r.headers["Access-Control-Allow-Methods"]
    allowed = {h.strip().lower() for h in r.headers["Access-Control-Allow-Headers"].split(",")}
    assert {"authorization", "content-type"} <= allowed
    # a page's tracing and error reporting add headers of their own: they pass too
    traced = {"Access-Control-Request-Method": "POST", "Access-Control-Request-Headers":
              "authorization, content-type, idempotency-key, traceparent, baggage, sentry-trace"}
    r = client.options("/v1/games", headers={"Origin": ALLOWED, **traced})
    allowed = {h.strip().lower() for h in r.headers["Access-Control-Allow-Headers"].split(",")}
    assert {"authorization", "idempotency-key", "traceparent", "baggage", "sentry-trace"} <= \
        allowed
    # the real request: a script may read the headers it needs
    r = client.post("/v1/games", json={"type": "diamant", "players": [{"name": "a"}] * 3},
                    headers={"Origin": ALLOWED})
    assert r.status_code == 201 and r.headers["Access-Control-Allow-Origin"] == ALLOWED
    exposed = {h.strip() for h in r.headers["Access-Control-Expose-Headers"].split(",")}
    assert {"Retry-After", "X-Request-ID"} <= exposed


def test_a_refused_action_over_the_write_limit_is_a_429_a_page_can_read(redis_url, queue_url,
                                                                          monkeypatch):
    """An action that never reaches its append (an illegal one, a replay) is counted after its
    answer is made; over the limit that answer becomes the 429, and it carries the CORS
    headers as every other answer does (else the page sees a network error, not the 429)."""
    monkeypatch.setenv("CARTOUCHE_RATE_LIMIT_WRITES_PER_MINUTE", "3")
    client = app_with(redis_url, queue_url, cors_origins=(ALLOWED,)).test_client()
    gid, tokens, _ = create(client, 3)  # (the seat token's own limit counts the actions)
    seat = auth(tokens[0]) | {"Origin": ALLOWED}
    answers = [client.post(f"/v1/games/{gid}/actions", headers=seat,
                           json={"action": {"type": "decide", "choice": "maybe"}})
               for _ in range(5)]
    assert [r.status_code for r in answers] == [422, 422, 422, 429, 429]
    for r in answers:
        assert r.headers["Access-Control-Allow-Origin"] == ALLOWED
    assert "Retry-After" in answers[-1].headers
    assert "Retry-After" in answers[-1].headers["Access-Control-Expose-Headers"]


def test_a_preflight_from_another_origin_gets_no_cors_header(redis_url, queue_url):
    client = app_with(redis_url, queue_url, cors_origins=(ALLOWED,)).test_client()
    r = client.options("/v1/games", headers={"Origin": "https://evil.example", **PREFLIGHT})
    assert not [h for h in r.headers.keys() if h.lower().startswith("access-control-")]


def test_with_origins_configured_every_answer_varies_by_origin(redis_url, queue_url):
    """The answers to an allowed origin, another one and none differ in their CORS headers, so
    each says ``Vary: Origin`` for the caches between (one origin configured included)."""
    client = app_with(redis_url, queue_url, cors_origins=(ALLOWED,)).test_client()
    gid = create(client)[0]
    for origin in (ALLOWED, "https://evil.example", None):
        headers = {"Origin": origin} if origin else {}
        for r in (client.get(f"/v1/games/{gid}", headers=headers),
                  client.get("/v1/games/nosuchgame", headers=headers),
                  client.options("/v1/games", headers={**headers, **PREFLIGHT})):
            assert "Origin" in r.headers.get("Vary", ""), (origin, r.status_code, r.headers)
    served = client.get("/openapi.yaml", headers={"Origin": ALLOWED})
    assert {v.strip() for v in served.headers["Vary"].split(",")} >= {"Origin",
                                                                      "Accept-Encoding"}


def test_without_origins_configured_there_is_no_cors_header_at_all(client, monkeypatch):
    monkeypatch.delenv("CARTOUCHE_CORS_ORIGINS", raising=False)
    for r in (client.options("/v1/games", headers={"Origin": ALLOWED, **PREFLIGHT}),
              client.get("/v1/game-types", headers={"Origin": ALLOWED})):
        assert not [h for h in r.headers.keys() if h.lower().startswith("access-control-")]


def test_cors_origins_come_from_the_environment():
    ops = OpsConfig.from_env({"CARTOUCHE_CORS_ORIGINS": " https://a.example/, https://b.example"})
    assert ops.cors_origins == ("https://a.example", "https://b.example")
    assert OpsConfig.from_env({}).cors_origins == ()
    kept = "*, http://localhost:3000, https://[::1]:8443/, HTTPS://Play.Example.org:443"
    assert OpsConfig.from_env({"CARTOUCHE_CORS_ORIGINS": kept}).cors_origins == (
        "*", "http://localhost:3000", "https://[::1]:8443", "HTTPS://Play.Example.org:443")


@pytest.mark.parametrize("origins,refused", [
    ("not a url, ftp://x", "'not a url', 'ftp://x'"),
    ("https://a.example, https://b.example/app", "'https://b.example/app'"),
    ("https://a.example:port", "'https://a.example:port'"),
    ("a.example", "'a.example'"),
])
def test_cors_origins_that_are_not_origins_stop_the_server_at_start(origins, refused):
    with pytest.raises(ValueError) as stopped:
        OpsConfig.from_env({"CARTOUCHE_CORS_ORIGINS": origins})
    assert str(stopped.value) == ("CARTOUCHE_CORS_ORIGINS takes * or origins "
                                  "http(s)://host[:port] (no path) separated by commas, not "
                                  + refused)


# -- request ids and logs -------------------------------------------------------------------------

def test_a_safe_request_id_is_echoed_and_any_other_replaced(client):
    r = client.get("/v1/game-types", headers={"X-Request-ID": "front-end:42_a.b-c"})
    assert r.headers["X-Request-ID"] == "front-end:42_a.b-c"
    made = set()
    for bad in (None, "", "x" * 129, "has space", "semi;colon", "é"):
        headers = {} if bad is None else {"X-Request-ID": bad}
        rid = client.get("/v1/game-types", headers=headers).headers["X-Request-ID"]
        assert re.fullmatch(r"[0-9a-f]{24}", rid), rid
        made.add(rid)
    assert len(made) == 6  # a new one each time
    assert client.get("/v1/game-types",
                      headers={"X-Request-ID": "x" * 128}).headers["X-Request-ID"] == "x" * 128


def test_error_responses_carry_the_request_id_too(client):
    gid, tokens, _ = create(client, 3)
    errors = [client.get("/v1/games/zzz", headers={"X-Request-ID": "r-404"}),
              client.post(f"/v1/games/{gid}/actions", data=b"{}",
                          headers={**auth(tokens[0]), "Content-Type": "text/plain",
                                   "X-Request-ID": "r-415"}),
              client.post(f"/v1/games/{gid}/actions", json={"action": {"type": "nope"}},
                          headers={**auth(tokens[0]), "X-Request-ID": "r-422"}),
              client.delete("/v1/games", headers={"X-Request-ID": "r-405"})]
    assert [(r.status_code, r.headers["X-Request-ID"]) for r in errors] == [
        (404, "r-404"), (415, "r-415"), (422, "r-422"), (405, "r-405")]


def test_every_log_line_of_a_request_carries_its_id_as_json(queue_url):
    """A request to a store that does not answer logs a warning and its access line: both JSON
    objects with the request's id; the access line says method, path, route, status, time."""
    app = create_app(Config(redis_url="redis://127.0.0.1:1/0", queue_url=queue_url,
                            redis_timeout_s=0.5),
                     client=redis.Redis.from_url("redis://127.0.0.1:1/0",
                                                 socket_connect_timeout=0.5),
                     ops=OpsConfig())
    with json_log_lines() as lines:
        r = app.test_client().get("/v1/games/0abc", headers={"X-Request-ID": "trace-7"})
        logging.getLogger("cartouche.test").info("after the request")
    assert r.status_code == 503 and r.headers["X-Request-ID"] == "trace-7"
    during, after = lines[:-1], lines[-1]
    assert {line["logger"] for line in during} >= {"cartouche.api", "cartouche.access"}
    assert all(line["request_id"] == "trace-7" for line in during), during
    assert "request_id" not in after and after["message"] == "after the request"
    access = next(line for line in during if line["logger"] == "cartouche.access")
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z", access["time"])
    assert access["level"] == "INFO" and access["method"] == "GET"
    assert access["path"] == "/v1/games/0abc" and access["route"] == "/v1/games/<gid:game_id>"
    assert access["status"] == 503 and access["duration_ms"] >= 0
    assert access["message"].startswith("GET /v1/games/0abc 503 ")


def test_a_token_sent_in_a_url_is_not_written_to_the_access_log(app):
    """A client that puts its seat or player token in a URL by mistake (a 404) does not get
    it written to the server's log: a segment as long as a token is masked, ids are not."""
    client = app.test_client()
    gid, tokens, _ = create(client, 3)
    player_token = client.post("/v1/players", json={"name": "Ann"}).get_json()["token"]
    with json_log_lines() as lines:
        for path in (f"/v1/games/{tokens[0]}", f"/v1/players/{player_token}",
                     f"/v1/games/{gid}/states/1/{tokens[1]}", f"/v1/games/{gid}"):
            client.get(path)
    access = [line for line in lines if line["logger"] == "cartouche.access"]
    text = json.dumps(access)
    assert len(access) == 4 and gid in text
    assert not any(secret in text for secret in (*tokens, player_token)), text
    assert access[0]["path"] == f"/v1/games/<{len(tokens[0])} chars>"
    assert access[0]["message"].startswith(f"GET /v1/games/<{len(tokens[0])} chars> 404 ")


def test_an_exception_is_one_json_line_with_its_traceback():
    out = io.StringIO()
    handler = logging.StreamHandler(out)
    handler.setFormatter(JsonFormatter())
    log = logging.getLogger("cartouche.test.json")
    log.addHandler(handler)
    try:
        try:
            raise ValueError("bad\nthing")
        except ValueError:
            log.error("failed %s", "here", exc_info=True, extra={"game_id": "0abc"})
    finally:
        log.removeHandler(handler)
    (line,) = out.getvalue().splitlines()
    record = json.loads(line)
    assert record["message"] == "failed here" and record["game_id"] == "0abc"
    assert record["level"] == "ERROR" and "ValueError: bad" in record["exception"]


# -- metrics --------------------------------------------------------------------------------------

def test_metrics_count_requests_by_route_and_commands_by_outcome(client):
    before = samples(client)
    gid, tokens, _ = create(client, 3)
    for seat in range(3):
        assert act(client, gid, tokens[seat]).status_code == 201
    assert act(client, gid, tokens[0], choice="dance").status_code == 422
    view = client.get(f"/v1/games/{gid}", headers=auth(tokens[0])).get_json()
    awaiting = {a["seat"] for a in view["awaiting"]}
    if 0 in awaiting:
        act(client, gid, tokens[0])
    assert act(client, gid, tokens[0]).status_code == 409  # already committed this step
    after = samples(client)

    def moved(name, **labels):
        return value(after, name, **labels) - value(before, name, **labels)

    route = "/v1/games/<gid:game_id>/actions"
    assert moved("cartouche_http_requests_total", method="POST", route=route,
                 status="201") >= 3
    assert moved("cartouche_http_requests_total", method="POST", route=route, status="422") == 1
    assert moved("cartouche_http_requests_total", method="POST", route="/v1/games",
                 status="201") == 1
    assert moved("cartouche_http_request_duration_seconds_count", method="POST",
                 route=route) >= 5
    assert moved("cartouche_commands_total", game_type="diamant", outcome="ok") >= 3
    assert moved("cartouche_commands_total", game_type="diamant",
                 outcome="illegal_action") == 1
    assert moved("cartouche_commands_total", game_type="diamant",
                 outcome="not_your_turn") == 1
    text = client.get("/metrics").get_data(as_text=True)
    assert gid not in text  # routes, never raw paths
    assert value(after, "cartouche_games", status="active") >= 1


def test_a_command_that_lost_a_race_counts_a_conflict_and_a_retry(redis_url, queue_url):
    """Two processes' apps on one store: the second decides against its cached game, its
    append meets the first's command, and it decides again."""
    first = app_with(redis_url, queue_url).test_client()
    second = app_with(redis_url, queue_url).test_client()
    gid, tokens, _ = create(first, 3)
    assert second.get(f"/v1/games/{gid}", headers=auth(tokens[1])).status_code == 200
    before = samples(second)
    assert act(first, gid, tokens[0]).status_code == 201
    assert act(second, gid, tokens[1]).status_code == 201
    after = samples(second)
    assert value(after, "cartouche_append_conflicts_total", game_type="diamant") - \
        value(before, "cartouche_append_conflicts_total", game_type="diamant") == 1
    assert value(after, "cartouche_command_retries_total", game_type="diamant") - \
        value(before, "cartouche_command_retries_total", game_type="diamant") == 1


@pytest.mark.unswept  # no worker takes these jobs
def test_queue_depths_and_games_by_status_are_read_at_scrape_time(redis_url, queue_url):
    client = app_with(redis_url, queue_url).test_client()
    before = samples(client)
    assert value(before, "cartouche_queue_jobs", queue="cartouche-high", state="queued") == 0
    r = client.post("/v1/games", json={"type": "diamant", "players": [
        {"name": "a"}, {"name": "b"}, {"name": "bot", "bot": {"level": "random"}}]})
    assert r.status_code == 201
    after = samples(client)
    assert value(after, "cartouche_queue_jobs", queue="cartouche-high", state="queued") == 1
    assert value(after, "cartouche_games", status="active") == \
        value(before, "cartouche_games", status="active") + 1
    gid = r.get_json()["id"]
    assert client.post(f"/v1/games/{gid}/abort",
                       headers=auth(r.get_json()["seats"][0]["token"])).status_code == 200
    final = samples(client)
    assert value(final, "cartouche_games", status="aborted") == \
        value(before, "cartouche_games", status="aborted") + 1


@pytest.mark.parametrize("method", ["BREW", "PROPFIND"])
def test_an_unknown_method_is_counted_as_other(client, method):
    """Clients choose methods: any outside the standard ones is one label value."""
    before = samples(client)
    client.open("/v1/game-types", method=method)
    after = samples(client)
    # a method no route takes matches no route: "unmatched", like an unknown path
    assert value(after, "cartouche_http_requests_total", method="other",
                 route="unmatched", status="405") == \
        value(before, "cartouche_http_requests_total", method="other",
              route="unmatched", status="405") + 1


def test_the_embedded_servers_fsync_policy_is_one_of_three():
    from service.config import redis_appendfsync

    assert redis_appendfsync({}) == "everysec"
    assert redis_appendfsync({"CARTOUCHE_REDIS_APPENDFSYNC": " Always "}) == "always"
    with pytest.raises(ValueError, match="always, everysec or no"):
        redis_appendfsync({"CARTOUCHE_REDIS_APPENDFSYNC": "sometimes"})


# -- the viewer in another site's frame ---------------------------------------------------------

def test_the_viewer_may_be_framed_by_the_pages_the_operator_names(redis_url, queue_url):
    def frame_ancestors(client, path):
        csp = client.get(path).headers["Content-Security-Policy"]
        return next(d for d in csp.split("; ") if d.startswith("frame-ancestors "))

    default = app_with(redis_url, queue_url).test_client()
    assert frame_ancestors(default, "/viewer") == "frame-ancestors 'self'"
    env = {"CARTOUCHE_VIEWER_FRAME_ANCESTORS": "'self'  https://play.example.org"}
    ops = OpsConfig.from_env(env)
    framed = create_app(Config(redis_url=redis_url, queue_url=queue_url),
                        ops=ops).test_client()
    for path in ("/viewer", "/viewer/viewer.js", "/viewer/games.json"):
        assert frame_ancestors(framed, path) == \
            "frame-ancestors 'self' https://play.example.org", path
    for bad in ("https://a.example; script-src *", "", "'unsafe-inline'", "javascript:"):
        with pytest.raises(ValueError, match="CARTOUCHE_VIEWER_FRAME_ANCESTORS"):
            OpsConfig.from_env({"CARTOUCHE_VIEWER_FRAME_ANCESTORS": bad})


def test_every_answer_that_hands_out_a_secret_is_not_to_be_stored(redis_url, queue_url):
    """Seat and player tokens and a webhook's signing secret are shown once: each answer that
    carries one says ``Cache-Control: no-store`` (a proxy or a browser must not keep a copy);
    ordinary reads do not."""
    key = "platform-key-for-no-store"
    app = create_app(Config(redis_url=redis_url, queue_url=queue_url,
                            platform_key_digests=(hashlib.sha256(key.encode()).hexdigest(),)))
    c = app.test_client()
    answers = {}
    ada = answers["player"] = c.post("/v1/players", headers=auth(key), json={"name": "Ada"})
    bob = c.post("/v1/players", headers=auth(key), json={"name": "Bob"}).get_json()
    ada = ada.get_json()
    answers["game"] = c.post("/v1/games", headers=auth(key), json={
        "type": "diamant", "players": [{"player": ada["id"]}, {"open": True}, {"name": "Cy"}]})
    gid = answers["game"].get_json()["id"]
    answers["join"] = c.post(f"/v1/games/{gid}/join", headers=auth(bob["token"]), json={})
    answers["bulk"] = c.post("/v1/games/bulk", headers=auth(key), json={"games": [
        {"type": "diamant", "players": [{"name": f"p{i}"} for i in range(3)]}]})
    version = c.get(f"/v1/games/{gid}").get_json()["version"]
    answers["fork"] = c.post(f"/v1/games/{gid}/fork", headers=auth(key),
                             json={"version": version})
    tokens = [ada["token"], bob["token"], answers["game"].get_json()["seats"][2]["token"]]
    while (view := c.get(f"/v1/games/{gid}").get_json())["status"] == "active":
        c.post(f"/v1/games/{gid}/actions", headers=auth(tokens[view["awaiting"][0]["seat"]]),
               json={"action": {"type": "decide", "choice": "return"}})
    answers["rematch"] = c.post(f"/v1/games/{gid}/rematch", headers=auth(ada["token"]))
    answers["webhook"] = c.post("/v1/webhooks", headers=auth(key),
                                json={"url": "https://example.com/hook"})
    for name, answer in answers.items():
        assert answer.status_code == 201, (name, answer.get_json())
        assert answer.headers.get("Cache-Control") == "no-store", name
    for path in (f"/v1/games/{gid}", f"/v1/games/{gid}/events", f"/v1/players/{ada['id']}"):
        assert "no-store" not in c.get(path).headers.get("Cache-Control", ""), path
