"""The player stream, ``GET /v1/players/me/events/stream``.

Over HTTP with a real gunicorn (``live_url``): what each player hears about the games it plays
(invitations, starts, one ``your_turn`` per decision in a sequential and in a simultaneous game,
deadlines, finishes), compared with what the games' own views said after every command;
resuming with ``Last-Event-ID``; the errors. With the Flask test client on an app whose player
streams are capped small: the ``gap`` event. In process (as in test_stream_hub.py): one hub per
followed player whatever its number of subscribers, a gap a hub itself finds, a slow subscriber.
And two independent gunicorns on one Redis: the one serving a player's stream is killed -9 in
the middle of its games, the client resumes on the other, and what it received over both
connections is the player's stream exactly.
"""

from __future__ import annotations

import threading
import time

import pytest
import redis
import requests

from service.api.hub import Hubs
from service.api.sources import START, NoticeSource, StreamId
from service.app import create_app
from service.config import Config
from service.store.players import PlayerStore

from tests.api.helpers import auth
from tests.api.test_stream import parse
from tests.api.test_stream_hub import Gate, Sub, close_all, feeds, hub_threads, wait_for
from tests.reliability import procs

STREAM = "/v1/players/me/events/stream"


# -- driving games over HTTP ------------------------------------------------------------------
def call(url, method, path, token=None, **body):
    r = requests.request(method, url + path, headers=auth(token), json=body or None, timeout=30)
    assert r.status_code in (200, 201), (method, path, r.status_code, r.text)
    return r.json()


def new_player(url, name):
    return call(url, "POST", "/v1/players", name=name, kind="human")


def awaited(view):
    """The seats a game's view awaits, with their deadlines."""
    return {a["seat"]: a["deadline_at"] for a in view["awaiting"]}


class Game:
    """A game played through the API, remembering after every command its version, the seats
    it awaited (with their deadlines) and the seat that acted: what the notices are checked
    against."""

    def __init__(self, url, gid, tokens):
        self.url, self.gid, self.tokens = url, gid, tokens  # tokens: by seat
        view = self.view()
        self.history = [(view["version"], awaited(view), None)]
        self.status, self.result = view["status"], view["result"]

    def view(self):
        return call(self.url, "GET", f"/v1/games/{self.gid}")

    def step(self, seat=None, action=None, url=None) -> bool:
        """One command (by ``seat``, default the first awaited; ``action``, default its first
        legal action), through ``url`` (default the game's server); False once it is over."""
        if self.status != "active":
            return False
        url = url or self.url
        seat = min(self.history[-1][1]) if seat is None else seat
        token = self.tokens[seat]
        if action is None:
            path = f"/v1/games/{self.gid}/legal-actions"
            action = call(url, "GET", path, token)["actions"][0]
        call(url, "POST", f"/v1/games/{self.gid}/actions", token, action=action)
        view = call(url, "GET", f"/v1/games/{self.gid}")
        self.history.append((view["version"], awaited(view), seat))
        self.status, self.result = view["status"], view["result"]
        return True

    def finish(self):
        while self.step():
            pass

    def turns(self, seat):
        """The ``your_turn`` data ``seat`` is owed: each time it became awaited, or was
        awaited again right after its own decision."""
        out = []
        before = {}
        for version, awaiting, actor in self.history:
            if seat in awaiting and (seat not in before or seat == actor):
                out.append({"game_id": self.gid, "seat": seat, "version": version,
                            "deadline_at": awaiting[seat]})
            before = awaiting
        return out

    def decisions(self, seat):
        return sum(1 for _, _, actor in self.history if actor == seat)


class Listener(threading.Thread):
    """Follows a player's stream over HTTP, keeping every message but the comments, until
    ``close()`` (or until the connection breaks: ``broken``)."""

    def __init__(self, url, token, last_id=None):
        super().__init__(daemon=True)
        self.url, self.token, self.last_id = url, token, last_id
        self.got = []
        self.comments = 0
        self.broken = None
        self.stop = threading.Event()
        self.start()

    def run(self):
        headers = auth(self.token)
        if self.last_id is not None:
            headers["Last-Event-ID"] = self.last_id
        try:
            with requests.get(self.url + STREAM, headers=headers, stream=True,
                              timeout=30) as r:
                assert r.status_code == 200, r.text
                for message in parse(r.iter_lines()):
                    if self.stop.is_set():
                        return
                    if message[0] == "comment":
                        self.comments += 1
                    else:
                        self.got.append(message)
                self.broken = "ended"
        except requests.RequestException as exc:
            self.broken = exc

    def of(self, kind, game=None):
        return [d for ev, _, d in self.got if ev == kind and (game is None or
                                                              d["game_id"] == game.gid)]

    def wait_for(self, predicate, what, timeout=30):
        wait_for(lambda: predicate(self), timeout, what)

    def close(self):
        self.stop.set()
        self.join(10)  # a keep-alive comes within a second
        assert not self.is_alive()


@pytest.fixture
def listen():
    """``Listener(...)``, each stopped when the test ends, however it ends (an open stream
    would hold up the server's graceful shutdown)."""
    made = []

    def make(*args, **kwargs):
        made.append(Listener(*args, **kwargs))
        return made[-1]

    yield make
    for listener in made:
        listener.stop.set()
    for listener in made:
        listener.join(10)


def kinds(listener, game):
    return [ev for ev, _, d in listener.got if d.get("game_id") == game.gid]


# -- what players hear --------------------------------------------------------------------------
def test_invitations_start_at_the_last_join_and_a_simultaneous_game(live_url, listen):
    """Diamant, 3 players: every seat decides at once; one seat committing tells nobody
    anything, the reveal tells every seat still awaited once."""
    ada, bob, cy = (new_player(live_url, n) for n in ("Ada", "Bob", "Cy"))
    everyone = {p["id"]: listen(live_url, p["token"]) for p in (ada, bob, cy)}
    created = call(live_url, "POST", "/v1/games", ada["token"], type="diamant", players=[
        {"player": ada["id"]}, {"player": bob["id"]}, {"player": cy["id"]}])
    gid = created["id"]
    invitation = {"game_id": gid, "type": "diamant", "from": ada["id"]}
    for p in (bob, cy):
        everyone[p["id"]].wait_for(lambda s: s.of("invitation"), "the invitation")
        assert everyone[p["id"]].of("invitation") == [invitation]
    call(live_url, "POST", f"/v1/games/{gid}/join", bob["token"])
    call(live_url, "POST", f"/v1/games/{gid}/join", cy["token"])  # the last seat: the start
    game = Game(live_url, gid, [ada["token"], bob["token"], cy["token"]])
    start = game.history[0][0]
    for seat, p in enumerate((ada, bob, cy)):
        s = everyone[p["id"]]
        s.wait_for(lambda s: s.of("your_turn"), "the first turn")
        assert s.of("game_start") == [{"game_id": gid, "seat": seat, "type": "diamant"}]
        assert s.of("your_turn") == [{"game_id": gid, "seat": seat, "version": start,
                                      "deadline_at": None}]
    assert everyone[ada["id"]].of("invitation") == []

    game.step(0, {"type": "decide", "choice": "continue"})
    game.step(1, {"type": "decide", "choice": "continue"})
    game.step(2, {"type": "decide", "choice": "continue"})  # the reveal
    reveal = game.history[-1][0]
    assert reveal > game.history[1][0] > start
    for seat, s in enumerate(everyone.values()):
        s.wait_for(lambda s: len(s.of("your_turn")) == 2, "the turn after the reveal")
        assert [t["version"] for t in s.of("your_turn")] == [start, reveal]  # nothing between

    game.finish()
    for seat, s in enumerate(everyone.values()):
        s.wait_for(lambda s: s.of("game_finish"), "the end")
        assert s.of("your_turn") == game.turns(seat)
        assert s.of("game_finish") == [{"game_id": gid, "status": "finished",
                                        "result": game.result}]
        # a table is rated: the worker's rating notice may follow the finish
        assert [k for k in kinds(s, game) if k != "rating"][-1] == "game_finish"
        s.close()


def test_a_sequential_game_with_a_clock(live_url, listen):
    """Pharaoh's Wall against an anonymous seat, full at creation: the start comes with the
    creation, every turn once with the deadline the game's view gives, as many turns as
    decisions made, then the finish."""
    ada = new_player(live_url, "Ada")
    ada_hears = listen(live_url, ada["token"])
    created = call(live_url, "POST", "/v1/games", ada["token"], type="pharaohs-wall",
                   players=[{"player": ada["id"]}, {"name": "Host"}],
                   options={"clock": {"per_decision_ms": 3_600_000}})
    game = Game(live_url, created["id"], [ada["token"], created["seats"][1]["token"]])
    ada_hears.wait_for(lambda s: s.of("game_start"), "the start")
    assert ada_hears.of("game_start") == [{"game_id": game.gid, "seat": 0,
                                           "type": "pharaohs-wall"}]
    game.finish()
    ada_hears.wait_for(lambda s: s.of("game_finish"), "the end")
    ada_hears.close()
    turns = ada_hears.of("your_turn")
    assert turns == game.turns(0)
    assert len(turns) == game.decisions(0) > 10
    assert all(t["deadline_at"].endswith("Z") for t in turns)
    assert ada_hears.of("game_finish") == [{"game_id": game.gid, "status": "finished",
                                            "result": game.result}]
    assert kinds(ada_hears, game)[0] == "game_start" and kinds(ada_hears, game)[-1] == \
        "game_finish"


@pytest.mark.unswept  # the resigned seat's bot is played here, by no worker
def test_no_turn_is_told_for_a_seat_its_player_no_longer_plays(redis_url, queue_url):
    """After a resignation the seat is still awaited (its bot plays it), but the player whose
    token could not act there is told no ``your_turn`` for it; the others are, each decision."""
    from service.application import NullScheduler
    from service.application.players import PLATFORM

    svc = create_app(Config(redis_url=redis_url, queue_url=queue_url),
                     scheduler=NullScheduler()).extensions["cartouche"]
    ada, bob, cy = (svc.players.create(name, "human") for name in ("Ada", "Bob", "Cy"))
    gid = svc.create("diamant", [{"player": p["id"]} for p in (ada, bob, cy)], {}, None,
                     creator=PLATFORM)["id"]

    def turns(player):
        return [n.data["version"] for n in svc.player_store.notices_after(player["id"], "0-0",
                                                                           100)
                if n.type == "your_turn"]

    def step(bot_seat=None):
        """Every seat decides to go on (the bot's seat by its bot); the next decision's version."""
        for seat in (0, 1, 2):
            if seat == bot_seat:
                assert svc.play_bot(gid, seat, svc.load(gid).version)
            else:
                svc.act(gid, seat, {"type": "decide", "choice": "continue"}, None, None, None)
        table = svc.load(gid)
        assert table.awaiting() == [0, 1, 2] and table.status == "active"
        return table.version

    first = svc.load(gid).version
    second = step()
    svc.resign(gid, 0)
    third = step(bot_seat=0)
    assert turns(ada) == [first, second]
    assert turns(bob) == turns(cy) == [first, second, third]


def test_a_late_listener_tells_no_turn_older_than_one_told(redis_url, queue_url, monkeypatch):
    """One command's notices are written after those of the next commands (its thread was
    slow): its ``your_turn``, for decisions taken since, is not written after the newer ones;
    the game's end deletes the versions the seats' turns were told at."""
    from service.application import NullScheduler
    from service.application.notices import PlayerNotices
    from service.application.players import PLATFORM
    from service.store.players import turns as turns_key

    svc = create_app(Config(redis_url=redis_url, queue_url=queue_url),
                     scheduler=NullScheduler()).extensions["cartouche"]
    ada, bob, cy = (svc.players.create(name, "human") for name in ("Ada", "Bob", "Cy"))
    gid = svc.create("diamant", [{"player": p["id"]} for p in (ada, bob, cy)], {}, None,
                     creator=PLATFORM)["id"]
    first = svc.load(gid).version
    late, told = [], PlayerNotices.__call__

    def slow(self, table, *args, **kwargs):
        if not late and table.version > first and len(table.awaiting()) == 3:
            late.append(lambda: told(self, table, *args, **kwargs))  # written later
            return None
        return told(self, table, *args, **kwargs)

    def turns(player):
        return [n.data["version"] for n in svc.player_store.notices_after(player["id"], "0-0",
                                                                           100)
                if n.type == "your_turn"]

    def step():
        """Every seat goes on; the last decision deals the next card: every seat awaited."""
        for seat in (0, 1, 2):
            svc.act(gid, seat, {"type": "decide", "choice": "continue"}, None, None, None)
        assert svc.load(gid).awaiting() == [0, 1, 2]
        return svc.load(gid).version

    monkeypatch.setattr(PlayerNotices, "__call__", slow)
    step()  # its your_turn notices are held back
    latest = step()
    late[0]()  # and written now
    for p in (ada, bob, cy):
        assert turns(p) == [first, latest]  # before: [first, latest, the held-back version]
    r = redis.Redis.from_url(redis_url)
    assert r.hgetall(turns_key(ada["id"])) == {f"{gid}:0".encode(): str(latest).encode()}
    while not (table := svc.load(gid)).over:
        for seat in table.awaiting():
            action = table.game.legal_actions(table.state, seat)[0]
            svc.act(gid, seat, action, None, None, None)
            table = svc.load(gid)
            if table.over:
                break
    assert not any(r.exists(turns_key(p["id"])) for p in (ada, bob, cy))
    r.close()


def test_a_store_failing_under_a_stream_ends_its_body_cleanly_in_one_log_line(client,
                                                                          monkeypatch, caplog):
    """The response has started (200) when the store fails under it, a restart say: the body
    ends after what it sent (the client resumes from its last id), and the log says so in one
    WARNING line, no traceback."""
    import logging

    from service.api.sources import NoticeSource

    ada = client.post("/v1/players", json={"name": "Ada"}).get_json()

    def down(self, *args, **kwargs):
        raise redis.ConnectionError("Connection closed by server.")

    monkeypatch.setattr(NoticeSource, "read", down)
    with caplog.at_level(logging.WARNING, logger="cartouche.sse"):
        r = client.get(STREAM, headers=auth(ada["token"]), buffered=False)
        assert r.status_code == 200
        assert b"".join(r.response) == b"retry: 2000\n\n"
    lost = [rec for rec in caplog.records if rec.name == "cartouche.sse"]
    assert [rec.levelname for rec in lost] == ["WARNING"] and lost[0].exc_info is None
    assert "ConnectionError" in lost[0].getMessage()


# -- resuming, errors ---------------------------------------------------------------------------
def stored(redis_url, player_id):
    """The player's whole stream as Redis keeps it: (kind, id, data)."""
    client = redis.Redis.from_url(redis_url)
    try:
        page = PlayerStore(client).page(player_id, "0-0", count=100_000)
    finally:
        client.close()
    return [(n.type, n.id, n.data) for n in page.notices]


def test_resume_with_last_event_id_or_after(live_url, redis_url, listen):
    ada = new_player(live_url, "Ada")
    created = call(live_url, "POST", "/v1/games", ada["token"], type="tides-of-time",
                   players=[{"player": ada["id"]}, {"name": "Host"}])
    game = Game(live_url, created["id"], [ada["token"], created["seats"][1]["token"]])
    for _ in range(12):
        game.step()
    first = listen(live_url, ada["token"])
    first.wait_for(lambda s: len(s.got) >= 5, "a few notices")
    first.close()
    cut = first.got[4][1]
    game.finish()
    everything = stored(redis_url, ada["id"])
    assert everything[-1][0] == "game_finish"
    rest = listen(live_url, ada["token"], last_id=cut)
    rest.wait_for(lambda s: s.got[-1:] == everything[-1:], "the rest")
    idle = rest.comments
    rest.wait_for(lambda s: s.comments >= idle + 2, "keep-alives (1 s in the test server)", 5)
    rest.close()
    assert first.got[:5] + rest.got == everything
    with requests.get(f"{live_url}{STREAM}?after={cut}", headers=auth(ada["token"]),
                      stream=True, timeout=30) as r:
        again = []
        for message in parse(r.iter_lines()):
            if message[0] != "comment":
                again.append(message)
            if len(again) == len(rest.got):
                break
    assert again == rest.got


BAD_IDS = ["abc", "1", "1-2-3", "01-0", "1-01", "-1-0", "+1-0", "1_0-0", "1-0-",
           "18446744073709551616-0", "1-18446744073709551616"]


@pytest.mark.parametrize("bad", BAD_IDS + ["1-0 ", " 1-0", "\u0661-\u0660"])
def test_a_malformed_resume_id_is_a_400(client, bad):
    ada = client.post("/v1/players", json={"name": "Ada", "kind": "human"}).get_json()
    token = auth(ada["token"])
    ways = [{"headers": token, "query_string": {"after": bad}}]
    if bad in BAD_IDS:  # header values: ASCII, trimmed by servers
        ways.append({"headers": {**token, "Last-Event-ID": bad}})
    for way in ways:
        r = client.get(STREAM, **way)
        assert r.status_code == 400 and r.get_json()["error"]["code"] == "invalid_last_event_id"


def test_a_resume_after_the_last_id_redis_can_write_reads_nothing(client, svc):
    """``18446744073709551615-18446744073709551615`` is a well-formed id, the largest: nothing
    is after it. Reading after it is no notice (Redis refuses the exclusive range: the stream
    ended at once, and an EventSource reconnected for ever)."""
    from service.api.sources import LAST, NoticeSource, StreamId

    ada = client.post("/v1/players", json={"name": "Ada", "kind": "human"}).get_json()
    assert client.post("/v1/games", headers=auth(ada["token"]), json={
        "type": "tides-of-time", "players": [{"player": ada["id"]}, {"name": "Host"}]},
    ).status_code == 201
    source = NoticeSource(svc, None)
    assert source.read(ada["id"], StreamId(0, 0), count=10) is not None  # it has notices
    assert StreamId.parse(str(LAST)) == LAST
    assert source.read(ada["id"], LAST, count=10) is None


def test_the_stream_needs_a_player_token(client):
    assert client.get(STREAM).status_code == 401
    assert client.get(STREAM, headers=auth("cp_nobody")).status_code == 401
    seat_token = client.post("/v1/games", json={"type": "diamant", "players": [
        {"name": f"p{i}"} for i in range(3)]}).get_json()["seats"][0]["token"]
    assert client.get(STREAM, headers=auth(seat_token)).status_code == 401


def test_stream_ids_compare_as_the_stream_orders_them():
    assert StreamId.parse("10-0") > StreamId.parse("9-99") > StreamId.parse("9-2") > START
    assert str(StreamId.parse("1796179236822-12")) == "1796179236822-12"


# -- a capped stream: the gap -----------------------------------------------------------------
@pytest.fixture
def capped(redis_url, queue_url):
    """An app whose player streams keep 5 notices (Redis keeps whole nodes of 100 entries:
    between 100 and 200 stay)."""
    return create_app(Config(redis_url=redis_url, queue_url=queue_url, player_stream_max=5))


def read_messages(client, token, count, last_id=None):
    """The first ``count`` messages (comments aside) of the player's stream, through the Flask
    test client."""
    headers = auth(token)
    if last_id is not None:
        headers["Last-Event-ID"] = last_id
    r = client.get(STREAM, headers=headers, buffered=False)
    assert r.status_code == 200
    out, raw = [], b""
    try:
        for chunk in r.response:
            raw += chunk
            out = [m for m in parse(raw.decode().split("\n")) if m[0] != "comment"]
            if len(out) >= count:
                return out
    finally:
        r.close()
    return out


def test_a_resume_older_than_what_the_stream_kept_starts_with_a_gap(capped):
    client = capped.test_client()
    svc = capped.extensions["cartouche"]
    ada, bob = (client.post("/v1/players", json={"name": n, "kind": "human"}).get_json()
                for n in ("Ada", "Bob"))
    for _ in range(250):  # invitations: one notice each on Bob's stream
        r = client.post("/v1/games", headers=auth(ada["token"]), json={
            "type": "tides-of-time", "players": [{"player": ada["id"]}, {"player": bob["id"]}]})
        assert r.status_code == 201
    page = svc.player_store.page(bob["id"], "0-0", count=1000)
    kept = [("invitation", n.id, n.data) for n in page.notices]
    assert page.oldest == kept[0][1] and 5 <= len(kept) < 250
    lost = "1-0"  # older than anything kept
    got = read_messages(client, bob["token"], len(kept) + 1, last_id=lost)
    assert got == [("gap", None, {"after": lost, "oldest": kept[0][1]})] + kept
    got = read_messages(client, bob["token"], len(kept) + 1)  # from the start: the same
    assert got == [("gap", None, {"after": "0-0", "oldest": kept[0][1]})] + kept
    assert read_messages(client, bob["token"], len(kept) - 1, last_id=kept[0][1]) == kept[1:]


# -- the hubs, in process -------------------------------------------------------------------
@pytest.fixture
def gate(app):
    return Gate(app.extensions["cartouche_streams"])


def notify(svc, player, n, start=0):
    return [svc.player_store.notify(player, "ping", {"i": i}) for i in range(start, start + n)]


def last_id(sub):
    """The id of the last message a subscriber got; None before its first."""
    messages = sub.messages()
    return messages[-1][1] if messages else None


def served(sub):
    return [(ev, eid) for ev, eid, _ in sub.messages()]


def test_many_subscribers_of_one_player_share_one_hub_and_one_read(svc, gate, redis_url):
    hubs = Hubs(NoticeSource(svc, gate), keepalive_ms=500)
    first = notify(svc, "p-ada", 3)
    subs = [Sub(hubs, "p-ada", None, START) for _ in range(20)]
    subs.append(Sub(hubs, "p-ada", None, StreamId.parse(first[0])))  # resumes after one
    wait_for(lambda: len(feeds(hubs, "p-ada")) == len(subs), what="everybody on the hub")
    assert list(hubs.hubs) == ["p-ada"] and len(hub_threads("p-ada")) == 1
    r = redis.Redis.from_url(redis_url)
    before = r.info("commandstats").get("cmdstat_xread", {}).get("calls", 0)
    started = time.monotonic()
    ids = list(first)
    for i in range(10):
        ids += notify(svc, "p-ada", 1, start=3 + i)
        wait_for(lambda: all(last_id(s) == ids[-1] for s in subs))
    calls = r.info("commandstats").get("cmdstat_xread", {}).get("calls", 0) - before
    idle = (time.monotonic() - started) / hubs.tick
    r.close()
    assert calls <= 10 + idle + 5, (calls, idle)  # one XREAD per notice, not per subscriber
    close_all(subs)
    for s in subs[:-1]:
        assert s.error is None and served(s) == [("ping", i) for i in ids]
        assert [d["i"] for _, _, d in s.messages()] == list(range(13))
    assert served(subs[-1]) == [("ping", i) for i in ids[1:]]
    wait_for(lambda: not hub_threads("p-ada") and not hubs.hubs, timeout=5,
             what="the hub to stop with its last subscriber")
    again = Sub(hubs, "p-ada", None, StreamId.parse(ids[-1]))  # a new subscriber, a new hub
    wait_for(lambda: len(feeds(hubs, "p-ada")) == 1)
    last = notify(svc, "p-ada", 1, start=13)
    wait_for(lambda: served(again) == [("ping", last[0])])
    again.close()


def test_a_hub_that_finds_notices_dropped_tells_its_subscribers(redis_url, queue_url):
    app = create_app(Config(redis_url=redis_url, queue_url=queue_url, player_stream_max=5))
    svc = app.extensions["cartouche"]
    gate = Gate(app.extensions["cartouche_streams"])
    hubs = Hubs(NoticeSource(svc, gate), keepalive_ms=500)
    seen = notify(svc, "p-bob", 2)
    sub = Sub(hubs, "p-bob", None, START)
    wait_for(lambda: len(feeds(hubs, "p-bob")) == 1 and len(sub.messages()) == 2)
    gate.close()  # the hub waits before its next read while 300 notices come
    notify(svc, "p-bob", 300, start=2)
    page = svc.player_store.page("p-bob", "0-0", count=1000)
    assert page.oldest is not None and page.oldest not in seen
    gate.open()
    kept = [n.id for n in page.notices]
    wait_for(lambda: last_id(sub) == kept[-1])
    sub.close()
    assert sub.messages()[:3] == [("ping", seen[0], {"i": 0}), ("ping", seen[1], {"i": 1}),
                                  ("gap", None, {"after": seen[1], "oldest": kept[0]})]
    assert [eid for _, eid, _ in sub.messages()[3:]] == kept


def test_a_slow_subscriber_of_a_player_is_detached_and_misses_nothing(svc, gate):
    hubs = Hubs(NoticeSource(svc, gate), keepalive_ms=500, buffer=2)
    fast, slow = Sub(hubs, "p-cy", None, START), Sub(hubs, "p-cy", None, START)
    wait_for(lambda: len(feeds(hubs, "p-cy")) == 2)
    ids = notify(svc, "p-cy", 1)
    wait_for(lambda: len(slow.messages()) == 1)
    slow.running.clear()  # stops reading after its next chunk
    for i in range(8):
        ids += notify(svc, "p-cy", 1, start=1 + i)
        wait_for(lambda: last_id(fast) == ids[-1], timeout=5)
    wait_for(lambda: len(feeds(hubs, "p-cy")) == 1, timeout=5, what="the slow one detached")
    slow.running.set()
    wait_for(lambda: len(feeds(hubs, "p-cy")) == 2, what="the slow one back on the hub")
    ids += notify(svc, "p-cy", 2, start=9)
    wait_for(lambda: last_id(slow) == ids[-1] and last_id(fast) == ids[-1])
    for s in (fast, slow):
        s.close()
        assert [eid for _, eid, _ in s.messages()] == ids


# -- an API process killed mid-game -----------------------------------------------------------
def test_killing_the_process_serving_a_player_stream_loses_nothing(redis_url, queue_url, listen):
    """Two independent gunicorns on one Redis. Ada follows her stream on A while her three
    Tides of Time games against three other players go on through B; A is killed -9 in the
    middle; a few more commands go through B while she is away; she resumes on B with the
    last id she received. What she received over both connections is her whole stream."""
    a, a_url = procs.start_gunicorn(redis_url, queue_url, workers=1)
    b, b_url = procs.start_gunicorn(redis_url, queue_url, workers=1)
    try:
        ada = new_player(b_url, "Ada")
        on_a = listen(a_url, ada["token"])
        games = []
        for name in ("Bob", "Cy", "Dee"):
            other = new_player(b_url, name)
            gid = call(b_url, "POST", "/v1/games", ada["token"], type="tides-of-time",
                       players=[{"player": ada["id"]}, {"open": True}])["id"]
            call(b_url, "POST", f"/v1/games/{gid}/join", other["token"])
            games.append(Game(b_url, gid, [ada["token"], other["token"]]))

        def play(commands):
            for _ in range(commands):
                for game in games:
                    game.step()

        play(8)
        on_a.wait_for(lambda s: len(s.of("your_turn")) >= 8, "turns on A")
        for pid in [*procs.children(a.pid), a.pid]:
            procs.kill9(pid)
        on_a.join(15)
        assert on_a.broken is not None and not on_a.is_alive()
        play(3)  # while nobody listens
        on_b = listen(b_url, ada["token"], last_id=on_a.got[-1][1])
        play(100)
        assert all(game.status == "finished" for game in games)
        everything = stored(redis_url, ada["id"])
        on_b.wait_for(lambda s: s.got[-1:] == everything[-1:], "the last notice on B")
        on_b.close()
        assert on_a.got + on_b.got == everything
        assert len({eid for _, eid, _ in everything}) == len(everything)
        for seat_game in games:
            assert [d for ev, _, d in everything if ev == "your_turn"
                    and d["game_id"] == seat_game.gid] == seat_game.turns(0)
    finally:
        a.stop()
        b.stop()
