"""The events the shell writes for every game (creation, a table's seats, starts, resignations,
forfeits, aborts, rematches, forks) are served as the contract says: each one is valid against
its ``ShellEvent<Type>`` component, every event page against ``EventPage`` and every export
against ``Export``, all read from the served /openapi.yaml (so the composition is checked with
the shell's schemas)."""

from __future__ import annotations

import pytest
import yaml
from jsonschema import Draft202012Validator
from referencing import Registry, Resource
from referencing.jsonschema import DRAFT202012

from service.engine.schemas import SHELL_EVENT_SCHEMAS

from .helpers import auth, join, player, table

CONTRACT = "urn:cartouche:openapi"


_served: dict[str, dict] = {}


@pytest.fixture
def contract(client):
    text = client.get("/openapi.yaml").get_data(as_text=True)
    if text not in _served:  # parsed once: the document is the same for every app here
        _served[text] = yaml.load(text, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))
    spec = _served[text]
    registry = Registry().with_resource(
        CONTRACT, Resource.from_contents(spec, default_specification=DRAFT202012))

    def check(component: str, value, where: str) -> None:
        validator = Draft202012Validator(
            {"$ref": f"{CONTRACT}#/components/schemas/{component}"}, registry=registry)
        errors = sorted(validator.iter_errors(value), key=lambda e: list(e.absolute_path))
        assert not errors, f"{where}: {errors[0].message} at {list(errors[0].absolute_path)}"

    return check


def served_types(client, contract, gid: str, token: str | None = None) -> list[str]:
    """The types of ``gid``'s events as served (to ``token``'s seat, else a spectator), every
    page and every shell event checked against the contract; its export too once over."""
    page = client.get(f"/v1/games/{gid}/events?limit=1000", headers=auth(token)).get_json()
    contract("EventPage", page, f"the event page of {gid}")
    for ev in page["events"]:
        if ev["type"] in SHELL_EVENT_SCHEMAS:
            contract(f"ShellEvent{ev['type']}", ev, f"{ev['type']} of {gid}")
    export = client.get(f"/v1/games/{gid}/export")
    if export.status_code == 200:
        contract("Export", export.get_json(), f"the export of {gid}")
    return [ev["type"] for ev in page["events"]]


def test_the_shell_events_of_tables_match_the_contract(client, contract):
    ada, bob, cy, dan = (player(client, n) for n in ("Ada", "Bob", "Cy", "Dan"))
    # a table: joined, left, declined, filled (GameStarted), then a seat resigns to a bot
    gid = table(client, ada, [{"player": ada["id"]}, {"open": True}, {"player": cy["id"]}])["id"]
    assert join(client, gid, bob).status_code == 201
    assert client.post(f"/v1/games/{gid}/leave", headers=auth(bob["token"])).status_code == 200
    assert client.post(f"/v1/games/{gid}/decline", headers=auth(cy["token"])).status_code == 200
    assert join(client, gid, None, name="Eve").status_code == 201
    assert join(client, gid, dan).status_code == 201
    assert client.post(f"/v1/games/{gid}/resign", headers=auth(ada["token"])).status_code == 200
    types = served_types(client, contract, gid, ada["token"])
    assert {"GameCreated", "SeatJoined", "SeatLeft", "SeatDeclined", "GameStarted",
            "SeatResigned"} <= set(types)

    # the last holder leaves: aborted as empty; a declined invitation that aborts
    gid = table(client, ada, [{"player": ada["id"]}, {"open": True}, {"open": True}])["id"]
    client.post(f"/v1/games/{gid}/leave", headers=auth(ada["token"]))
    assert served_types(client, contract, gid)[-1] == "GameAborted"
    gid = table(client, ada, [{"player": ada["id"]}, {"player": cy["id"]}, {"open": True}],
                options={"on_decline": "abort"})["id"]
    client.post(f"/v1/games/{gid}/decline", headers=auth(cy["token"]))
    assert served_types(client, contract, gid)[-2:] == ["SeatDeclined", "GameAborted"]


def test_the_shell_events_of_games_match_the_contract(client, contract):
    # a seat aborts before any move (the export of an aborted game too); a fork of it
    r = client.post("/v1/games", json={"type": "diamant",
                                       "players": [{"name": f"p{i}"} for i in range(3)]})
    gid, tokens = r.get_json()["id"], [s["token"] for s in r.get_json()["seats"]]
    version = client.get(f"/v1/games/{gid}").get_json()["version"]
    assert client.post(f"/v1/games/{gid}/abort", headers=auth(tokens[0])).status_code == 200
    assert served_types(client, contract, gid)[-1] == "GameAborted"
    fork = client.post(f"/v1/games/{gid}/fork", json={"version": version})
    assert fork.status_code == 201, fork.get_json()
    forked = client.get(f"/v1/games/{fork.get_json()['id']}/events").get_json()["events"][0]
    assert forked["data"]["forked_from"] == {"id": gid, "version": version}
    served_types(client, contract, fork.get_json()["id"])

    # under a clock that forfeits, a resignation is a forfeit; a rated table with a rematch
    r = client.post("/v1/games", json={
        "type": "diamant", "players": [{"name": f"p{i}"} for i in range(3)],
        "options": {"clock": {"per_decision_ms": 60_000, "timeout": "forfeit"}}})
    gid, tokens = r.get_json()["id"], [s["token"] for s in r.get_json()["seats"]]
    assert client.post(f"/v1/games/{gid}/resign", headers=auth(tokens[1])).status_code == 200
    assert "SeatForfeited" in served_types(client, contract, gid, tokens[0])

    ada, bob, cy = (player(client, n) for n in ("Ada", "Bob", "Cy"))
    gid = table(client, ada, [{"player": ada["id"]}, {"open": True}, {"open": True}])["id"]
    join(client, gid, bob)
    join(client, gid, cy)
    holders = {0: ada["token"], 1: bob["token"], 2: cy["token"]}
    while (view := client.get(f"/v1/games/{gid}").get_json())["status"] == "active":
        seat = view["awaiting"][0]["seat"]
        client.post(f"/v1/games/{gid}/actions", headers=auth(holders[seat]),
                    json={"action": {"type": "decide", "choice": "return"}})
    served_types(client, contract, gid, ada["token"])
    rematch = client.post(f"/v1/games/{gid}/rematch", headers=auth(bob["token"]))
    assert rematch.status_code == 201
    created = served_types(client, contract, rematch.get_json()["id"])
    assert created == ["GameCreated"]
