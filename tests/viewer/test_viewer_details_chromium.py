"""Small things the replay viewer shows, in headless Chromium: what a failed step leaves on
screen, the Scarabya duel's placement outline against the seat colours, the Pharaoh's Wall's
labels, the Papyrus solo's headings, the games list's header, an invited seat, a fork's
parent. Games are played over the API with random legal actions."""

from __future__ import annotations

import json
import random

import pytest
import requests

from tests.viewer.test_viewer_chromium import create, expect, play, wait_version


@pytest.fixture(scope="module")
def viewer_url(live_url):
    assert requests.get(live_url + "/viewer", timeout=5).status_code == 200
    return live_url


@pytest.fixture(scope="module")
def finished_diamant(viewer_url):
    """A finished three-seat Diamant: its id, its last version, and a version inside it that
    ends a command (after three moves)."""
    gid, tokens = create(viewer_url, "diamant", {}, 3, "details-diamant")
    rnd = random.Random("details-diamant")
    middle = play(viewer_url, gid, tokens, rnd, stop_after=3)["version"]
    end = play(viewer_url, gid, tokens, rnd)
    assert end["status"] == "finished" and end["version"] > middle
    return gid, end["version"], middle


def test_a_failed_step_leaves_nothing_of_the_version_shown_before(vpage, viewer_url,
                                                                  finished_diamant):
    gid, last, _ = finished_diamant
    pg = vpage.page
    pg.goto(f"{viewer_url}/viewer?game={gid}")
    wait_version(vpage, last)
    expect(pg.locator("#status-bar .result")).to_have_count(1)  # the end's result
    pg.route("**/states/**", lambda route: route.fulfill(
        status=500, content_type="application/json",
        body='{"error": {"code": "internal", "message": "broken"}}'))
    pg.locator("#game-title").click()
    pg.keyboard.press("Home")
    expect(pg.locator("#game-error")).to_contain_text("Could not load version 1")
    assert pg.inner_text("#version-label") == f"v 1 / {last}"
    # nothing of the last version stays under the label of the first
    assert pg.locator("#status-bar .result").count() == 0, pg.inner_text("#status-bar")
    assert "result" not in pg.inner_text("#status-bar")
    assert pg.locator("#raw-state").text_content() == ""
    pg.unroute("**/states/**")
    pg.keyboard.press("ArrowRight")
    wait_version(vpage, 2)
    expect(pg.locator("#game-error")).to_be_hidden()
    assert "replaying version 2" in pg.inner_text("#status-bar")
