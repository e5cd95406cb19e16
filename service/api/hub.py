"""One reader per followed stream per process, fanning its entries out to the local SSE
subscribers.

What a hub follows is a :class:`Source` (``sources.py``), and a key names one of its streams:
a game's events (``sources.GameSource``: the key is the game id, positions are versions, viewer
classes are seats, spectators and platform keys, and the stream ends with the game) or a
player's notices (``sources.NoticeSource``: the key is the player id, positions are Redis
stream ids, there is one viewer class and no end).

A subscriber (:func:`follow`) first catches up by itself: it reads the stream from its
``Last-Event-ID`` (``XRANGE``, a batch at a time) and serves what it read, until it reaches the
end of the log. Then it joins the stream's :class:`Hub`, started by the first subscriber of that
stream in this process: a thread (a greenlet under gunicorn's gevent workers, which monkey-patch
``threading``) that blocks in ``XREAD`` on the stream, prepares each batch once (a game is loaded
once per batch), SSE-encodes it once per viewer class present (each seat, spectators, platform
keys) and hands those bytes to the subscribers of that class only. A new entry so costs one
``XREAD`` (and one load) per process, not per subscriber.

Hand-over without gaps or duplicates: joining records the hub's position (every entry up to it
has been handed out before the subscriber was registered, every later one will be after). A
subscriber behind that position reads the gap itself first; one ahead of it (the hub has not read
the newest entries yet) skips what it already served. Each subscriber keeps its own position.

A subscriber's backlog is bounded (``buffer`` batches). One that falls further behind (a slow
client) is detached, its backlog dropped, and goes back to reading the stream itself from its own
position, then joins again: the hub never waits for anybody, and memory stays bounded. If the
hub fails (Redis unreachable, say) its subscribers' streams end and clients reconnect with
``Last-Event-ID``. The hub stops when its last subscriber has left (after its current ``XREAD``)
or when it has handed out the end event of its stream (a finished game).
"""

from __future__ import annotations

import logging
import threading
import time
from collections import deque
from typing import Any, Iterator, NamedTuple, Protocol, Sequence

import orjson

from ..engine import Viewer
from ..store.errors import StoreError

log = logging.getLogger("cartouche.sse")

#: What a store that is down or restarting raises under a stream (its client's errors, and
#: the sockets' own).
STORE_ERRORS = (StoreError, OSError)

#: Stream entries per read (catch-up ``XRANGE`` and the hub's ``XREAD``).
BATCH = 200
#: Batches a subscriber may have waiting before it is detached to read the stream by itself.
BUFFER = 256
#: Handing a batch to a subscriber costs ~25 us of CPU (mostly the WSGI write and its syscall).
#: Successive hand-outs of a hub are spaced by 200 us per subscriber, 50 ms at most, so that its
#: fan-out stays within ~1/8 of a core; entries arriving faster than that go out together. (One
#: subscriber: 0.2 ms; 250 in a process: 50 ms, only when entries come that fast.)
COALESCE_PER_FEED = 0.0002
COALESCE_MAX = 0.05

LIVE, DETACHED, ENDED, FAILED = "live", "detached", "ended", "failed"

#: A place in a stream: a source's own kind of value, ordered like the stream (``<``, ``<=``).
Position = Any


def sse(event: str, data, event_id: object = None) -> bytes:
    head = f"id: {event_id}\n" if event_id is not None else ""
    return f"{head}event: {event}\n".encode() + b"data: " + orjson.dumps(data) + b"\n\n"


class Batch(Protocol):
    """Entries a source read from one stream in one go."""

    first: Position  # its first entry's
    last: Position  # its last entry's
    size: int  # how many entries it holds (a read of ``count`` may have left more behind)


class Source(Protocol):
    """One kind of stream the hubs follow, and how its batches are served."""

    kind: str  # what a key names, for the logs ("game", "player")

    def read(self, key: str, after: Position, *, upto: Position | None = None,
             count: int) -> Batch | None:
        """Up to ``count`` entries after ``after`` (up to ``upto``); None when there are none."""

    def read_blocking(self, key: str, after: Position, *, count: int,
                      block_ms: int) -> Batch | None:
        """The same, waiting up to ``block_ms`` for one to arrive (the hub's read)."""

    def encode(self, batch: Batch, viewer: Viewer) -> Sequence[tuple[Position, bytes]]:
        """(position, SSE bytes) of each entry of ``batch`` that ``viewer`` may see."""

    def preface(self, batch: Batch, after: Position) -> bytes:
        """What a subscriber at ``after`` is told before the entries of ``batch`` it is
        served (that entries it has not seen were lost, say), else b""."""

    def ending(self, batch: Batch) -> bytes | None:
        """The end event when the stream ends with ``batch``."""

    def settle(self, key: str, after: Position,
               last: Batch | None) -> tuple[bytes | None, Position]:
        """For a subscriber that has read the stream by itself up to ``after`` (``last``: the
        last batch it read, None when it read none): the end event when the stream is over by
        then, and where a hub started now begins reading (at most ``after``, and a position
        the stream has reached)."""


class Encoded(NamedTuple):
    """A batch as one viewer class is served it: each entry's (position, bytes), and all of
    those bytes together."""

    batch: Batch
    parts: Sequence[tuple[Position, bytes]]
    data: bytes


def encoded(source: Source, batch: Batch, viewer: Viewer) -> Encoded:
    parts = source.encode(batch, viewer)
    return Encoded(batch, parts, b"".join(b for _, b in parts))


def served(source: Source, item: Encoded, after: Position) -> bytes:
    """What a subscriber that has served everything up to ``after`` is served of ``item``
    (``item.batch.last`` is past ``after``)."""
    batch = item.batch
    data = item.data if batch.first > after else \
        b"".join(b for position, b in item.parts if position > after)  # ahead of the hub
    return source.preface(batch, after) + data


class Feed:
    """One subscriber's mailbox: :class:`Encoded` batches of its viewer class. The hub appends
    and wakes (with the lock held); the subscriber takes without the lock (``deque`` operations
    are atomic), so that waking hundreds of subscribers stays cheap."""

    def __init__(self, hub: "Hub", viewer: Viewer) -> None:
        self.hub, self.viewer = hub, viewer
        self.items: deque = deque()
        self.state = LIVE
        self.end = b""
        self.wake = threading.Event()
        #: When the subscriber last wrote (the hub wakes it when a keep-alive is due).
        self.written = time.monotonic()

    def put(self, item: Encoded) -> bool:
        """False when the backlog is full: the feed is now detached (backlog dropped)."""
        if len(self.items) >= self.hub.hubs.buffer:
            self.close(DETACHED)
            return False
        self.items.append(item)
        self.wake.set()
        return True

    def close(self, state: str, end: bytes = b"") -> None:
        """No more items. The backlog is still served unless the feed is detached (then the
        subscriber reads it again from the stream)."""
        self.end = end
        self.state = state  # after ``end``: whoever sees the state sees its end event
        if state == DETACHED:
            self.items.clear()
        self.wake.set()

    def take(self) -> tuple[list[Encoded], str, bytes]:
        """Wait until woken; then everything waiting, and the state the feed was in before it
        (so that an ``ENDED`` state comes with every item put before the end)."""
        self.wake.wait()
        self.wake.clear()  # before taking: an item put from now on wakes the next take
        state, end = self.state, self.end
        items = []
        try:
            while True:
                items.append(self.items.popleft())
        except IndexError:
            return items, state, end


class Hub:
    """The reader of one stream in this process, and the feeds following it by viewer class."""

    def __init__(self, hubs: "Hubs", key: str, position: Position) -> None:
        self.hubs, self.key = hubs, key
        #: Every entry up to here has been handed to the registered feeds.
        self.position = position
        self.feeds: dict[Viewer, list[Feed]] = {}

    def run(self) -> None:
        hubs, source = self.hubs, self.hubs.source
        swept = dispatched = time.monotonic()
        try:
            while True:
                with hubs.lock:
                    if not self.feeds:
                        hubs._remove(self)
                        return
                    spacing = min(COALESCE_MAX, COALESCE_PER_FEED * self.size())
                if (pause := dispatched + spacing - time.monotonic()) > 0:
                    time.sleep(pause)  # what arrives meanwhile goes out in one batch
                with hubs.lock:
                    after = self.position
                    if time.monotonic() - swept >= hubs.tick:
                        swept = self._keep_alive()
                batch = source.read_blocking(self.key, after, count=BATCH,
                                             block_ms=round(hubs.tick * 1000))
                if batch is None:
                    continue
                end = source.ending(batch)
                with hubs.lock:
                    for viewer, feeds in list(self.feeds.items()):
                        item = encoded(source, batch, viewer)
                        for feed in list(feeds):
                            if not feed.put(item):
                                self._drop(feed)
                    self.position = batch.last
                    dispatched = time.monotonic()
                    if end is not None:
                        self._close_all(ENDED, end)
                        return
        except STORE_ERRORS as exc:  # the store restarting: expected, told in one line
            log.warning("SSE hub of %s %s lost the store (%s); its subscribers reconnect",
                        source.kind, self.key, type(exc).__name__)
        except Exception:
            log.exception("SSE hub of %s %s failed; its subscribers reconnect", source.kind,
                          self.key)
        finally:  # whatever happened, nobody is left waiting for this hub
            with hubs.lock:
                self._close_all(FAILED)

    def size(self) -> int:
        return sum(len(feeds) for feeds in self.feeds.values())

    def _keep_alive(self) -> float:
        """Wake the feeds that must write before the next sweep (lock held)."""
        now = time.monotonic()
        due = now + self.hubs.tick - self.hubs.keepalive
        for feeds in self.feeds.values():
            for feed in feeds:
                if feed.written <= due:
                    feed.wake.set()
        return now

    def _drop(self, feed: Feed) -> None:
        """Lock held."""
        feeds = self.feeds.get(feed.viewer)
        if feeds is not None and feed in feeds:
            feeds.remove(feed)
            if not feeds:
                del self.feeds[feed.viewer]

    def _close_all(self, state: str, end: bytes = b"") -> None:
        """Lock held: the hub is gone, nobody joins it any more."""
        for feeds in self.feeds.values():
            for feed in feeds:
                feed.close(state, end)
        self.feeds.clear()
        self.hubs._remove(self)


class Hubs:
    """The hubs of one source in one process (one app), by key.

    ``keepalive_ms``: the longest silence on a stream; the hubs sweep for due keep-alives four
    times per period (their ``XREAD`` blocks that long). ``buffer``: batches a subscriber may
    have waiting before it is detached."""

    def __init__(self, source: Source, *, keepalive_ms: int, buffer: int = BUFFER) -> None:
        self.source, self.buffer = source, buffer
        self.keepalive = keepalive_ms / 1000
        self.tick = self.keepalive / 4
        self.lock = threading.Lock()
        self.hubs: dict[str, Hub] = {}

    def join(self, key: str, viewer: Viewer, position: Position) -> tuple[Feed, Position]:
        """Register a subscriber; returns its feed and the hub's position at that moment.
        ``position``: where a hub started now begins reading (a position the stream has
        reached)."""
        with self.lock:
            hub = self.hubs.get(key)
            started = hub is None
            if started:
                hub = self.hubs[key] = Hub(self, key, position)
            feed = Feed(hub, viewer)
            hub.feeds.setdefault(viewer, []).append(feed)
            at = hub.position
        if started:
            threading.Thread(target=hub.run, name=f"sse-hub-{key}", daemon=True).start()
        return feed, at

    def leave(self, feed: Feed) -> None:
        with self.lock:
            feed.hub._drop(feed)

    def _remove(self, hub: Hub) -> None:
        """Lock held."""
        if self.hubs.get(hub.key) is hub:
            del self.hubs[hub.key]


def follow(hubs: Hubs, key: str, viewer: Viewer, after: Position) -> Iterator[bytes]:
    """The SSE body for one subscriber: every entry after ``after`` once and in order, as
    ``viewer`` may see it, keep-alive comments, then the end event if the stream ends. The
    store failing on the way (restarting, say) ends the body cleanly, logged in one line: the
    client resumes from the last ``id:`` it got (the ``retry:`` given first), as after any
    cut. The response has started, so it can no longer be a 503."""
    try:
        yield from _follow(hubs, key, viewer, after)
    except STORE_ERRORS as exc:
        log.warning("SSE stream of %s %s lost the store (%s); the client resumes",
                    hubs.source.kind, key, type(exc).__name__)


def _follow(hubs: Hubs, key: str, viewer: Viewer, after: Position) -> Iterator[bytes]:
    source = hubs.source
    keepalive_due = hubs.keepalive - hubs.tick  # what the hub's sweep wakes us for
    yield b"retry: 2000\n\n"

    def read(upto: Position | None = None) -> Iterator[bytes]:
        """Serve the stream after ``after`` (up to ``upto``) by reading it ourselves."""
        nonlocal after, last
        while True:
            batch = source.read(key, after, upto=upto, count=BATCH)
            if batch is None:
                return
            last = batch
            if data := served(source, encoded(source, batch, viewer), after):
                yield data
            after = batch.last
            if batch.size < BATCH:
                return

    while True:
        last = None
        yield from read()  # catching up
        end, start = source.settle(key, after, last)
        if end is not None:
            yield end
            return
        feed, at = hubs.join(key, viewer, start)
        try:
            if after < at:  # the hub is ahead of us: the gap is ours to read
                yield from read(at)
                feed.written = time.monotonic()
            state = LIVE
            while state == LIVE:
                items, state, end = feed.take()
                out = []
                for item in items:
                    if item.batch.last <= after:  # we were ahead of the hub: served already
                        continue
                    out.append(served(source, item, after))
                    after = item.batch.last
                if state == ENDED:
                    out.append(end)
                if out and (data := b"".join(out)):
                    yield data
                    feed.written = time.monotonic()
                elif state == LIVE and time.monotonic() >= feed.written + keepalive_due:
                    yield b": keep-alive\n\n"
                    feed.written = time.monotonic()
        finally:
            hubs.leave(feed)
        if state in (ENDED, FAILED):
            return
        # DETACHED: too far behind; read by ourselves from where we are, then join again
