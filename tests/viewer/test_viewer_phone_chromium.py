"""The replay viewer on a phone's width (375 x 667 CSS pixels) in headless Chromium: nothing
wider than the screen, a game's link opening on the game, its title and version label whole."""

from __future__ import annotations

import random

import pytest
import requests

from tests.viewer.test_viewer_chromium import create, play

PHONE = {"width": 375, "height": 667}


@pytest.fixture(scope="module")
def viewer_url(live_url):
    assert requests.get(live_url + "/viewer", timeout=5).status_code == 200
    return live_url


def page_width(pg):
    return pg.evaluate("() => document.documentElement.scrollWidth")


def whole(pg, selector):
    """The element lies inside the screen's width and shows all its text (nothing clipped)."""
    box = pg.locator(selector).bounding_box()
    clipped = pg.locator(selector).evaluate("(el) => el.scrollWidth > el.clientWidth")
    return box["x"] >= 0 and box["x"] + box["width"] <= PHONE["width"] and not clipped


def test_a_phone_sees_the_game_without_sideways_scrolling(browser, viewer_url):
    gid, tokens = create(viewer_url, "diamant", {}, 3, "phone")
    last = play(viewer_url, gid, tokens, random.Random("phone"))["version"]
    context = browser.new_context(viewport=PHONE)
    try:
        pg = context.new_page()
        errors = []
        pg.on("pageerror", lambda exc: errors.append(str(exc)))
        pg.goto(f"{viewer_url}/viewer")
        pg.locator("#games tbody tr").first.wait_for(timeout=10000)
        assert page_width(pg) <= PHONE["width"]
        pg.goto(f"{viewer_url}/viewer?game={gid}")
        pg.wait_for_selector(f'#board[data-version="{last}"]', state="attached", timeout=15000)
        assert page_width(pg) <= PHONE["width"]
        top = pg.locator("#game-pane").bounding_box()["y"]
        assert 0 <= top < PHONE["height"] / 2, top  # the link opens on the game
        assert pg.inner_text("#version-label") == f"v {last} / {last}"
        assert whole(pg, "#version-label") and whole(pg, "#game-title")
        for button in ("#btn-first", "#btn-last"):  # one line each
            assert pg.locator(button).bounding_box()["height"] < 40
        # opened from the list further down, the game is scrolled to
        pg.goto(f"{viewer_url}/viewer")
        row = pg.locator(f'#games tbody tr[data-id="{gid}"] a')
        row.wait_for(timeout=10000)
        row.scroll_into_view_if_needed()
        row.click()
        pg.wait_for_selector(f'#board[data-version="{last}"]', state="attached", timeout=15000)
        top = pg.locator("#game-pane").bounding_box()["y"]
        assert -5 <= top < PHONE["height"] / 2, top
        assert page_width(pg) <= PHONE["width"]
        assert errors == [], errors
    finally:
        context.close()
