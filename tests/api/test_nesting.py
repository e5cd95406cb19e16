"""Deep and wide JSON on every POST endpoint is answered 4xx (or accepted), never 500 (issue 21,
finding 7: an action nested 253 levels deep was a 500, orjson serializing only 254 levels).

The bodies are written as text: the test itself never asks a JSON library to build them."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from service.api.fastpaths import MAX_DEPTH

from .helpers import auth, create

EXPORT = Path(__file__).resolve().parent.parent / "golden" / "exports" / "diamant.json.gz"
HOLE = "__nested__"
PLAYERS = [{"name": "a"}, {"name": "b"}, {"name": "c"}]
ENDPOINTS = ["games.create_game", "games.create_games_bulk", "games.post_action",
             "games.resign", "games.abort", "games.fork_game", "games.join_game",
             "games.leave_game", "games.decline_game", "games.rematch_game",
             "replays.verify_replay", "players.create_player", "seeks.create_seek",
             "tournaments.create_tournament", "webhooks.create_webhook"]


def nested(depth: int, width: int, objects: bool) -> str:
    """``depth`` levels of arrays (or objects under key "k"), ``width`` numbers innermost."""
    inner = ",".join(["7"] * width)
    if objects:
        return '{"k":' * (depth - 1) + "[" + inner + "]" + "}" * (depth - 1)
    return "[" * depth + inner + "]" * depth


def slots(body) -> list[tuple]:
    """Every path into ``body`` (a place to put the nested value), and a new key in each
    object."""
    out = [()]
    if isinstance(body, dict):
        for key, value in body.items():
            out += [(key, *rest) for rest in slots(value)]
        out.append(("x",))
    elif isinstance(body, list):
        for i, value in enumerate(body[:3]):
            out += [(i, *rest) for rest in slots(value)]
    return out


def with_hole(body, path: tuple):
    if not path:
        return HOLE
    body = json.loads(json.dumps(body))
    node = body
    for part in path[:-1]:
        node = node[part]
    node[path[-1]] = HOLE
    return body


def endpoints(client) -> dict[str, tuple[str, object, dict]]:
    """Every POST route of the app: its URL, a well-formed body and headers."""
    gid, tokens, _ = create(client, 3)
    table = client.post("/v1/games", json={"type": "diamant",
                                           "players": PLAYERS[:2] + [{"open": True}]})
    table_id = table.get_json()["id"]
    export = json.loads(gzip.decompress(EXPORT.read_bytes()))
    export["events"] = export["events"][:6]
    game = {"type": "diamant", "players": PLAYERS, "options": {}}
    seat = auth(tokens[0])
    seeker = auth(client.post("/v1/players", json={"name": "s"}).get_json()["token"])
    return {
        "games.create_game": ("/v1/games", game, {}),
        "games.create_games_bulk": ("/v1/games/bulk", {"games": [game]}, {}),
        "games.post_action": (f"/v1/games/{gid}/actions",
                              {"action": {"type": "decide", "choice": "continue"},
                               "expected_version": 3}, seat),
        "games.resign": (f"/v1/games/{gid}/resign", {}, seat),
        "games.abort": (f"/v1/games/{gid}/abort", {}, seat),
        "games.fork_game": (f"/v1/games/{gid}/fork", {"version": 2}, {}),
        "games.join_game": (f"/v1/games/{table_id}/join", {"name": "d", "seat": 2}, {}),
        "games.leave_game": (f"/v1/games/{table_id}/leave", {}, seat),
        "games.decline_game": (f"/v1/games/{table_id}/decline", {}, seat),
        "games.rematch_game": (f"/v1/games/{gid}/rematch", {}, seat),
        "replays.verify_replay": ("/v1/replays/verify", export, {}),
        "players.create_player": ("/v1/players", {"name": "p", "kind": "human"}, {}),
        "seeks.create_seek": ("/v1/seeks", {"type": "tides-of-time", "seats": 2,
                                            "options": {"rated": True}}, seeker),
        "tournaments.create_tournament": ("/v1/tournaments", {
            "name": "c", "type": "diamant", "format": "swiss", "rounds": 1,
            "seats_per_game": 3, "options": {},
            "participants": [client.post("/v1/players", json={"name": n}).get_json()["id"]
                             for n in "abc"]}, {}),
        "webhooks.create_webhook": ("/v1/webhooks", {"url": "http://127.0.0.1:9/h"}, {}),
    }


def test_every_post_route_is_covered(app, client):
    routed = {r.endpoint for r in app.url_map.iter_rules() if "POST" in r.methods
              and not r.rule.startswith("/bench/")}
    assert routed == set(endpoints(client)) == set(ENDPOINTS)


@pytest.mark.parametrize("endpoint", ENDPOINTS)
def test_deep_and_wide_bodies_are_never_a_500(client, endpoint):
    url, body, headers = endpoints(client)[endpoint]
    places = slots(body)

    @settings(max_examples=40, deadline=None, derandomize=True,
              suppress_health_check=[HealthCheck.function_scoped_fixture,
                                     HealthCheck.too_slow])
    @given(depth=st.one_of(st.integers(1, 80), st.integers(240, 270), st.integers(1, 1100)),
           width=st.integers(0, 300), objects=st.booleans(), place=st.sampled_from(places))
    def check(depth, width, objects, place):
        raw = json.dumps(with_hole(body, place)).replace(f'"{HOLE}"',
                                                         nested(depth, width, objects))
        r = client.post(url, data=raw, content_type="application/json", headers=headers)
        assert r.status_code < 500, (depth, width, objects, place, r.get_json())
        if body and depth + len(place) > MAX_DEPTH + 1:  # routes that read a body
            assert r.status_code == 400, (depth, place, r.get_json())
            # the same code however deep (orjson stops by itself past 1024 levels)
            assert r.get_json()["error"]["code"] == "json_too_deep", (depth, place)

    check()


def test_verify_with_a_600_deep_array_in_event_data_is_a_400(client):
    export = json.loads(gzip.decompress(EXPORT.read_bytes()))
    export["events"][3]["data"]["x"] = HOLE
    raw = json.dumps(export).replace(f'"{HOLE}"', nested(600, 1, False))
    r = client.post("/v1/replays/verify", data=raw, content_type="application/json")
    assert r.status_code == 400 and r.get_json()["error"]["code"] == "json_too_deep"
