"""The replay viewer on a long game (a Papyrus of more than a thousand events, played by bots),
in headless Chromium: drawn before its whole log has come, stepped without laying out the whole
log, and a slider drag fetching only where it rests."""

from __future__ import annotations

import time

import pytest
import requests

from tests.viewer.test_viewer_chromium import expect, wait_version


@pytest.fixture(scope="module")
def viewer_url(live_url):
    assert requests.get(live_url + "/viewer", timeout=5).status_code == 200
    return live_url


@pytest.fixture(scope="module")
def long_game(viewer_url, worker):
    r = requests.post(f"{viewer_url}/v1/games", json={
        "type": "papyrus", "options": {"turn_limit": 320},
        "players": [{"name": f"Long{i}", "bot": {"level": "random"}} for i in range(3)]},
        timeout=10)
    assert r.status_code == 201, r.text
    gid = r.json()["id"]
    deadline = time.monotonic() + 60
    while (view := requests.get(f"{viewer_url}/v1/games/{gid}", timeout=10).json())[
            "status"] == "active":
        assert time.monotonic() < deadline, view["version"]
        time.sleep(0.3)
    assert view["status"] == "finished" and view["version"] > 1100, view["version"]
    return gid, view["version"]


def test_a_long_game_is_drawn_before_its_whole_log_has_come(vpage, viewer_url, long_game):
    gid, last = long_game
    pg = vpage.page
    held = []

    def hold_later_pages(route):
        url = route.request.url
        if "after=0&" in url or url.endswith("&limit=1"):  # the first page, the head's event
            route.continue_()
        else:
            held.append(route)

    pg.route("**/events?*", hold_later_pages)
    pg.goto(f"{viewer_url}/viewer?game={gid}")
    wait_version(vpage, last, timeout=10000)  # the head, drawn with the first page alone
    assert pg.inner_text("#event-version") == f"v{last}"
    assert "No visible event" not in pg.inner_text("#event-panel")  # its event came with it
    assert held, "the log's later pages were not asked for"
    for route in held:
        route.continue_()
    pg.unroute("**/events?*")
    expect(pg.locator(f'#log li.current[data-v="{last}"]')).to_have_count(1, timeout=10000)
    assert vpage.errors == [], vpage.errors


def test_a_long_game_steps_on_a_window_of_its_log(vpage, viewer_url, long_game):
    gid, last = long_game
    pg = vpage.page
    pg.goto(f"{viewer_url}/viewer?game={gid}")
    wait_version(vpage, last)
    entries = pg.locator("#log li")
    expect(pg.locator(f'#log li.current[data-v="{last}"]')).to_have_count(1, timeout=10000)
    assert entries.count() <= 502  # a window (and "… earlier" standing for the rest)
    more = pg.locator("#log li.more")
    assert "earlier" in more.first.inner_text()
    pg.locator("#game-title").click()
    pg.keyboard.press("Home")
    wait_version(vpage, 1)
    assert entries.count() <= 502
    pg.keyboard.press("ArrowRight")
    wait_version(vpage, 2)
    current = pg.locator("#log li.current")
    expect(current).to_have_count(1)
    assert int(current.get_attribute("data-v")) <= 2 and current.is_visible()
    # the entry standing for the later events moves the window there
    later = pg.locator("#log li.more").last
    assert "later" in later.inner_text()
    v = int(later.get_attribute("data-v"))
    later.click()
    wait_version(vpage, v)
    expect(pg.locator(f'#log li.current[data-v="{v}"]')).to_have_count(1)
    assert vpage.errors == [], vpage.errors


def test_a_slider_drag_fetches_only_where_it_rests(vpage, viewer_url, long_game):
    gid, last = long_game
    pg = vpage.page
    pg.goto(f"{viewer_url}/viewer?game={gid}&v=1")
    wait_version(vpage, 1)
    pg.wait_for_timeout(500)  # the prefetch of version 2 is done
    states = []
    pg.on("request", lambda r: "/states/" in r.url and states.append(r.url))
    box = pg.locator("#slider").bounding_box()
    y = box["y"] + box["height"] / 2
    pg.mouse.move(box["x"] + 3, y)
    pg.mouse.down()
    for k in range(20):
        pg.mouse.move(box["x"] + box["width"] * (k + 1) / 21, y)
    pg.mouse.up()
    final = int(pg.locator("#slider").input_value())
    assert final > 1000
    wait_version(vpage, final)
    pg.wait_for_timeout(300)
    # where it rests and its neighbour (prefetched); a pause of the mouse on the way may add one
    assert len(states) <= 5, states
    assert pg.inner_text("#version-label") == f"v {final} / {last}"
    assert vpage.errors == [], vpage.errors


def test_stepping_through_a_long_game_keeps_a_bounded_number_of_versions(vpage, viewer_url,
                                                                          long_game):
    """The page keeps the versions it has fetched for stepping back and forth, at most
    STATES_CACHED of them (256): a walk through more versions than that does not keep them
    all, and the ones it walked last are still drawn at once."""
    gid, last = long_game
    pg = vpage.page
    pg.goto(f"{viewer_url}/viewer?game={gid}&v=1")
    wait_version(vpage, 1)
    walked = 400
    assert last > walked
    pg.evaluate("async (n) => { for (let v = 2; v <= n; v++) "
                "await window.cartoucheViewer.show(v); }", walked)
    wait_version(vpage, walked)
    pg.wait_for_timeout(300)  # the prefetch of the next version is done
    size = pg.evaluate("() => window.cartoucheViewer.state.states.size")
    assert 0 < size <= 256, size
    states = []
    pg.on("request", lambda r: "/states/" in r.url and states.append(r.url))
    pg.evaluate("() => window.cartoucheViewer.show(%d)" % (walked - 100))
    wait_version(vpage, walked - 100)
    assert not any(u.endswith(f"/states/{walked - 100}") for u in states), states  # still kept
    assert vpage.errors == [], vpage.errors
