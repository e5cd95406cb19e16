"""``create_app(config)``: the Flask application factory; ``wsgi`` is gunicorn's entry point."""

from __future__ import annotations

import logging

import redis
from flask import Flask, request

from . import api as api_pkg
from .api import (bench, docs, errors, fastpaths, games, health, players, ratings, replays,
                  seeks, stream, streamcaps, tournaments, viewer)
from .api import webhooks as webhooks_api
from .application import GameService
from .config import Config
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
                                "token you are a spectator."},
        "components": {"securitySchemes": {"bearer": {"type": "http", "scheme": "bearer"}}},
        "security": [{}, {"bearer": []}],
    },
}


def create_app(config: Config | None = None, client: redis.Redis | None = None, *,
               scheduler=None, now_ms=None, webhook_queue: redis.Redis | None = None,
               webhook_options: dict | None = None) -> Flask:
    config = config or Config.from_env()
    app = Flask(__name__)
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
    _document_games(api)
    ratelimit.register(app, client, ratelimit.RateLimitConfig.from_env())
    streamcaps.register(app)
    webhooks_api.register(app, api, app.extensions["cartouche"], webhook_queue or queue,
                          **(webhook_options or {}))
    docs.register(app, api)
    viewer.register(app)
    bench.register(app)  # POST /bench/append/<key> only with CARTOUCHE_BENCH_ENDPOINTS=1
    return app


def _document_games(api) -> None:
    """Every game's options and action vocabulary as named JSON Schemas in the contract (the
    same schemas GET /v1/game-types serves), e.g. ``DiamantOptions``, ``DiamantActionDecide``."""
    from .games import GAMES
    from .options import served_schema

    def camel(text: str) -> str:
        return "".join(part.capitalize() for part in text.replace("_", "-").split("-"))

    for game in GAMES.values():
        prefix = camel(game.type_id)
        api.spec.components.schema(f"{prefix}Options", served_schema(game))
        for action, schema in game.action_schemas.items():
            api.spec.components.schema(f"{prefix}Action{camel(action)}", dict(schema))


def openapi_yaml(app: Flask) -> str:
    return app.extensions["cartouche_api"].spec.to_yaml()


def wsgi() -> Flask:
    """gunicorn 'service.app:wsgi()'."""
    logging.basicConfig(level=logging.INFO)
    return create_app()
