"""``Client.player_events()`` against a real gunicorn (``live_url``) through a TCP relay that can
cut every connection: the stream comes back by itself with ``Last-Event-ID``, and what was
notified meanwhile arrives once, in order."""

from __future__ import annotations

import socket
import threading

import pytest

from service.client import ApiError, Client, open_seat, player_seat


class Relay:
    """A TCP relay on 127.0.0.1 to ``upstream`` that keeps each connection's first bytes (the
    request head) and can cut every open connection at once."""

    def __init__(self, upstream: str, cut_first_body_after: int | None = None) -> None:
        #: cut the first answer this many bytes into its body (inside a chunk)
        self.cut_first_body_after = cut_first_body_after
        host, port = upstream.removeprefix("http://").split(":")
        self.upstream = (host, int(port))
        self.server = socket.create_server(("127.0.0.1", 0))
        self.url = f"http://127.0.0.1:{self.server.getsockname()[1]}"
        self.heads: list[bytes] = []
        self.open: list[socket.socket] = []
        self.lock = threading.Lock()
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        while True:
            try:
                near, _ = self.server.accept()
            except OSError:
                return
            far = socket.create_connection(self.upstream)
            with self.lock:
                self.open += [near, far]
            threading.Thread(target=self._pump, args=(near, far, True), daemon=True).start()
            threading.Thread(target=self._pump, args=(far, near, False), daemon=True).start()

    def _pump(self, src: socket.socket, dst: socket.socket, request: bool) -> None:
        first = request
        with self.lock:
            cut_at, answer = (None if request else self.cut_first_body_after), b""
            if cut_at is not None:
                self.cut_first_body_after = None
        try:
            while data := src.recv(65536):
                if first:
                    with self.lock:
                        self.heads.append(data)
                    first = False
                if cut_at is not None:
                    answer += data
                    head_end = answer.find(b"\r\n\r\n")
                    if head_end >= 0 and len(answer) >= head_end + 4 + cut_at:
                        dst.sendall(answer[:head_end + 4 + cut_at])
                        break
                    continue
                dst.sendall(data)
        except OSError:
            pass
        for sock in (src, dst):
            try:
                sock.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass

    def cut(self) -> None:
        with self.lock:
            cutting, self.open = self.open, []
        for sock in cutting:
            try:
                sock.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
            sock.close()

    def __enter__(self) -> Relay:
        return self

    def __exit__(self, *exc) -> None:
        self.cut()
        self.server.close()


def position(event_id: str) -> tuple[int, int]:
    """A Redis stream id (``"<ms>-<n>"``) as something ordered like the stream."""
    ms, _, n = event_id.partition("-")
    return int(ms), int(n)


def stream_heads(relay: Relay) -> list[bytes]:
    return [h for h in relay.heads if h.startswith(b"GET /v1/players/me/events/stream")]


def test_player_events_resume_after_a_cut_connection(live_url):
    api = Client(live_url)
    ada = api.as_seat(api.create_player("Ada")["token"])
    bob = api.create_player("Bob")
    with Relay(live_url) as relay:
        events = Client(relay.url, bob["token"]).player_events()
        game_id = ada.create("tides-of-time", [player_seat(ada.me()["id"]),
                                               player_seat(bob["id"])])["id"]
        invitation = next(events)
        assert invitation.kind == "invitation" and invitation.data["game_id"] == game_id
        relay.cut()
        # notified while bob's stream is down: the start, and bob's first turn
        assert api.as_seat(bob["token"]).join(game_id)["status"] == "active"
        start, turn = next(events), next(events)
        events.close()
    assert (start.kind, start.data["game_id"], start.data["seat"]) == ("game_start", game_id, 1)
    assert (turn.kind, turn.data["game_id"], turn.data["seat"]) == ("your_turn", game_id, 1)
    assert position(invitation.id) < position(start.id) < position(turn.id)
    heads = stream_heads(relay)
    assert len(heads) == 2
    assert b"last-event-id: " + invitation.id.encode() in heads[1].lower()


def test_player_events_start_after_a_given_id_and_refuse_bad_tokens(live_url):
    api = Client(live_url)
    ada = api.as_seat(api.create_player("Ada")["token"])
    ada_id = ada.me()["id"]
    first = ada.create("diamant", [player_seat(ada_id), open_seat(), open_seat()])["id"]
    second = ada.create("diamant", [player_seat(ada_id), open_seat(), open_seat()])["id"]
    for game_id in (first, second):
        for _ in range(2):
            api.join(game_id, name="Anon")
    seen = []
    for event in ada.player_events(last_event_id=None):
        seen.append(event)
        if event.kind == "your_turn" and event.data["game_id"] == second:
            break
    assert [(e.kind, e.data["game_id"]) for e in seen[-2:]] == [("game_start", second),
                                                                 ("your_turn", second)]
    after = seen[-3].id
    resumed = ada.player_events(last_event_id=after)
    assert [next(resumed).id, next(resumed).id] == [seen[-2].id, seen[-1].id]
    resumed.close()
    with pytest.raises(ApiError) as err:
        next(Client(live_url, "cp_nobody").player_events())
    assert err.value.status == 401


def test_player_events_resume_after_a_cut_inside_a_chunk(live_url):
    """The first answer is cut a few bytes into its body, inside its first chunk (urllib
    raises ``IncompleteRead``, not an ``OSError``): the stream comes back by itself."""
    api = Client(live_url)
    ada = api.as_seat(api.create_player("Ada")["token"])
    bob = api.create_player("Bob")
    game_id = ada.create("tides-of-time", [player_seat(ada.me()["id"]),
                                           player_seat(bob["id"])])["id"]
    with Relay(live_url, cut_first_body_after=6) as relay:
        events = Client(relay.url, bob["token"]).player_events()
        invitation = next(events)
        events.close()
    assert invitation.kind == "invitation" and invitation.data["game_id"] == game_id
    assert len(stream_heads(relay)) == 2
