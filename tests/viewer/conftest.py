"""What the Chromium tests share: the browser (Debian's chromium driven by Playwright; either
missing, the tests skip and say which) and a page that records console errors."""

from __future__ import annotations

import importlib.util
import os

import pytest

CHROMIUM = os.environ.get("CARTOUCHE_CHROMIUM", "/usr/bin/chromium")
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync", "--no-first-run"]


def _missing() -> str | None:
    if not (os.path.isfile(CHROMIUM) and os.access(CHROMIUM, os.X_OK)):
        return f"no chromium at {CHROMIUM} (apt-get install chromium)"
    if importlib.util.find_spec("playwright") is None:
        return "the playwright package is not installed (pip install playwright)"
    return None


@pytest.fixture(scope="module")
def browser():
    reason = _missing()
    if reason:
        pytest.skip(reason)
    from playwright.sync_api import sync_playwright

    with sync_playwright() as pw:
        b = pw.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS, headless=True)
        yield b
        b.close()


class Page:
    """A browser page that records console errors and uncaught exceptions."""

    def __init__(self, browser):
        self.context = browser.new_context(viewport={"width": 1500, "height": 1000})
        self.page = self.context.new_page()
        self.errors: list[str] = []
        self.page.on("console", self._console)
        self.page.on("pageerror", lambda exc: self.errors.append(f"pageerror: {exc}"))

    def _console(self, msg):
        if msg.type == "error":
            self.errors.append(f"console: {msg.text}")

    def close(self):
        self.context.close()


@pytest.fixture
def vpage(browser):
    p = Page(browser)
    yield p
    p.close()
