"""The action endpoint skips marshmallow on its hot path (ActionRequestSchema.fast_load for the
body, a pre-encoded response): these check that the fast paths say exactly what the documented
schemas say."""

import marshmallow as ma
from hypothesis import given, settings
from hypothesis import strategies as st

from service.schemas import ActionRequestSchema, ActionResponseSchema, NotAnInteger

from tests.api.helpers import act, create, record_commands

json_scalars = st.one_of(st.none(), st.booleans(), st.integers(-2**60, 2**60),
                         st.floats(allow_nan=False, allow_infinity=False), st.text(max_size=5))
json_values = st.recursive(json_scalars, lambda inner: st.one_of(
    st.lists(inner, max_size=3), st.dictionaries(st.text(max_size=5), inner, max_size=3)),
    max_leaves=8)
bodies = st.one_of(
    json_values,
    st.fixed_dictionaries({"action": json_values}),
    st.fixed_dictionaries({"action": st.dictionaries(st.text(max_size=5), json_values),
                           "expected_version": json_values}),
    st.fixed_dictionaries({"action": st.dictionaries(st.text(max_size=5), json_values)},
                          optional={"expected_version": st.integers(-5, 2**53 + 5),
                                    "extra": json_values}),
)


@settings(max_examples=600, deadline=None)
@given(bodies)
def test_fast_load_accepts_only_what_the_schema_loads_and_loads_it_the_same(body):
    fast = ActionRequestSchema.fast_load(body)
    try:
        slow = ActionRequestSchema().load(body)
    except (ma.ValidationError, NotAnInteger):
        slow = None
    if fast is not None:
        assert slow == fast


def test_fast_load_covers_the_common_bodies():
    action = {"type": "decide", "choice": "continue"}
    assert ActionRequestSchema.fast_load({"action": action}) == {"action": action}
    assert ActionRequestSchema.fast_load({"action": action, "expected_version": 7}) == \
        {"action": action, "expected_version": 7}
    for refused in ({"action": action, "expected_version": True}, {"action": [1]},
                    {"action": action, "expected_version": -1}, {"action": action, "x": 1},
                    [], {"expected_version": 3}):
        assert ActionRequestSchema.fast_load(refused) is None


def test_refusals_still_come_from_the_schema(client):
    gid, tokens, _ = create(client, n=3, seed="15" * 32)
    res = act(client, gid, tokens[0], expected_version=True)
    assert res.status_code == 400
    assert res.get_json()["error"]["code"] == "invalid_request"
    assert "expected_version" in res.get_json()["error"]["details"]["fields"]
    res = act(client, gid, tokens[0], expected_version=2.0)  # an integer is written as one
    assert res.status_code == 422, res.get_json()
    assert res.get_json()["error"]["code"] == "not_an_integer"


def test_the_action_response_is_what_its_schema_documents(client):
    gid, tokens, _ = create(client, n=3, seed="14" * 32)
    for seat in range(3):
        body = act(client, gid, tokens[seat]).get_json()
        assert ActionResponseSchema().dump(body) == body
        assert ActionResponseSchema().validate(body) == {}


def test_the_action_endpoint_runs_its_lean_view_and_is_still_documented(app, client):
    view = app.view_functions["games.post_action"]
    assert (view.__module__, view.__name__) == ("service.api.fastpaths", "post_action_lean")
    import yaml

    from service.openapi import generate
    spec = yaml.safe_load(generate())
    op = spec["paths"]["/v1/games/{game_id}/actions"]["post"]
    assert op["operationId"] == "postAction"
    assert "ActionRequest" in str(op["requestBody"]) and "201" in op["responses"]
    assert {"400", "401", "403", "404", "409", "422", "429"} <= set(op["responses"])
    # malformed JSON and a body the schema refuses: the same answers as through the schema
    gid, tokens, _ = create(client, n=3, seed="16" * 32)
    res = client.post(f"/v1/games/{gid}/actions", data=b"{", content_type="application/json",
                      headers={"Authorization": f"Bearer {tokens[0]}"})
    assert res.status_code == 400 and res.get_json()["error"]["code"] == "malformed_json"
    res = client.post(f"/v1/games/{gid}/actions", json={"action": {"type": "decide"}, "x": 1},
                      headers={"Authorization": f"Bearer {tokens[0]}"})
    assert res.status_code == 400 and res.get_json()["error"]["code"] == "invalid_request"
    res = client.post(f"/v1/games/{gid}/actions", headers={"Authorization": f"Bearer {tokens[0]}"})
    assert res.status_code == 400


def test_event_timestamps_are_exact_rfc3339_milliseconds():
    import random
    from datetime import datetime, timezone

    from service.timestamps import rfc3339

    rnd = random.Random(5)
    instants = [0, 999, 1000, 1_764_450_000_123, 1_764_450_000_999, 1_764_450_001_000]
    instants += [rnd.randrange(0, 4_102_444_800_000) for _ in range(20_000)]
    for ms in instants:
        expected = datetime.fromtimestamp(ms // 1000, timezone.utc).replace(
            microsecond=(ms % 1000) * 1000)
        assert rfc3339(ms) == expected.isoformat(timespec="milliseconds").replace("+00:00", "Z")


def test_a_game_this_process_never_saw_is_loaded_in_one_round_trip(app, client):
    """Meta, seed, snapshot and events in one read: the first action a worker serves for a
    game costs two round trips (load, append), not six."""
    gid, tokens, _ = create(client, n=3, seed="17" * 32)
    svc = app.extensions["cartouche"]
    # the server has both scripts cached (whatever ran before this test): an append, then a
    # load of a game the process has forgotten
    assert act(client, gid, tokens[0]).status_code == 201
    svc.drop_caches()
    assert client.get(f"/v1/games/{gid}").status_code == 200
    svc.drop_caches()
    sent = record_commands(svc.store.r)
    res = act(client, gid, tokens[1])
    assert res.status_code == 201, res.get_json()
    assert sent == ["EVALSHA", "EVALSHA"], sent  # the load, then the append


def test_bodies_read_straight_from_the_server_keep_the_connection_in_step(live_url):
    """Through gunicorn: a Content-Length body, a chunked one and an oversized one on one
    keep-alive connection, each answered as the schema and the limits say."""
    import json
    import socket

    import requests

    res = requests.post(live_url + "/v1/games", json={
        "type": "diamant", "players": [{"name": f"p{i}"} for i in range(3)]}, timeout=10)
    gid, tokens = res.json()["id"], [s["token"] for s in res.json()["seats"]]
    host, port = live_url.rsplit("/", 1)[1].split(":")
    body = json.dumps({"action": {"type": "decide", "choice": "continue"}}).encode()
    head = (f"POST /v1/games/{gid}/actions HTTP/1.1\r\nHost: x\r\n"
            f"Content-Type: application/json\r\n")

    def answer(sock) -> tuple[int, bytes]:
        buf = b""
        while b"\r\n\r\n" not in buf:
            buf += sock.recv(65536)
        header, rest = buf.split(b"\r\n\r\n", 1)
        length = int([h.split(b":")[1] for h in header.split(b"\r\n")
                      if h.lower().startswith(b"content-length")][0])
        while len(rest) < length:
            rest += sock.recv(65536)
        return int(header.split()[1]), rest

    with socket.create_connection((host, int(port)), timeout=10) as sock:
        sock.sendall((head + f"Authorization: Bearer {tokens[0]}\r\n"
                      f"Content-Length: {len(body)}\r\n\r\n").encode() + body)
        status, reply = answer(sock)
        assert status == 201 and json.loads(reply)["events"][0]["seat"] == 0
        sock.sendall((head + f"Authorization: Bearer {tokens[1]}\r\n"
                      "Transfer-Encoding: chunked\r\n\r\n").encode()
                     + f"{len(body):x}\r\n".encode() + body + b"\r\n0\r\n\r\n")
        status, reply = answer(sock)
        assert status == 201 and json.loads(reply)["events"][0]["seat"] == 1
        big = b'{"action": {"type": "decide", "choice": "' + b"x" * 300_000 + b'"}}'
        sock.sendall((head + f"Authorization: Bearer {tokens[2]}\r\n"
                      f"Content-Length: {len(big)}\r\n\r\n").encode() + big)
        status, reply = answer(sock)
        assert status == 413 and json.loads(reply)["error"]["code"] == "body_too_large"
    # chunked, the limit has no length to go by: a body valid up to the limit and going on
    # past it is refused all the same, not cut there and taken
    padded = body + b" " * 300_000
    with socket.create_connection((host, int(port)), timeout=10) as sock:
        sock.sendall((head + f"Authorization: Bearer {tokens[2]}\r\n"
                      "Transfer-Encoding: chunked\r\n\r\n").encode()
                     + b"".join(b"%x\r\n%s\r\n" % (len(padded[i:i + 65536]),
                                                    padded[i:i + 65536])
                                for i in range(0, len(padded), 65536)) + b"0\r\n\r\n")
        status, reply = answer(sock)
        assert status == 413 and json.loads(reply)["error"]["code"] == "body_too_large"
