"""The listener bus: who hears about every successful append (webhooks, metrics)."""

from __future__ import annotations

import logging
from typing import Any, Callable, Sequence

from .model import Table

log = logging.getLogger("cartouche.application")

#: (listener, the read-only Redis commands it wants run with the append)
Reads = list[tuple[Any, list]]


class ListenerBus:
    """Listeners are called after every successful append as ``listener(table_after,
    first_version, envelopes)``. A listener must not raise; errors are logged.

    A listener with ``wants_previous = True`` also gets ``previous=``: the table before the
    append (None for a new game).

    A listener with a ``reads_after_append()`` method (a list of read-only Redis commands) gets
    their replies as ``reads=`` (a reply is None if its read failed): the reads ride in the
    append's round trip (``EventStore.append``)."""

    def __init__(self) -> None:
        self.listeners: list[Callable[..., None]] = []

    def reads(self) -> Reads:
        """(listener, its reads) for the listeners that want reads with the append."""
        out = []
        for listener in self.listeners:
            wanted = getattr(listener, "reads_after_append", None)
            if wanted is not None:
                try:
                    out.append((listener, list(wanted())))
                except Exception:
                    log.exception("listener %r: reads_after_append failed", listener)
        return out

    def notify(self, table: Table, first_version: int, envelopes: list[dict],
               reads: Reads = (), replies: Sequence = (), previous: Table | None = None) -> None:
        given, at = {}, 0
        for listener, cmds in reads:
            given[id(listener)] = list(replies[at:at + len(cmds)])
            at += len(cmds)
        for listener in self.listeners:
            try:
                extra = {"previous": previous} if getattr(listener, "wants_previous", False) \
                    else {}
                if id(listener) in given:
                    extra["reads"] = given[id(listener)]
                listener(table, first_version, envelopes, **extra)
            except Exception:  # a listener never fails a command that is already stored
                log.exception("listener %r failed for game %s", listener, table.id)
