"""The floor of P1: a truly bare Flask app doing what ``POST /bench/append/<key>`` does.

One route, ``POST /bench/append/<key>``: one stream read (the stream's last entry) and one
expected-version append of one event through the production Lua script (``EventStore.append``,
``append.lua``), then a small JSON answer -- the same store calls and the same envelope as the
in-app endpoint (``service.api.bench``), with none of the production app's machinery around them:
no request ids, metrics, access log, rate limiter, error handlers, flask-smorest or CORS. It is
what a new user would write to see what Flask, gunicorn and Redis cost on their own.

``bench/p1_throughput.py`` serves it with the production gunicorn configuration
(``service/gunicorn_conf.py``) on the same Redis as the production app:

    gunicorn --config python:service.gunicorn_conf 'bare_app:wsgi()'   (cwd bench/, REDIS_URL)

Nothing imports it in the service.
"""

from __future__ import annotations

import os
import sys

import orjson
from flask import Flask, Response

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from service.api.bench import ENVELOPE  # noqa: E402
from service.store import bench as bench_store  # noqa: E402
from service.store import connect  # noqa: E402
from service.store.events import EventStore  # noqa: E402


def create_app(redis_url: str) -> Flask:
    app = Flask(__name__)
    # the production app's pool settings (service.config defaults)
    store = EventStore(connect.client(redis_url, timeout=5.0))

    @app.post("/bench/append/<key>")
    def bench_append(key: str):
        if not 1 <= len(key) <= 64 or any(c not in "0123456789abcdef" for c in key):
            return Response(b'{"error":"bad key"}', status=400, mimetype="application/json")
        # the same read and Lua append as the in-app endpoint (service.store.bench)
        version = bench_store.append_one(store, "bench" + key, ENVELOPE)
        if version is None:
            return Response(b'{"error":"conflict"}', status=409, mimetype="application/json")
        return Response(orjson.dumps({"version": version}), status=201,
                        mimetype="application/json")

    @app.get("/readyz")
    def readyz():
        return Response(b'{"status":"ok"}', mimetype="application/json")

    return app


def wsgi() -> Flask:
    """gunicorn 'bare_app:wsgi()' (``REDIS_URL`` from the environment)."""
    return create_app(os.environ["REDIS_URL"])
