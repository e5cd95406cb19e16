"""The options schema the catalog serves (``GET /v1/game-types``, and ``<Game>Options`` in the
contract) describes what ``POST /v1/games`` accepts: every variant, with or without a clock,
passes the schema and is created; options the server refuses for a reason a schema can say are
refused by the served schema too."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest
import yaml
from jsonschema import Draft202012Validator

from service.engine import InvalidOptions
from service.games import GAMES

ROOT = Path(__file__).resolve().parents[2]
CORPUS = ROOT / "tests" / "games" / "options_corpus"
CLOCKS = [None, {"per_decision_ms": 30000}, {"initial_ms": 300000, "increment_ms": 5000},
          {"per_decision_ms": 1000, "initial_ms": 60000, "timeout": "forfeit",
           "bot_level": "random"}]
BAD_CLOCKS = [{}, {"per_decision_ms": 5}, {"per_decision_ms": 1000, "timeout": "sleep"},
              {"initial_ms": "60000"}, {"per_decision_ms": 1000, "colour": 1}, [], 7,
              {"per_decision_ms": None, "initial_ms": None}, {"initial_ms": 1000, "bot_level": 3}]


def players(n: int) -> list[dict]:
    return [{"name": f"p{i}"} for i in range(n)]


def seats_for(game, options: dict) -> int:
    """The fewest seats the game takes with these options."""
    for n in range(game.min_players, game.max_players + 1):
        try:
            game.normalize_options(dict(options), players(n))
        except InvalidOptions:
            continue
        return n
    raise AssertionError(f"no seat count fits {options}")


def post(client, type_id: str, n: int, options) -> tuple[int, dict]:
    body = {"type": type_id, "players": players(n), "options": options}
    r = client.post("/v1/games", data=json.dumps(body), content_type="application/json")
    return r.status_code, r.get_json()


def test_the_catalog_and_the_contract_serve_the_same_schemas(client):
    contract = yaml.safe_load((ROOT / "openapi.yaml").read_text())["components"]["schemas"]
    catalog = client.get("/v1/game-types").get_json()["game_types"]
    assert {t["id"] for t in catalog} == set(GAMES)
    for t in catalog:
        name = "".join(part.capitalize() for part in t["id"].split("-")) + "Options"
        assert name in contract, f"openapi.yaml has no {name}: run `make openapi` and commit it"
        # the contract's clock is one component for every game, or null
        clock = contract[name]["properties"]["clock"]
        assert clock["anyOf"] == [{"$ref": "#/components/schemas/Clock"}, {"type": "null"}]
        inline = {**contract["Clock"], "type": ["object", "null"]}
        assert {**contract[name], "properties": {**contract[name]["properties"],
                                                 "clock": inline}} == t["options"]
        Draft202012Validator.check_schema(t["options"])
        assert t["options"]["properties"]["clock"]["properties"]["timeout"]["enum"] == \
            ["auto", "bot", "forfeit"]


@pytest.mark.parametrize("type_id", list(GAMES))
def test_every_variant_with_or_without_a_clock_passes_the_schema_and_is_created(client,
                                                                                 type_id):
    schema = client.get("/v1/game-types").get_json()["game_types"]
    entry = next(t for t in schema if t["id"] == type_id)
    validator = Draft202012Validator(entry["options"])
    game = GAMES[type_id]
    for options in [v["options"] for v in entry["variants"]] or [{}]:
        n = seats_for(game, options)
        for clock in CLOCKS:
            sent = dict(options, **({"clock": clock} if clock else {}))
            assert not list(validator.iter_errors(sent)), (type_id, sent)
            status, body = post(client, type_id, n, sent)
            assert status == 201, (type_id, sent, body)


def refused_by_schema(type_id: str) -> list[tuple[int, dict, dict]]:
    """Corpus inputs the game refuses for a reason its schema says: (seats, options, details)."""
    path = CORPUS / f"{type_id}.json.gz"
    assert path.exists(), (f"no {path}: record it with `.venv/bin/python -m "
                           f"tests.games.make_options_corpus {type_id}` and commit it")
    cases = json.loads(gzip.decompress(path.read_bytes()))
    out = []
    for case in cases:
        if case["accepted"]:
            continue
        try:
            GAMES[type_id].normalize_options(json.loads(json.dumps(case["options"])),
                                             players(case["players"]))
        except InvalidOptions as exc:
            if exc.code == "unknown_option" or "expected" in exc.details:
                out.append((case["players"], case["options"], exc.details))
    return out


def integral_float_at(options, option: str) -> bool:
    """True when the value at the dotted path is a float with no fraction (2.0): JSON Schema
    counts it as an integer, the server does not."""
    value = options
    for part in option.split("."):
        value = value[int(part)] if isinstance(value, list) else value[part]
    return isinstance(value, float) and value.is_integer()


@pytest.mark.parametrize("type_id", list(GAMES))
def test_options_refused_for_a_schema_reason_are_refused_by_the_served_schema(client, type_id):
    entry = next(t for t in client.get("/v1/game-types").get_json()["game_types"]
                 if t["id"] == type_id)
    validator = Draft202012Validator(entry["options"])
    refused = refused_by_schema(type_id)
    assert len(refused) >= 100
    for n, options, details in refused:
        if not list(validator.iter_errors(options)):
            assert details.get("expected") == {"type": "integer"}, (options, details)
            assert integral_float_at(options, details["option"]), (options, details)
    for n, options, details in refused[::len(refused) // 12]:  # a sample through HTTP
        status, body = post(client, type_id, n, options)
        assert status == 422 and body["error"]["code"] == "invalid_options", body
        assert body["error"]["details"]["option"] == details["option"]
    game = GAMES[type_id]
    n = seats_for(game, {})
    for clock in BAD_CLOCKS:
        assert list(validator.iter_errors({"clock": clock})), clock
        status, body = post(client, type_id, n, {"clock": clock})
        assert status == 422 and body["error"]["details"]["code"] == "invalid_clock", body


@pytest.mark.parametrize("type_id", list(GAMES))
def test_a_creation_may_send_every_default_the_schema_declares(client, type_id):
    """A generated client's options model fills in the schema's defaults and sends them:
    sending a default is as not sending it (``on_decline: "open"`` on a game that is not a
    table included), for every option and every variant."""
    entry = next(t for t in client.get("/v1/game-types").get_json()["game_types"]
                 if t["id"] == type_id)
    defaults = {name: prop["default"] for name, prop in entry["options"]["properties"].items()
                if "default" in prop}
    game = GAMES[type_id]
    for options in [v["options"] for v in entry["variants"]] or [{}]:
        n = seats_for(game, options)
        status, plain = post(client, type_id, n, options)
        assert status == 201, plain
        status, filled = post(client, type_id, n, {**defaults, **options})
        assert status == 201, (options, filled)
        views = [client.get(f"/v1/games/{made['id']}").get_json() for made in (plain, filled)]
        assert views[1]["options"] == views[0]["options"], (options, views[1]["options"])


@pytest.mark.parametrize("type_id", list(GAMES))
def test_the_options_a_game_serves_pass_its_options_schema(client, type_id):
    """A game's view and export serve its options normalized (defaults filled in); the
    contract types them as the game's options schema, so they must pass it: every variant,
    with and without a clock."""
    entry = next(t for t in client.get("/v1/game-types").get_json()["game_types"]
                 if t["id"] == type_id)
    validator = Draft202012Validator(entry["options"])
    game = GAMES[type_id]
    for options in [v["options"] for v in entry["variants"]] or [{}]:
        for clock in (None, CLOCKS[3]):
            sent = dict(options, **({"clock": clock} if clock else {}))
            status, made = post(client, type_id, seats_for(game, options), sent)
            assert status == 201, made
            served = client.get(f"/v1/games/{made['id']}").get_json()["options"]
            assert not [e.message for e in validator.iter_errors(served)], (sent, served)
