"""Benchmark-only endpoint (the P1 baseline). Never registered in production.

``POST /bench/append/<key>`` does nothing but what every action must do at the least: one stream
read (the stream's last entry, to learn its version) and one expected-version append of one
event through the production Lua script (``EventStore.append``, the same ``append.lua``), then a
small JSON answer. It exists only when ``CARTOUCHE_BENCH_ENDPOINTS=1`` is set in the
environment; :func:`register` does nothing otherwise.

The keys live under their own prefix (``<key>`` must be hex, like game ids, and is used as
``bench<key>``), so a benchmark key can never be a game. ``bench/p1_throughput.py`` runs it in
the same gunicorn configuration as the API (``wsgi`` below is ``service.app:wsgi()`` plus this
endpoint, for runs where the application factory does not register it yet).
"""

from __future__ import annotations

import os

import orjson
from flask import Flask, Response

ENV = "CARTOUCHE_BENCH_ENDPOINTS"
ENDPOINT = "cartouche_bench_append"
#: About the size of a Diamant ``ChoiceCommitted`` envelope with its ``cmd`` and ``shell``.
ENVELOPE = {"type": "ChoiceCommitted", "seat": 0, "data": {"choice": "continue"},
            "at": "2026-01-01T00:00:00.000Z", "schema": 1,
            "cmd": {"seat": 0, "action": {"type": "decide", "choice": "continue"}},
            "shell": {"controllers": ["human", "human", "human", "human"], "clock": None,
                      "ended": None, "aborted": False}}


def enabled() -> bool:
    return os.environ.get(ENV) == "1"


def register(app: Flask) -> None:
    """Add ``POST /bench/append/<key>`` iff ``CARTOUCHE_BENCH_ENDPOINTS=1`` (idempotent)."""
    if not enabled() or ENDPOINT in app.view_functions:
        return

    from ..store import bench as bench_store

    def bench_append(key: str):
        if not 1 <= len(key) <= 64 or any(c not in "0123456789abcdef" for c in key):
            return Response(b'{"error":"bad key"}', status=400, mimetype="application/json")
        version = bench_store.append_one(app.extensions["cartouche"].store, "bench" + key,
                                         ENVELOPE)
        if version is None:
            return Response(b'{"error":"conflict"}', status=409, mimetype="application/json")
        return Response(orjson.dumps({"version": version}), status=201,
                        mimetype="application/json")

    app.add_url_rule("/bench/append/<key>", ENDPOINT, bench_append, methods=["POST"])


def wsgi() -> Flask:
    """gunicorn 'service.api.bench:wsgi()': the production app, plus this endpoint."""
    from ..app import wsgi as app_wsgi

    app = app_wsgi()
    register(app)
    return app
