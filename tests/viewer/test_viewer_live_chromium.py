"""The replay viewer following live games in headless Chromium, where a browser's limits bite:
many tabs on one server (six HTTP/1.1 connections per host, one held by each event stream),
hidden tabs, and the like. Games are played over the API with random legal actions."""

from __future__ import annotations

import random
import time

import pytest
import requests

from tests.viewer.test_viewer_chromium import create, expect, play, wait_version


@pytest.fixture(scope="module")
def viewer_url(live_url):
    assert requests.get(live_url + "/viewer", timeout=5).status_code == 200
    return live_url


def drawn(pg):
    return pg.get_attribute("#board", "data-version")


def wait_all(pages, heads, bound_s):
    """Every page draws its game's head version within ``bound_s`` seconds."""
    deadline = time.monotonic() + bound_s
    late = {}
    for i, (pg, v) in enumerate(zip(pages, heads)):
        left = max(0.1, deadline - time.monotonic())
        try:
            pg.wait_for_selector(f'#board[data-version="{v}"]', state="attached",
                                 timeout=left * 1000)
        except Exception:  # noqa: BLE001 - recorded, reported together below
            late[i] = (drawn(pg), v, pg.inner_text("#live-text"))
    assert not late, f"tabs not at their game's head after {bound_s} s (drawn, head, badge): " \
                     f"{late}"


def test_eight_tabs_on_live_games_all_follow_them(browser, viewer_url):
    """Eight tabs of one browser, each on a live game: streams beyond the browser's six
    connections must not freeze the pages. Each page reaches its game's head (first load, then
    after further moves) within a bound, and a ninth tab on a finished game still opens."""
    rnd = random.Random("eight-tabs")
    games = [create(viewer_url, "diamant", {}, 3, f"eight-tabs-{i}") for i in range(8)]
    heads = [play(viewer_url, gid, tokens, rnd, stop_after=1)["version"]
             for gid, tokens in games]
    context = browser.new_context(viewport={"width": 1200, "height": 800})
    try:
        pages = [context.new_page() for _ in games]
        for pg, (gid, _) in zip(pages, games):
            pg.goto(f"{viewer_url}/viewer?game={gid}", wait_until="commit")
        wait_all(pages, heads, 30)
        for _ in range(2):  # moves land in every game while the tabs watch
            heads = [play(viewer_url, gid, tokens, rnd, stop_after=2)["version"]
                     for gid, tokens in games]
            wait_all(pages, heads, 30)
        done_id, done_tokens = create(viewer_url, "diamant", {}, 3, "eight-tabs-done")
        last = play(viewer_url, done_id, done_tokens, rnd)["version"]
        extra = context.new_page()
        extra.goto(f"{viewer_url}/viewer?game={done_id}", wait_until="commit")
        wait_all([extra], [last], 30)
    finally:
        context.close()


HIDDEN_SWITCH = """
Object.defineProperty(Document.prototype, "visibilityState", {
  configurable: true, get() { return window.__testVisibility || "visible"; } });
"""


def set_visibility(pg, state):
    pg.evaluate("(s) => { window.__testVisibility = s; "
                "document.dispatchEvent(new Event('visibilitychange')); }", state)


def test_a_hidden_tab_lets_its_stream_go_and_catches_up_when_shown(vpage, viewer_url):
    gid, tokens = create(viewer_url, "diamant", {}, 3, "hidden-tab")
    rnd = random.Random("hidden-tab")
    view = play(viewer_url, gid, tokens, rnd, stop_after=1)
    pg = vpage.page
    pg.add_init_script(HIDDEN_SWITCH)
    streams = []
    pg.on("request", lambda r: "/events/stream" in r.url and streams.append(r.url))
    pg.goto(f"{viewer_url}/viewer?game={gid}")
    wait_version(vpage, view["version"])
    expect(pg.locator("#live-text")).to_have_text("live (stream)", timeout=10000)
    shown = view["version"]
    set_visibility(pg, "hidden")
    assert pg.evaluate("() => window.cartoucheViewer.state.live") is None  # stream closed
    view = play(viewer_url, gid, tokens, rnd, stop_after=2)
    pg.wait_for_timeout(1500)
    assert drawn(pg) == str(shown)  # nothing followed while hidden
    count = len(streams)
    set_visibility(pg, "visible")
    wait_version(vpage, view["version"], timeout=10000)
    expect(pg.locator("#live-text")).to_have_text("live (stream)", timeout=10000)
    assert len(streams) == count + 1 and streams[-1].endswith(f"?after={shown}"), streams
    errors = [e for e in vpage.errors if "events/stream" not in e]
    assert errors == [], errors


def test_a_state_asked_for_before_the_end_is_not_kept_after_it(vpage, viewer_url):
    """A slow network: the answer for version 5, asked for while the game ran (hands hidden),
    arrives after the game has ended (everything public). The page shows version 5 as the API
    now serves it: the hands."""
    gid, tokens = create(viewer_url, "tides-of-time", {}, 2, "stale-after-end")
    rnd = random.Random("stale-after-end")
    view = play(viewer_url, gid, tokens, rnd, stop_after=8)
    assert view["version"] > 8
    pg = vpage.page
    pg.goto(f"{viewer_url}/viewer?game={gid}")
    wait_version(vpage, view["version"])
    expect(pg.locator("#live-text")).to_have_text("live (stream)", timeout=10000)
    held, holding = [], [True]

    def slow(route):  # the answer fetched now, handed to the page later
        if holding[0]:
            held.append((route, route.fetch()))
        else:
            route.continue_()

    pg.route("**/states/**", slow)
    pg.evaluate("() => { window.cartoucheViewer.show(5); }")  # (not awaited: it is held)
    for _ in range(100):
        if any(r.request.url.endswith("/states/5") for r, _ in held):
            break
        pg.wait_for_timeout(50)
    assert held, "the page did not ask for version 5"
    end = play(viewer_url, gid, tokens, rnd)
    assert end["status"] == "finished"
    expect(pg.locator("#live")).to_be_hidden(timeout=10000)  # the page has seen the end
    pg.wait_for_timeout(300)
    holding[0] = False
    for route, response in held:  # the slow answers arrive, the old first
        route.fulfill(response=response)
    pg.wait_for_timeout(1000)
    wait_version(vpage, 5)
    public = requests.get(f"{viewer_url}/v1/games/{gid}/states/5", timeout=10).json()
    assert isinstance(public["state"]["seats"][0]["hand"], list)
    hands = pg.locator("#board .player .kvline", has_text="Hand").all_inner_texts()
    assert hands and not any("hidden" in t for t in hands), hands
    errors = [e for e in vpage.errors if "events/stream" not in e]
    assert errors == [], errors


def test_a_live_update_failure_message_goes_when_the_server_answers_again(vpage, viewer_url):
    gid, tokens = create(viewer_url, "diamant", {}, 3, "live-failure")
    view = play(viewer_url, gid, tokens, random.Random("live-failure"), stop_after=1)
    pg = vpage.page
    pg.goto(f"{viewer_url}/viewer?game={gid}")
    wait_version(vpage, view["version"])
    expect(pg.locator("#live-text")).to_have_text("live (stream)", timeout=10000)
    failing = [True]

    def head(route):
        if failing[0]:
            route.abort()
        else:
            route.continue_()

    pg.route(f"**/v1/games/{gid}", head)  # the head alone: the stream stays up
    error = pg.locator("#game-error")
    expect(error).to_contain_text("Live update failed", timeout=15000)
    failing[0] = False  # the server answers again, with nothing new
    expect(error).to_be_hidden(timeout=15000)
    assert drawn(pg) == str(view["version"])
