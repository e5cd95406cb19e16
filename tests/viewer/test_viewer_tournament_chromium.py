"""The replay viewer on tournaments while they are played, in headless Chromium: a duplicate
deal's rotation whose end is withheld, and the tournament page following its tournament."""

from __future__ import annotations

import random

import pytest
import requests

from tests.api.helpers import Live, player
from tests.viewer.test_viewer_chromium import expect, play_tournament_game, wait_version


@pytest.fixture(scope="module")
def viewer_url(live_url):
    assert requests.get(live_url + "/viewer", timeout=5).status_code == 200
    return live_url


def tournament(url, name, duplicate):
    live = Live(url)
    people = [player(live, f"{name[:3]}{i}") for i in range(3)]
    r = requests.post(f"{url}/v1/tournaments", json={
        "name": name, "type": "diamant", "format": "swiss", "rounds": 1, "seats_per_game": 3,
        "participants": [p["id"] for p in people], "duplicate": duplicate}, timeout=10)
    assert r.status_code == 201, r.text
    body = r.json()
    return body["id"], [g["id"] for g in body["rounds"][0]["games"]], \
        {p["id"]: p["token"] for p in people}


def test_a_withheld_rotation_says_so_and_shows_its_end_once_public(vpage, viewer_url, worker):
    tid, games, tokens = tournament(viewer_url, "Withheld Cup", True)
    assert len(games) == 3
    rnd = random.Random("withheld")
    first = games[0]
    assert play_tournament_game(viewer_url, first, tokens, rnd)["status"] == "finished"
    head = requests.get(f"{viewer_url}/v1/games/{first}", timeout=10).json()
    assert head["state"] is None and head["result"] is None  # withheld by the API
    pg = vpage.page
    pg.goto(f"{viewer_url}/viewer?game={first}")
    wait_version(vpage, head["version"])
    board = pg.inner_text("#board")
    assert "Before the start" not in board and "withheld until the deal ends" in board, board
    assert "withheld" in pg.inner_text("#status-bar")
    assert pg.locator("#live").is_visible()  # still followed
    for gid in games[1:]:
        assert play_tournament_game(viewer_url, gid, tokens, rnd)["status"] == "finished"
    public = requests.get(f"{viewer_url}/v1/games/{first}", timeout=10).json()
    assert public["state"] is not None and public["version"] > head["version"]
    wait_version(vpage, public["version"], timeout=15000)  # drawn without a reload
    expect(pg.locator("#status-bar")).to_contain_text("result", timeout=5000)
    assert "withheld" not in pg.inner_text("#board")
    expect(pg.locator("#live")).to_be_hidden(timeout=5000)  # nothing more to follow
    errors = [e for e in vpage.errors if "events/stream" not in e]
    assert errors == [], errors


def test_the_tournament_page_follows_its_tournament(vpage, viewer_url, worker):
    tid, games, tokens = tournament(viewer_url, "Following Cup", False)
    assert len(games) == 1
    pg = vpage.page
    pg.goto(f"{viewer_url}/viewer?tournament={tid}")
    expect(pg.locator("#tournament-meta")).to_contain_text("running")
    status = pg.locator(f'#tournament-rounds li:has(a[data-game="{games[0]}"]) .status')
    expect(status).to_have_text("active")
    play_tournament_game(viewer_url, games[0], tokens, random.Random("following"))
    # the worker records the game; the page shows what the API says without a reload
    expect(pg.locator("#tournament-meta")).to_contain_text("finished", timeout=20000)
    final = requests.get(f"{viewer_url}/v1/tournaments/{tid}", timeout=10).json()
    assert final["status"] == "finished"
    expect(status).to_have_text("finished", timeout=5000)
    rows = pg.locator("#standings tbody tr")
    shown = [float(rows.nth(i).locator("td").nth(2).inner_text()) for i in range(3)]
    assert shown == [s["points"] for s in final["standings"]]
    assert sum(s["points"] for s in final["standings"]) > 0
    assert "#" in pg.inner_text("#tournament-rounds")  # the seats' places
    assert vpage.errors == [], vpage.errors


def test_a_one_round_tournament_is_listed_with_one_round(vpage, viewer_url):
    tid, _, _ = tournament(viewer_url, "Single Cup", False)
    pg = vpage.page
    pg.goto(f"{viewer_url}/viewer")
    row = pg.locator(f'#tournaments tbody tr[data-id="{tid}"]')
    expect(row.locator("td").nth(2)).to_have_text("Swiss, 1 round")
