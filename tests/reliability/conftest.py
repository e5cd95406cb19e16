"""Fixtures of the reliability tests: a Redis-compatible server of their own (AOF), so that
killing it, or the workers attached to it, never touches the session's shared server.

``@pytest.mark.appendfsync("always")`` starts it with that fsync policy (default ``everysec``,
as deployed)."""

from __future__ import annotations

import shutil
import tempfile

import pytest

from .procs import start_redis


@pytest.fixture
def own_redis(request):
    data = tempfile.mkdtemp(prefix="cartouche-rel-redis-")
    marker = request.node.get_closest_marker("appendfsync")
    appendfsync = marker.args[0] if marker else "everysec"
    holder = {"server": start_redis(data, appendfsync=appendfsync), "data": data,
              "appendfsync": appendfsync}
    yield holder
    holder["server"].stop()
    shutil.rmtree(data, ignore_errors=True)
