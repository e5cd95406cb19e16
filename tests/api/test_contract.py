"""The published contract: openapi.yaml is generated from the code and current, it is served
(the console on it, /docs, in tests/api/test_docs.py), and a schemathesis run against a live
gunicorn finds no 5xx and no response that breaks the schema (schemathesis.toml holds its
settings)."""

import os
import re
import subprocess
import sys
from pathlib import Path

import yaml

from service.openapi import generate

ROOT = Path(__file__).resolve().parents[2]


def test_checked_in_openapi_is_current():
    assert (ROOT / "openapi.yaml").read_text() == generate(), \
        "openapi.yaml is stale: run `make openapi` and commit it"


def test_contract_is_served(client):
    served = client.get("/openapi.yaml")
    assert served.status_code == 200 and served.mimetype == "application/yaml"
    spec = yaml.safe_load(served.get_data(as_text=True))
    assert spec["openapi"].startswith("3.1")
    assert {"/v1/games", "/v1/games/{game_id}/actions", "/v1/game-types"} <= set(spec["paths"])
    assert spec["components"]["securitySchemes"]["bearer"] == {"type": "http", "scheme": "bearer"}


def test_the_contract_is_written_once_and_served_compressed_and_conditionally(app, monkeypatch):
    """Writing the YAML takes about half a second of CPU: a process writes it once, whoever
    asks. A client that accepts gzip gets it gzipped (a tenth of the bytes), and one that
    names the ETag it holds a 304."""
    import gzip

    api = app.extensions["cartouche_api"]
    writes = []
    to_yaml = api.spec.to_yaml
    monkeypatch.setattr(api.spec, "to_yaml", lambda: writes.append(1) or to_yaml())
    client = app.test_client()
    plain = client.get("/openapi.yaml")
    packed = client.get("/openapi.yaml", headers={"Accept-Encoding": "br, gzip"})
    assert len(writes) == 1
    assert packed.headers["Content-Encoding"] == "gzip" and "Content-Encoding" not in plain.headers
    assert gzip.decompress(packed.get_data()) == plain.get_data() == to_yaml().encode()
    assert len(packed.get_data()) * 5 < len(plain.get_data())
    assert packed.headers["Vary"] == plain.headers["Vary"] == "Accept-Encoding"
    for held, accept in ((plain, "identity"), (packed, "gzip")):
        again = client.get("/openapi.yaml", headers={"If-None-Match": held.headers["ETag"],
                                                     "Accept-Encoding": accept})
        assert again.status_code == 304 and again.get_data() == b""
    refused = client.get("/openapi.yaml", headers={"Accept-Encoding": "gzip;q=0"})
    assert "Content-Encoding" not in refused.headers


def test_schemathesis_finds_no_server_error_or_schema_violation(live_url):
    # One worker: hypothesis' lambda introspection under threads trips a CPython 3.11 ast bug
    # ("AST constructor recursion depth mismatch") inside schemathesis itself.
    budget = os.environ.get("CARTOUCHE_SCHEMATHESIS_SECONDS", "100")
    cmd = [str(Path(sys.executable).parent / "schemathesis"), "run",
           f"{live_url}/openapi.yaml", "--max-time", budget,  # checks: schemathesis.toml
           "--seed", "20261129", "--workers", "1", "--suppress-health-check", "all",
           "--request-timeout", "10"]
    proc = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, timeout=600)
    tail = proc.stdout[-6000:]
    assert proc.returncode == 0, tail
    assert " passed" in tail


def test_openapi_document_is_valid_openapi_3_1():
    from openapi_spec_validator import validate

    validate(yaml.safe_load((ROOT / "openapi.yaml").read_text()))


def test_every_games_schemas_are_reachable_from_the_paths():
    """A generator keeps only what an operation reaches: every game's options, actions, state
    and events (and the shell's events, once a game declares its own) are reached."""
    import json
    import re

    from service.api.contract import camel
    from service.engine.schemas import SHELL_EVENT_SCHEMAS
    from service.games import GAMES

    spec = yaml.load((ROOT / "openapi.yaml").read_text(),
                     Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))
    schemas = spec["components"]["schemas"]

    def refs(node) -> set[str]:
        return set(re.findall(r"#/components/schemas/([A-Za-z0-9_]+)", json.dumps(node)))

    reached, todo = set(), list(refs(spec["paths"]))
    while todo:
        name = todo.pop()
        if name not in reached:
            reached.add(name)
            todo += refs(schemas[name])
    for type_id, game in GAMES.items():
        prefix = camel(type_id)
        wanted = {f"{prefix}{k}" for k in ("Options", "CreateGame", "State", "GameView",
                                           "EventPage", "Export")}
        wanted |= {f"{prefix}Action{camel(a)}" for a in game.action_schemas}
        if game.event_schemas:
            wanted |= {f"{prefix}Event{t}{d}" for t in game.event_schemas for d in ("", "Data")}
            wanted |= {f"ShellEvent{t}{d}" for t in SHELL_EVENT_SCHEMAS for d in ("", "Data")}
        assert wanted <= reached, (sorted(wanted - reached),
                                   "openapi.yaml lacks them: run `make openapi` and commit it")


def test_every_operation_documents_what_the_http_server_itself_answers():
    """A request line of 8 KiB or more (414) and a header block over 64 KiB (431) are answered
    before any route; a body that does not arrive in time (408), is too large (413) or is not
    declared JSON (415) on any route that takes one: a client generated from the contract
    knows them all."""
    spec = yaml.safe_load((ROOT / "openapi.yaml").read_text())
    operations = [op for ops in spec["paths"].values() for op in ops.values()
                  if isinstance(op, dict) and "responses" in op]
    assert len(operations) > 40
    for op in operations:
        assert {"414", "431"} <= set(op["responses"]), op.get("operationId", op.get("summary"))
        if "requestBody" in op:
            assert {"400", "408", "413", "415"} <= set(op["responses"]), \
                op.get("operationId", op.get("summary"))


def test_every_operation_that_takes_a_body_answers_its_415_and_413(client, app):
    """What the contract documents on every body: a body not declared JSON is a 415, one over
    the server's limit (the export verifier's own limit for its route) a 413, whoever sends
    it to whichever resource."""
    spec = yaml.safe_load((ROOT / "openapi.yaml").read_text())
    game = client.post("/v1/games", json={"type": "diamant", "players": [
        {"name": n} for n in "abc"]}).get_json()
    seat = {"Authorization": f"Bearer {game['seats'][0]['token']}"}
    config = app.config["CARTOUCHE"]
    checked = 0
    for path, ops in spec["paths"].items():
        op = ops.get("post")
        if op is None or "requestBody" not in op:
            continue
        url = path.replace("{game_id}", game["id"])
        limit = config.max_export_bytes if path == "/v1/replays/verify" else \
            config.max_body_bytes
        wrong = client.post(url, data="{}", headers={**seat, "Content-Type": "text/plain"})
        large = client.post(url, data="[" + " " * limit + "]", headers=seat,
                            content_type="application/json")
        assert (wrong.status_code, wrong.get_json()["error"]["code"]) == \
            (415, "unsupported_media_type"), path
        assert (large.status_code, large.get_json()["error"]["code"]) == \
            (413, "body_too_large"), path
        checked += 1
    assert checked >= 10


def test_every_write_documents_its_rate_limit():
    """Every POST is counted against the writes' rate limits (``service/api/ratelimit.py``):
    its 429 ``rate_limited`` is in the contract, so a generated client expects it."""
    spec = yaml.safe_load((ROOT / "openapi.yaml").read_text())
    posts = {op["operationId"]: op for ops in spec["paths"].values()
             for method, op in ops.items() if method == "post"}
    assert "createTournament" in posts and len(posts) >= 15
    assert [name for name, op in posts.items() if "429" not in op["responses"]] == []


def test_every_resume_position_the_contract_allows_the_stream_accepts(client):
    """The largest ``after`` and the longest ``Last-Event-ID`` the game stream's contract
    allows are served (an aborted game's stream, resumed past its end: the documented 204);
    one past the ``after`` maximum is the documented 400."""
    spec = yaml.safe_load((ROOT / "openapi.yaml").read_text())
    params = {(p["in"], p["name"]): p["schema"] for p in
              spec["paths"]["/v1/games/{game_id}/events/stream"]["get"]["parameters"]}
    largest = params[("query", "after")]["maximum"]
    digits = int(re.search(r"\{1,(\d+)\}", params[("header", "Last-Event-ID")]["pattern"])[1])
    game = client.post("/v1/games", json={"type": "diamant", "players": [
        {"name": n} for n in "abc"]}).get_json()
    token = {"Authorization": f"Bearer {game['seats'][0]['token']}"}
    assert client.post(f"/v1/games/{game['id']}/abort", headers=token).status_code == 200
    url = f"/v1/games/{game['id']}/events/stream"
    for query, header in ((f"?after={largest}", {}), ("", {"Last-Event-ID": "9" * digits})):
        r = client.get(url + query, headers=header, buffered=True)
        assert r.status_code == 204 and r.get_data() == b"", query
    r = client.get(url + f"?after={largest + 1}")
    assert r.status_code == 400 and r.get_json()["error"]["code"] == "invalid_last_event_id"
    # what the pattern refuses is refused, though Python's int() would read it as 3
    for bad in (" 3", "3 ", "+3", "1_0", "\u0663", "\uff13"):
        assert re.fullmatch(params[("header", "Last-Event-ID")]["pattern"], bad) is None
        r = client.get(url, headers={"Last-Event-ID": bad.encode().decode("latin-1")})
        assert r.status_code == 400, bad
        assert r.get_json()["error"]["code"] == "invalid_last_event_id"
        r = client.get(url, query_string={"after": bad})
        assert r.status_code == 400, bad


def test_the_contract_declares_what_the_stream_and_action_headers_accept(client):
    """An empty ``Last-Event-ID`` reads as absent, as its pattern says (the stream starting
    over: ``tests/api/test_stream.py``); an empty ``Idempotency-Key`` is refused, as its
    ``minLength`` says."""
    spec = yaml.safe_load((ROOT / "openapi.yaml").read_text())
    headers = {(path, p["name"]): p["schema"] for path, ops in spec["paths"].items()
               for op in ops.values() if isinstance(op, dict)
               for p in op.get("parameters", []) if p["in"] == "header"}
    stream = headers[("/v1/games/{game_id}/events/stream", "Last-Event-ID")]
    assert re.fullmatch(stream["pattern"].strip("^$"), "") and \
        re.fullmatch(stream["pattern"].strip("^$"), "12")
    assert headers[("/v1/games/{game_id}/actions", "Idempotency-Key")]["minLength"] == 1
    game = client.post("/v1/games", json={"type": "diamant", "players": [
        {"name": n} for n in "abc"]}).get_json()
    r = client.post(f"/v1/games/{game['id']}/actions", json={
        "action": {"type": "decide", "choice": "continue"}}, headers={
        "Authorization": f"Bearer {game['seats'][0]['token']}", "Idempotency-Key": ""})
    assert r.status_code == 400 and r.get_json()["error"]["code"] == "invalid_idempotency_key"


def test_every_operation_documents_its_answer_to_a_malformed_authorization_header(client):
    """A client whose Authorization header is malformed gets, on every operation, a status
    the contract lists for it."""
    spec = yaml.safe_load((ROOT / "openapi.yaml").read_text())
    game = client.post("/v1/games", json={"type": "diamant", "players": [
        {"name": "a"}, {"name": "b"}, {"name": "c"}]}).get_json()
    player = client.post("/v1/players", json={"name": "Ada", "kind": "human"}).get_json()
    seek = client.post("/v1/seeks", json={"type": "diamant", "seats": 3},
                       headers={"Authorization": f"Bearer {player['token']}"}).get_json()
    tournament = client.post("/v1/tournaments", json={
        "name": "Cup", "type": "tides-of-time", "format": "swiss", "rounds": 1,
        "seats_per_game": 2, "participants": [player["id"], "bot-random"]}).get_json()
    values = {"game_id": game["id"], "player_id": player["id"], "seek_id": seek["id"],
              "tid": tournament["id"], "version": "1", "type_id": "diamant",
              "rating_type": "diamant", "webhook_id": "wh_0"}
    undocumented = []
    for path, item in spec["paths"].items():
        url = re.sub(r"\{([^}]+)\}", lambda m: values[m.group(1)], path)
        url += "?external_id=x" if path == "/v1/players" else ""
        for method, op in item.items():
            if method not in ("get", "post", "delete"):
                continue
            for header in ("Bearer", "Basic abc", "Bearer " + "a" * 600):
                res = client.open(url, method=method.upper(),
                                  json={} if method == "post" else None,
                                  headers={"Authorization": header})
                status = res.status_code
                res.close()
                if str(status) not in op["responses"]:
                    undocumented.append(f"{method.upper()} {path} ({header[:9]}): {status}")
    assert undocumented == []
