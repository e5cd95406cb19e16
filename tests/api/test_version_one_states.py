"""``GET /v1/games/{id}/states/1``: the state of the creation event alone, inside the command
that created the game (before the setup's deal or draw), is served in the shape the contract
declares for the game, like every later version, for every game type and mode."""

import jsonschema
import pytest
import yaml

from service.games import GAMES

from .test_contract import ROOT

CASES = [("pharaohs-wall", 2, {}), ("scarabya", 2, {}), ("scarabya", 2, {"mode": "duel"}),
         ("scarabya", 1, {"mode": "solo"}), ("tides-of-time", 2, {}), ("diamant", 3, {}),
         ("papyrus", 2, {}), ("papyrus", 1, {"variant": "solo"}),
         ("pharaohs-wall", 2, {"curse": True, "sphinx": True})]


@pytest.fixture(scope="module")
def game_view_schema():
    spec = yaml.safe_load((ROOT / "openapi.yaml").read_text())
    return {"$ref": "#/components/schemas/GameView", "components": spec["components"]}


def test_the_cases_cover_every_game_type():
    assert {t for t, _, _ in CASES} == set(GAMES)


@pytest.mark.parametrize("type_id,seats,options", CASES, ids=lambda v: str(v))
def test_every_version_from_the_first_is_served_as_declared(client, game_view_schema, type_id,
                                                             seats, options):
    players = [{"name": f"p{i}"} for i in range(seats)]
    r = client.post("/v1/games", json={"type": type_id, "players": players, "options": options})
    assert r.status_code == 201, r.get_json()
    game = r.get_json()
    token = game["seats"][0]["token"]
    validator = jsonschema.Draft202012Validator(game_view_schema)
    for version in range(1, game["version"] + 1):
        for headers in ({}, {"Authorization": f"Bearer {token}"}):
            served = client.get(f"/v1/games/{game['id']}/states/{version}", headers=headers)
            assert served.status_code == 200
            errors = [f"{list(e.absolute_path)}: {e.message[:200]}"
                      for e in validator.iter_errors(served.get_json())]
            assert errors == [], (version, headers != {}, errors)
