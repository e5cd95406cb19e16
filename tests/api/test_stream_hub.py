"""The SSE hub (service/api/hub.py) in process: one reader per game fanning events out to its
subscribers, with short keep-alives and small buffers so that every path is exercised quickly.

Subscribers are ``follow`` generators consumed by threads (the hub is a thread here; under
gunicorn both are greenlets, covered by tests/api/test_stream.py). Actions go through the Flask
test client of the same app. Checked: every event once and in order across the hand-over from
reading the stream to the hub's feed (both ways round), viewers with different redaction on one
hub, a slow subscriber detached without stalling anybody, the hub stopping with its last
subscriber, keep-alives, the end event, redaction as of now, and a failing hub.
"""

from __future__ import annotations

import json
import random
import threading
import time

import pytest

from service.api.hub import Hubs, follow
from service.api.sources import GameSource
from service.engine import ALL

from tests.api.helpers import act, create, event_id

KEEPALIVE_MS = 500
SEATS = 3


def parse(raw: bytes):
    """(event, id, data) of each SSE message; comments as ("comment", None, text)."""
    out = []
    for block in raw.decode().split("\n\n"):
        if not block:
            continue
        event, eid, data = None, None, None
        for line in block.split("\n"):
            if line.startswith(":"):
                out.append(("comment", None, line[1:].strip()))
            elif line.startswith("event: "):
                event = line[7:]
            elif line.startswith("id: "):
                eid = event_id(line[4:])
            elif line.startswith("data: "):
                data = json.loads(line[6:])
        if event:
            out.append((event, eid, data))
    return out


class Sub(threading.Thread):
    """Consumes one ``follow`` stream; ``pause``/``resume`` stop reading between two chunks
    (the generator then sits at a yield, like a greenlet blocked writing to a slow client)."""

    def __init__(self, hubs, gid, viewer, after=0):
        super().__init__(daemon=True)
        self.hubs, self.gid, self.viewer, self.after = hubs, gid, viewer, after
        self.raw = b""
        self.times: list[float] = []
        self.stop = threading.Event()
        self.running = threading.Event()
        self.running.set()
        self.finished = False
        self.error = None
        self.start()

    def run(self):
        gen = follow(self.hubs, self.gid, self.viewer, self.after)
        try:
            for chunk in gen:
                self.raw += chunk
                self.times.append(time.monotonic())
                self.running.wait()
                if self.stop.is_set():
                    break
            else:
                self.finished = True
        except Exception as exc:  # reported by the test
            self.error = exc
        finally:
            gen.close()

    def messages(self):
        return [m for m in parse(self.raw) if m[0] != "comment"]

    def events_bytes(self):
        """The stream without its keep-alive comments (their timing is each subscriber's)."""
        return self.raw.replace(b": keep-alive\n\n", b"")

    def versions(self):
        return [eid for ev, eid, _ in self.messages() if ev == "game_event"]

    def close(self):
        close_all([self])


def close_all(subs):
    """Stop reading (each notices at its next chunk: a keep-alive at the latest)."""
    for s in subs:
        s.stop.set()
        s.running.set()
    for s in subs:
        s.join(10)
        assert not s.is_alive()


def wait_for(predicate, timeout=15.0, what="condition"):
    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.01)


def feeds(hubs, gid):
    with hubs.lock:
        hub = hubs.hubs.get(gid)
        return [] if hub is None else [f for fs in hub.feeds.values() for f in fs]


def hub_threads(gid):
    return [t for t in threading.enumerate() if t.name == f"sse-hub-{gid}" and t.is_alive()]


class Gate:
    """Wraps the hubs' blocking reads (of games and of players): ``close()`` holds the hub
    before its next XREAD."""

    def __init__(self, inner):
        self.inner = inner
        self.open_ = threading.Event()
        self.open_.set()
        self.waiting = threading.Event()
        self.fail = False

    def __getattr__(self, name):  # read_after, read_notices
        read = getattr(self.inner, name)

        def gated(*args, **kwargs):
            if not self.open_.is_set():
                self.waiting.set()
                self.open_.wait()
                self.waiting.clear()
            if self.fail:
                raise ConnectionError("store unreachable")
            return read(*args, **kwargs)
        return gated

    def close(self):
        self.open_.clear()
        wait_for(self.waiting.is_set, what="the hub at the gate")

    def open(self):
        self.open_.set()


@pytest.fixture
def blocking(app):
    return Gate(app.extensions["cartouche_streams"])


@pytest.fixture
def hubs(svc, blocking):
    return Hubs(GameSource(svc, blocking), keepalive_ms=KEEPALIVE_MS, buffer=256)


class Table:
    """A Diamant game whose deal and players' choices both follow ``seed``, so that how long
    it lasts is the same at every run."""

    def __init__(self, client, svc, seed=1):
        self.client, self.svc = client, svc
        self.gid, self.tokens, _ = create(client, SEATS, seed=f"{seed:064x}")
        self.rnd = random.Random(seed)

    def version(self):
        return self.svc.store.version(self.gid)

    def play(self, commands=1):
        """Play up to ``commands`` commands; False once the game is over."""
        for _ in range(commands):
            view = self.client.get(f"/v1/games/{self.gid}").get_json()
            if view["status"] != "active":
                return False
            seat = self.rnd.choice([a["seat"] for a in view["awaiting"]])
            r = act(self.client, self.gid, self.tokens[seat],
                    self.rnd.choice(["continue", "return"]))
            assert r.status_code == 201, r.get_json()
        return True

    def finish(self):
        while self.play(20):
            pass
        return self.client.get(f"/v1/games/{self.gid}").get_json()


def test_viewers_with_different_redaction_share_one_hub(client, svc, hubs):
    t = Table(client, svc)
    viewers = [0, 1, 2, None, ALL] * 2
    subs = [Sub(hubs, t.gid, v) for v in viewers]
    wait_for(lambda: len(feeds(hubs, t.gid)) == len(subs), what="every subscriber on the hub")
    assert len(hubs.hubs) == 1 and len(hub_threads(t.gid)) == 1
    t.play(25)
    assert not svc.load(t.gid).over  # everything below is served while the game runs
    final = t.version()
    wait_for(lambda: all(s.versions()[-1:] == [final] for s in subs), what="every event")
    close_all(subs)
    for s in subs:
        assert s.error is None
        assert s.versions() == list(range(1, final + 1))
    by_viewer = {}
    for s in subs:
        by_viewer.setdefault(s.viewer, set()).add(s.events_bytes())
    assert all(len(raws) == 1 for raws in by_viewer.values())  # one class, the same bytes
    for viewer, (raw,) in by_viewer.items():
        events = [d for ev, _, d in parse(raw) if ev == "game_event"]
        for d in events:
            if d["type"] == "ChoiceCommitted":
                if viewer == ALL or viewer == d["seat"]:
                    assert d["data"]["choice"] in ("continue", "return")
                else:  # another seat's secret, or a spectator: never served
                    assert d["data"] == {}
            if d["type"] == "RoundStarted":
                assert ("deck" in d["data"]) == (viewer == ALL)
    assert len({raw for (raw,) in by_viewer.values()}) == len(by_viewer)


def test_hand_over_when_the_hub_is_ahead_reads_the_gap(client, svc, hubs):
    """The subscriber reached the end of the log, then the hub handed out more events before
    it registered: it reads that gap itself, then takes the hub's feed."""
    t = Table(client, svc)
    first = Sub(hubs, t.gid, None)
    wait_for(lambda: len(feeds(hubs, t.gid)) == 1)
    joined = {}
    real_join = hubs.join

    def late_join(gid, viewer, position):
        t.play(3)  # appended after the catch-up ended, read by the hub before we register
        wait_for(lambda: hubs.hubs[gid].position == t.version(), what="the hub to move on")
        feed, at = real_join(gid, viewer, position)
        joined.update(position=position, at=at)
        return feed, at

    hubs.join = late_join
    second = Sub(hubs, t.gid, 1)
    wait_for(lambda: "at" in joined, what="the late join")
    hubs.join = real_join
    assert joined["at"] > joined["position"]
    t.play(5)
    final = t.version()
    wait_for(lambda: second.versions()[-1:] == [final] and first.versions()[-1:] == [final])
    for s in (first, second):
        s.close()
        assert s.versions() == list(range(1, final + 1))


def test_hand_over_when_the_subscriber_is_ahead_skips_what_it_served(client, svc, hubs,
                                                                    blocking):
    """The hub has not read the newest events yet when a subscriber that already served them
    registers; the hub's next batch straddles its position."""
    t = Table(client, svc)
    first = Sub(hubs, t.gid, 0)
    wait_for(lambda: len(feeds(hubs, t.gid)) == 1)
    blocking.close()  # the hub is held before its next XREAD
    hub_at = hubs.hubs[t.gid].position
    t.play(3)
    ahead = t.version()
    second = Sub(hubs, t.gid, 0)
    wait_for(lambda: len(feeds(hubs, t.gid)) == 2, what="the second subscriber on the hub")
    assert second.versions() == list(range(1, ahead + 1)) and hub_at < ahead
    t.play(3)  # the hub's next read holds events on both sides of the subscriber's position
    blocking.open()
    t.play(4)
    final = t.version()
    wait_for(lambda: second.versions()[-1:] == [final] and first.versions()[-1:] == [final])
    for s in (first, second):
        s.close()
        assert s.versions() == list(range(1, final + 1))
    assert first.messages() == second.messages()


def test_a_slow_subscriber_is_detached_and_reads_by_itself(client, svc, blocking):
    hubs = Hubs(GameSource(svc, blocking), keepalive_ms=KEEPALIVE_MS, buffer=4)
    t = Table(client, svc)
    fast, slow = Sub(hubs, t.gid, None), Sub(hubs, t.gid, 2)
    wait_for(lambda: len(feeds(hubs, t.gid)) == 2)
    slow.running.clear()  # after its next chunk it stops reading: the generator waits at a yield
    t.play(1)
    wait_for(lambda: slow.versions()[-1:] == [t.version()])
    (slow_feed,) = [f for f in feeds(hubs, t.gid) if f.viewer == 2]
    for _ in range(12):  # more batches than the buffer holds; the fast one keeps up
        t.play(1)
        wait_for(lambda: fast.versions()[-1:] == [t.version()], timeout=5,
                 what="the fast subscriber, undisturbed")
    assert slow_feed.state == "detached" and not slow_feed.items  # backlog dropped
    assert [f.viewer for f in feeds(hubs, t.gid)] == [None]
    slow.running.set()  # reads the rest itself from its own position, then joins again
    wait_for(lambda: len(feeds(hubs, t.gid)) == 2, what="the slow subscriber back on the hub")
    t.play(3)
    final = t.version()
    wait_for(lambda: slow.versions()[-1:] == [final] and fast.versions()[-1:] == [final])
    for s in (fast, slow):
        s.close()
        assert s.versions() == list(range(1, final + 1))


def test_the_last_subscriber_leaving_stops_the_hub(client, svc, hubs):
    t = Table(client, svc)
    subs = [Sub(hubs, t.gid, None), Sub(hubs, t.gid, 1)]
    wait_for(lambda: len(feeds(hubs, t.gid)) == 2)
    # the first join registers its feed, then starts the hub's thread
    wait_for(lambda: hub_threads(t.gid), what="the hub's thread")
    assert len(hub_threads(t.gid)) == 1
    subs[0].close()
    t.play(2)
    wait_for(lambda: subs[1].versions()[-1:] == [t.version()])
    assert len(hub_threads(t.gid)) == 1
    subs[1].close()
    wait_for(lambda: not hub_threads(t.gid) and not hubs.hubs, timeout=5, what="the hub to stop")
    again = Sub(hubs, t.gid, None, after=t.version())  # a new subscriber starts a new hub
    wait_for(lambda: len(feeds(hubs, t.gid)) == 1)
    t.play(1)
    wait_for(lambda: again.versions()[-1:] == [t.version()])
    again.close()


def test_keep_alives_reach_every_idle_subscriber(client, svc, hubs):
    t = Table(client, svc)
    subs = [Sub(hubs, t.gid, v) for v in (None, 0, 1)]
    wait_for(lambda: len(feeds(hubs, t.gid)) == 3)
    start = time.monotonic()
    time.sleep(2.6)
    close_all(subs)
    for s in subs:
        comments = [m for m in parse(s.raw) if m[0] == "comment"]
        times = [start] + [x for x in s.times if x > start]
        gaps = [b - a for a, b in zip(times, times[1:])]
        assert len(comments) >= 4, (len(comments), gaps)
        assert max(gaps) < KEEPALIVE_MS / 1000 + 0.4, gaps


def test_the_end_event_follows_the_last_event_and_stops_the_hub(client, svc, hubs):
    t = Table(client, svc)
    subs = [Sub(hubs, t.gid, v) for v in (0, None)]
    wait_for(lambda: len(feeds(hubs, t.gid)) == 2)
    final = t.finish()
    for s in subs:
        s.join(15)
        assert s.finished and s.error is None
        msgs = s.messages()
        assert msgs[-1][0] == "end" and msgs[-1][1] == final["version"]
        assert msgs[-1][2] == {"status": "finished", "version": final["version"],
                               "result": final["result"]}
        assert s.versions() == list(range(1, final["version"] + 1))
    wait_for(lambda: not hub_threads(t.gid) and not hubs.hubs, timeout=5)
    late = Sub(hubs, t.gid, 1)  # after the end: read from the log, no hub
    late.join(15)
    assert late.finished and late.messages()[-1][0] == "end" and not hub_threads(t.gid)
    others = [d for ev, _, d in late.messages() if ev == "game_event"
              and d["type"] == "ChoiceCommitted" and d["seat"] != 1]
    assert others and all(d["data"]["choice"] in ("continue", "return") for d in others)


def test_redaction_as_of_now_through_the_hub(client, svc, hubs):
    """While the game runs a seat never gets another seat's choice; the batch read after the
    game ended (the final command's events) is public, like everything after the end."""
    t = Table(client, svc, seed=7)
    seat = Sub(hubs, t.gid, 1)
    wait_for(lambda: len(feeds(hubs, t.gid)) == 1)
    while True:  # one command per hub batch: wait for each before the next
        before_last = t.version()
        if not t.play(1):
            break
        if t.svc.load(t.gid).over:
            break
        wait_for(lambda: seat.versions()[-1:] == [t.version()])
    seat.join(15)
    assert seat.finished
    final = t.version()
    assert seat.versions() == list(range(1, final + 1))
    others = [d for ev, eid, d in seat.messages() if ev == "game_event" and eid <= before_last
              and d["type"] == "ChoiceCommitted" and d["seat"] != 1]
    assert others and all(d["data"] == {} for d in others)
    everything = Sub(hubs, t.gid, ALL)  # the public log, after the end
    everything.join(15)
    public = [m for m in everything.messages() if m[0] == "game_event" and m[1] > before_last]
    served = [m for m in seat.messages() if m[0] == "game_event" and m[1] > before_last]
    assert served == public  # the batch read once the game was over is public


def test_a_failing_hub_ends_its_streams(client, svc, hubs, blocking):
    t = Table(client, svc)
    subs = [Sub(hubs, t.gid, v) for v in (0, None)]
    wait_for(lambda: len(feeds(hubs, t.gid)) == 2)
    t.play(2)
    wait_for(lambda: all(s.versions()[-1:] == [t.version()] for s in subs))
    blocking.close()
    blocking.fail = True
    blocking.open()
    for s in subs:
        s.join(10)
        assert s.finished and s.error is None  # the stream ended; the client reconnects
        assert s.messages()[-1][0] == "game_event"
    assert not hubs.hubs
    blocking.fail = False
    resumed = Sub(hubs, t.gid, 0, after=subs[0].versions()[-1])  # as with Last-Event-ID
    t.play(2)
    wait_for(lambda: resumed.versions()[-1:] == [t.version()])
    resumed.close()
    assert subs[0].versions() + resumed.versions() == list(range(1, t.version() + 1))


def test_subscribers_joining_leaving_and_lagging_at_random_get_every_event_once(client, svc,
                                                                                 blocking):
    """Hand-overs at random moments while commands keep coming, to the end of the game:
    subscribers start at random positions, some drop and resume with their last id, some stall
    past a tiny buffer."""
    hubs = Hubs(GameSource(svc, blocking), keepalive_ms=KEEPALIVE_MS, buffer=2)
    t = Table(client, svc, seed=3)
    rnd = random.Random(11)
    t.play(5)
    sessions = []  # (viewer, [Sub, ...]): a subscriber and its resumptions

    def something(roll):
        if roll < 0.35 or not sessions:
            viewer = rnd.choice([0, 1, 2, None, ALL])
            sessions.append((viewer, [Sub(hubs, t.gid, viewer, rnd.randint(0, t.version()))]))
        elif roll < 0.55:
            viewer, chain = rnd.choice(sessions)
            last = chain[-1]
            last.close()
            got = last.versions()
            chain.append(Sub(hubs, t.gid, viewer, got[-1] if got else last.after))
        elif roll < 0.7:  # stops reading for a few commands (more than the buffer holds)
            s = rnd.choice(sessions)[1][-1]
            s.running.clear()
            stalled.append((step + rnd.randint(1, 6), s))

    stalled = []
    step = 0
    while t.play(1):
        step += 1
        for s in [s for until, s in stalled if until <= step]:
            s.running.set()
        something(rnd.random())
        something(rnd.random())
    final = t.version()
    assert len(sessions) >= 5 and sum(len(chain) - 1 for _, chain in sessions) >= 2
    for viewer, chain in sessions:
        chain[-1].running.set()
        chain[-1].join(30)
        assert chain[-1].finished and chain[-1].messages()[-1][:2] == ("end", final)
        for s in chain:
            s.close()
            assert s.error is None
        served = [v for s in chain for v in s.versions()]
        assert served == list(range(chain[0].after + 1, final + 1)), viewer
    wait_for(lambda: not hub_threads(t.gid), timeout=5)


def test_the_hub_reads_one_stream_entry_batch_per_event_for_everyone(client, svc, hubs,
                                                                      redis_url):
    """The point of the hub: a new event costs one XREAD per process, not one per
    subscriber."""
    import redis

    t = Table(client, svc)
    subs = [Sub(hubs, t.gid, v) for v in [0, 1, 2, None] * 5]
    wait_for(lambda: len(feeds(hubs, t.gid)) == len(subs))
    r = redis.Redis.from_url(redis_url)
    before = r.info("commandstats").get("cmdstat_xread", {}).get("calls", 0)
    start = time.monotonic()
    for _ in range(10):
        t.play(1)
        wait_for(lambda: all(s.versions()[-1:] == [t.version()] for s in subs))
    calls = r.info("commandstats").get("cmdstat_xread", {}).get("calls", 0) - before
    idle = (time.monotonic() - start) / hubs.tick  # a read ends empty every tick when idle
    r.close()
    close_all(subs)
    # one per command plus the idle ones (20 subscribers reading for themselves: >= 200)
    assert calls <= 10 + idle + 5, (calls, idle)
