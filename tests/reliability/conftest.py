"""Fixtures of the reliability tests: a Redis-compatible server of their own (AOF), so that
killing it, or the workers attached to it, never touches the session's shared server."""

from __future__ import annotations

import shutil
import tempfile

import pytest

from .procs import start_redis


@pytest.fixture
def own_redis():
    data = tempfile.mkdtemp(prefix="cartouche-rel-redis-")
    holder = {"server": start_redis(data), "data": data}
    yield holder
    holder["server"].stop()
    shutil.rmtree(data, ignore_errors=True)
