"""Bounded per-process memos keyed by game id: :class:`Memo` (oldest out first) for what never
changes once a game is created, :class:`Recent` (least recently used out first).

Reads take no lock (a performance shortcut: an action reads several memos, and under gevent a
lock is Python code: measured 0.43 µs a locked read against 0.05 µs): each read is one call
into the dict's C code, which no other thread or greenlet can interleave, and
:meth:`Recent.get`'s second call, the move to the end, tolerates the entry having gone since.
Writes, which check then change, hold the lock."""

from __future__ import annotations

import threading
from collections import OrderedDict
from typing import Generic, TypeVar

V = TypeVar("V")


class Memo(Generic[V]):
    """A per-game value that never changes once the game is created (its meta, its seed; ids
    are never reused), kept per process, bounded, oldest out first."""

    def __init__(self, size: int) -> None:
        self.size = size
        self._data: OrderedDict[str, V] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, game_id: str) -> V | None:
        return self._data.get(game_id)

    def put(self, game_id: str, value: V) -> None:
        with self._lock:
            self._data[game_id] = value
            self._bound()

    def discard(self, game_id: str) -> None:
        with self._lock:
            self._data.pop(game_id, None)

    def clear(self) -> None:
        with self._lock:
            self._data.clear()

    def _bound(self) -> None:
        """The lock is held."""
        while len(self._data) > self.size:
            self._data.popitem(last=False)


class Recent(Memo[V]):
    """A :class:`Memo` whose least recently used entry goes first."""

    def get(self, game_id: str) -> V | None:
        hit = self._data.get(game_id)
        if hit is not None:
            try:
                self._data.move_to_end(game_id)
            except KeyError:  # put out by a write since the read: the value read stands
                pass
        return hit

    def put(self, game_id: str, value: V) -> None:
        with self._lock:
            self._data[game_id] = value
            self._data.move_to_end(game_id)
            self._bound()
