"""The API console (``/docs``) in headless Chromium against a live gunicorn.

Every request the page makes is recorded: the console loads from this origin alone (no CDN, no
validator badge, no fonts from elsewhere). Every operation of the served contract is drawn, and
"Try it out" sends real requests: a spectator's ``GET /v1/game-types`` answers 200 in the
response panel, and after "Authorize" with a seat's token ``GET /v1/games/{game_id}`` is sent
with ``Authorization: Bearer <token>`` and answers that seat's view (``"you": 0``).
"""

from __future__ import annotations

import json
from urllib.parse import urlsplit

import pytest
import requests
import yaml

from tests.viewer.conftest import Page

METHODS = {"get", "post", "put", "patch", "delete"}


@pytest.fixture(scope="module")
def console(browser, live_url):
    """The console opened and drawn once for this module's tests, every request it made
    recorded in ``requests`` (console errors and CSP refusals in ``errors``)."""
    page = Page(browser)
    page.requests = []
    page.page.on("request", lambda req: page.requests.append(req))
    page.page.goto(f"{live_url}/docs")
    page.page.wait_for_selector(".opblock", timeout=30000)
    yield page
    page.close()


def _operation(pg, method: str, path: str):
    return pg.locator(f".opblock-{method}:has(.opblock-summary-path[data-path='{path}'])")


def _try(pg, op):
    """Expand ``op`` and press Try it out."""
    op.locator(".opblock-summary").first.click()
    op.locator("button.try-out__btn").click()


def _execute(op):
    """Press Execute; the status cell of the response the console received."""
    op.locator("button.execute").click()
    status = op.locator(".live-responses-table tr.response .response-col_status").first
    status.wait_for(timeout=15000)
    return status


def test_the_console_loads_from_this_origin_only_and_draws_every_operation(console, live_url):
    pg = console.page
    spec = yaml.safe_load(requests.get(f"{live_url}/openapi.yaml", timeout=10).text)
    operations = [(m, p) for p, item in spec["paths"].items() for m in item if m in METHODS]
    pg.wait_for_function(f"document.querySelectorAll('.opblock').length >= {len(operations)}",
                         timeout=20000)
    assert pg.locator(".opblock").count() == len(operations)
    for method, path in (("get", "/v1/game-types"), ("post", "/v1/games"),
                         ("post", "/v1/games/{game_id}/actions")):
        assert _operation(pg, method, path).count() == 1, (method, path)
    assert pg.locator("button.authorize").count() == 1  # the contract's bearer scheme
    origin = urlsplit(live_url)[:2]
    urls = [r.url for r in console.requests]
    assert f"{live_url}/openapi.yaml" in urls
    assert f"{live_url}/docs/swagger-ui/swagger-ui-bundle.js" in urls
    foreign = [u for u in urls if not u.startswith("data:") and urlsplit(u)[:2] != origin]
    assert foreign == []
    assert console.errors == []


def test_try_it_out_sends_a_real_request_as_a_spectator_and_as_a_seat(console, live_url):
    pg = console.page
    op = _operation(pg, "get", "/v1/game-types")
    _try(pg, op)
    status = _execute(op)
    assert status.inner_text().strip() == "200"
    answer = op.locator(".live-responses-table tr.response .response-col_description").first
    assert "diamant" in answer.inner_text()
    sent = [r for r in console.requests if r.url == f"{live_url}/v1/game-types"]
    assert sent and "authorization" not in sent[-1].headers

    created = requests.post(f"{live_url}/v1/games", json={
        "type": "diamant", "players": [{"name": "Ann"}, {"name": "Bob"}, {"name": "Cyd"}]},
        timeout=10).json()
    gid, token = created["id"], created["seats"][0]["token"]
    pg.locator("button.authorize").click()
    dialog = pg.locator(".modal-ux")
    dialog.locator("input").first.fill(token)
    dialog.locator("button.modal-btn.auth.authorize").click()
    dialog.locator("button.close-modal").click()

    op = _operation(pg, "get", "/v1/games/{game_id}")
    _try(pg, op)
    op.locator("tr[data-param-name='game_id'] input").fill(gid)
    status = _execute(op)
    assert status.inner_text().strip() == "200"
    sent = [r for r in console.requests if r.url == f"{live_url}/v1/games/{gid}"]
    assert sent and sent[-1].headers.get("authorization") == f"Bearer {token}"
    body = op.locator(".live-responses-table tr.response .response-col_description pre").first
    view = json.loads(body.inner_text())
    assert view["id"] == gid and view["you"] == 0
    assert console.errors == []
