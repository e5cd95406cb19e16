"""What the hubs follow (``hub.Source``): a game's event stream and a player's notice stream.

Both read their stream by themselves (``XRANGE``, for subscribers catching up) or blocking (the
hub's ``XREAD``, on the follower's connections) and encode each entry as one SSE message whose
``id:`` is its position, so that ``Last-Event-ID`` resumes right after it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import NamedTuple

from ..application import GameService, Table
from ..application.notices import served_notice
from ..engine import Viewer
from ..store.events import StoredEvent, StreamFollower
from ..store.players import StoredNotice
from .hub import sse


# -- games ---------------------------------------------------------------------------------
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


def _end(svc: GameService, current: Table, version: int) -> bytes | None:
    """The end event, for a subscriber at ``version`` of a game that is over there. While the
    game is withheld (``GameService.withheld_from``) it has no result, and its version and id
    are the last version served before the command that ended it: a reader resuming from it
    once the game is public gets that command's events."""
    if not current.over or version < current.version:
        return None
    withheld_from = svc.withheld_from(current)
    shown = current.version if withheld_from is None else withheld_from - 1
    return sse("end", {"status": current.status, "version": shown,
                       "result": None if withheld_from is not None else current.result()},
               shown)


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
        stored, archived = self.follower.read_after(game_id, after, count=count,
                                                    block_ms=block_ms)
        if not stored and archived:  # the stream is gone: the game over and archived
            stored = self.svc.store.read_archived(game_id, after, count)
        return self._loaded(game_id, stored)

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
        return _end(self.svc, batch.current, batch.last)

    def settle(self, game_id: str, after: int,
               last: Events | None) -> tuple[bytes | None, int]:
        current = last.current if last is not None else self.svc.load(game_id)
        return _end(self.svc, current, after), min(after, current.version)


# -- players -------------------------------------------------------------------------------
STREAM_ID = re.compile(r"(0|[1-9][0-9]{0,19})-(0|[1-9][0-9]{0,19})", re.ASCII)


class StreamId(NamedTuple):
    """A Redis stream id, ``<ms>-<seq>``, ordered as the stream orders its entries."""

    ms: int
    seq: int

    @classmethod
    def parse(cls, text: str) -> "StreamId":
        """The id ``text`` spells exactly as Redis writes ids (digits without leading zeros,
        each part below 2**64); ValueError for anything else."""
        found = STREAM_ID.fullmatch(text)
        if found is None or max(int(found[1]), int(found[2])) >= 2**64:
            raise ValueError(f"not a stream id: {text!r}")
        return cls(int(found[1]), int(found[2]))

    def __str__(self) -> str:
        return f"{self.ms}-{self.seq}"


START = StreamId(0, 0)
#: The last id Redis can write: nothing can come after it (and Redis refuses to read after it).
LAST = StreamId(2**64 - 1, 2**64 - 1)


@dataclass(frozen=True)
class Notices:
    """Notices of one player read in one go, with their ids. ``oldest``: the oldest notice the
    stream still kept when they were read, if it had dropped older ones by then (it is capped,
    ``MAXLEN``): a reader behind it may have missed some. None when the stream had dropped
    none, or when the read cannot have missed any (see :class:`NoticeSource`)."""

    ids: list[StreamId]
    notices: list[StoredNotice]
    oldest: StreamId | None = None

    @property
    def first(self) -> StreamId:
        return self.ids[0]

    @property
    def last(self) -> StreamId:
        return self.ids[-1]

    @property
    def size(self) -> int:
        return len(self.ids)


def _notices(notices: list[StoredNotice], oldest: str | None = None) -> Notices | None:
    if not notices:
        return None
    return Notices([StreamId.parse(n.id) for n in notices], notices,
                   StreamId.parse(oldest) if oldest is not None else None)


class NoticeSource:
    """A player's notices: positions are stream ids, one viewer class (the player), no end.

    A reader whose position is older than the oldest notice kept, on a stream that has dropped
    notices, is told first: ``event: gap`` with ``{"after", "oldest"}`` (no id), then served
    everything kept. Its own reads check that together with the entries (one ``MULTI``). The
    hub's blocking read is checked only when it returned as many notices as the stream keeps at
    the least: a capped stream never holds fewer than that, so a shorter read missed nothing."""

    kind = "player"

    def __init__(self, svc: GameService, follower: StreamFollower) -> None:
        self.players, self.follower = svc.player_store, follower

    def read(self, player_id: str, after: StreamId, *, upto: StreamId | None = None,
             count: int) -> Notices | None:
        if after == LAST:
            return None
        page = self.players.page(player_id, str(after), None if upto is None else str(upto),
                                 count=count)
        return _notices(page.notices, page.oldest)

    def read_blocking(self, player_id: str, after: StreamId, *, count: int,
                      block_ms: int) -> Notices | None:
        notices = self.follower.read_notices(player_id, str(after), count=count,
                                             block_ms=block_ms)
        if len(notices) >= min(count, self.players.stream_max):  # it may have dropped some
            return self.read(player_id, after, count=count)
        return _notices(notices)

    def encode(self, batch: Notices, viewer: Viewer) -> tuple[tuple[StreamId, bytes], ...]:
        return tuple((at, sse(n.type, served_notice(n.type, n.data), at))
                     for at, n in zip(batch.ids, batch.notices))

    def preface(self, batch: Notices, after: StreamId) -> bytes:
        if batch.oldest is None or after >= batch.oldest:
            return b""
        return sse("gap", {"after": str(after), "oldest": str(batch.oldest)})

    def ending(self, batch: Notices) -> None:
        return None

    def settle(self, player_id: str, after: StreamId,
               last: Notices | None) -> tuple[None, StreamId]:
        newest = last.last if last is not None else StreamId.parse(
            self.players.last_id(player_id))
        return None, min(after, newest)
