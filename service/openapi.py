"""``python -m service.openapi``: print the OpenAPI document generated from the code."""

from __future__ import annotations

import sys

import redis

from .app import create_app, openapi_yaml
from .config import Config


def generate() -> str:
    # The document does not depend on the store: a client that never connects is enough.
    app = create_app(Config(redis_url="redis://127.0.0.1:1/0"),
                     client=redis.Redis.from_url("redis://127.0.0.1:1/0"))
    return openapi_yaml(app)


if __name__ == "__main__":
    sys.stdout.write(generate())
