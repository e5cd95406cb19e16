"""One reader per followed game per process, fanning the events out to its local SSE subscribers.

A subscriber (:func:`follow`) first catches up by itself: it reads the stream from its
``Last-Event-ID`` (``XRANGE``, a batch at a time) and serves what it read, until it reaches the
end of the log. Then it joins the game's :class:`Hub`, started by the first subscriber of that game
in this process: a thread (a greenlet under gunicorn's gevent workers, which monkey-patch
``threading``) that blocks in ``XREAD`` on the game's stream, loads the game once per batch,
redacts and SSE-encodes each event once per viewer class present (each seat, spectators,
platform keys) and hands those bytes to the subscribers of that class only. A new event so costs
one ``XREAD`` and one load per process, not per subscriber.

Hand-over without gaps or duplicates: joining records the hub's position (every event up to it has
been handed out before the subscriber was registered, every later one will be after). A subscriber
behind that position reads the gap itself first; one ahead of it (the hub has not read the newest
events yet) skips what it already served. Each subscriber keeps its own position.

A subscriber's backlog is bounded (``buffer`` batches). One that falls further behind (a slow
client) is detached, its backlog dropped, and goes back to reading the stream itself from its own
position, then joins again: the hub never waits for anybody, and memory stays bounded. If the
hub fails (Redis unreachable, say) its subscribers' streams end and clients reconnect with
``Last-Event-ID``. The hub stops when its last subscriber has left (after its current ``XREAD``)
or when it has handed out the ``end`` event of a finished game.

Redaction is "as of now", as for a single subscriber: each batch is served as the game is once
loaded at that batch or later, so a batch read after the end is public.
"""

from __future__ import annotations

import logging
import threading
import time
from collections import deque
from typing import Iterator

import orjson

from ..application import GameService
from ..engine import Viewer
from ..store.events import StreamFollower

log = logging.getLogger("cartouche.sse")

#: Stream entries per read (catch-up ``XRANGE`` and the hub's ``XREAD``).
BATCH = 200
#: Batches a subscriber may have waiting before it is detached to read the stream by itself.
BUFFER = 256
#: Handing a batch to a subscriber costs ~25 us of CPU (mostly the WSGI write and its syscall).
#: Successive hand-outs of a hub are spaced by 200 us per subscriber, 50 ms at most, so that its
#: fan-out stays within ~1/8 of a core; events arriving faster than that go out together. (One
#: subscriber: 0.2 ms; 250 in a process: 50 ms, only when events come that fast.)
COALESCE_PER_FEED = 0.0002
COALESCE_MAX = 0.05

LIVE, DETACHED, ENDED, FAILED = "live", "detached", "ended", "failed"


def sse(event: str, data, event_id: int | None = None) -> bytes:
    head = f"id: {event_id}\n" if event_id is not None else ""
    return f"{head}event: {event}\n".encode() + b"data: " + orjson.dumps(data) + b"\n\n"


def encode(svc: GameService, current, stored, viewer: Viewer) -> tuple[tuple[int, bytes], ...]:
    """(version, SSE bytes) of each stored event ``viewer`` may see, as of ``current``."""
    served = svc.served_events(current, [s.envelope for s in stored], stored[0].version, viewer)
    return tuple((ev["version"], sse("game_event", ev, ev["version"])) for ev in served)


def end_event(current) -> bytes:
    return sse("end", {"status": current.status, "version": current.version,
                       "result": current.result()}, current.version)


class Feed:
    """One subscriber's mailbox: batches ``(first, last, bytes, parts)`` of its viewer class,
    where ``parts`` are the (version, bytes) of the events in ``bytes``. The hub appends and
    wakes (with the lock held); the subscriber takes without the lock (``deque`` operations are
    atomic), so that waking hundreds of subscribers stays cheap."""

    def __init__(self, hub: "Hub", viewer: Viewer) -> None:
        self.hub, self.viewer = hub, viewer
        self.items: deque = deque()
        self.state = LIVE
        self.end = b""
        self.wake = threading.Event()
        #: When the subscriber last wrote (the hub wakes it when a keep-alive is due).
        self.written = time.monotonic()

    def put(self, item) -> bool:
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

    def take(self) -> tuple[list, str, bytes]:
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
    """The reader of one game in this process, and the feeds following it by viewer class."""

    def __init__(self, hubs: "Hubs", game_id: str, position: int) -> None:
        self.hubs, self.game_id = hubs, game_id
        #: Every event up to here has been handed to the registered feeds.
        self.position = position
        self.feeds: dict[Viewer, list[Feed]] = {}

    def run(self) -> None:
        hubs, svc = self.hubs, self.hubs.svc
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
                stored = hubs.blocking.read_after(self.game_id, after, count=BATCH,
                                                  block_ms=round(hubs.tick * 1000))
                if not stored:
                    continue
                last = stored[-1].version
                # the game as of this batch or later: redaction as of now
                current = svc.load_recent(self.game_id, last)
                with hubs.lock:
                    for viewer, feeds in list(self.feeds.items()):
                        parts = encode(svc, current, stored, viewer)
                        item = (stored[0].version, last, b"".join(b for _, b in parts), parts)
                        for feed in list(feeds):
                            if not feed.put(item):
                                self._drop(feed)
                    self.position = last
                    dispatched = time.monotonic()
                    if current.over and last >= current.version:
                        self._close_all(ENDED, end_event(current))
                        return
        except Exception:
            log.exception("SSE hub of game %s failed; its subscribers reconnect", self.game_id)
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
    """The hubs of one process (one app), by game id.

    ``keepalive_ms``: the longest silence on a stream; the hubs sweep for due keep-alives four
    times per period (their ``XREAD`` blocks that long). ``buffer``: batches a subscriber may
    have waiting before it is detached. ``blocking``: the hubs' reads of the streams."""

    def __init__(self, svc: GameService, blocking: StreamFollower, *, keepalive_ms: int,
                 buffer: int = BUFFER) -> None:
        self.svc, self.blocking, self.buffer = svc, blocking, buffer
        self.keepalive = keepalive_ms / 1000
        self.tick = self.keepalive / 4
        self.lock = threading.Lock()
        self.hubs: dict[str, Hub] = {}

    def join(self, game_id: str, viewer: Viewer, position: int) -> tuple[Feed, int]:
        """Register a subscriber; returns its feed and the hub's position at that moment.
        ``position``: where a hub started now begins reading (an event known to exist)."""
        with self.lock:
            hub = self.hubs.get(game_id)
            started = hub is None
            if started:
                hub = self.hubs[game_id] = Hub(self, game_id, position)
            feed = Feed(hub, viewer)
            hub.feeds.setdefault(viewer, []).append(feed)
            at = hub.position
        if started:
            threading.Thread(target=hub.run, name=f"sse-hub-{game_id}", daemon=True).start()
        return feed, at

    def leave(self, feed: Feed) -> None:
        with self.lock:
            feed.hub._drop(feed)

    def _remove(self, hub: Hub) -> None:
        """Lock held."""
        if self.hubs.get(hub.game_id) is hub:
            del self.hubs[hub.game_id]


def follow(hubs: Hubs, game_id: str, viewer: Viewer, after: int) -> Iterator[bytes]:
    """The SSE body for one subscriber: every event after ``after`` once and in order, as
    ``viewer`` may see it, keep-alive comments, then the end event."""
    svc = hubs.svc
    keepalive_due = hubs.keepalive - hubs.tick  # what the hub's sweep wakes us for
    yield b"retry: 2000\n\n"

    def read(upto: int | None = None) -> Iterator[bytes]:
        """Serve the stream after ``after`` (up to ``upto``) by reading it ourselves."""
        nonlocal after, current
        while True:
            stored = svc.store.read(game_id, after, upto, count=BATCH)
            if not stored:
                return
            current = svc.load_recent(game_id, stored[-1].version)
            data = b"".join(b for _, b in encode(svc, current, stored, viewer))
            if data:
                yield data
            after = stored[-1].version
            if len(stored) < BATCH:
                return

    while True:
        current = None
        yield from read()  # catching up
        if current is None:
            current = svc.load(game_id)
        if current.over and after >= current.version:
            yield end_event(current)
            return
        feed, at = hubs.join(game_id, viewer, min(after, current.version))
        try:
            if after < at:  # the hub is ahead of us: the gap is ours to read
                yield from read(at)
                feed.written = time.monotonic()
            state = LIVE
            while state == LIVE:
                items, state, end = feed.take()
                out = []
                for first, last, data, parts in items:
                    if last <= after:  # we were ahead of the hub: served already
                        continue
                    out.append(data if first > after else
                               b"".join(b for v, b in parts if v > after))
                    after = last
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
