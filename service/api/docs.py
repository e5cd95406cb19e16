"""``/openapi.yaml`` (the contract) and ``/docs`` (an API console on it).

The console is Swagger UI: it renders OpenAPI 3.1 and its "Try it out" sends real requests,
with the contract's ``bearer`` scheme filled in from its "Authorize" dialog. (ReDoc has no
try-it-out; Scalar ships no Python package, so its bundle would be committed here by hand.)
Its files come from the ``flask-swagger-ui`` package's ``dist`` folder (a pinned Swagger UI
release, served under ``/docs/swagger-ui/``), the page and its start-up script from
``service/static/docs/``: no CDN, and the page's Content Security Policy allows nothing but this
origin (Swagger UI draws with inline styles and ``data:`` images)."""

from __future__ import annotations

from pathlib import Path

import flask_swagger_ui
from flask import Flask, Response

from .viewer import CSP, send_static

STATIC_DIR = Path(__file__).resolve().parent.parent / "static" / "docs"
#: Swagger UI's release files (swagger-ui-bundle.js, swagger-ui.css, ...).
SWAGGER_DIR = Path(flask_swagger_ui.__file__).resolve().parent / "dist"


def register(app: Flask, api) -> None:
    @app.get("/openapi.yaml")
    def openapi_yaml():
        return Response(api.spec.to_yaml(), mimetype="application/yaml")

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
