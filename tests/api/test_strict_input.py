"""Strict input (issue 21, finding 9): patterns match whole strings, integers are integers, and
a body is read as JSON only when it says it is JSON."""

import pytest

from .helpers import act, auth, create

PLAYERS = [{"name": "a"}, {"name": "b"}, {"name": "c"}]


def code(r):
    return r.get_json()["error"]["code"]


@pytest.mark.parametrize("seed", ["00" * 16 + "\n", "00" * 16 + "\r", "\n" + "00" * 16])
def test_a_seed_with_a_newline_is_refused(client, seed):
    r = client.post("/v1/games", json={"type": "diamant", "players": PLAYERS, "seed": seed})
    assert r.status_code == 400 and code(r) == "invalid_request", r.get_json()


def test_a_player_id_with_a_trailing_newline_is_refused(client):
    players = PLAYERS[:2] + [{"player": "p-0123456789abcdef\n"}]
    r = client.post("/v1/games", json={"type": "diamant", "players": players})
    assert r.status_code == 400 and code(r) == "invalid_request", r.get_json()


@pytest.mark.parametrize("extra", [{"expected_version": 3.0}, {"expected_version": 4.0}])
def test_a_float_is_not_an_integer(client, extra):
    """JSON Schema counts 3.0 as an integer: refused with 422 ``not_an_integer`` (a schema-valid
    request the server refuses all the same), like ``2.0`` in options."""
    gid, tokens, data = create(client, 3)
    r = act(client, gid, tokens[0], **extra)
    assert r.status_code == 422 and code(r) == "not_an_integer", r.get_json()
    assert list(r.get_json()["error"]["details"]) == ["fields"]
    assert list(r.get_json()["error"]["details"]["fields"]) == ["expected_version"]
    assert client.get(f"/v1/games/{gid}").get_json()["version"] == data["version"]
    assert act(client, gid, tokens[0], expected_version=3.5).status_code == 400


def test_float_integers_are_refused_everywhere_a_request_takes_an_integer(client):
    bot = {"name": "r", "bot": {"level": "random", "budget_ms": 100.0}}
    r = client.post("/v1/games", json={"type": "diamant", "players": PLAYERS[:2] + [bot]})
    assert r.status_code == 422 and code(r) == "not_an_integer", r.get_json()
    gid, _, _ = create(client, 3)
    r = client.post(f"/v1/games/{gid}/fork", json={"version": 3.0})
    assert r.status_code == 422 and code(r) == "not_an_integer"
    export = {"format": "cartouche-export/1", "id": gid, "type": "diamant", "status": "finished",
              "created_at": "2026-01-01T00:00:00Z", "options": {}, "players": [],
              "result": None, "clock": None, "forked_from": None, "seed": "00" * 32,
              "seed_commitment": "00" * 32, "seed_source": "server",
              "signature": {"alg": "Ed25519", "key_id": "k", "value": ""},
              "events": [{"version": 1.0, "type": "game_created", "data": {}, "seat": None,
                          "at": None}]}
    r = client.post("/v1/replays/verify", json=export)
    assert r.status_code == 422 and code(r) == "not_an_integer", r.get_json()


def test_every_operation_whose_body_holds_an_integer_documents_the_422():
    """``not_an_integer`` can answer any body with an integer in it: each such operation
    declares the 422 (the contract test otherwise finds it undocumented)."""
    import yaml

    from .test_contract import ROOT

    spec = yaml.safe_load((ROOT / "openapi.yaml").read_text())
    components = spec["components"]["schemas"]

    def holds_integer(node, seen=frozenset()):
        if isinstance(node, dict):
            if "$ref" in node:
                name = node["$ref"].rsplit("/", 1)[-1]
                return name not in seen and holds_integer(components[name], seen | {name})
            kind = node.get("type")
            if kind == "integer" or (isinstance(kind, list) and "integer" in kind):
                return True
            return any(holds_integer(v, seen) for v in node.values())
        return isinstance(node, list) and any(holds_integer(v, seen) for v in node)

    undeclared = [f"{method.upper()} {path}" for path, ops in spec["paths"].items()
                  for method, op in ops.items() if method in ("post", "put", "patch", "delete")
                  if holds_integer(op.get("requestBody", {}).get("content", {})
                                   .get("application/json", {}).get("schema"))
                  and "422" not in op["responses"]]
    assert undeclared == []


@pytest.mark.parametrize("content_type", [None, "text/plain", "application/x-www-form-urlencoded",
                                          "multipart/form-data; boundary=x", "application/jsonx"])
def test_a_body_that_is_not_declared_json_is_415(client, content_type):
    gid, tokens, data = create(client, 3)
    raw = b'{"action": {"type": "decide", "choice": "continue"}}'
    headers = auth(tokens[0])
    if content_type:
        headers["Content-Type"] = content_type
    r = client.post(f"/v1/games/{gid}/actions", data=raw, headers=headers)
    assert r.status_code == 415 and code(r) == "unsupported_media_type", r.get_json()
    assert client.get(f"/v1/games/{gid}").get_json()["version"] == data["version"]
    r = client.post("/v1/games", data=b'{"type": "diamant", "players": [{"name": "a"}, '
                                      b'{"name": "b"}, {"name": "c"}]}', headers=headers)
    assert r.status_code == 415 and code(r) == "unsupported_media_type"


@pytest.mark.parametrize("content_type", ["application/json; charset=utf-8",
                                          "Application/JSON", "application/merge-patch+json"])
def test_json_content_types_are_read(client, content_type):
    gid, tokens, _ = create(client, 3)
    r = client.post(f"/v1/games/{gid}/actions",
                    data=b'{"action": {"type": "decide", "choice": "continue"}}',
                    headers={**auth(tokens[0]), "Content-Type": content_type})
    assert r.status_code == 201, r.get_json()


def test_a_post_without_a_body_needs_no_content_type(client):
    gid, tokens, _ = create(client, 3)
    assert client.post(f"/v1/games/{gid}/abort", headers=auth(tokens[0])).status_code == 200


@pytest.mark.parametrize("number", ["18446744073709551617", "1" + "0" * 30, "-" + "1" * 25])
def test_an_integer_past_64_bits_is_refused_naming_its_field(client, number):
    """JSON reads an integer past 64 bits as a float. The contract counts it as an integer (no
    maximum), so the refusal is the 422 of a schema-valid request the server does not take,
    saying why (not "3, not 3.0") and naming the field, a seek's seat count included."""
    gid, tokens, data = create(client, 3)
    player = client.post("/v1/players", json={"name": "Ada", "kind": "human"}).get_json()
    asked = [
        (f"/v1/games/{gid}/fork", '{"version": %s}', None, "version"),
        (f"/v1/games/{gid}/actions",
         '{"action": {"type": "decide", "choice": "continue"}, "expected_version": %s}',
         tokens[0], "expected_version"),
        ("/v1/seeks", '{"type": "tides-of-time", "seats": %s}', player["token"], "seats"),
        ("/v1/seeks", '{"type": "tides-of-time", "seats": [2, %s]}', player["token"], "seats"),
    ]
    for path, body, token, field in asked:
        r = client.post(path, data=(body % number).encode(), content_type="application/json",
                        headers=auth(token) if token else {})
        assert r.status_code == 422 and code(r) == "not_an_integer", (path, r.get_json())
        assert r.get_json()["error"]["details"]["fields"] == {
            field: [f"{field} takes an integer of at most 64 bits"]}, (path, r.get_json())
    assert client.get(f"/v1/games/{gid}").get_json()["version"] == data["version"]


@pytest.mark.parametrize("path, body", [
    ("/v1/games", {"type": "diamant", "players": PLAYERS}),
    ("/v1/games/bulk", {"games": [{"type": "diamant", "players": PLAYERS}]}),
    ("/v1/players", {"name": "Ada", "kind": "human"}),
    ("/v1/tournaments", {"name": "Cup", "type": "tides-of-time", "format": "swiss", "rounds": 1,
                         "seats_per_game": 2, "participants": ["bot-random", "bot-heuristic"]}),
])
def test_a_creation_with_a_token_that_names_nobody_is_401_not_anonymous(client, path, body):
    """Where anybody may create (no platform key), a request carrying a player token that
    names no player, or a token that is not one at all (not ASCII), is refused (401
    invalid_token), not created anonymously for a client that meant to be somebody (a
    table's own seat would become an invitation to itself). A seat's token, which names a
    seat of some game, creates as anybody does."""
    for token in ("cp_" + "A" * 43, "t\u00f6k\u00e9n"):
        r = client.post(path, json=body, headers={"Authorization": f"Bearer {token}"})
        assert r.status_code == 401 and code(r) == "invalid_token", (token, r.get_json())
    _, tokens, _ = create(client, 3)
    assert client.post(path, json=body, headers=auth(tokens[0])).status_code == 201
    assert client.post(path, json=body).status_code == 201


@pytest.mark.parametrize("route,prefix", [
    ("/v1/replays/verify", '{"format": "cartouche-tournament", "id": "t", "events": [], '
                           '"standings": [], "games": ['),
    ("/v1/replays/verify", '{"format": "cartouche-tournament", "id": "t", "events": [], '
                           '"games": [], "standings": ['),
    ("/v1/games/bulk", '{"games": ['),
])
def test_a_list_of_many_bad_items_is_refused_at_its_first(client, app, route, prefix):
    """A body at the size limit holding ~175,000 empty objects where a list's items go: it
    is refused after its first ten bad items (or by its length), not with an error for every
    item (it took ~20 s of CPU and answered 145 MB)."""
    config = app.config["CARTOUCHE"]
    limit = config.max_export_bytes if route == "/v1/replays/verify" else config.max_body_bytes
    count = (limit - len(prefix) - 2) // 3
    body = prefix + ",".join(["{}"] * count) + "]}"
    assert len(body) <= limit and count > 80_000
    r = client.post(route, data=body, content_type="application/json")
    assert r.status_code == 400 and len(r.get_data()) < 8_000, len(r.get_data())
    listed = r.get_json()["error"]["details"]["fields"]
    assert {int(name.split(".")[1]) for name in listed if "." in name} <= set(range(10))


def test_a_refusal_lists_at_most_fifty_fields(client):
    """200 unknown fields: the answer names 50 of them and counts the others, rather than
    being twice the size of the body."""
    body = {"type": "diamant", "players": [{"name": n} for n in "abc"],
            **{f"unknown{i:03d}": 0 for i in range(200)}}
    r = client.post("/v1/games", json=body)
    details = r.get_json()["error"]["details"]
    assert r.status_code == 400 and len(details["fields"]) == 50
    assert details["fields_omitted"] == 150
    few = client.post("/v1/games", json={"type": "diamant", "players": [], "x": 1})
    assert "fields_omitted" not in few.get_json()["error"]["details"]
