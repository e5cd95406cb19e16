"""The replay viewer's place in the browser's history, in headless Chromium: Back and Forward
move between the lists, a game (at the version left) and a tournament."""

from __future__ import annotations

import random
import time

import pytest
import requests

from tests.viewer.test_viewer_chromium import (create, expect, one_round_swiss, play,
                                               wait_version)


@pytest.fixture(scope="module")
def viewer_url(live_url):
    assert requests.get(live_url + "/viewer", timeout=5).status_code == 200
    return live_url


def test_back_and_forward_move_between_the_list_a_game_and_a_tournament(vpage, viewer_url):
    """Opening a game or a tournament from a list (or a tournament's game link) is a history
    entry; stepping through versions is not: Back returns to the list, Forward to the version."""
    made = one_round_swiss(viewer_url, "History Cup", ("Nia", "Oz", "Pia"))
    tid, tgame = made["id"], made["rounds"][0]["games"][0]["id"]
    gid, tokens = create(viewer_url, "diamant", {}, 3, "history")
    last = play(viewer_url, gid, tokens, random.Random("history"))["version"]
    pg = vpage.page
    pg.goto(f"{viewer_url}/viewer")
    pg.locator(f'#games tbody tr[data-id="{gid}"] a').click()
    wait_version(vpage, last)
    pg.locator("#game-title").click()
    pg.keyboard.press("Home")
    for v in (2, 3, 4):
        pg.keyboard.press("ArrowRight")
        wait_version(vpage, v)
    assert pg.url.endswith(f"?game={gid}&v=4")
    pg.go_back()  # the list, not version 3
    expect(pg.locator("#empty-pane")).to_be_visible()
    expect(pg.locator("#game-pane")).to_be_hidden()
    assert pg.url == f"{viewer_url}/viewer"
    assert pg.locator("#live").is_hidden()
    pg.go_forward()  # the game, at the version left
    wait_version(vpage, 4)
    expect(pg.locator("#game-pane")).to_be_visible()
    assert pg.inner_text("#version-label") == f"v 4 / {last}"
    # a tournament from the list, one of its games, then back twice
    pg.go_back()
    expect(pg.locator("#empty-pane")).to_be_visible()
    pg.locator(f'#tournaments tbody tr[data-id="{tid}"] a').click()
    expect(pg.locator("#tournament-title")).to_have_text("History Cup")
    pg.locator(f'#tournament-rounds a[data-game="{tgame}"]').click()
    expect(pg.locator("#game-pane")).to_be_visible()
    pg.go_back()
    expect(pg.locator("#tournament-pane")).to_be_visible()
    expect(pg.locator("#game-pane")).to_be_hidden()
    assert pg.url.endswith(f"?tournament={tid}")
    pg.go_back()
    expect(pg.locator("#empty-pane")).to_be_visible()
    expect(pg.locator("#tournament-pane")).to_be_hidden()
    errors = [e for e in vpage.errors if "events/stream" not in e]
    assert errors == [], errors


def test_a_version_in_the_address_is_read_as_a_whole_number(vpage, viewer_url):
    gid, tokens = create(viewer_url, "diamant", {}, 3, "address-version")
    last = play(viewer_url, gid, tokens, random.Random("address-version"))["version"]
    pg = vpage.page
    for text, v in (("1.5", 1), ("3.9", 3), ("0x10", last), ("abc", last), ("-3", last)):
        pg.goto(f"{viewer_url}/viewer?game={gid}&v={text}")
        wait_version(vpage, v)
        assert pg.locator("#game-error").is_hidden(), (text, pg.inner_text("#game-error"))
        assert pg.inner_text("#version-label") == f"v {v} / {last}"
        assert pg.url.endswith(f"&v={v}")
    assert vpage.errors == [], vpage.errors


def test_a_game_that_cannot_be_opened_leaves_nothing_of_the_one_before(vpage, viewer_url):
    gid, tokens = create(viewer_url, "diamant", {}, 3, "failed-open")
    last = play(viewer_url, gid, tokens, random.Random("failed-open"))["version"]
    pg = vpage.page
    pg.goto(f"{viewer_url}/viewer?game={gid}")
    wait_version(vpage, last)
    pg.evaluate("() => { window.cartoucheViewer.openGame('no-such-game', null, true); }")
    expect(pg.locator("#game-error")).to_contain_text("no-such-game")
    for sel in ("#game-title", "#game-meta", "#status-bar", "#event-panel", "#log",
                "#version-label"):
        assert gid not in pg.inner_text(sel) and "P0 diam" not in pg.inner_text(sel), sel
    assert pg.inner_text("#status-bar") == "" and pg.locator("#log li").count() == 0
    assert gid[:10] not in pg.title()
    assert "result" not in pg.inner_text("#game-pane")


def test_a_busy_server_is_asked_again_after_its_retry_after(vpage, viewer_url):
    gid, tokens = create(viewer_url, "diamant", {}, 3, "busy")
    last = play(viewer_url, gid, tokens, random.Random("busy"))["version"]
    pg = vpage.page
    asked = []

    def busy_once(route):
        asked.append(time.monotonic())
        if len(asked) == 1:
            route.fulfill(status=503, headers={"Retry-After": "1"}, content_type="application/json",
                          body='{"error": {"code": "unavailable", "message": "busy"}}')
        else:
            route.continue_()

    pg.route(f"**/v1/games/{gid}", busy_once)
    pg.goto(f"{viewer_url}/viewer?game={gid}")
    wait_version(vpage, last, timeout=10000)
    assert len(asked) == 2 and asked[1] - asked[0] >= 0.9, asked
    assert pg.locator("#game-error").is_hidden()
