"""A sixth game is one folder: ``tests/tiny_game`` (Pebbles) is registered through the same
path as the built-in games (``CARTOUCHE_GAME_PACKAGES`` -> ``service.games.load_package``) and is
then listed in the catalog, created and played over HTTP against a bot of each level run by a
real RQ worker, exported and verified, and drawn by the CLI — with no line changed elsewhere."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest
import requests

from tests.reliability.procs import ROOT, service_pair, wait_until

ENV = {"CARTOUCHE_GAME_PACKAGES": "tests.tiny_game"}


@pytest.fixture(scope="module")
def pebbles_url(redis_server):
    with service_pair(redis_server.url, 6, 7, ENV) as (url, _, _):
        yield url


def auth(token: str) -> dict:
    return {"Authorization": f"Bearer {token}"}


def finished(url: str, gid: str) -> dict:
    return wait_until(lambda: (lambda v: v if v["status"] == "finished" else None)(
        requests.get(f"{url}/v1/games/{gid}", timeout=5).json()), 60, "the game to finish")


def test_the_catalog_lists_the_new_game(pebbles_url):
    types = requests.get(f"{pebbles_url}/v1/game-types", timeout=5).json()["game_types"]
    assert [t["id"] for t in types][-1] == "pebbles"
    pebbles = types[-1]
    assert pebbles["name"] == "Pebbles" and pebbles["min_players"] == 2
    assert set(pebbles["actions"]) == {"take"}
    # a game without a guide (no guide.md in its folder) is served without one
    assert (pebbles["summary"], pebbles["rules"]) == (None, None)
    assert requests.get(f"{pebbles_url}/v1/game-types/pebbles", timeout=5).json() == pebbles
    r = requests.get(f"{pebbles_url}/v1/game-types/pebbles/rules", timeout=5)
    assert r.status_code == 404 and r.json()["error"]["code"] == "guide_not_found"


def test_the_contract_types_the_new_game(pebbles_url):
    import yaml

    spec = yaml.safe_load(requests.get(f"{pebbles_url}/openapi.yaml", timeout=10).text)
    schemas = spec["components"]["schemas"]
    assert {"PebblesOptions", "PebblesCreateGame", "PebblesActionTake", "PebblesState",
            "PebblesGameView", "PebblesEventTook", "PebblesEventTookData", "PebblesEvent",
            "PebblesEventPage", "PebblesExport"} <= set(schemas)
    ref = "#/components/schemas/"
    assert schemas["Action"]["discriminator"]["mapping"]["take"] == ref + "PebblesActionTake"
    for union, member in (("GameView", "PebblesGameView"), ("EventPage", "PebblesEventPage"),
                          ("Export", "PebblesExport"), ("CreateGame", "PebblesCreateGame")):
        assert schemas[union]["discriminator"]["mapping"]["pebbles"] == ref + member
    assert set(schemas["PebblesEvent"]["discriminator"]["mapping"]) >= {
        "PileMade", "Took", "GameEnded", "GameCreated"}


def test_a_human_plays_the_heuristic_bot_over_http(pebbles_url):
    url = pebbles_url
    r = requests.post(f"{url}/v1/games", timeout=5, json={
        "type": "pebbles", "options": {"pile": 10},
        "players": [{"name": "Ann"}, {"name": "Hal", "bot": {"level": "heuristic"}}]})
    assert r.status_code == 201, r.text
    gid, ann = r.json()["id"], r.json()["seats"][0]["token"]
    bad = requests.post(f"{url}/v1/games/{gid}/actions", headers=auth(ann), timeout=5,
                        json={"action": {"type": "take", "count": 4}})
    assert bad.status_code == 422 and bad.json()["error"]["details"]["code"] == "invalid_field"
    piles_left_to_ann = []
    while True:
        view = wait_until(lambda: (lambda v: v if v["status"] == "finished" or v["awaiting"][0]
                                   ["seat"] == 0 else None)(
            requests.get(f"{url}/v1/games/{gid}", timeout=5).json()), 30, "Ann's turn")
        if view["status"] == "finished":
            break
        piles_left_to_ann.append(view["state"]["pile"])
        r = requests.post(f"{url}/v1/games/{gid}/actions", headers=auth(ann), timeout=5,
                          json={"action": {"type": "take", "count": 1}})
        assert r.status_code == 201, r.text
    # the heuristic leaves Ann a multiple of four each time it can: 10 -> 9 -> 8 (bot), ...
    assert piles_left_to_ann == [10, 8, 4]
    assert view["result"]["winners"] == [1]

    doc = requests.get(f"{url}/v1/games/{gid}/export", timeout=5).json()
    verdict = requests.post(f"{url}/v1/replays/verify", json=doc, timeout=10).json()
    assert verdict["valid"] is True, verdict

    out = subprocess.run([sys.executable, "-m", "service.cli", "--url", url, "--no-color",
                          "watch", gid], cwd=ROOT, env=dict(os.environ, **ENV),
                         capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    assert "pile: " in out.stdout and "(0 left)" in out.stdout, out.stdout


def test_bots_of_every_level_finish_a_game(pebbles_url):
    url = pebbles_url
    r = requests.post(f"{url}/v1/games", timeout=5, json={
        "type": "pebbles",
        "players": [{"name": "M", "bot": {"level": "mcts", "budget_ms": 50}},
                    {"name": "H", "bot": {"level": "heuristic"}},
                    {"name": "R", "bot": {"level": "random"}}]})
    assert r.status_code == 201, r.text
    view = finished(url, r.json()["id"])
    assert len(view["result"]["winners"]) == 1
