"""The store calls of the benchmark-only baseline endpoint (``service.api.bench``): the least
that every action does, on keys of their own (``bench<hex>``, never a game)."""

from __future__ import annotations

from . import keys
from .events import EventStore


def last_version(store: EventStore, key: str) -> int:
    """The version of the stream's last entry (0 when empty): one stream read."""
    last = store.r.xrevrange(keys.events(key), "+", "-", count=1)
    return int(last[0][0].split(b"-", 1)[0]) if last else 0


def open_stream(store: EventStore, key: str) -> None:
    """The meta hash an append needs to find (first use of a key)."""
    store.r.hset(keys.meta(key), mapping={"type": "bench", "version": 0})
