"""``/openapi.yaml`` (the contract) and ``/docs`` (an API console on it).

The console is Swagger UI: it renders OpenAPI 3.1 and its "Try it out" sends real requests,
with the contract's ``bearer`` scheme filled in from its "Authorize" dialog. (ReDoc has no
try-it-out; Scalar ships no Python package, so its bundle would be committed here by hand.)
Its files come from the ``flask-swagger-ui`` package's ``dist`` folder (a pinned Swagger UI
release, served under ``/docs/swagger-ui/``), the page and its start-up script from
``service/static/docs/``: no CDN, and the page's Content Security Policy allows nothing but this
origin (Swagger UI draws with inline styles and ``data:`` images)."""

from __future__ import annotations

import gzip
import hashlib
import threading
from pathlib import Path

import flask_swagger_ui
from flask import Flask, Response, request

from .viewer import CSP, send_static

STATIC_DIR = Path(__file__).resolve().parent.parent / "static" / "docs"
#: Swagger UI's release files (swagger-ui-bundle.js, swagger-ui.css, ...).
SWAGGER_DIR = Path(flask_swagger_ui.__file__).resolve().parent / "dist"


class Contract:
    """``openapi.yaml`` as served: written once per process, when first asked for (YAML takes
    about half a second of CPU for the ~650 KB), and kept with its gzip (~65 KB); each has an
    ETag of its own, and a request naming it gets a 304."""

    def __init__(self, api) -> None:
        self.api = api
        self._made: tuple[bytes, bytes, str] | None = None
        self._lock = threading.Lock()

    def made(self) -> tuple[bytes, bytes, str]:
        with self._lock:
            if self._made is None:
                plain = self.api.spec.to_yaml().encode()
                self._made = (plain, gzip.compress(plain, 6, mtime=0),
                              hashlib.sha256(plain).hexdigest()[:32])
            return self._made

    def response(self) -> Response:
        plain, packed, tag = self.made()
        if request.accept_encodings["gzip"] > 0:
            resp = Response(packed, mimetype="application/yaml",
                            headers={"Content-Encoding": "gzip"})
            resp.set_etag(tag + "-gzip")
        else:
            resp = Response(plain, mimetype="application/yaml")
            resp.set_etag(tag)
        resp.headers["Vary"] = "Accept-Encoding"
        resp.headers["Cache-Control"] = "no-cache"  # may be kept, asked again with its ETag
        return resp.make_conditional(request)


def register(app: Flask, api) -> None:
    contract = Contract(api)

    @app.get("/openapi.yaml")
    def openapi_yaml():
        return contract.response()

    @app.get("/docs")
    @app.get("/docs/")
    def docs_page():
        return send_static(STATIC_DIR, "index.html", CSP)

    @app.get("/docs/<any('console.js', 'console.css'):filename>")
    def docs_script(filename: str):
        return send_static(STATIC_DIR, filename, CSP)

    @app.get("/docs/swagger-ui/<path:filename>")
    def docs_swagger_ui(filename: str):
        # send_from_directory refuses paths that leave the package's dist folder
        return send_static(SWAGGER_DIR, filename, CSP)
