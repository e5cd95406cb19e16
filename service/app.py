"""``create_app(config)``: the Flask application factory; ``wsgi`` is gunicorn's entry point."""

from __future__ import annotations

import logging

import redis
from flask import Flask, request

from . import api as api_pkg
from . import logs, metrics
from .api import (bench, contract, docs, errors, fastpaths, games, health, observe, players,
                  ratings, replays, seeks, stream, streamcaps, tournaments, viewer)
from .api import metrics as metrics_api
from .api import webhooks as webhooks_api
from .application import GameService
from .config import Config, OpsConfig, SettingError
from .jobs import RqScheduler
from .signing import Signer
from .store import connect
from .store.events import StreamFollower

API_SETTINGS = {
    "API_TITLE": "Cartouche",
    "API_VERSION": "1.0.0",
    "OPENAPI_VERSION": "3.1.0",
    "API_SPEC_OPTIONS": {
        "info": {"description": "An event-sourced game server for five tabletop games. "
                                "Seats act with bearer tokens returned at creation; without a "
                                "token you are a spectator. Every response carries an "
                                "X-Request-ID header: the request's own when it sent a safe "
                                "one (1 to 128 of A-Z a-z 0-9 . _ : -), else a new one; the "
                                "server's log lines of the request carry it too. A "
                                "request body that ends before its Content-Length (or is "
                                "badly chunked) is answered 400 malformed_request, one that "
                                "does not arrive within the server's body deadline "
                                "(WEB_BODY_TIMEOUT, 30 s) 408 request_timeout; either closes "
                                "the connection."},
        "components": {"securitySchemes": {"bearer": {"type": "http", "scheme": "bearer"}}},
        "security": [{}, {"bearer": []}],
    },
}

#: Headers a browser's script may send (CORS preflight) and read (exposed).
#: Any header may be sent: the API reads ``Authorization``, ``Content-Type``,
#: ``Idempotency-Key``, ``Last-Event-ID`` and ``X-Request-ID``, and a page's tracing or error
#: reporting adds its own (``traceparent``, ``baggage``, ``sentry-trace``); no cookie is ever
#: read, so a header a page may send gives it nothing it could not send without a browser.
CORS_ALLOW_HEADERS = "*"
CORS_EXPOSE_HEADERS = ["Retry-After", "X-Request-ID"]
#: How long a browser may reuse a preflight's answer.
CORS_MAX_AGE_S = 600


def _cors(app: Flask, origins) -> None:
    """flask-cors for ``origins``, its hook made to say ``Vary: Origin`` on every answer: an
    answer to an allowed origin carries headers one to another origin (or to none) lacks, so a
    cache between the pages and the server must not hand one's answer to the other. flask-cors
    adds it only when more than one origin could have matched, and never to a refused one."""
    from flask_cors import CORS

    CORS(app, origins=list(origins), allow_headers=CORS_ALLOW_HEADERS,
         expose_headers=CORS_EXPOSE_HEADERS, max_age=CORS_MAX_AGE_S)
    hooks = app.after_request_funcs[None]
    cors_hook = hooks[-1]

    def cors_varying_by_origin(response):
        response = cors_hook(response)
        response.vary.add("Origin")
        return response

    hooks[-1] = cors_varying_by_origin


def create_app(config: Config | None = None, client: redis.Redis | None = None, *,
               scheduler=None, now_ms=None, webhook_queue: redis.Redis | None = None,
               webhook_options: dict | None = None, ops: OpsConfig | None = None) -> Flask:
    config = config or Config.from_env()
    ops = ops or OpsConfig.from_env()
    # Flask without per-request work the API never needs, and without its implicit /static
    # route: the viewer's and the console's files are served by their own routes, with their
    # headers (api.viewer.send_static)
    app = fastpaths.LeanFlask(__name__, static_folder=None)
    _observe(app, ops)  # first: its hooks see every request, whatever the others answer
    if ops.cors_origins:  # next: its hook runs after every other but observe's, so an answer
        _cors(app, ops.cors_origins)  # a later hook replaces (a 429) carries the headers too
    app.json = api_pkg.OrjsonProvider(app)
    app.config.update(API_SETTINGS)
    app.config["MAX_CONTENT_LENGTH"] = config.max_body_bytes
    app.config["CARTOUCHE"] = config

    @app.before_request
    def _bigger_bodies_for_exports():
        if request.path == "/v1/replays/verify":
            request.max_content_length = config.max_export_bytes

    app.url_map.converters["gid"] = api_pkg.GameIdConverter
    api = api_pkg.CartoucheApi(app)
    api.register_converter(api_pkg.GameIdConverter, api_pkg.game_id_schema)
    api.register_blueprint(games.blp)
    fastpaths.install_lean_action(app)
    replays.register(app, api)
    api.register_blueprint(players.blp)
    api.register_blueprint(ratings.blp)
    api.register_blueprint(seeks.blp)
    api.register_blueprint(tournaments.blp)
    api.register_blueprint(stream.blp)
    api.register_blueprint(health.blp)
    api.register_blueprint(metrics_api.blp)
    errors.register(app)  # after Api: our error model replaces flask-smorest's
    from .api import ratelimit
    client = client or connect.client(config.redis_url, timeout=config.redis_timeout_s,
                                      max_connections=config.redis_max_connections,
                                      max_idle=config.redis_idle_connections)
    # The hubs block in XREAD for up to a quarter of the keep-alive period: their own
    # connections, with a read timeout longer than the block; a stopped hub's is closed once
    # more than the idle bound wait in the pool.
    app.extensions["cartouche_streams"] = StreamFollower(connect.client(
        config.redis_url, timeout=config.redis_timeout_s,
        max_connections=config.redis_max_connections, read_timeout=60,
        max_idle=config.redis_idle_connections))
    queue = connect.queue_client(config.queue_url or config.redis_url,
                                 timeout=config.redis_timeout_s)
    if scheduler is None:
        scheduler = RqScheduler(queue, archive_after_s=config.archive_delay_s,
                                sweep_max=config.archive_sweep_max, now_ms=now_ms)
    app.extensions["cartouche"] = GameService.configured(config, client, scheduler=scheduler,
                                                         now_ms=now_ms,
                                                         signer=Signer.from_env(client))
    app.extensions["cartouche_api"] = api
    app.extensions["cartouche"].observe(metrics.OBSERVER)
    app.extensions["cartouche_metrics"] = metrics.StoreCollector(client, queue)
    contract.document_games(api)
    ratelimit.register(app, client, ratelimit.RateLimitConfig.from_env())
    streamcaps.register(app, redis_connections=config.redis_max_connections)
    webhooks_api.register(app, api, app.extensions["cartouche"], webhook_queue or queue,
                          **(webhook_options or {}))
    docs.register(app, api)
    viewer.register(app, ops.viewer_frame_ancestors)
    bench.register(app)  # POST /bench/append/<key> only with CARTOUCHE_BENCH_ENDPOINTS=1
    fastpaths.install_action_route(app, ops.access_log)  # last: it checks the app's hooks
    return app


def _observe(app: Flask, ops: OpsConfig) -> None:
    """Every request gets what ``service.api.observe`` says: a request id, its count in the
    HTTP metrics and an access log line (unless ``ops.access_log`` is off)."""
    logs.install_record_factory()
    log_access = ops.access_log

    @app.before_request
    def _start():
        observe.begin(request.environ)

    @app.after_request
    def _finish(response):
        req = request._get_current_object()
        rule = req.url_rule
        observe.end(req.environ, response, req.method, req.path,
                    rule.rule if rule is not None else "unmatched", log_access)
        return response

    @app.teardown_request
    def _forget(exc):  # noqa: ARG001
        observe.forget()


def openapi_yaml(app: Flask) -> str:
    return app.extensions["cartouche_api"].spec.to_yaml()


def wsgi() -> Flask:
    """gunicorn 'service.app:wsgi()' (logs as ``service.logs`` says). A setting out of range
    (those gunicorn's master does not read first, ``gunicorn_conf.py``) is logged as one
    line and the worker exits with gunicorn's boot error (3), which stops the server."""
    logs.configure()
    try:
        return create_app()
    except SettingError as exc:
        logging.getLogger("cartouche.app").error("%s", exc)
        raise SystemExit(3) from None
