"""``GET /v1/games/{id}/states/1``: the state of the creation event alone, inside the command
that created the game (before the setup's deal or draw), is served in the shape the contract
declares for the game, like every later version, for every game type and mode."""

import jsonschema
import pytest
import yaml

from service.games import GAMES

from .helpers import auth, join, player, table
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
    missing = sorted(set(GAMES) - {t for t, _, _ in CASES})
    assert not missing, (
        f"add to CASES in {__file__} a (type, seats, options) for {missing}: e.g. "
        f"{[(t, GAMES[t].min_players, {}) for t in missing]}, and one per variant or mode "
        "whose first state differs")
    assert {t for t, _, _ in CASES} <= set(GAMES)


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


def test_every_version_of_a_table_with_a_clock_is_served(client, game_view_schema):
    """A table fills and its game starts in one command: the versions inside it (the setup's
    deal) come before the clock that command started, and are served without deadlines."""
    ada, bob = player(client, "Ada"), player(client, "Bob")
    clock = {"initial_ms": 60_000, "increment_ms": 0, "timeout": "auto"}
    created = table(client, ada, [{"player": ada["id"]}, {"open": True}, {"open": True}],
                    options={"clock": clock})
    gid = created["id"]
    for who in (bob, None):
        assert join(client, gid, who, **({} if who else {"name": "Cy"})).status_code == 201
    current = client.get(f"/v1/games/{gid}").get_json()
    assert current["status"] == "active" and current["awaiting"][0]["deadline_at"]
    validator = jsonschema.Draft202012Validator(game_view_schema)
    started = None
    for version in range(1, current["version"] + 1):
        served = client.get(f"/v1/games/{gid}/states/{version}", headers=auth(ada["token"]))
        assert served.status_code == 200, (version, served.get_json())
        view = served.get_json()
        assert list(validator.iter_errors(view)) == [], version
        if view["state"] is not None and started is None:
            started = version
        if version < current["version"]:
            assert all(a["deadline_at"] is None for a in view["awaiting"]), version
    assert started is not None and started < current["version"]
    assert client.get(f"/v1/games/{gid}/states/{current['version']}").get_json()[
        "awaiting"] == current["awaiting"]
