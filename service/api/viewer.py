"""The replay viewer: ``GET /viewer`` (the page) and ``GET /viewer/<file>`` (its static assets).

Plain HTML, CSS and JavaScript from ``service/static/viewer/`` — no build step, no CDN. The page
talks only to this service's public API (spectator view, no token), so its Content Security
Policy allows nothing but this origin. What it draws per game comes from the game modules:
``GET /viewer/games.json`` serves each game's name and ``Game.public_tables()`` (card tables);
the drawing code stays in ``viewer.js``.
"""

from __future__ import annotations

from pathlib import Path

from flask import Flask, jsonify, send_from_directory

from ..games import GAMES
from .errors import precondition_failed

STATIC_DIR = Path(__file__).resolve().parent.parent / "static" / "viewer"

#: Explicit types: the platform's mimetypes table is not trusted (some map .js elsewhere).
MIMETYPES = {".html": "text/html", ".css": "text/css", ".js": "text/javascript",
             ".svg": "image/svg+xml", ".png": "image/png", ".ico": "image/x-icon",
             ".json": "application/json"}

CSP = ("default-src 'none'; script-src 'self'; style-src 'self' 'unsafe-inline'; "
       "img-src 'self' data:; connect-src 'self'; base-uri 'none'; form-action 'none'; "
       "frame-ancestors 'self'")


def framed_by(ancestors: tuple[str, ...]) -> str:
    """:data:`CSP` with the pages that may frame the viewer (``OpsConfig``)."""
    return CSP.replace("frame-ancestors 'self'", "frame-ancestors " + " ".join(ancestors))


def send_static(directory: Path, filename: str, csp: str = CSP, max_age: int = 0):
    """``filename`` from ``directory`` (never outside it) with an explicit type, ``nosniff``
    and the page's Content Security Policy ``csp`` (the API console's pages use it too)."""
    mimetype = MIMETYPES.get(Path(filename).suffix.lower())
    resp = send_from_directory(directory, filename, mimetype=mimetype, max_age=max_age)
    if resp.status_code == 412:
        return precondition_failed()
    if mimetype and mimetype.startswith("text/"):
        resp.headers["Content-Type"] = f"{mimetype}; charset=utf-8"
    resp.headers["X-Content-Type-Options"] = "nosniff"
    resp.headers["Content-Security-Policy"] = csp
    return resp


def register(app: Flask, frame_ancestors: tuple[str, ...] = ("'self'",)) -> None:
    """Add ``GET /viewer``, ``GET /viewer/`` and ``GET /viewer/<path>`` to ``app``; pages of
    ``frame_ancestors`` may show it in a frame."""
    csp = framed_by(frame_ancestors)

    def _send(filename: str):
        return send_static(STATIC_DIR, filename, csp)

    @app.get("/viewer")
    @app.get("/viewer/")
    def viewer_index():
        return _send("index.html")

    @app.get("/viewer/games.json")
    def viewer_games():
        resp = jsonify({"types": {tid: {"name": g.name, "tables": g.public_tables()}
                                  for tid, g in GAMES.items()}})
        resp.headers["X-Content-Type-Options"] = "nosniff"
        resp.headers["Content-Security-Policy"] = csp
        return resp

    @app.get("/viewer/<path:filename>")
    def viewer_asset(filename: str):
        return _send(filename)  # send_from_directory refuses paths that leave STATIC_DIR
