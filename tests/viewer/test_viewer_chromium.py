"""The replay viewer (``/viewer``) driven in headless Chromium against a live gunicorn.

One game of each type is created and finished over the API with random legal actions (seeded),
then the page opens it from the game list and steps through it with the slider and the keyboard:
the drawn board must differ between version 2 and the last version, the version shown must
follow every step, and the browser console must stay free of errors. A live game is followed
while moves land; the lobby (tables still waiting for players, their open seats and who sits)
is listed under its filter, and a table is followed from its seats to its start. Screenshots of
every final position (and of the lobby) go to a temporary directory (or to
``$CARTOUCHE_VIEWER_SCREENSHOTS`` when set) for a human to judge legibility.

Needs Debian's chromium (``apt-get install chromium``) and Playwright's Python package
(``pip install playwright``; its own browser download is never used: ``executable_path`` points
at the system chromium). Either missing: the tests skip and say which.
"""

from __future__ import annotations

import hashlib
import os
import random
import shutil
import tempfile
import time
from pathlib import Path

import pytest
import requests

from service.games import GAMES as REGISTRY
from service.games.tides_of_time import CARDS

from tests.api.helpers import Live, join, player, table


ROOT = Path(__file__).resolve().parents[2]
#: Per game type, its finished games as (label, options, players) (Scarabya's duel is drawn
#: differently: one shared site coloured by seat); a type not listed: one game at its
#: ``min_players`` (at least 2) with no options.
TABLES = {
    "pharaohs-wall": [("pharaohs-wall", {}, 3)],
    "scarabya": [("scarabya", {}, 3), ("scarabya-duel", {"mode": "duel"}, 2)],
    "tides-of-time": [("tides-of-time", {}, 2)],
    "diamant": [("diamant", {}, 3)],
    "papyrus": [("papyrus", {"turn_limit": 45}, 3)],
}
#: (label, type, options, players): the finished games, for every registered game type.
GAMES = [(label, type_, options, n) for type_, game in REGISTRY.items()
         for label, options, n in TABLES.get(
             type_, [(type_, {}, min(max(game.min_players, 2), game.max_players))])]
#: The drawing the viewer makes of a board: a game's own renderer (SVG, cards, the cave), or the
#: state as JSON (``renderGeneric``) for a game viewer.js has no renderer for.
DRAWN = "#board svg, #board .tcard, #board .cave, #board pre"


@pytest.fixture(scope="module")
def viewer_url(live_url):
    assert requests.get(live_url + "/viewer", timeout=5).status_code == 200
    return live_url


@pytest.fixture(scope="module")
def shots():
    keep = os.environ.get("CARTOUCHE_VIEWER_SCREENSHOTS")
    path = Path(keep) if keep else Path(tempfile.mkdtemp(prefix="cartouche-viewer-"))
    path.mkdir(parents=True, exist_ok=True)
    yield path
    print(f"\nviewer screenshots: {path}")
    if not keep:
        shutil.rmtree(path, ignore_errors=True)


# ---------------------------------------------------------------------- playing over the API

def auth(token):
    return {"Authorization": f"Bearer {token}"}


def create(url, type_, options, n, seed_label):
    seed = hashlib.sha256(f"viewer/{seed_label}".encode()).hexdigest()
    r = requests.post(f"{url}/v1/games", json={
        "type": type_, "players": [{"name": f"P{i} {type_[:4]}"} for i in range(n)],
        "options": options, "seed": seed}, timeout=10)
    assert r.status_code == 201, r.text
    body = r.json()
    return body["id"], [s["token"] for s in body["seats"]]


def one_round_swiss(url, name, names):
    """A one-round Swiss of Diamant (three seats a game) between new players ``names``, made
    over the API: its body as created."""
    from tests.api.helpers import Live, player

    live = Live(url)
    people = [player(live, each) for each in names]
    r = requests.post(f"{url}/v1/tournaments", json={
        "name": name, "type": "diamant", "format": "swiss", "rounds": 1,
        "seats_per_game": 3, "participants": [p["id"] for p in people]}, timeout=10)
    assert r.status_code == 201, r.text
    return r.json()


def play(url, gid, tokens, rnd, max_actions=5000, stop_after=None):
    """Random legal actions until the game is over (or ``stop_after`` actions)."""
    http = requests.Session()
    for step in range(max_actions):
        view = http.get(f"{url}/v1/games/{gid}", timeout=10).json()
        if view["status"] != "active" or (stop_after is not None and step >= stop_after):
            return view
        seat = rnd.choice(view["awaiting"])["seat"]
        actions = http.get(f"{url}/v1/games/{gid}/legal-actions", headers=auth(tokens[seat]),
                           timeout=10).json()["actions"]
        r = http.post(f"{url}/v1/games/{gid}/actions", json={"action": rnd.choice(actions)},
                      headers=auth(tokens[seat]), timeout=10)
        assert r.status_code == 201, r.text
    raise AssertionError(f"game {gid} did not finish in {max_actions} actions")


@pytest.fixture(scope="module")
def finished_games(viewer_url):
    games = {}
    for label, type_, options, n in GAMES:
        gid, tokens = create(viewer_url, type_, options, n, label)
        view = play(viewer_url, gid, tokens, random.Random(label))
        assert view["status"] == "finished"
        games[label] = (gid, type_, view["version"])
    return games


# ---------------------------------------------------------------------- the checks

def expect(locator):
    """Playwright's retrying assertions (no page-side eval: the viewer's CSP forbids it)."""
    from playwright.sync_api import expect as playwright_expect

    return playwright_expect(locator)


def wait_version(p, v, timeout=15000):
    from playwright.sync_api import TimeoutError as PlaywrightTimeout

    try:
        p.page.wait_for_selector(f'#board[data-version="{v}"]', state="attached", timeout=timeout)
    except PlaywrightTimeout:
        raise AssertionError(
            f"version {v} never drawn: label {p.page.inner_text('#version-label')!r}, board "
            f"{p.page.get_attribute('#board', 'data-version')!r}, url {p.page.url}, "
            f"errors {p.errors}, status {p.page.inner_text('#status-bar')!r}") from None


def board_html(p):
    return p.page.inner_html("#board")


@pytest.mark.parametrize("label", [g[0] for g in GAMES])
def test_step_through_a_finished_game(vpage, viewer_url, finished_games, shots, label):
    gid, type_, last = finished_games[label]
    page = vpage
    pg = page.page
    # open it from the list, filtered by type and status
    pg.goto(f"{viewer_url}/viewer")
    pg.select_option("#f-type", type_)
    pg.select_option("#f-status", "finished")
    row = pg.locator(f'#games tbody tr[data-id="{gid}"]')
    row.wait_for(timeout=10000)
    assert "finished" in row.inner_text()
    row.click()
    wait_version(page, last)
    assert pg.inner_text("#version-label") == f"v {last} / {last}"
    assert pg.get_attribute("#board", "data-type") == type_
    # the game's guide is linked beside its name
    rules = pg.get_attribute("#game-rules", "href")
    assert rules == f"/v1/game-types/{type_}/rules"
    assert requests.get(viewer_url + rules, timeout=5).headers["Content-Type"] == \
        "text/markdown; charset=utf-8"
    assert "winner" in pg.inner_text("#status-bar") or "result" in pg.inner_text("#status-bar")
    final = board_html(page)
    assert pg.locator(DRAWN).count() > 0, "nothing drawn"
    if type_ == "tides-of-time":  # card names come from the rules' table (/viewer/games.json)
        names = {c["name"] for c in CARDS.values()}
        drawn = pg.locator("#board .tcard .nm").all_inner_texts()
        assert drawn and set(drawn) - {"hidden"} <= names, drawn
    pg.screenshot(path=str(shots / f"{label}-final.png"), full_page=True)

    # the slider
    pg.locator("#slider").fill("2")
    wait_version(page, 2)
    assert pg.inner_text("#version-label") == f"v 2 / {last}"
    at_two = board_html(page)
    assert at_two != final, "version 2 and the last version are drawn the same"
    assert pg.inner_text("#event-version") == "v2"

    # the keyboard on the page: →, ←, End, Home
    pg.locator("#game-title").click()
    pg.keyboard.press("ArrowRight")
    wait_version(page, 3)
    assert pg.inner_text("#version-label") == f"v 3 / {last}"
    pg.keyboard.press("ArrowLeft")
    wait_version(page, 2)
    assert board_html(page) == at_two
    pg.keyboard.press("End")
    wait_version(page, last)
    assert board_html(page) == final
    pg.keyboard.press("Home")
    wait_version(page, 1)
    assert pg.inner_text("#version-label") == f"v 1 / {last}"
    # the keyboard on the focused slider (the range input moves itself)
    pg.locator("#slider").focus()
    pg.keyboard.press("End")
    wait_version(page, last)
    pg.keyboard.press("ArrowLeft")
    wait_version(page, last - 1)
    assert pg.inner_text("#version-label") == f"v {last - 1} / {last}"
    # the log: clicking an event jumps to its version
    pg.locator('#log li[data-v="2"]').click()
    wait_version(page, 2)
    # a deep link opens the same position
    pg.goto(f"{viewer_url}/viewer?game={gid}&v=2")
    wait_version(page, 2)
    assert board_html(page) == at_two
    assert page.errors == [], page.errors


def test_follows_a_live_game(vpage, viewer_url):
    gid, tokens = create(viewer_url, "diamant", {}, 3, "live")
    rnd = random.Random(7)
    view = play(viewer_url, gid, tokens, rnd, stop_after=2)
    page = vpage
    pg = page.page
    pg.goto(f"{viewer_url}/viewer?game={gid}")
    wait_version(page, view["version"])
    assert pg.locator("#live").is_visible()
    # moves land while the page watches: it follows them (stream, or polling every second)
    view = play(viewer_url, gid, tokens, rnd, stop_after=3)
    wait_version(page, view["version"], timeout=10000)
    # the board and the label's "latest" are drawn from separate answers: both get there
    label = f"v {view['version']} / {view['version']}"
    expect(pg.locator("#version-label")).to_have_text(label, timeout=5000)
    view = play(viewer_url, gid, tokens, rnd)
    assert view["status"] == "finished"
    wait_version(page, view["version"], timeout=10000)
    expect(pg.locator("#live")).to_be_hidden(timeout=10000)
    assert "finished" in pg.inner_text("#status-bar")
    # a server without the stream endpoint makes the browser log one failed request; nothing else
    errors = [e for e in page.errors if "events/stream" not in e]
    assert errors == [], errors


def test_the_live_badge_shows_while_the_stream_is_still_connecting(vpage, viewer_url):
    gid, tokens = create(viewer_url, "diamant", {}, 3, "badge")
    view = play(viewer_url, gid, tokens, random.Random(3), stop_after=2)
    pg = vpage.page
    held = []
    pg.route("**/events/stream*", lambda route: held.append(route))  # held until released
    pg.goto(f"{viewer_url}/viewer?game={gid}")
    wait_version(vpage, view["version"])
    for _ in range(100):  # the route's callback runs while Playwright is waiting on something
        if held:
            break
        pg.wait_for_timeout(50)
    assert held, "the page did not open the stream"
    assert pg.locator("#live").is_visible()
    assert pg.inner_text("#live-text") == "live (connecting)"
    held[0].continue_()
    expect(pg.locator("#live-text")).to_have_text("live (stream)", timeout=10000)
    assert vpage.errors == [], vpage.errors


def test_a_list_answer_that_comes_late_does_not_replace_a_newer_one(vpage, viewer_url):
    """The first (unfiltered) list is held back until the filtered list is drawn: when it
    arrives it is dropped, and the filtered list stays."""
    live = Live(viewer_url)
    ada = player(live, "Ada")
    table(live, ada, [{"player": ada["id"]}, {"open": True}], type_="tides-of-time")
    create(viewer_url, "diamant", {}, 3, "late-list")  # an active game
    pg = vpage.page
    held = []

    def hold_unfiltered(route):
        if "status=" in route.request.url:
            route.continue_()
        else:
            held.append(route)

    pg.route("**/v1/games?*", hold_unfiltered)
    pg.goto(f"{viewer_url}/viewer")
    for _ in range(100):  # the route's callback runs while Playwright waits on something
        if held:
            break
        pg.wait_for_timeout(50)
    assert held, "the page did not ask for the list"
    pg.select_option("#f-status", "waiting")
    statuses = pg.locator("#games tbody td.status")
    expect(statuses.first).to_have_text("waiting", timeout=10000)
    assert set(statuses.all_inner_texts()) == {"waiting"}
    with pg.expect_response(lambda r: "/v1/games?" in r.url and "status=" not in r.url):
        held[0].continue_()
    pg.wait_for_timeout(300)  # the late answer's handler has run
    assert set(statuses.all_inner_texts()) == {"waiting"}
    assert vpage.errors == [], vpage.errors


def test_the_lobby_lists_waiting_tables_and_follows_one_to_its_start(vpage, viewer_url, shots):
    live = Live(viewer_url)
    ada, bob, cy = (player(live, name) for name in ("Ada", "Bob", "Cy"))
    duel = table(live, ada, [{"player": ada["id"]}, {"open": True}], type_="tides-of-time")["id"]
    invited = table(live, ada, [{"player": ada["id"]}, {"player": cy["id"]},
                                {"open": True}])["id"]
    pg = vpage.page
    pg.goto(f"{viewer_url}/viewer")
    pg.select_option("#f-status", "waiting")
    # the filtered list replaces the whole list (which holds other tests' games) when it comes
    statuses = pg.locator("#games tbody td.status")
    deadline = time.monotonic() + 10
    while set(statuses.all_inner_texts()) != {"waiting"}:
        assert time.monotonic() < deadline, statuses.all_inner_texts()
        time.sleep(0.05)
    row = pg.locator(f'#games tbody tr[data-id="{duel}"]')
    row.wait_for(timeout=10000)
    expect(row.locator("td.status")).to_have_text("waiting")
    expect(row.locator("td.seats")).to_have_text("1 open · Ada")
    created = live.get(f"/v1/games/{duel}").get_json()["created_at"]  # RFC 3339, as listed
    assert row.locator("td.created").get_attribute("title") == created
    assert any(ch.isdigit() for ch in row.locator("td.created").inner_text())  # a local time
    seats = pg.locator(f'#games tbody tr[data-id="{invited}"] td.seats')
    expect(seats).to_have_text("2 open · Ada")  # Cy's reserved seat is not filled yet
    assert seats.get_attribute("data-open") == "2"
    assert "seat 1: invited" in seats.get_attribute("title")
    assert set(statuses.all_inner_texts()) == {"waiting"}

    row.click()
    wait_version(vpage, 1)
    expect(pg.locator("#board .waiting-seats li")).to_have_count(2)
    assert pg.inner_text('#board .waiting-seats li[data-seat="1"]').endswith("open seat")
    assert "waiting" in pg.inner_text("#status-bar")
    assert pg.locator("#live").is_visible()  # followed until it starts
    pg.screenshot(path=str(shots / "lobby-waiting.png"), full_page=True)
    started = join(live, duel, bob).get_json()
    assert started["status"] == "active"
    wait_version(vpage, started["version"], timeout=10000)
    expect(row.locator("td.status")).to_have_text("active")
    expect(row.locator("td.seats")).to_have_text("full · Ada, Bob")
    assert pg.locator("#board .waiting-seats").count() == 0 and "Bob" in pg.inner_text("#game-meta")
    assert pg.locator("#live").is_visible()
    errors = [e for e in vpage.errors if "events/stream" not in e]
    assert errors == [], errors


def test_the_game_data_comes_from_the_game_modules(viewer_url):
    r = requests.get(viewer_url + "/viewer/games.json", timeout=5)
    assert r.status_code == 200 and r.headers["Content-Type"].startswith("application/json")
    types = r.json()["types"]
    assert list(types) == list(REGISTRY)
    assert {t: d["name"] for t, d in types.items()} == {t: g.name for t, g in REGISTRY.items()}
    cards = types["tides-of-time"]["tables"]["cards"]
    assert {int(n): c["name"] for n, c in cards.items()} == {n: c["name"] for n, c in CARDS.items()}
    assert cards["18"]["objective"] == "another card beats their best: 8"
    assert types["pharaohs-wall"]["tables"]["left_facing"]["CAMEL"] == 4


def test_static_files_are_served_with_their_types(viewer_url):
    for path, mime in [("/viewer", "text/html"), ("/viewer/", "text/html"),
                       ("/viewer/index.html", "text/html"), ("/viewer/viewer.css", "text/css"),
                       ("/viewer/viewer.js", "text/javascript")]:
        r = requests.get(viewer_url + path, timeout=5)
        assert r.status_code == 200, path
        assert r.headers["Content-Type"].split(";")[0] == mime, (path, r.headers["Content-Type"])
    for path in ["/viewer/nope.js", "/viewer/../app.py", "/viewer/%2e%2e/app.py"]:
        assert requests.get(viewer_url + path, timeout=5).status_code == 404, path
    page_text = requests.get(viewer_url + "/viewer", timeout=5).text
    assert "http://" not in page_text and "https://" not in page_text  # no CDN, no fonts


def play_tournament_game(url, gid, tokens, rnd):
    """Random legal actions until the game is over, each seat acting with its player's token
    (``tokens``: player id -> token)."""
    http = requests.Session()
    seats = http.get(f"{url}/v1/games/{gid}", timeout=10).json()["players"]
    by_seat = [tokens[p["player"]] for p in seats]
    return play(url, gid, by_seat, rnd)


def test_tournaments_are_listed_with_their_standings_and_games(vpage, viewer_url, worker,
                                                                shots):
    live = Live(viewer_url)
    people = [player(live, name) for name in ("<i>Ada</i>", "Bob", "Cy")]
    tokens = {p["id"]: p["token"] for p in people}
    r = requests.post(f"{viewer_url}/v1/tournaments", json={
        "name": "<b>Viewer Cup</b>", "type": "diamant", "format": "swiss", "rounds": 1,
        "seats_per_game": 3, "participants": [p["id"] for p in people], "duplicate": True},
        timeout=10)
    assert r.status_code == 201, r.text
    tid = r.json()["id"]
    games = [g["id"] for g in r.json()["rounds"][0]["games"]]
    assert len(games) == 3  # one deal, three seat rotations
    rnd = random.Random("viewer/tournament")
    for gid in games:
        assert play_tournament_game(viewer_url, gid, tokens, rnd)["status"] == "finished"
    deadline = time.monotonic() + 15
    while (shown := requests.get(f"{viewer_url}/v1/tournaments/{tid}",
                                 timeout=10).json())["status"] != "finished":
        assert time.monotonic() < deadline, shown  # the worker records the games
        time.sleep(0.1)
    listed = {s: [t["id"] for t in requests.get(f"{viewer_url}/v1/tournaments?status={s}",
                                                timeout=10).json()["tournaments"]]
              for s in ("running", "finished")}
    assert tid in listed["finished"] and tid not in listed["running"]
    assert requests.get(f"{viewer_url}/v1/tournaments?per_page=101",
                        timeout=10).status_code == 400

    pg = vpage.page
    pg.goto(f"{viewer_url}/viewer")
    row = pg.locator(f'#tournaments tbody tr[data-id="{tid}"]')
    row.wait_for(timeout=10000)
    expect(row.locator("td").first).to_have_text("<b>Viewer Cup</b>")  # text, not markup
    expect(row.locator("td.status")).to_have_text("finished")
    row.click()
    expect(pg.locator("#tournament-title")).to_have_text("<b>Viewer Cup</b>")
    names = {p["id"]: p["name"] for p in people}
    rows = pg.locator("#standings tbody tr")
    expect(rows).to_have_count(3)
    assert [rows.nth(i).get_attribute("data-player") for i in range(3)] == [
        s["player"] for s in shown["standings"]]
    for i, s in enumerate(shown["standings"]):
        cells = rows.nth(i).locator("td").all_inner_texts()
        assert cells[:2] == [str(s["rank"]), names[s["player"]]]
        assert float(cells[2]) == s["points"] and cells[4] == "3"
    assert pg.locator("#standings b, #standings i, #tournament-title b").count() == 0
    assert "?tournament=" in pg.url
    links = pg.locator("#tournament-rounds a.game-link")
    expect(links).to_have_count(3)
    assert [links.nth(i).get_attribute("data-game") for i in range(3)] == games
    pg.screenshot(path=str(shots / "tournament.png"), full_page=True)

    last = requests.get(f"{viewer_url}/v1/games/{games[1]}", timeout=10).json()["version"]
    links.nth(1).click()
    wait_version(vpage, last)
    assert pg.get_attribute("#board", "data-type") == "diamant"
    assert pg.locator("#tournament-pane").is_hidden()
    assert vpage.errors == [], vpage.errors
