"""One name per concept on the wire: every point in time is an RFC 3339 string in UTC with
milliseconds (``2026-12-02T09:14:03.512Z``) named ``at`` or ``*_at``, in the contract a
``date-time`` or, where an export holds it (events, an export's ``created_at``), text with the
RFC 3339 pattern (``INSTANT_PATTERN``: a signature covers it as written); durations are integers
named ``*_ms`` (the ones below, each a length of time, never a moment). Checked on the contract
(openapi.yaml, every property of every schema) and on what the main routes serve."""

from __future__ import annotations

import re
from pathlib import Path

import orjson
import pytest
import yaml

from service.api.sources import START, NoticeSource
from service.engine.schemas import INSTANT_PATTERN
from service.app import create_app
from service.application import NullScheduler
from service.config import Config
from tests.conftest import INJECTED_EPOCH_MS, InjectedClock

from .helpers import auth, join

ROOT = Path(__file__).resolve().parents[2]

#: The properties allowed to end in ``_ms``: durations, each with what it measures.
DURATIONS = {
    "remaining_ms": "time left on a seat's clock",
    "per_decision_ms": "a clock's limit per decision",
    "initial_ms": "a Fischer clock's starting bank",
    "increment_ms": "a Fischer clock's increment per decision",
    "budget_ms": "a bot's thinking time per decision",
}
#: A name that says a moment but not as ``*_at`` (``created``, ``expires``, ``deadline``...).
MOMENT_NAME = re.compile(r"(^|_)(created|expires|expired|deadline|updated|started|ended|"
                         r"finished|since|time|timestamp|date|when)$")
RFC3339 = re.compile(r"\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z")
#: Anything that looks like a date, wherever it is served.
DATE_LIKE = re.compile(r"\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}")


def is_moment(name: str) -> bool:
    return name == "at" or name.endswith("_at")


def properties(node, path=""):
    """(path, name, schema) of every property of every schema under ``node``."""
    if isinstance(node, dict):
        for name, schema in (node.get("properties") or {}).items():
            if isinstance(schema, dict):
                yield f"{path}.{name}", name, schema
        for key, value in node.items():
            yield from properties(value, f"{path}.{key}" if path else str(key))
    elif isinstance(node, list):
        for i, value in enumerate(node):
            yield from properties(value, f"{path}[{i}]")


def types(schema: dict) -> set[str]:
    found = schema.get("type")
    out = set(found) if isinstance(found, list) else {found} if found else set()
    for alt in schema.get("anyOf", []) + schema.get("oneOf", []):
        out |= types(alt)
    return out


def contract_violations(spec: dict) -> list[str]:
    bad = []
    for path, name, schema in properties(spec):
        dated = schema.get("format") == "date-time"
        if is_moment(name):
            if not (dated or schema.get("pattern") == INSTANT_PATTERN) \
                    or types(schema) - {"string", "null"}:
                bad.append(f"{path}: a moment is a string of format date-time, or an "
                           "instant's pattern")
        elif dated:
            bad.append(f"{path}: a date-time is named at or *_at")
        elif name.endswith("_ms"):
            if name not in DURATIONS:
                bad.append(f"{path}: *_ms is for durations ({', '.join(DURATIONS)}); a "
                           "moment is *_at")
            elif types(schema) - {"integer", "array", "null"}:
                bad.append(f"{path}: a duration is an integer")
        elif MOMENT_NAME.search(name):
            bad.append(f"{path}: a moment is named *_at")
    return bad


def test_the_contract_names_every_moment_at_and_every_duration_ms():
    spec = yaml.load((ROOT / "openapi.yaml").read_text(),
                     Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))
    assert contract_violations(spec) == []
    moments = {name for _, name, _ in properties(spec) if is_moment(name)}
    assert {"at", "created_at", "expires_at", "deadline_at"} <= moments


def test_the_guard_refuses_what_it_is_for():
    """The walk itself fails on a moment in milliseconds, an unformatted or misnamed
    timestamp, a duration that is not an integer."""
    def schema(**props):
        return {"components": {"schemas": {"X": {"type": "object", "properties": props}}}}

    assert contract_violations(schema(created_ms={"type": "integer"}))
    assert contract_violations(schema(created_at={"type": "string"}))
    assert contract_violations(schema(deadline={"type": "string", "format": "date-time"}))
    assert contract_violations(schema(expires={"type": "string"}))
    assert contract_violations(schema(remaining_ms={"type": "string"}))
    assert not contract_violations(schema(at={"type": ["string", "null"],
                                               "format": "date-time"},
                                          increment_ms={"type": "integer"}))
    assert not contract_violations(schema(at={"type": "string", "pattern": INSTANT_PATTERN}))
    assert contract_violations(schema(at={"type": "string", "pattern": "^.*$"}))


# -- served bodies ----------------------------------------------------------------------------
@pytest.fixture
def fake(redis_url, queue_url):
    clock = InjectedClock()
    clock.t = INJECTED_EPOCH_MS + 123  # 2100-01-01T00:00:00.123Z
    app = create_app(Config(redis_url=redis_url, queue_url=queue_url),
                     scheduler=NullScheduler(), now_ms=clock)
    return app.test_client(), app.extensions["cartouche"], clock


def served_violations(body, path="") -> tuple[list[str], set[str]]:
    """What breaks the rule in a served body, and the names of the moments it holds."""
    bad, seen = [], set()

    def walk(node, path):
        if isinstance(node, dict):
            for key, value in node.items():
                where = f"{path}.{key}"
                if is_moment(key):
                    seen.add(key)
                    if value is not None and not (isinstance(value, str)
                                                  and RFC3339.fullmatch(value)):
                        bad.append(f"{where}: {value!r} is not RFC 3339 with ms and Z")
                elif key.endswith("_ms") and key not in DURATIONS:
                    bad.append(f"{where}: a moment in milliseconds")
                elif isinstance(value, str) and DATE_LIKE.match(value):
                    bad.append(f"{where}: a timestamp not named *_at")
                walk(value, where)
        elif isinstance(node, list):
            for i, value in enumerate(node):
                walk(value, f"{path}[{i}]")

    walk(body, path)
    return bad, seen


def ok(r, status=200):
    assert r.status_code == status, r.get_json()
    return r.get_json()


def test_the_main_routes_serve_every_moment_as_rfc3339_at(fake):
    client, svc, clock = fake
    ada = ok(client.post("/v1/players", json={"name": "Ada", "kind": "human"}), 201)
    bob = ok(client.post("/v1/players", json={"name": "Bob", "kind": "human"}), 201)
    created = ok(client.post("/v1/games", headers=auth(ada["token"]), json={
        "type": "diamant", "players": [{"player": ada["id"]}, {"player": bob["id"]},
                                       {"name": "Cyd"}],
        "options": {"clock": {"per_decision_ms": 60_000}}}), 201)
    gid = created["id"]
    ok(join(client, gid, bob), 201)  # Bob's seat was reserved for him: the game starts
    clock.t += 1_500
    acted = ok(client.post(f"/v1/games/{gid}/actions", headers=auth(ada["token"]),
                           json={"action": {"type": "decide", "choice": "continue"}}), 201)
    table = ok(client.post("/v1/games", headers=auth(ada["token"]), json={
        "type": "diamant", "players": [{"player": ada["id"]}, {"open": True},
                                       {"open": True}]}), 201)
    seek = ok(client.post("/v1/seeks", headers=auth(bob["token"]),
                          json={"type": "tides-of-time", "seats": 2}), 201)
    tournament = ok(client.post("/v1/tournaments", json={
        "name": "Cup", "type": "diamant", "format": "swiss", "rounds": 1,
        "seats_per_game": 3, "participants": [ada["id"], bob["id"], "bot-random"]}), 201)

    view = ok(client.get(f"/v1/games/{gid}", headers=auth(bob["token"])))
    bodies = {
        "action": acted, "view": view, "table": ok(client.get(f"/v1/games/{table['id']}")),
        "events": ok(client.get(f"/v1/games/{gid}/events")),
        "games": ok(client.get("/v1/games")),
        "games_waiting": ok(client.get("/v1/games?status=waiting")),
        "me": ok(client.get("/v1/players/me", headers=auth(bob["token"]))),
        "player": ok(client.get(f"/v1/players/{ada['id']}")),
        "seek": ok(client.get(f"/v1/seeks/{seek['id']}")),
        "seeks": ok(client.get("/v1/seeks")),
        "tournament": ok(client.get(f"/v1/tournaments/{tournament['id']}")),
        "tournaments": ok(client.get("/v1/tournaments")),
    }
    seen = set()
    for name, body in bodies.items():
        bad, found = served_violations(body, name)
        assert bad == []
        seen |= found
    assert {"at", "created_at", "expires_at", "deadline_at"} <= seen

    # the values are the injected clock's, formatted
    listed = {g["id"]: g for g in bodies["games"]["games"]}
    assert listed[gid]["created_at"] == "2100-01-01T00:00:00.123Z"
    assert bodies["tournaments"]["tournaments"][0]["created_at"] == "2100-01-01T00:00:01.623Z"
    assert bodies["player"]["created_at"] == "2100-01-01T00:00:00.123Z"
    assert acted["events"][0]["at"] == "2100-01-01T00:00:01.623Z"
    deadlines = {a["seat"]: a["deadline_at"] for a in view["awaiting"]}
    assert deadlines[1] == "2100-01-01T00:01:00.123Z"  # created + 60 s, still undecided
    assert bodies["seek"]["expires_at"] > bodies["seek"]["created_at"]


def notices(svc, player_id):
    source = NoticeSource(svc, follower=None)
    batch = source.read(player_id, START, count=100)
    out = []
    for _, raw in source.encode(batch, player_id):
        lines = raw.decode().splitlines()
        kind = next(line[7:] for line in lines if line.startswith("event: "))
        data = orjson.loads(next(line[6:] for line in lines if line.startswith("data: ")))
        out.append((kind, data))
    return out


def test_the_player_stream_serves_deadline_at_even_for_notices_stored_before(fake):
    client, svc, clock = fake
    ada = ok(client.post("/v1/players", json={"name": "Ada", "kind": "human"}), 201)
    ok(client.post("/v1/games", headers=auth(ada["token"]), json={
        "type": "diamant", "players": [{"player": ada["id"]}, {"name": "B"}, {"name": "C"}],
        "options": {"clock": {"per_decision_ms": 60_000}}}), 201)
    # a notice as the server stored it while the field was named ``deadline``
    svc.player_store.notify(ada["id"], "your_turn", {"game_id": "g-old", "seat": 0,
                                                     "version": 3,
                                                     "deadline": "2026-01-01T00:00:00.000Z"})
    turns = [data for kind, data in notices(svc, ada["id"]) if kind == "your_turn"]
    assert [t["deadline_at"] for t in turns] == ["2100-01-01T00:01:00.123Z",
                                                 "2026-01-01T00:00:00.000Z"]
    for turn in turns:
        assert served_violations(turn)[0] == [] and "deadline" not in turn


# -- details.fields ---------------------------------------------------------------------------
def test_every_refusal_naming_fields_says_details_fields(client):
    """One shape, whatever refused: ``details.fields`` = {name (dotted where nested):
    [message, ...]}, the refusal's own code kept."""
    def fields_of(r, status, code, inner=None):
        error = r.get_json()["error"]
        assert (r.status_code, error["code"], error["details"].get("code")) == \
            (status, code, inner), error
        named = error["details"]["fields"]
        assert "field" not in error["details"]
        for messages in named.values():
            assert messages and all(isinstance(m, str) and m for m in messages)
        return named

    bad_seat = {"type": "diamant", "players": [{"name": "a"}, {"name": 5},
                                                {"name": "c", "bot": {"level": 3}}]}
    assert set(fields_of(client.post("/v1/games", json=bad_seat), 400, "invalid_request")) == \
        {"players.1.name", "players.2.bot.level"}  # the schema's, flattened, no "json" level
    assert set(fields_of(client.get("/v1/games?page=x"), 400, "invalid_request")) == {"page"}
    r = client.post("/v1/players", json={"name": "Ann\x1b[2J", "kind": "human"})
    assert set(fields_of(r, 400, "invalid_text")) == {"name"}

    created = ok(client.post("/v1/games", json={
        "type": "diamant", "players": [{"name": "a"}, {"name": "b"}, {"name": "c"}]}), 201)
    gid, token = created["id"], created["seats"][0]["token"]

    def act(body):
        return client.post(f"/v1/games/{gid}/actions", json=body, headers=auth(token))

    assert set(fields_of(act({"action": {"type": "decide", "choice": "continue"},
                              "expected_version": 3.0}), 422, "not_an_integer")) == \
        {"expected_version"}
    for action, inner in (({"type": "decide"}, "missing_field"),
                          ({"type": "decide", "choice": "maybe"}, "invalid_field"),
                          ({"type": "decide", "choice": "continue", "x": 1},
                           "unexpected_field")):
        named = fields_of(act({"action": action}), 422, "illegal_action", inner)
        assert set(named) == {"x" if inner == "unexpected_field" else "choice"}
