"""The store calls of the benchmark-only baseline endpoint (``service.api.bench``): the least
that every action does, on keys of their own (``bench<hex>``, never a game)."""

from __future__ import annotations

from . import keys
from .events import AppendStatus, EventStore


def last_version(store: EventStore, key: str) -> int:
    """The version of the stream's last entry (0 when empty): one stream read."""
    last = store.r.xrevrange(keys.events(key), "+", "-", count=1)
    return int(last[0][0].split(b"-", 1)[0]) if last else 0


def open_stream(store: EventStore, key: str) -> None:
    """The meta hash an append needs to find (first use of a key)."""
    store.r.hset(keys.meta(key), mapping={"type": "bench", "version": 0})


def append_one(store: EventStore, key: str, envelope: dict, tries: int = 50) -> int | None:
    """One stream read and one expected-version append of ``envelope`` through the production
    Lua script (again after a lost race, up to ``tries`` times): the new version, or None when
    every try lost. Opens the stream on a key's first use."""
    for _ in range(tries):
        current = last_version(store, key)  # the stream read
        result = store.append(key, current, [envelope])  # the Lua append
        if result.outcome is AppendStatus.MISSING:  # first use of this key: its meta hash
            open_stream(store, key)
            continue
        if result.outcome is AppendStatus.OK:
            return result.version
    return None
