"""Webhooks: the subscription API (platform key only), and signed, retried, ordered deliveries
by the real RQ worker to a real HTTP receiver, verified with the documented recipe
(docs/webhooks.md)."""

from __future__ import annotations

import hashlib
import json
import random
import re
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest
import redis
import yaml
from redis.backoff import NoBackoff
from redis.retry import Retry

from service.app import create_app
from service.config import Config
from service.application import NullScheduler
from service.webhooks import WebhookStore, matches, public, signature, verify as server_verify

from tests.api.helpers import act, auth

ROOT = Path(__file__).resolve().parents[2]
KEY = "platform-key-for-webhook-tests"
PLATFORM = auth(KEY)


def recipe():
    """The ``verify`` function of the documented recipe (docs/webhooks.md's Webhooks
    section), executed as written."""
    for path in (ROOT / "docs" / "webhooks.md",):
        text = path.read_text() if path.exists() else ""
        section = text.split("## Webhooks", 1)
        if len(section) < 2:
            continue
        block = re.search(r"```python\n(.*?)```", section[1], re.S)
        if block:
            namespace: dict = {}
            exec(block.group(1), namespace)
            return namespace["verify"]
    raise AssertionError("no Webhooks section with a python recipe")


class Receiver:
    """A real HTTP server on 127.0.0.1 that records requests and answers from a script."""

    def __init__(self):
        self.requests: list[dict] = []
        self.script: dict[str, list[int]] = {}
        self.lock = threading.Lock()
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self):
                body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
                with outer.lock:
                    outer.requests.append({"path": self.path, "headers": dict(self.headers),
                                           "body": body})
                    codes = outer.script.get(self.path) or [200]
                    code = codes.pop(0) if len(codes) > 1 else codes[0]
                self.send_response(code)
                self.send_header("Content-Length", "2")
                self.end_headers()
                self.wfile.write(b"ok")

            def log_message(self, *args):
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    def at(self, path: str) -> list[dict]:
        with self.lock:
            return [r for r in self.requests if r["path"] == path]

    def wait(self, path: str, n: int, timeout: float = 20) -> list[dict]:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            got = self.at(path)
            if len(got) >= n:
                return got
            time.sleep(0.05)
        raise AssertionError(f"{path}: {len(self.at(path))} requests after {timeout}s, "
                             f"wanted {n}")

    def close(self):
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def receiver():
    r = Receiver()
    yield r
    r.close()


@pytest.fixture
def whapp(redis_url, queue_url):
    config = Config(redis_url=redis_url, queue_url=queue_url, snapshot_every=10,
                    platform_key_digests=(hashlib.sha256(KEY.encode()).hexdigest(),))
    return create_app(config, scheduler=NullScheduler(),
                      webhook_queue=redis.Redis.from_url(queue_url),
                      webhook_options={"retry_base_s": 0.2})


@pytest.fixture
def wc(whapp):
    return whapp.test_client()


def app_without_worker(redis_url, queue_url, **options):
    """An app whose webhook jobs wait in the queues' server's queue, no worker taking them
    (the test runs them): the app and that server's client."""
    config = Config(redis_url=redis_url, queue_url=queue_url,
                    platform_key_digests=(hashlib.sha256(KEY.encode()).hexdigest(),))
    queues = redis.Redis.from_url(queue_url)
    return create_app(config, webhook_queue=queues, **options), queues


def three_commands_queued(redis_url, queue_url, receiver, path):
    """An app whose webhook jobs nobody takes, a subscription to ``receiver`` at ``path``, and
    a game whose three seats have each made a command: the client, the delivery jobs' queue,
    the subscription, the game's id and its seat tokens."""
    from rq import Queue

    from service.webhooks import QUEUE

    app, queues = app_without_worker(redis_url, queue_url, scheduler=NullScheduler())
    client = app.test_client()
    sub = subscribe(client, receiver.url + path)
    gid, tokens = new_game(client)
    for seat in range(3):
        assert act(client, gid, tokens[seat], "continue").status_code == 201
    return client, Queue(QUEUE, connection=queues), sub, gid, tokens


def subscribe(client, url, **filters):
    r = client.post("/v1/webhooks", json={"url": url, **filters}, headers=PLATFORM)
    assert r.status_code == 201, r.get_json()
    return r.get_json()


def new_game(client, type_="diamant", n=3):
    r = client.post("/v1/games", json={"type": type_, "players": [{"name": f"p{i}"}
                                                                  for i in range(n)]},
                    headers=PLATFORM)
    assert r.status_code == 201, r.get_json()
    return r.get_json()["id"], [s["token"] for s in r.get_json()["seats"]]


def play_to_the_end(client, gid, tokens, choose=lambda legal: legal[0]):
    """Every seat plays ``choose(its legal actions)`` in turn until the game is over."""
    while client.get(f"/v1/games/{gid}").get_json()["status"] == "active":
        for token in tokens:
            legal = client.get(f"/v1/games/{gid}/legal-actions",
                               headers=auth(token)).get_json().get("actions")
            if legal:
                client.post(f"/v1/games/{gid}/actions", json={"action": choose(legal)},
                            headers=auth(token))


def log_of(client, sub_id):
    r = client.get(f"/v1/webhooks/{sub_id}", headers=PLATFORM)
    assert r.status_code == 200, r.get_json()
    return r.get_json()["deliveries"]


def wait_log(client, sub_id, pred, timeout=20):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        entries = log_of(client, sub_id)
        if pred(entries):
            return entries
        time.sleep(0.05)
    raise AssertionError(f"delivery log never matched: {log_of(client, sub_id)}")


# -- the subscription API ---------------------------------------------------------------------
def test_subscribe_list_show_delete(wc, receiver):
    created = subscribe(wc, receiver.url + "/a", game_types=["diamant"], description="bots")
    assert created["id"].startswith("wh_") and created["secret"].startswith("whsec_")
    assert created["game_types"] == ["diamant"] and created["game_ids"] is None
    other = subscribe(wc, "https://platform.example/hook")
    listed = wc.get("/v1/webhooks", headers=PLATFORM).get_json()["webhooks"]
    assert [w["id"] for w in listed] == [created["id"], other["id"]]
    assert all("secret" not in w for w in listed)
    shown = wc.get(f"/v1/webhooks/{created['id']}", headers=PLATFORM).get_json()
    assert "secret" not in shown and shown["deliveries"] == []
    assert shown["url"] == receiver.url + "/a" and shown["description"] == "bots"
    r = wc.delete(f"/v1/webhooks/{created['id']}", headers=PLATFORM)
    assert r.status_code == 204 and r.data == b"" and "Content-Type" not in r.headers
    for method in (wc.get, wc.delete):
        r = method(f"/v1/webhooks/{created['id']}", headers=PLATFORM)
        assert r.status_code == 404 and r.get_json()["error"]["code"] == "webhook_not_found"
    assert [w["id"] for w in wc.get("/v1/webhooks", headers=PLATFORM).get_json()["webhooks"]] \
        == [other["id"]]


def test_subscriptions_of_one_millisecond_list_in_the_order_they_were_made(redis_url):
    r = redis.Redis.from_url(redis_url)
    try:
        store = WebhookStore(r)
        made = [store.create(f"https://platform.example/{i}", None, None, None,
                             now_ms=1_700_000_000_000) for i in range(12)]
        assert [s["id"] for s in store.all()] == [s["id"] for s in made]
        assert all("seq" not in public(s) and "secret" not in public(s) for s in store.all())
    finally:
        r.close()


def test_the_subscription_limit_holds_under_concurrent_creations(redis_url):
    from service.webhooks import MAX_SUBSCRIPTIONS, TooManySubscriptions, key_subscriptions

    r = redis.Redis.from_url(redis_url)
    try:
        for i in range(MAX_SUBSCRIPTIONS - 5):
            WebhookStore(r).create(f"https://platform.example/{i}", None, None, None, 0)
        refused: list[int] = []
        start = threading.Barrier(8)

        def burst(t: int) -> None:
            own = WebhookStore(redis.Redis.from_url(redis_url))
            start.wait()
            for i in range(5):
                try:
                    own.create(f"https://platform.example/{t}/{i}", None, None, None, 0)
                except TooManySubscriptions:
                    refused.append(t)

        threads = [threading.Thread(target=burst, args=(t,)) for t in range(8)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        assert r.hlen(key_subscriptions()) == MAX_SUBSCRIPTIONS and len(refused) == 35
    finally:
        r.close()


def test_webhooks_need_a_platform_key(wc, redis_url, queue_url):
    sub = subscribe(wc, "http://127.0.0.1:9/x")
    _, tokens = new_game(wc)
    for headers in ({}, auth(tokens[0]), auth("not-the-key")):
        for r in (wc.post("/v1/webhooks", json={"url": "http://127.0.0.1:9/"}, headers=headers),
                  wc.get("/v1/webhooks", headers=headers),
                  wc.get(f"/v1/webhooks/{sub['id']}", headers=headers),
                  wc.delete(f"/v1/webhooks/{sub['id']}", headers=headers)):
            assert r.status_code == 403, r.get_json()
            assert r.get_json()["error"]["code"] == "platform_key_required"
    r = wc.get("/v1/webhooks", headers={"Authorization": "Basic abc"})
    assert r.status_code == 401 and r.get_json()["error"]["code"] == "invalid_token"
    # without any configured key, games may be created openly, but webhooks are always refused
    app = create_app(Config(redis_url=redis_url, queue_url=queue_url),
                     scheduler=NullScheduler(), webhook_queue=redis.Redis.from_url(queue_url))
    open_client = app.test_client()
    for headers in ({}, PLATFORM):
        r = open_client.post("/v1/webhooks", json={"url": "http://127.0.0.1:9/"},
                             headers=headers)
        assert r.status_code == 403 and r.get_json()["error"]["code"] == "platform_key_required"
        assert open_client.get("/v1/webhooks", headers=headers).status_code == 403


@pytest.mark.parametrize("body", [
    {"url": "ftp://example.com/x"}, {"url": "not a url"}, {"url": ""}, {"url": "http://"},
    {"url": "javascript:alert(1)"}, {"url": 7}, {}, {"url": "http://x.example/" + "a" * 2100},
    {"url": "http://a.example/\n"}, {"url": "http://a.example/ x"}, {"url": "http://a:99999/"},
    {"url": "http://[::1]/"}, {"url": "http://-a/"}, {"url": "http://\u00e9.example/"},
    {"url": "http://127.0.0.1/", "game_types": ["chess"]},
    {"url": "http://127.0.0.1/", "game_ids": ["NOT-AN-ID"]},
    {"url": "http://127.0.0.1/", "game_types": []},
    {"url": "http://127.0.0.1/", "colour": "red"},
])
def test_invalid_subscriptions_are_400(wc, body):
    r = wc.post("/v1/webhooks", json=body, headers=PLATFORM)
    assert r.status_code == 400, r.get_json()
    assert r.get_json()["error"]["code"] == "invalid_request"
    assert wc.get("/v1/webhooks", headers=PLATFORM).get_json()["webhooks"] == []


def test_the_contract_lists_the_webhook_operations(whapp):
    spec = whapp.extensions["cartouche_api"].spec.to_dict()
    ops = {op["operationId"] for path in spec["paths"].values() for op in path.values()
           if isinstance(op, dict) and "operationId" in op}
    assert {"createWebhook", "listWebhooks", "getWebhook", "deleteWebhook"} <= ops
    served = yaml.safe_load(whapp.test_client().get("/openapi.yaml").get_data(as_text=True))
    assert "/v1/webhooks/{webhook_id}" in served["paths"]


@pytest.mark.parametrize("url", ["http://127.0.0.1:9/x", "https://hooks.example.com/c?k=1#f",
                                 "http://localhost", "https://a-b.example:8443/"])
def test_valid_urls_are_accepted(wc, url):
    assert subscribe(wc, url)["url"] == url


def test_filters():
    sub = {"game_types": ["diamant"], "game_ids": ["abc"]}
    assert matches(sub, "f00", "diamant") and matches(sub, "abc", "papyrus")
    assert not matches(sub, "f00", "papyrus")
    assert matches({"game_types": None, "game_ids": None}, "f00", "papyrus")


def test_signature_recipe_matches_the_server():
    verify = recipe()
    body = b'{"a": 1}'
    header = signature("whsec_x", int(time.time()), body)
    assert verify("whsec_x", header, body) and server_verify("whsec_x", header, body)
    assert not verify("whsec_y", header, body)
    assert not verify("whsec_x", header, body + b" ")
    old = signature("whsec_x", int(time.time()) - 3600, body)
    assert not verify("whsec_x", old, body) and not server_verify("whsec_x", old, body)
    assert not verify("whsec_x", "garbage", body) and not verify("whsec_x", "", body)


def test_a_failing_queue_never_fails_a_command(redis_url, queue_url):
    config = Config(redis_url=redis_url, queue_url=queue_url,
                    platform_key_digests=(hashlib.sha256(KEY.encode()).hexdigest(),))
    dead = redis.Redis(host="127.0.0.1", port=9, socket_connect_timeout=0.5,
                       retry=Retry(NoBackoff(), 0))  # redis-py's default retries take ~4 s
    app = create_app(config, scheduler=NullScheduler(), webhook_queue=dead)
    client = app.test_client()
    subscribe(client, "http://127.0.0.1:9/")
    gid, tokens = new_game(client)
    assert act(client, gid, tokens[0]).status_code == 201


# -- deliveries by the real worker --------------------------------------------------------------
def test_deliveries_are_signed_complete_and_in_order(wc, receiver, worker):
    verify = recipe()
    sub = subscribe(wc, receiver.url + "/hook")
    gid, tokens = new_game(wc)
    assert act(wc, gid, tokens[0], "continue").status_code == 201
    got = receiver.wait("/hook", 2)
    bodies = [json.loads(r["body"]) for r in got]
    for r in got:
        assert verify(sub["secret"], r["headers"]["Cartouche-Signature"], r["body"])
        assert r["headers"]["Content-Type"] == "application/json"
    assert [r["headers"]["Cartouche-Event-Versions"] for r in got] == ["1-3", "4-4"]
    assert [b["id"] for b in bodies] == [r["headers"]["Cartouche-Delivery"] for r in got]
    first, second = bodies
    assert first["game_id"] == gid and first["game_type"] == "diamant"
    assert first["subscription_id"] == sub["id"]
    assert (first["first_version"], first["last_version"], first["version"]) == (1, 3, 3)
    assert [e["version"] for e in first["events"]] == [1, 2, 3]
    assert first["events"][0]["type"] == "GameCreated"
    # a platform key's view: the secret choice is not redacted
    assert second["events"] == [{"version": 4, "type": "ChoiceCommitted", "seat": 0,
                                 "at": second["events"][0]["at"],
                                 "data": {"choice": "continue"}}]
    # a tampered body, or another subscription's secret, fails the documented check
    tampered = got[1]["body"].replace(b'"continue"', b'"return"')
    assert tampered != got[1]["body"]
    assert not verify(sub["secret"], got[1]["headers"]["Cartouche-Signature"], tampered)
    other = subscribe(wc, "http://127.0.0.1:9/")
    assert not verify(other["secret"], got[1]["headers"]["Cartouche-Signature"], got[1]["body"])
    entries = wait_log(wc, sub["id"], lambda e: len(e) == 2)
    assert [(e["versions"], e["attempt"], e["status_code"], e["outcome"]) for e in entries] == \
        [("4-4", 1, 200, "delivered"), ("1-3", 1, 200, "delivered")]


def test_every_version_arrives_once_and_in_order_when_delivery_writes_are_lost(
        wc, receiver, worker, monkeypatch):
    """One in three of the API's delivery writes never happens (the store refusing it, the
    process dying after the append), the games' first and last ones apart (a subscription sent
    nothing of a game yet fills nothing; the last ones wait for the archive, minutes away): the
    worker still sends each subscription every version of every game, once and in order, the
    missing ones made from the games' logs."""
    from service import webhooks

    rng = random.Random(7)
    write = webhooks.Listener.__call__

    def lossy(self, table, first_version, envelopes, **extra):
        if first_version == 1 or table.over or rng.random() >= 1 / 3:
            write(self, table, first_version, envelopes, **extra)

    monkeypatch.setattr(webhooks.Listener, "__call__", lossy)
    subs = [subscribe(wc, receiver.url + f"/lossy{n}") for n in range(2)]
    finals = {}
    for _ in range(2):
        gid, tokens = new_game(wc)
        play_to_the_end(wc, gid, tokens, rng.choice)
        finals[gid] = wc.get(f"/v1/games/{gid}").get_json()["version"]
    def complete(n):
        bodies = [json.loads(r["body"]) for r in receiver.at(f"/lossy{n}")]
        return all(any(b["game_id"] == gid and b["last_version"] == last for b in bodies)
                   for gid, last in finals.items())

    deadline = time.monotonic() + 60
    while not all(complete(n) for n in range(len(subs))) and time.monotonic() < deadline:
        time.sleep(0.1)
    time.sleep(0.3)  # anything sent twice would be on its way
    for n in range(len(subs)):
        bodies = [json.loads(r["body"]) for r in receiver.at(f"/lossy{n}")]
        for gid, last in finals.items():
            versions = [(b["first_version"], b["last_version"]) for b in bodies
                        if b["game_id"] == gid]
            assert versions[0][0] == 1 and versions[-1][1] == last, versions
            assert all(a[1] + 1 == b[0] for a, b in zip(versions, versions[1:])), versions
            events = [e["version"] for b in bodies if b["game_id"] == gid for e in b["events"]]
            assert events == list(range(1, last + 1))


def test_a_fork_is_delivered_as_a_creation_is(wc, receiver, worker):
    # "after every command (creation included)": a fork's creation appends the copied events
    gid, tokens = new_game(wc)
    for t in tokens:
        assert act(wc, gid, t, "continue").status_code == 201
    at = wc.get(f"/v1/games/{gid}", headers=PLATFORM).get_json()["version"]
    sub = subscribe(wc, receiver.url + "/hook")
    r = wc.post(f"/v1/games/{gid}/fork", json={"version": at}, headers=PLATFORM)
    assert r.status_code == 201, r.get_json()
    got = receiver.wait("/hook", 1)
    body = json.loads(got[0]["body"])
    assert body["game_id"] == r.get_json()["id"]
    assert (body["first_version"], body["last_version"]) == (1, at)
    assert [e["version"] for e in body["events"]] == list(range(1, at + 1))
    assert sub["id"] == body["subscription_id"]


def test_failures_are_retried_with_backoff_and_hold_back_later_deliveries(wc, receiver, worker):
    verify = recipe()
    receiver.script["/flaky"] = [500, 500, 200]
    sub = subscribe(wc, receiver.url + "/flaky")
    gid, tokens = new_game(wc)
    assert act(wc, gid, tokens[0], "continue").status_code == 201
    got = receiver.wait("/flaky", 4)
    assert [r["headers"]["Cartouche-Event-Versions"] for r in got] == ["1-3"] * 3 + ["4-4"]
    assert len({r["headers"]["Cartouche-Delivery"] for r in got[:3]}) == 1
    assert all(verify(sub["secret"], r["headers"]["Cartouche-Signature"], r["body"])
               for r in got)
    entries = wait_log(wc, sub["id"], lambda e: len(e) == 4)
    assert [(e["versions"], e["attempt"], e["status_code"], e["outcome"])
            for e in entries] == [("4-4", 1, 200, "delivered"),
                                  ("1-3", 3, 200, "delivered"),
                                  ("1-3", 2, 500, "retry_scheduled"),
                                  ("1-3", 1, 500, "retry_scheduled")]
    assert entries[3]["next_attempt_in_s"] == pytest.approx(0.2)
    assert entries[2]["next_attempt_in_s"] == pytest.approx(0.4)
    assert entries[2]["error"] == "HTTP 500" and entries[0]["error"] is None


def test_filters_by_game_type_and_id(wc, receiver, worker):
    subscribe(wc, receiver.url + "/diamant", game_types=["diamant"])
    papyrus = subscribe(wc, receiver.url + "/papyrus", game_types=["papyrus"])
    gid, tokens = new_game(wc)
    new_game(wc, "scarabya", 2)
    only = subscribe(wc, receiver.url + "/one", game_ids=[gid])
    assert act(wc, gid, tokens[0], "continue").status_code == 201
    got = receiver.wait("/diamant", 2)
    assert {json.loads(r["body"])["game_id"] for r in got} == {gid}
    one = receiver.wait("/one", 1)
    assert [r["headers"]["Cartouche-Event-Versions"] for r in one] == ["4-4"]
    time.sleep(0.3)  # nothing else is on its way (the worker is idle by now)
    assert len(receiver.at("/diamant")) == 2 and len(receiver.at("/one")) == 1
    assert receiver.at("/papyrus") == [] and log_of(wc, papyrus["id"]) == []
    assert log_of(wc, only["id"])[0]["versions"] == "4-4"


def test_a_deleted_subscription_stops_its_retries(wc, receiver, worker):
    receiver.script["/down"] = [503]
    sub = subscribe(wc, receiver.url + "/down")
    new_game(wc)
    receiver.wait("/down", 1)
    assert wc.delete(f"/v1/webhooks/{sub['id']}", headers=PLATFORM).status_code == 204
    seen = len(receiver.at("/down"))
    time.sleep(2.5)  # the retries were due after 0.2 s and 0.4 s (+ the scheduler's second)
    assert len(receiver.at("/down")) <= seen + 1  # at most one attempt already under way
    r = redis.Redis.from_url(wc.application.config["CARTOUCHE"].redis_url)
    assert not r.keys("cartouche:webhooks:outbox:*")


def test_the_deliveries_waiting_for_a_receiver_are_bounded(wc, whapp, redis_url):
    """A receiver down for long: each game keeps its newest ``pending_max`` deliveries for
    it, the oldest dropped (the receiver sees the gap in ``first_version``)."""
    from service.webhooks import key_outbox

    listener = whapp.extensions["cartouche"].listeners[-1]
    listener.pending_max = 3
    sub = subscribe(wc, "http://127.0.0.1:9/down")
    gid, tokens = new_game(wc)  # its creation: one delivery
    for seat in range(3):
        assert act(wc, gid, tokens[seat], "continue").status_code == 201
    for seat in range(3):
        if act(wc, gid, tokens[seat], "continue").status_code != 201:
            break
    r = redis.Redis.from_url(redis_url)
    waiting = [json.loads(raw)["delivery"]
               for raw in r.zrange(key_outbox(sub["id"], gid), 0, -1)]
    r.close()
    last = wc.get(f"/v1/games/{gid}").get_json()["version"]
    assert len(waiting) == 3 and waiting[-1]["last_version"] == last
    assert waiting[0]["first_version"] > 1  # the creation's, the oldest, was dropped
    assert [d["first_version"] for d in waiting] == sorted(d["first_version"] for d in waiting)


@pytest.mark.unswept
def test_one_delivery_job_waits_in_the_queue_per_subscription_and_game(redis_url, queue_url,
                                                                      receiver):
    """No worker serves these queues: the commands of a game queue one delivery job for a
    subscription, not one each; that job sends them all, and a command after it started
    queues the next."""
    from service.webhooks import drain

    client, queue, sub, gid, tokens = three_commands_queued(redis_url, queue_url, receiver,
                                                            "/one")
    assert queue.job_ids and [j.args for j in queue.jobs] == [(sub["id"], gid)]
    store = redis.Redis.from_url(redis_url)
    assert drain(store, queue, sub["id"], gid) == "empty"
    sent = receiver.at("/one")
    assert [json.loads(r["body"])["first_version"] for r in sent] == [1, 4, 5, 6]
    queue.empty()
    assert act(client, gid, tokens[0], "continue").status_code == 201
    assert [j.args for j in queue.jobs] == [(sub["id"], gid)]
    store.close()


@pytest.mark.unswept
def test_a_queue_far_behind_holds_one_delivery_job_per_subscription_and_game(
        redis_url, queue_url, receiver, monkeypatch):
    """The workers far behind (slow receivers keep them busy): neither the sweep, finding the
    outbox stale while its job still waits, nor a job that hands over to a fresh one queues
    a second job for the game's deliveries."""
    from service import webhooks

    client, queue, sub, gid, tokens = three_commands_queued(redis_url, queue_url, receiver,
                                                            "/far")
    store = redis.Redis.from_url(redis_url)
    assert [j.args for j in queue.jobs] == [(sub["id"], gid)]
    later = webhooks._ms() + webhooks.STALE_MS + 1
    monkeypatch.setattr(webhooks, "_ms", lambda: later)
    assert webhooks.stale(store, queue, 10) == 0  # stale, but its job waits
    assert len(queue.jobs) == 1
    queue.empty()  # a worker takes the job; it sends one delivery, then hands over
    monkeypatch.setattr(webhooks, "BATCH", 1)
    assert webhooks.drain(store, queue, sub["id"], gid) == "continued"
    assert act(client, gid, tokens[0], "continue").status_code == 201
    assert [j.args for j in queue.jobs] == [(sub["id"], gid)]
    store.close()


@pytest.mark.unswept
def test_the_sweep_queues_the_job_of_an_outbox_whose_job_was_lost(redis_url, queue_url, receiver,
                                                                   monkeypatch):
    """A game's delivery job is lost (a worker killed with it) and the game ends within the
    time its job stands for the later deliveries: once the outbox has seen no job for
    ``STALE_MS``, a sweep queues one, which sends them all; the drained outbox is no longer
    swept."""
    from rq import Queue

    from service import webhooks
    from workers import jobs

    app, queues = app_without_worker(redis_url, queue_url)
    client = app.test_client()
    monkeypatch.setattr(jobs, "_service", app.extensions["cartouche"])
    sub = subscribe(client, receiver.url + "/lost")
    gid, tokens = new_game(client)
    queue = Queue(webhooks.QUEUE, connection=queues)
    queue.empty()  # the delivery job lost
    play_to_the_end(client, gid, tokens)
    assert queue.jobs == []  # the lost job stood for every later delivery
    jobs.sweep()
    assert queue.jobs == []  # not yet: the outbox is not stale
    later = webhooks._ms() + webhooks.STALE_MS + 1
    monkeypatch.setattr(webhooks, "_ms", lambda: later)
    jobs.sweep()
    assert [j.args for j in queue.jobs] == [(sub["id"], gid, True)]
    store = redis.Redis.from_url(redis_url)
    queue.empty()
    outcome = webhooks.drain(store, queue, sub["id"], gid, True)  # the job, run here
    while outcome == "continued":  # a job sends 20, then hands over to a fresh one
        assert [j.args for j in queue.jobs] == [(sub["id"], gid)]
        queue.empty()
        outcome = webhooks.drain(store, queue, sub["id"], gid)
    assert outcome == "empty"
    last = client.get(f"/v1/games/{gid}").get_json()["version"]
    sent = [json.loads(r["body"]) for r in receiver.at("/lost")]
    assert sent[0]["first_version"] == 1 and sent[-1]["last_version"] == last
    assert all(a["last_version"] + 1 == b["first_version"] for a, b in zip(sent, sent[1:]))
    queue.empty()
    monkeypatch.setattr(webhooks, "_ms", lambda: later + 2 * webhooks.STALE_MS)
    jobs.sweep()
    assert queue.jobs == [] and store.zcard(webhooks.key_pending()) == 0
    store.close()


@pytest.mark.unswept
def test_a_delivery_never_written_is_sent_from_the_games_log_before_the_next(
        redis_url, queue_url, receiver, monkeypatch):
    """Commands stored whose deliveries were never written (the store refused the write, or
    the API process died in between): the next delivery's job first sends their versions, read
    from the game's log as the listener writes them, then its own; those deliveries written
    late are dropped, not sent twice, as are those a worker of an earlier version sent. A gap
    past FILL_MAX versions stays a gap."""
    from rq import Queue

    from service import webhooks

    app, queues = app_without_worker(redis_url, queue_url, scheduler=NullScheduler())
    client = app.test_client()
    fill = webhooks.filler(app.extensions["cartouche"])
    sub = subscribe(client, receiver.url + "/gap")
    gid, tokens = new_game(client)
    store = redis.Redis.from_url(redis_url)
    queue = Queue(webhooks.QUEUE, connection=queues)
    outbox = webhooks.key_outbox(sub["id"], gid)

    def drained():
        return webhooks.drain(store, queue, sub["id"], gid, fill=fill)

    def commands(n):
        """``n`` commands' (first, last) versions."""
        done = []
        for seat in range(n):
            before = client.get(f"/v1/games/{gid}").get_json()["version"]
            r = act(client, gid, tokens[seat], "continue")
            assert r.status_code == 201, r.get_json()
            done.append((before + 1, r.get_json()["version"]))
        return done

    def sent():
        return [json.loads(r["body"]) for r in receiver.at("/gap")]

    assert drained() == "empty" and [d["first_version"] for d in sent()] == [1]
    (a, _), (_, b), (c, d) = commands(3)
    lost = store.zrangebyscore(outbox, a, b)  # the first two commands' deliveries, unwritten
    assert len(lost) == 2 and store.zremrangebyscore(outbox, a, b) == 2
    assert drained() == "empty"
    assert [(x["first_version"], x["last_version"]) for x in sent()] == [(1, 3), (a, b), (c, d)]
    written = [json.loads(raw)["delivery"] for raw in lost]
    filled = sent()[1]
    assert filled["events"] == written[0]["events"] + written[1]["events"]
    assert (filled["version"], filled["status"]) == (b, written[1]["status"])
    for raw in lost:  # their writes come late: the versions went out, they do not again
        store.zadd(outbox, {raw: json.loads(raw)["delivery"]["first_version"]})
    assert drained() == "empty" and len(sent()) == 3 and store.zcard(outbox) == 0

    # a worker of an earlier version (a rolling upgrade) sends one: it logs the attempt and
    # removes the delivery, but records no last version sent; that one is not sent again
    (a, b), (c, d), (e, f) = commands(3)
    raw = store.zrangebyscore(outbox, a, b)[0]
    WebhookStore(store).record(sub["id"], {"game_id": gid, "versions": f"{a}-{b}",
                                           "attempt": 1, "outcome": "delivered"})
    store.zrem(outbox, raw)
    assert drained() == "empty"
    assert [(x["first_version"], x["last_version"]) for x in sent()[3:]] == [(c, d), (e, f)]

    monkeypatch.setattr(webhooks, "FILL_MAX", 1)
    (a, _), (_, b), (c, d) = commands(3)
    assert store.zremrangebyscore(outbox, a, b) == 2
    assert drained() == "empty"
    assert [(x["first_version"], x["last_version"]) for x in sent()[5:]] == [(c, d)]
    store.close()


@pytest.mark.unswept
def test_a_games_last_delivery_never_written_is_sent_when_the_game_is_archived(
        redis_url, queue_url, receiver, monkeypatch):
    """A game's last command stored, its delivery never written: no later delivery finds the
    gap, so the game's archive (the workers' sweep, after CARTOUCHE_ARCHIVE_AFTER_S) queues a
    job that sends the versions up to the end; once sent, archiving queues nothing."""
    from rq import Queue

    from service import webhooks
    from workers import jobs

    app, queues = app_without_worker(redis_url, queue_url)
    client = app.test_client()
    monkeypatch.setattr(jobs, "_service", app.extensions["cartouche"])
    fill = webhooks.filler(app.extensions["cartouche"])
    sub = subscribe(client, receiver.url + "/end")
    gid, tokens = new_game(client)
    play_to_the_end(client, gid, tokens)
    store = redis.Redis.from_url(redis_url)
    queue = Queue(webhooks.QUEUE, connection=queues)
    outbox = webhooks.key_outbox(sub["id"], gid)
    store.zpopmax(outbox)  # the last command's delivery: never written

    def drained():
        outcome = webhooks.drain(store, queue, sub["id"], gid, fill=fill)
        while outcome == "continued":  # a job sends 20, then hands over to a fresh one
            outcome = webhooks.drain(store, queue, sub["id"], gid, fill=fill)
        return outcome

    assert drained() == "empty"
    final = client.get(f"/v1/games/{gid}").get_json()
    sent = [json.loads(r["body"]) for r in receiver.at("/end")]
    assert sent[-1]["last_version"] < final["version"]
    queue.empty()
    assert jobs.archive_game(gid) in ("ok", "done")
    assert [j.args for j in queue.jobs] == [(sub["id"], gid)]
    assert drained() == "empty"
    sent = [json.loads(r["body"]) for r in receiver.at("/end")]
    assert sent[0]["first_version"] == 1 and sent[-1]["last_version"] == final["version"]
    assert all(a["last_version"] + 1 == b["first_version"] for a, b in zip(sent, sent[1:]))
    assert (sent[-1]["version"], sent[-1]["status"]) == (final["version"], final["status"])
    queue.empty()
    assert jobs.archive_game(gid) == "done" and queue.jobs == []  # archived already
    store.close()


class SteppedRedis(redis.Redis):
    """A client that runs ``hook`` (once) just before its ``at``-th command from now on."""

    def interleave(self, at: int, hook) -> None:
        self.left, self.hook = at, hook

    def execute_command(self, *args, **options):
        if self.hook is not None:
            self.left -= 1
            if self.left < 0:
                hook, self.hook = self.hook, None
                hook()
        return super().execute_command(*args, **options)


@pytest.mark.unswept
def test_two_sweeps_queue_one_job_for_a_stale_outbox_however_they_interleave(redis_url,
                                                                              queue_url):
    """Every worker sweeps: two sweeps finding the same outbox stale, the second running whole
    before, between or after the first's commands, queue one delivery job for it, not two."""
    from rq import Queue

    from service import webhooks

    queue = Queue(webhooks.QUEUE, connection=redis.Redis.from_url(queue_url))
    other_store = redis.Redis.from_url(redis_url)
    for at in range(4):
        queue.empty()
        store = SteppedRedis.from_url(redis_url)
        store.hook = None
        store.zadd(webhooks.key_pending(), {"wh_lost g1": 1})  # stale for long
        queued = []
        store.interleave(at, lambda: queued.append(webhooks.stale(other_store, queue, 10)))
        queued.append(webhooks.stale(store, queue, 10))
        if store.hook is not None:  # the first sweep had fewer commands: the other one after it
            queued.append(webhooks.stale(other_store, queue, 10))
        assert sum(queued) == 1, at
        assert [j.args for j in queue.jobs] == [("wh_lost", "g1", True)]
        store.delete(webhooks.key_pending())
        store.close()
    other_store.close()


def test_a_delivery_is_abandoned_after_max_attempts_and_the_next_one_goes(wc, whapp, worker):
    listener = whapp.extensions["cartouche"].listeners[-1]
    listener.max_attempts = 2
    sub = subscribe(wc, "http://127.0.0.1:9/refused")  # nothing listens on the discard port
    gid, tokens = new_game(wc)
    assert act(wc, gid, tokens[0], "continue").status_code == 201
    entries = wait_log(wc, sub["id"], lambda e: len(e) == 4)
    assert [(e["versions"], e["attempt"], e["outcome"]) for e in reversed(entries)] == [
        ("1-3", 1, "retry_scheduled"), ("1-3", 2, "abandoned"),
        ("4-4", 1, "retry_scheduled"), ("4-4", 2, "abandoned")]
    assert all(e["status_code"] is None and "refused" in e["error"].lower() for e in entries)


@pytest.mark.unswept
def test_a_receiver_that_keeps_failing_is_paused_then_probed_by_one_attempt(
        redis_url, queue_url, receiver):
    """After ``pause_after`` failed attempts in a row to a subscription (whichever games), its
    deliveries wait for the pause (the detail shows it) and then one attempt, the probe, goes:
    its failure doubles the pause (up to the longest), its success lets every game's
    deliveries go again. Meanwhile no attempt is made, and each waiting outbox is due when the
    pause ends."""
    from rq import Queue

    from service import webhooks

    app, queues = app_without_worker(
        redis_url, queue_url, scheduler=NullScheduler(),
        webhook_options={"retry_base_s": 0.01, "pause_after": 3, "pause_s": 0.4,
                         "pause_max_s": 1.0})
    client = app.test_client()
    receiver.script["/down"] = [503]
    sub = subscribe(client, receiver.url + "/down")
    games = [new_game(client)[0] for _ in range(5)]
    store = redis.Redis.from_url(redis_url)
    queue = Queue(webhooks.QUEUE, connection=queues)

    def drained(gid, retry=False):
        return webhooks.drain(store, queue, sub["id"], gid, retry)

    def health():
        detail = client.get(f"/v1/webhooks/{sub['id']}", headers=PLATFORM).get_json()
        return detail["consecutive_failures"], detail["pause_ends_at"]

    def until_ms():
        return int(store.hget(webhooks.key_health(sub["id"]), "until"))

    def counted():
        """The attempts and pauses this process counted (``/metrics``), as (tried, paused)."""
        from service import metrics

        def total(metric):
            return sum(x.value for m in metric.collect() for x in m.samples
                       if x.name.endswith("_total"))
        return total(metrics.WEBHOOK_ATTEMPTS), total(metrics.WEBHOOK_PAUSES)

    before = counted()
    assert health() == (0, None)
    assert [drained(gid) for gid in games[:3]] == ["retrying"] * 3
    assert len(receiver.at("/down")) == 3
    failures, pause_ends_at = health()
    assert failures == 3 and pause_ends_at is not None
    first = until_ms()
    assert 300 <= first - time.time() * 1000 <= 400
    # paused: no attempt for any game, a retry's or a new one's; each outbox due at the end
    assert [drained(gid, retry=True) for gid in games] == ["paused"] * 5
    assert len(receiver.at("/down")) == 3
    members = [f"{sub['id']} {gid}" for gid in games]
    assert [store.zscore(webhooks.key_pending(), m) for m in members] == [first] * 5
    time.sleep(max(0.0, first / 1000 - time.time()) + 0.05)
    # the pause is over: one attempt (the probe) fails, and the next pause is twice as long
    assert drained(games[3], retry=True) == "retrying"
    assert len(receiver.at("/down")) == 4
    second = until_ms()
    assert 800 <= second - first <= 1000 and health()[0] == 4
    assert drained(games[0], retry=True) == "paused" and len(receiver.at("/down")) == 4
    time.sleep(max(0.0, second / 1000 - time.time()) + 0.05)
    # a probe is under way (leased): every other game waits for its outcome
    assert webhooks.gate(store, sub["id"], 5.0) == 0
    assert webhooks.gate(store, sub["id"], 5.0) > time.time() * 1000 + 4000
    assert drained(games[4], retry=True) == "paused" and len(receiver.at("/down")) == 4
    # that probe failed: the pause doubles again, to the longest (1 s)
    assert webhooks.attempted(store, sub["id"], False, [3, 0.4, 1.0]) > 0
    third = until_ms()
    assert 900 <= third - time.time() * 1000 <= 1000
    receiver.script["/down"] = [200]  # the receiver is back
    time.sleep(max(0.0, third / 1000 - time.time()) + 0.05)
    assert drained(games[1], retry=True) == "empty"
    assert health() == (0, None)
    time.sleep(0.05)  # the heads' own retries (0.01 s a step) are due
    assert [drained(gid, retry=True) for gid in games] == ["empty"] * 5
    delivered = {json.loads(r["body"])["game_id"] for r in receiver.at("/down")[-5:]}
    assert delivered == set(games)
    assert len(receiver.at("/down")) == 4 + 5
    assert (counted()[0] - before[0], counted()[1] - before[1]) == (4 + 5, 2)
    store.close()


def test_a_dead_receiver_takes_one_attempt_a_pause_whatever_the_games(wc, whapp, worker):
    """A receiver that never answers in time, eight games following it: the worker makes
    ``pause_after`` attempts, then one a pause, not one a game and retry; a receiver back is
    sent every game's deliveries (the sweep queues them when the pause ends)."""
    listener = whapp.extensions["cartouche"].listeners[-1]
    listener.timeout_s, listener.pause_after = 0.2, 3
    listener.pause_s = listener.pause_max_s = 1.0
    slow = Receiver()
    slow.script["/slow"] = [200]
    answer = threading.Event()
    handler = slow.server.RequestHandlerClass
    original = handler.do_POST

    def do_post(self):
        if not answer.is_set():
            time.sleep(0.5)  # past the attempt's timeout
        original(self)

    handler.do_POST = do_post
    try:
        sub = subscribe(wc, slow.url + "/slow")
        games = [new_game(wc)[0] for _ in range(8)]
        wait_log(wc, sub["id"], lambda e: len(e) >= 3)
        time.sleep(4)
        attempts = log_of(wc, sub["id"])
        # 3 before the pause, then at most one a second (the pause), each a timeout
        assert 3 <= len(attempts) <= 3 + 5, attempts
        assert all("timed out" in (e["error"] or "").lower() for e in attempts)
        assert wc.get(f"/v1/webhooks/{sub['id']}",
                      headers=PLATFORM).get_json()["pause_ends_at"] is not None
        answer.set()
        wait_log(wc, sub["id"], lambda e: {x["game_id"] for x in e
                                           if x["outcome"] == "delivered"} == set(games),
                 timeout=30)
        assert wc.get(f"/v1/webhooks/{sub['id']}", headers=PLATFORM).get_json()[
            "pause_ends_at"] is None
    finally:
        answer.set()
        slow.close()


@pytest.mark.unswept
def test_a_worker_takes_delivery_jobs_only_when_no_other_job_waits(redis_url, queue_url,
                                                                  receiver, monkeypatch):
    """Deliveries queued for many games, then an expiry-like job: the worker runs that job
    first, and the bot and clock queue's before it (they never wait behind queued deliveries)."""
    from rq import Queue, SimpleWorker

    from service.jobs import BOT_QUEUE, DEFAULT_QUEUE, QUEUES

    from workers import jobs

    app, queues = app_without_worker(redis_url, queue_url, scheduler=NullScheduler())
    monkeypatch.setattr(jobs, "_service", app.extensions["cartouche"])  # the jobs' service
    client = app.test_client()
    subscribe(client, receiver.url + "/many")
    for _ in range(3):
        new_game(client)
    later = Queue(DEFAULT_QUEUE, connection=queues).enqueue("os.getpid")
    sooner = Queue(BOT_QUEUE, connection=queues).enqueue("os.getppid")
    worker = SimpleWorker([Queue(q, connection=queues) for q in QUEUES], connection=queues)
    worker.work(burst=True, max_jobs=2)
    assert sooner.get_status(refresh=True) == "finished"
    assert later.get_status(refresh=True) == "finished"
    assert receiver.at("/many") == []  # no delivery yet
    worker.work(burst=True)
    assert len(receiver.at("/many")) == 3


@pytest.mark.unswept
@pytest.mark.parametrize("answer", [200, 503])
def test_a_subscription_deleted_during_an_attempt_leaves_no_log_or_health_behind(
        redis_url, queue_url, monkeypatch, answer):
    """The subscription is deleted while an attempt is under way: the attempt's record and
    outcome, written after the deletion, are removed by the job that finds it gone (at once,
    or at the failed attempt's retry), not kept for ever."""
    from rq import Queue

    from service import webhooks

    app, queues = app_without_worker(redis_url, queue_url, scheduler=NullScheduler(),
                                     webhook_options={"pause_after": 1})
    client = app.test_client()
    sub = subscribe(client, "http://127.0.0.1:9/hook")
    gid, _ = new_game(client)
    store = redis.Redis.from_url(redis_url)
    queue = Queue(webhooks.QUEUE, connection=queues)

    def post(url, body, headers, timeout_s):  # the receiver answers after the deletion
        assert client.delete(f"/v1/webhooks/{sub['id']}", headers=PLATFORM).status_code == 204
        return answer, None if answer == 200 else "HTTP 503"

    monkeypatch.setattr(webhooks, "post", post)
    outcome = webhooks.drain(store, queue, sub["id"], gid)
    if answer != 200:
        assert outcome == "retrying" and store.exists(webhooks.key_log(sub["id"]))
        store.delete(webhooks.key_head(sub["id"], gid))  # its retry, due now
        outcome = webhooks.drain(store, queue, sub["id"], gid, True)
    assert outcome == "gone"
    assert store.keys(f"cartouche:webhooks:*{sub['id']}*") == []
    store.close()


@pytest.mark.unswept
def test_a_bot_job_queued_during_a_slow_attempt_runs_before_the_next_attempt(
        redis_url, queue_url, receiver, monkeypatch):
    """A receiver that answers in time but slowly, and a game with four deliveries waiting:
    the delivery job hands over after an attempt that used up its time (``BATCH_S``), so a
    bot's job queued meanwhile runs next, not after every delivery of the game."""
    from rq import Queue, SimpleWorker

    from service import webhooks
    from service.jobs import BOT_QUEUE, QUEUES
    from workers import jobs

    client, queue, sub, gid, tokens = three_commands_queued(redis_url, queue_url, receiver,
                                                            "/slow-in-time")
    monkeypatch.setattr(jobs, "_service", client.application.extensions["cartouche"])
    monkeypatch.setattr(webhooks, "BATCH_S", 0.2)
    posted, bot_jobs = [], []
    bots = Queue(BOT_QUEUE, connection=queue.connection)

    def post(url, body, headers, timeout_s):
        if not posted:  # a bot's turn comes while the first attempt waits for its answer
            bot_jobs.append(bots.enqueue("os.getppid"))
        posted.append(json.loads(body)["first_version"])
        time.sleep(0.25)
        return 200, None

    monkeypatch.setattr(webhooks, "post", post)
    worker = SimpleWorker([Queue(q, connection=queue.connection) for q in QUEUES],
                          connection=queue.connection)
    worker.work(burst=True, max_jobs=2)
    assert bot_jobs[0].get_status(refresh=True) == "finished"
    assert posted == [1]  # the bot's job ran after one attempt
    worker.work(burst=True)
    assert posted == [1, 4, 5, 6]  # the rest, in order, by the next jobs
