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


SEAT_COLOURS = ["#d32f2f", "#1e66c8", "#2e7d32", "#e0a100", "#8e24aa", "#00838f", "#ad1457",
                "#6d4c41"]


def rgb(css):
    """'rgb(r, g, b)' or '#rrggbb' -> (r, g, b)."""
    if css.startswith("#"):
        return tuple(int(css[i:i + 2], 16) for i in (1, 3, 5))
    return tuple(int(float(x)) for x in css[css.index("(") + 1:css.index(")")].split(",")[:3])


def test_the_duel_placement_outline_is_told_from_every_seat_colour(vpage, viewer_url):
    gid, tokens = create(viewer_url, "scarabya", {"mode": "duel"}, 2, "details-duel")
    rnd = random.Random("details-duel")
    placed = None
    for _ in range(40):
        view = play(viewer_url, gid, tokens, rnd, stop_after=1)
        events = requests.get(f"{viewer_url}/v1/games/{gid}/events?after=0&limit=1000",
                              timeout=10).json()["events"]
        placed = next((e for e in events if e["type"] == "CampPlaced"
                       and 0 in (e["seat"], e["data"].get("seat"))), None)
        if placed or view["status"] != "active":
            break
    assert placed, "seat 0 placed no camp"
    pg = vpage.page
    pg.goto(f"{viewer_url}/viewer?game={gid}&v={placed['version']}")
    wait_version(vpage, placed["version"])
    outline = pg.locator("#board .scarabya-site .last-move")
    expect(outline.first).to_be_attached()
    assert outline.count() == len(placed["data"]["cells"])
    style = outline.first.evaluate(
        "(el) => { const s = getComputedStyle(el); "
        "return {stroke: s.stroke, dash: s.strokeDasharray}; }")
    stroke = rgb(style["stroke"])
    for colour in SEAT_COLOURS:  # far from each seat's colour (camp edges, tags)...
        distance = sum((a - b) ** 2 for a, b in zip(stroke, rgb(colour))) ** 0.5
        assert distance > 120, (style, colour, distance)
    assert style["dash"] not in ("", "none"), style  # ...and drawn unlike a camp's solid edge
    # the camp edges keep their seat's colour
    edge = pg.locator("#board .scarabya-site line[stroke-linecap='round']").first
    assert edge.get_attribute("stroke") in SEAT_COLOURS[:2]
    assert "dashed" in pg.inner_text("#board")  # the legend says how it is drawn
    assert vpage.errors == [], vpage.errors


def text_box(locator):
    """The box of an element's text (an SVG text's, or an HTML element's text alone)."""
    return locator.evaluate(
        "(el) => { let r; if (el instanceof SVGElement) r = el.getBoundingClientRect(); "
        "else { const range = document.createRange(); range.selectNodeContents(el); "
        "r = range.getBoundingClientRect(); } "
        "return {left: r.left, right: r.right, top: r.top, bottom: r.bottom}; }")


def overlap(a, b):
    return a["left"] < b["right"] and b["left"] < a["right"] and \
        a["top"] < b["bottom"] and b["top"] < a["bottom"]


def test_the_wall_column_labels_and_the_pillars_title_do_not_overlap(vpage, viewer_url):
    gid, _ = create(viewer_url, "pharaohs-wall", {}, 3, "details-pw")
    pg = vpage.page
    pg.goto(f"{viewer_url}/viewer?game={gid}")
    wait_version(vpage, requests.get(f"{viewer_url}/v1/games/{gid}", timeout=10)
                 .json()["version"])
    svg = pg.locator("#board svg.pw-svg")
    pillars = text_box(svg.locator("text", has_text="Pillars"))
    columns = [text_box(svg.locator("text", has_text=f"col {c}")) for c in range(7)]
    assert not any(overlap(pillars, col) for col in columns), (pillars, columns[0])
    assert pillars["top"] >= max(col["bottom"] for col in columns) + 2, (pillars, columns[0])
    assert vpage.errors == [] or all("events/stream" in e for e in vpage.errors), vpage.errors


def test_the_papyrus_solo_shows_no_empty_heading(vpage, viewer_url):
    gid, _ = create(viewer_url, "papyrus", {"variant": "solo"}, 1, "details-papyrus-solo")
    view = requests.get(f"{viewer_url}/v1/games/{gid}", timeout=10).json()
    assert "market" not in view["state"]  # the solo has none (rules, section 10.1)
    pg = vpage.page
    pg.goto(f"{viewer_url}/viewer?game={gid}")
    wait_version(vpage, view["version"])
    headings = pg.locator("#board h4")
    assert "Market" not in headings.all_inner_texts()
    # every heading has something under it
    for i in range(headings.count()):
        after = headings.nth(i).evaluate(
            "(el) => el.nextElementSibling ? el.nextElementSibling.textContent.trim() : ''")
        assert after, headings.nth(i).inner_text()
    # the standard game's market is still shown
    std, _ = create(viewer_url, "papyrus", {}, 3, "details-papyrus-standard")
    std_view = requests.get(f"{viewer_url}/v1/games/{std}", timeout=10).json()
    pg.goto(f"{viewer_url}/viewer?game={std}")
    wait_version(vpage, std_view["version"])
    assert "Market" in pg.locator("#board h4").all_inner_texts()


def test_the_games_list_headers_keep_apart(vpage, viewer_url):
    """Games without seats (created with their players): the seats column is no wider than its
    header, which must still not run into the next one."""
    body = {"games": [{"id": f"g{i:019d}", "type": "diamant", "status": "finished",
                       "version": 40 + i, "created_at": "2025-01-02T03:04:05Z"}
                      for i in range(3)], "page": 1, "per_page": 20, "total": 3}
    pg = vpage.page
    pg.route("**/v1/games?*", lambda route: route.fulfill(
        status=200, content_type="application/json", body=json.dumps(body)))
    pg.goto(f"{viewer_url}/viewer")
    expect(pg.locator("#games tbody tr")).to_have_count(3)
    heads = pg.locator("#games thead th")
    names = heads.all_inner_texts()
    boxes = [text_box(heads.nth(i)) for i in range(len(names))]
    for (a, box_a), (b, box_b) in zip(zip(names, boxes), zip(names[1:], boxes[1:])):
        assert box_b["left"] - box_a["right"] >= 6, (a, b, box_a, box_b)


def test_an_invited_seat_shows_its_player_by_name(vpage, viewer_url):
    from tests.api.helpers import Live, player, table

    live = Live(viewer_url)
    ada, cy = player(live, "Ada Details"), player(live, "Cy Details")
    gid = table(live, ada, [{"player": ada["id"]}, {"player": cy["id"]}, {"open": True}])["id"]
    pg = vpage.page
    pg.goto(f"{viewer_url}/viewer?game={gid}")
    wait_version(vpage, 1)
    seat = pg.locator('#board .waiting-seats li[data-seat="1"]')
    expect(seat).to_contain_text("Cy Details")
    assert cy["id"] not in seat.inner_text()  # no raw id in the text...
    assert seat.locator(f'[title="{cy["id"]}"]').count() == 1  # ...but at hand
    assert "invited" in seat.inner_text()
    errors = [e for e in vpage.errors if "events/stream" not in e]
    assert errors == [], errors


def test_an_invited_seat_whose_player_cannot_be_found_says_so(vpage, viewer_url):
    from tests.api.helpers import Live, player, table

    live = Live(viewer_url)
    ada, cy = player(live, "Ada Details2"), player(live, "Cy Details2")
    gid = table(live, ada, [{"player": ada["id"]}, {"player": cy["id"]}, {"open": True}])["id"]
    pg = vpage.page
    pg.route(f"**/v1/players/{cy['id']}", lambda route: route.fulfill(
        status=404, content_type="application/json",
        body='{"error": {"code": "not_found", "message": "no such player"}}'))
    pg.goto(f"{viewer_url}/viewer?game={gid}")
    wait_version(vpage, 1)
    seat = pg.locator('#board .waiting-seats li[data-seat="1"]')
    expect(seat).to_contain_text("invited player")
    assert cy["id"] not in seat.inner_text()
    assert seat.locator(f'[title="{cy["id"]}"]').count() == 1


def test_a_fork_links_to_its_parent(vpage, viewer_url, finished_diamant):
    parent, _, middle = finished_diamant
    r = requests.post(f"{viewer_url}/v1/games/{parent}/fork", json={"version": middle},
                      timeout=10)
    assert r.status_code == 201, r.text
    fork = r.json()["id"]
    view = requests.get(f"{viewer_url}/v1/games/{fork}", timeout=10).json()
    assert view["setup"] == "custom"
    pg = vpage.page
    pg.goto(f"{viewer_url}/viewer?game={fork}")
    wait_version(vpage, view["version"])
    meta = pg.locator("#game-meta")
    expect(meta).to_contain_text("custom setup")
    link = meta.locator("a.parent")
    expect(link).to_have_count(1)
    assert link.get_attribute("href") == f"/viewer?game={parent}&v={middle}"
    assert parent[:10] in link.inner_text()
    link.click()
    wait_version(vpage, middle)
    assert parent in pg.inner_text("#game-title")
    pg.go_back()  # the fork is where the link was followed from
    wait_version(vpage, view["version"])
    assert fork in pg.inner_text("#game-title")
    errors = [e for e in vpage.errors if "events/stream" not in e]
    assert errors == [], errors
