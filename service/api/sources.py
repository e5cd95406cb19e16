"""What the hubs follow (``hub.Source``): a game's event stream.

A source reads its stream by itself (``XRANGE``, for subscribers catching up) or blocking (the
hub's ``XREAD``, on the follower's connections) and encodes each entry as one SSE message whose
``id:`` is its position, so that ``Last-Event-ID`` resumes right after it.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..application import GameService, Table
from ..engine import Viewer
from ..store.events import StoredEvent, StreamFollower
from .hub import sse


@dataclass(frozen=True)
class Events:
    """Events of one game read in one go, and the game as of them or later."""

    stored: list[StoredEvent]
    current: Table

    @property
    def first(self) -> int:
        return self.stored[0].version

    @property
    def last(self) -> int:
        return self.stored[-1].version

    @property
    def size(self) -> int:
        return len(self.stored)


def _end(current: Table, version: int) -> bytes | None:
    """The end event, for a subscriber at ``version`` of a game that is over there."""
    if not current.over or version < current.version:
        return None
    return sse("end", {"status": current.status, "version": current.version,
                       "result": current.result()}, current.version)


class GameSource:
    """A game's events: positions are versions; each seat, spectators and platform keys are
    viewer classes of their own; the stream ends with the game (``event: end``).

    Redaction is "as of now": each batch is served as the game is once loaded at that batch or
    later, so a batch read after the end is public."""

    kind = "game"

    def __init__(self, svc: GameService, follower: StreamFollower) -> None:
        self.svc, self.follower = svc, follower

    def read(self, game_id: str, after: int, *, upto: int | None = None,
             count: int) -> Events | None:
        return self._loaded(game_id, self.svc.store.read(game_id, after, upto, count=count))

    def read_blocking(self, game_id: str, after: int, *, count: int,
                      block_ms: int) -> Events | None:
        return self._loaded(game_id, self.follower.read_after(game_id, after, count=count,
                                                              block_ms=block_ms))

    def _loaded(self, game_id: str, stored: list[StoredEvent]) -> Events | None:
        if not stored:
            return None
        return Events(stored, self.svc.load_recent(game_id, stored[-1].version))

    def encode(self, batch: Events, viewer: Viewer) -> tuple[tuple[int, bytes], ...]:
        shown = self.svc.served_events(batch.current, [s.envelope for s in batch.stored],
                                       batch.first, viewer)
        return tuple((ev["version"], sse("game_event", ev, ev["version"])) for ev in shown)

    def preface(self, batch: Events, after: int) -> bytes:
        return b""

    def ending(self, batch: Events) -> bytes | None:
        return _end(batch.current, batch.last)

    def settle(self, game_id: str, after: int,
               last: Events | None) -> tuple[bytes | None, int]:
        current = last.current if last is not None else self.svc.load(game_id)
        return _end(current, after), min(after, current.version)
