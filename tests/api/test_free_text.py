"""Free text stored from clients holds no control, format or separator character (issue 21,
finding 1): names at creation, in bulk, at a join and of players, external ids and webhook
descriptions are refused with 400 ``invalid_text``; the strings of options with 422
``invalid_options`` (``details.code`` ``invalid_text``)."""

from __future__ import annotations

import hashlib
import re
import unicodedata

import pytest
import redis

from service.app import create_app
from service.config import Config
from service.engine.text import NOT_TEXT, TEXT_PATTERN
from tests.games.test_papyrus_options import small_board

from .helpers import auth

KEY = "platform-key-free-text"
BAD = ["\x1b[2J", "a\x1b]0;title\x07", "\x00", "tab\there", "new\nline", "del\x7f", "c1\x9b",
       "bidi\u202eevil", "iso\u2066late", "zero\u200bwidth", "zwj\u200d", "bom\ufeff",
       "line\u2028sep", "tag\U000e0041", "soft\u00adhyphen"]
GOOD = ["Ann", "Zoë", "日本語の名前", "Jean\u00a0Luc", "ﷺ", "🂡 ace", "a b"]
PLAYERS = [{"name": "a"}, {"name": "b"}]


def refused(r, field=None):
    body = r.get_json()
    assert r.status_code == 400 and body["error"]["code"] == "invalid_text", body
    assert re.fullmatch(r"U\+[0-9A-F]{4,6}", body["error"]["details"]["character"])
    if field is not None:
        assert list(body["error"]["details"]["fields"]) == [field]
    return body["error"]


@pytest.mark.parametrize("name", BAD)
def test_a_seat_name_with_a_control_or_format_character_is_refused(client, name):
    r = client.post("/v1/games", json={"type": "diamant", "players": PLAYERS + [{"name": name}]})
    err = refused(r, "name")
    assert hex(ord(name[err["details"]["position"]])) == hex(int(err["details"]["character"][2:], 16))
    bulk = {"games": [{"type": "diamant", "players": PLAYERS + [{"name": "c"}]},
                      {"type": "diamant", "players": PLAYERS + [{"name": name}]}]}
    refused(client.post("/v1/games/bulk", json=bulk), "name")
    assert client.get("/v1/games").get_json()["total"] == 0


@pytest.mark.parametrize("name", GOOD)
def test_names_in_any_script_are_accepted(client, name):
    r = client.post("/v1/games", json={"type": "diamant", "players": PLAYERS + [{"name": name}]})
    assert r.status_code == 201, r.get_json()
    assert r.get_json()["seats"][2]["name"] == name


def test_a_join_name_and_a_player_name_are_checked(client):
    r = client.post("/v1/games", json={"type": "diamant", "players": PLAYERS + [{"open": True}]})
    gid = r.get_json()["id"]
    refused(client.post(f"/v1/games/{gid}/join", json={"name": "x\u202ey"}), "name")
    assert client.post(f"/v1/games/{gid}/join", json={"name": "Cyd"}).status_code == 201
    refused(client.post("/v1/players", json={"name": "\x1b[31mred"}), "name")
    assert client.post("/v1/players", json={"name": "Ré"}).status_code == 201
    cup = {"type": "diamant", "format": "round_robin", "seats_per_game": 3,
           "participants": ["bot-random", "bot-heuristic", "bot-mcts"]}
    for bad in ("a\x00b", "\x1b[2J", "x\u202ey", "new\nline"):
        refused(client.post("/v1/tournaments", json={"name": bad, **cup}), "name")


def options_refused(r, option):
    """Options are refused as their other rules are (a free-form object in the contract):
    422 ``invalid_options``."""
    body = r.get_json()
    assert r.status_code == 422 and body["error"]["code"] == "invalid_options", body
    assert body["error"]["details"]["code"] == "invalid_text"
    assert body["error"]["details"]["option"] == option


def test_strings_anywhere_in_options_are_checked(client):
    board = small_board()
    board["nodes"][0]["name"] = "Start\u200f"
    r = client.post("/v1/games", json={"type": "papyrus", "players": PLAYERS,
                                       "options": {"board": board}})
    options_refused(r, "board.nodes.0.name")
    options_refused(client.post("/v1/games", json={"type": "diamant", "players": PLAYERS * 2,
                                                   "options": {"\x1b": 1}}), "\x1b")


def test_external_ids_and_webhook_descriptions_are_checked(redis_url, queue_url):
    digest = hashlib.sha256(KEY.encode()).hexdigest()
    app = create_app(Config(redis_url=redis_url, queue_url=queue_url,
                            platform_key_digests=(digest,)),
                     webhook_queue=redis.Redis.from_url(queue_url))
    client = app.test_client()
    refused(client.post("/v1/players", json={"name": "a", "external_id": "u\x001"},
                        headers=auth(KEY)), "external_id")
    refused(client.post("/v1/webhooks", json={"url": "http://127.0.0.1:9/h",
                                              "description": "ok\u2066"},
                        headers=auth(KEY)), "description")
    assert client.post("/v1/webhooks", json={"url": "http://127.0.0.1:9/h",
                                             "description": "our hook"},
                       headers=auth(KEY)).status_code == 201


def test_not_text_is_exactly_the_control_format_and_separator_characters():
    listed = {cp for a, b in NOT_TEXT for cp in range(a, b + 1)}
    categories = {cp for cp in range(0x110000)
                  if unicodedata.category(chr(cp)) in ("Cc", "Cf", "Zl", "Zp")}
    assert categories <= listed  # a newer Unicode with more format characters: extend NOT_TEXT
    assert {unicodedata.category(chr(cp)) for cp in listed - categories} <= {"Cn"}
    assert re.fullmatch(TEXT_PATTERN, "".join(GOOD))
    assert not any(re.fullmatch(TEXT_PATTERN, bad) for bad in BAD)


def test_the_pattern_means_the_same_in_python_and_in_javascript():
    """Generated JavaScript code and validators compile the contract's pattern with or
    without the ``u`` flag: it holds no raw control or separator character, and with either
    flag it accepts exactly what Python's ``re`` (and the server) accepts, for every character
    of NOT_TEXT and for text in any script."""
    import json
    import shutil
    import subprocess

    assert all(" " <= c <= "~" or ord(c) > 0xFFFF for c in TEXT_PATTERN)
    samples = GOOD + BAD + [f"a{chr(cp)}b" for a, b in NOT_TEXT for cp in range(a, b + 1)
                            if not 0xD800 <= cp <= 0xDFFF]
    expected = [re.fullmatch(TEXT_PATTERN, t) is not None for t in samples]
    assert sum(expected) == len(GOOD)
    node = shutil.which("node")
    if node is None:
        pytest.skip("node is not installed: the JavaScript half is not checked")
    script = ("const [p, xs] = JSON.parse(require('fs').readFileSync(0, 'utf8'));"
              "const a = new RegExp(p), u = new RegExp(p, 'u');"
              "console.log(JSON.stringify([xs.map(x => a.test(x)), xs.map(x => u.test(x))]));")
    out = subprocess.run([node, "-e", script], input=json.dumps([TEXT_PATTERN, samples]),
                         capture_output=True, text=True, timeout=60, check=True)
    without_u, with_u = json.loads(out.stdout)
    assert without_u == expected and with_u == expected


def test_the_contract_documents_the_rule_on_text_fields(app):
    spec = app.extensions["cartouche_api"].spec.to_dict()["components"]["schemas"]
    assert spec["CreatePlayer"]["properties"]["name"]["pattern"] == TEXT_PATTERN
    assert spec["Join"]["properties"]["name"]["pattern"] == TEXT_PATTERN
