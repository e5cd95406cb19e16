"""``/docs``, the API console, without a browser: the page and every file it loads answer 200
from this server with their real types and the page's Content Security Policy, so the console
can be loaded without reaching any other origin (tests/viewer/test_docs_chromium.py drives it
in Chromium and sends requests from it)."""

from __future__ import annotations

import re

EXPECTED = {".js": "text/javascript", ".css": "text/css"}


def test_the_console_and_its_assets_are_served_from_this_server(client):
    page = client.get("/docs")
    assert page.status_code == 200 and page.mimetype == "text/html"
    assert page.headers["X-Content-Type-Options"] == "nosniff"
    csp = page.headers["Content-Security-Policy"]
    assert "default-src 'none'" in csp and "script-src 'self';" in csp
    assert "connect-src 'self';" in csp
    html = page.get_data(as_text=True)
    assert "http://" not in html and "https://" not in html
    assets = re.findall(r'(?:src|href)="([^"]+)"', html)
    loaded = [a for a in assets if a.endswith((".js", ".css"))]
    assert {"/docs/swagger-ui/swagger-ui-bundle.js", "/docs/swagger-ui/swagger-ui.css",
            "/docs/console.js"} <= set(loaded)
    for asset in loaded:
        answer = client.get(asset)
        assert answer.status_code == 200, asset
        assert answer.mimetype == EXPECTED[asset[asset.rindex("."):]], asset
        assert len(answer.get_data()) > 100, asset
    script = client.get("/docs/console.js").get_data(as_text=True)
    assert 'url: "/openapi.yaml"' in script and "validatorUrl: null" in script
    assert client.get("/docs/").status_code == 200


def test_only_the_console_files_are_served_under_docs(client):
    for path in ("/docs/swagger-ui/../../__init__.py", "/docs/swagger-ui/nope.js",
                 "/docs/index.html.bak", "/docs/reference"):
        answer = client.get(path)
        assert answer.status_code == 404, path
        assert answer.get_json()["error"]["code"] == "not_found"


def test_a_file_asked_for_with_a_range_or_version_it_lacks_gets_the_error_shape(client):
    for path in ("/docs/swagger-ui/swagger-ui.css", "/viewer/index.html"):
        whole = client.get(path)
        assert whole.status_code == 200
        r = client.get(path, headers={"Range": "bytes=99999999-"})
        assert r.status_code == 416 and r.get_json()["error"]["code"] == "range_not_satisfiable"
        assert r.headers["Content-Range"] == f"bytes */{len(whole.data)}"
        r = client.get(path, headers={"If-Match": '"no-such-version"'})  # not the file itself
        assert r.status_code == 412 and r.get_json()["error"]["code"] == "precondition_failed"
        assert client.get(path, headers={"Range": "bytes=0-9"}).data == whole.data[:10]
    # the files are served by those routes only, with their headers (Flask's implicit /static
    # route served them without their Content Security Policy)
    assert client.get("/static/viewer/index.html").status_code == 404
