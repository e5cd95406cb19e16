"""The replay viewer used with the keyboard alone and read by assistive technology, in headless
Chromium: lists, log and controls reachable and operable by keys, names for what has none,
live news announced, seat tags legible (WCAG's 4.5:1 contrast for their text)."""

from __future__ import annotations

import random

import pytest
import requests

from tests.viewer.test_viewer_chromium import (create, expect, one_round_swiss, play,
                                               wait_version)


@pytest.fixture(scope="module")
def viewer_url(live_url):
    assert requests.get(live_url + "/viewer", timeout=5).status_code == 200
    return live_url


def tab_to(pg, selector, presses=80):
    """Press Tab until the element matching ``selector`` has the focus (it must be reached)."""
    target = pg.locator(selector)
    target.wait_for(state="attached", timeout=10000)
    for _ in range(presses):
        pg.keyboard.press("Tab")
        if target.evaluate("(el) => el === document.activeElement"):
            return
    raise AssertionError(f"{selector} never reached with Tab")


def test_lists_log_and_controls_work_from_the_keyboard(vpage, viewer_url):
    gid, tokens = create(viewer_url, "diamant", {}, 3, "a11y-keys")
    last = play(viewer_url, gid, tokens, random.Random("a11y"))["version"]
    assert last > 24
    pg = vpage.page
    pg.goto(f"{viewer_url}/viewer")
    # a game row: reached with Tab, opened with Enter; the tab's title names the game
    tab_to(pg, f'#games tbody tr[data-id="{gid}"] a')
    pg.keyboard.press("Enter")
    wait_version(vpage, last)
    assert gid[:10] in pg.title() and "Diamant" in pg.title()
    # the step buttons have names
    names = [pg.get_attribute(f"#btn-{b}", "aria-label") for b in ("first", "prev", "next", "last")]
    assert names == ["First version", "Previous version", "Next version", "Last version"]
    # the log: one tab stop (the current entry), ↑/↓ move and show, Enter shows
    assert pg.locator('#log li[tabindex="0"]').count() == 1
    tab_to(pg, '#log li[tabindex="0"]')
    focused = pg.locator("#log li:focus")
    v = int(focused.get_attribute("data-v"))
    pg.keyboard.press("ArrowUp")
    shown = int(pg.locator("#log li:focus").get_attribute("data-v"))
    assert shown < v
    wait_version(vpage, shown)
    pg.locator('#log li[data-v="2"]').focus()
    pg.keyboard.press("Enter")
    wait_version(vpage, 2)
    assert pg.locator('#log li[data-v="2"]').get_attribute("tabindex") == "0"
    # the focused slider's PageUp/PageDown go the way the page's own do: back/forward by ten
    pg.locator("#slider").focus()
    pg.keyboard.press("PageDown")
    wait_version(vpage, 12)
    pg.keyboard.press("PageDown")
    wait_version(vpage, 22)
    pg.keyboard.press("PageUp")
    wait_version(vpage, 12)
    pg.locator("#game-title").click()
    pg.keyboard.press("PageUp")
    wait_version(vpage, 2)
    # focus is visible: an outline on a focused link
    pg.locator("#home-link").focus()
    pg.keyboard.press("Shift+Tab")
    pg.keyboard.press("Tab")
    outline = pg.locator("#home-link").evaluate("(el) => getComputedStyle(el).outlineStyle")
    assert outline != "none"
    assert vpage.errors == [], vpage.errors


def test_a_tournament_row_opens_from_the_keyboard(vpage, viewer_url):
    tid = one_round_swiss(viewer_url, "Keyboard Cup", ("Kay", "Lu", "Mo"))["id"]
    pg = vpage.page
    pg.goto(f"{viewer_url}/viewer")
    tab_to(pg, f'#tournaments tbody tr[data-id="{tid}"] a')
    pg.keyboard.press("Enter")
    expect(pg.locator("#tournament-title")).to_have_text("Keyboard Cup")
    assert "Keyboard Cup" in pg.title()
    assert vpage.errors == [], vpage.errors


CONTRAST = """(el) => {
  const lum = (rgb) => {
    const c = rgb.match(/\\d+(\\.\\d+)?/g).slice(0, 3).map((x) => Number(x) / 255)
      .map((x) => x <= 0.03928 ? x / 12.92 : ((x + 0.055) / 1.055) ** 2.4);
    return 0.2126 * c[0] + 0.7152 * c[1] + 0.0722 * c[2];
  };
  const st = getComputedStyle(el);
  const [a, b] = [lum(st.color), lum(st.backgroundColor)].sort((x, y) => y - x);
  return (a + 0.05) / (b + 0.05);
}"""


def test_seat_tags_are_legible_and_live_news_is_announced(vpage, viewer_url):
    gid, tokens = create(viewer_url, "diamant", {}, 8, "a11y-contrast")
    rnd = random.Random("a11y-contrast")
    view = play(viewer_url, gid, tokens, rnd, stop_after=1)
    pg = vpage.page
    pg.goto(f"{viewer_url}/viewer?game={gid}")
    wait_version(vpage, view["version"])
    tags = pg.locator("#board .player .seat-tag")
    expect(tags).to_have_count(8)
    ratios = [round(tags.nth(i).evaluate(CONTRAST), 2) for i in range(8)]
    assert min(ratios) >= 4.5, ratios
    announce = pg.locator("#announce")
    assert announce.get_attribute("aria-live") == "polite"
    view = play(viewer_url, gid, tokens, rnd, stop_after=1)
    wait_version(vpage, view["version"], timeout=10000)
    expect(announce).to_contain_text(f"version {view['version']}", timeout=5000)
    errors = [e for e in vpage.errors if "events/stream" not in e]
    assert errors == [], errors



def test_each_seat_has_one_colour_on_its_tag_and_its_pawn(vpage, viewer_url):
    """Eight-seat Diamant: a seat's name tag and its pawn in the cave share one colour, and no
    two seats share one."""
    gid, tokens = create(viewer_url, "diamant", {}, 8, "seat-colours")
    view = play(viewer_url, gid, tokens, random.Random("seat-colours"), stop_after=1)
    pg = vpage.page
    pg.goto(f"{viewer_url}/viewer?game={gid}")
    wait_version(vpage, view["version"])
    colour = "(el) => getComputedStyle(el).backgroundColor"
    tags, pawns = {}, {}
    for i in range(8):
        tags[i] = pg.locator(f'#board .player[data-seat="{i}"] .seat-tag').evaluate(colour)
    for pawn in pg.locator("#board .pawn").all():
        pawns[int(pawn.inner_text())] = pawn.evaluate(colour)
    assert len(pawns) == 8, pawns
    assert tags == pawns
    assert len(set(tags.values())) == 8, tags
    assert vpage.errors == [], vpage.errors


def test_a_curse_in_progress_is_told_in_words(vpage, viewer_url):
    """Pharaoh's Curse: a curse being answered is drawn as its card, sequence, drawer and each
    seat's answer, not as raw JSON."""
    gid, tokens = create(viewer_url, "pharaohs-wall", {"curse": True}, 3, "curse-words")
    rnd = random.Random("curse-words")
    http = requests.Session()
    for _ in range(3000):
        view = http.get(f"{viewer_url}/v1/games/{gid}", timeout=10).json()
        assert view["status"] == "active", "the game ended before any curse"
        if view["state"].get("curse"):
            break
        play(viewer_url, gid, tokens, rnd, stop_after=1)
    curse = view["state"]["curse"]
    pg = vpage.page
    pg.goto(f"{viewer_url}/viewer?game={gid}")
    wait_version(vpage, view["version"])
    line = pg.locator("#board .curse")
    expect(line).to_have_count(1)
    text = line.inner_text()
    assert text.startswith(f"Curse in progress: {curse['card']} (")
    assert " → ".join(curse["sequence"]) in text and "drawn by" in text, text
    assert "to answer" in text and "{" not in text and "[" not in text, text
    assert vpage.errors == [], vpage.errors
