"""A small typed client for the Cartouche HTTP API (standard library only).

    from service.client import Client

    api = Client("http://127.0.0.1:8000")
    game = api.create("diamant", [{"name": "me"}, {"name": "R", "bot": {"level": "random"}}])
    me = api.as_seat(game["seats"][0]["token"])
    for item in me.stream(game["id"]):          # live events, resumed after a disconnect
        ...

    ada = Client(api.url, api.create_player("Ada")["token"])   # a player: one token, many games
    table = ada.create_table("diamant", open=2)            # Ada in seat 0, two open seats
    for notice in ada.player_events():          # invitations, starts and turns of every game
        ...

Every method maps to one endpoint of ``openapi.yaml`` and returns the decoded JSON body, typed
with the ``TypedDict``s below. An error body (``{"error": {"code", "message", "details"}}``)
raises :class:`ApiError`; a server that cannot be reached raises :class:`ApiError` with code
``connection_failed`` (status 0), so callers handle one exception type.
"""

from __future__ import annotations

import http.client
import json
import os
import time
import urllib.error
import urllib.parse
import urllib.request
from contextlib import closing
from dataclasses import dataclass
from typing import Any, Iterator, NotRequired, Sequence, TypedDict

DEFAULT_URL = "http://127.0.0.1:8000"

__all__ = [
    "DEFAULT_URL", "ApiError", "Client", "StreamItem", "PlayerEvent",
    "open_seat", "player_seat",
    "GameType", "CreatedGame", "SeatToken", "GameSummary", "GameList", "GameView", "Seat",
    "Awaiting", "ClockView", "Result", "LegalActions", "Event", "ActionResponse", "EventPage",
    "Export", "VerifyResult", "Health", "CreatedPlayer", "PlayerGame", "PlayerProfile",
    "Joined",
]


# --------------------------------------------------------------------------- types (openapi.yaml)

class GameType(TypedDict):
    id: str
    name: str
    min_players: int
    max_players: int
    variants: list[dict[str, Any]]
    options: dict[str, Any]
    actions: dict[str, Any]


class SeatToken(TypedDict):
    seat: int
    name: str
    token: str


class CreatedGame(TypedDict):
    id: str
    version: int
    seats: list[SeatToken]
    seed_commitment: str


class GameSummary(TypedDict):
    id: str
    type: str
    status: str                     # waiting | active | finished | aborted
    version: int
    created_at: str                 # RFC 3339, UTC: 2026-12-02T09:14:03.512Z
    open_seats: NotRequired[int]    # tables only, as the three below
    seats: NotRequired[list[Seat]]
    options: NotRequired[dict[str, Any]]


class GameList(TypedDict):
    games: list[GameSummary]
    page: int
    per_page: int
    total: int


class Seat(TypedDict):
    seat: int
    name: str | None
    bot: dict[str, Any] | None
    controller: str                 # human | bot | open | ...
    player: NotRequired[str]        # the player holding the seat
    invited: NotRequired[str]       # an unfilled seat reserved for this player


class Awaiting(TypedDict):
    seat: int
    deadline_at: str | None         # RFC 3339; None without a clock


class ClockView(TypedDict):
    remaining_ms: list[int | None]
    per_decision_ms: int | None
    increment_ms: int
    timeout: str


class Result(TypedDict):
    scores: list[int]
    ranks: list[int]
    winners: list[int]
    details: dict[str, Any]


class GameView(TypedDict):
    id: str
    type: str
    status: str                     # waiting | active | finished | aborted
    version: int
    created_at: str | None
    players: list[Seat]
    you: int | None
    options: dict[str, Any]
    seed: str
    seed_commitment: str
    setup: str
    awaiting: list[Awaiting]
    clock: ClockView | None
    state: dict[str, Any] | None    # None while a table waits for players
    result: Result | None
    rematch_of: NotRequired[str]
    rematch: NotRequired[str]


class LegalActions(TypedDict):
    version: int
    seat: int | None
    actions: list[dict[str, Any]]


class Event(TypedDict):
    version: int
    type: str
    at: str | None
    seat: int | None
    data: dict[str, Any]
    forced: NotRequired[bool]
    timeout: NotRequired[bool]
    cmd: NotRequired[dict[str, Any]]     # exports only


class ActionResponse(TypedDict):
    version: int
    events: list[Event]


class EventPage(TypedDict):
    version: int
    events: list[Event]
    next_after: int


class Export(TypedDict):
    format: str
    id: str
    type: str
    status: str
    created_at: str | None
    players: list[dict[str, Any]]
    options: dict[str, Any]
    clock: dict[str, Any] | None
    seed: str
    seed_source: str
    seed_commitment: str
    forked_from: dict[str, Any] | None
    events: list[Event]
    result: Result | None


class VerifyResult(TypedDict):
    valid: bool
    version: int | None
    reason: str | None
    details: dict[str, Any]


class Health(TypedDict):
    status: str


class CreatedPlayer(TypedDict):
    id: str
    name: str
    kind: str                       # human | bot
    token: str                      # shown this once


class PlayerGame(TypedDict):
    id: str
    type: str
    status: str
    seats: list[int]


class PlayerProfile(TypedDict):
    id: str
    name: str
    kind: str
    created_at: str
    stats: dict[str, dict[str, Any]]
    games: NotRequired[list[PlayerGame]]       # me() only
    seeks: NotRequired[list[dict[str, Any]]]   # me() only


class Joined(TypedDict):
    seat: int
    token: str                      # the seat's own token (the player token also acts for it)
    status: str                     # "active" when this join filled the table
    version: int


@dataclass(frozen=True)
class StreamItem:
    """One message of a game's SSE stream: ``kind`` is ``"game_event"`` (``data`` an
    :class:`Event`) or ``"end"`` (``data``: ``{"status", "version", "result"}``); ``id`` is the
    version."""

    kind: str
    id: int | None
    data: dict[str, Any]


@dataclass(frozen=True)
class PlayerEvent:
    """One notification of the player stream. ``kind`` and ``data``:

    - ``invitation`` ``{"game_id", "type", "from"}``: a table reserved a seat for you;
    - ``game_start`` ``{"game_id", "seat", "type"}``: a game you hold a seat of began;
    - ``your_turn`` ``{"game_id", "seat", "version", "deadline_at"}``: once per decision;
    - ``game_finish`` ``{"game_id", "status", "result"}``: a game of yours ended;
    - ``gap`` ``{"after", "oldest"}``: notifications after ``after`` were dropped before this
      client came back for them (``GET /v1/players/me`` tells what is going on).

    ``id`` is the notification's stream id (``"1733100000000-0"``): give it back as
    ``player_events(last_event_id=...)`` to go on after it later."""

    kind: str
    id: str | None
    data: dict[str, Any]


@dataclass(frozen=True)
class _Message:
    """One message of a ``text/event-stream`` as sent: its ``event``, ``id`` and decoded
    JSON ``data``."""

    event: str
    id: str | None
    data: Any


# --------------------------------------------------------------------------- errors

class ApiError(Exception):
    """An error answer of the API, or ``connection_failed`` (status 0) when nothing answered."""

    def __init__(self, code: str, message: str, details: dict | None = None,
                 status: int = 0) -> None:
        super().__init__(f"{code}: {message}")
        self.code = code
        self.message = message
        self.details = details or {}
        self.status = status

    def __str__(self) -> str:
        head = f"{self.status} {self.code}" if self.status else self.code
        extra = ""
        details = self.details if isinstance(self.details, dict) else {}
        reason = details.get("code")
        if reason and reason != self.code:
            extra = f" ({reason})"
        fields = details.get("fields")
        if isinstance(fields, dict) and fields:  # which fields the schema refused, and why
            said = "; ".join(f"{name}: {' '.join(map(str, why)) if isinstance(why, list) else why}"
                             for name, why in list(fields.items())[:5])
            extra += f" ({said[:300]})"
        return f"{head}: {self.message}{extra}"


def _error_from(status: int, body: bytes) -> ApiError:
    try:
        err = json.loads(body)["error"]
        return ApiError(str(err["code"]), str(err.get("message", "")), err.get("details") or {},
                        status)
    except (ValueError, KeyError, TypeError):
        text = body.decode("utf-8", "replace").strip().splitlines()
        return ApiError(f"http_{status}", text[0][:200] if text else "no error body", {}, status)


# --------------------------------------------------------------------------- seats of a table

def open_seat() -> dict:
    """A seat anyone may join (``POST /v1/games/{id}/join``)."""
    return {"open": True}


def player_seat(player_id: str) -> dict:
    """The creator's own seat (its own id), a built-in bot player's (``bot-random``,
    ``bot-heuristic``, ``bot-mcts``), or a seat reserved for another player, who gets an
    ``invitation``."""
    return {"player": player_id}


# --------------------------------------------------------------------------- the client

class Client:
    """One server, optionally one identity sent as Bearer: a seat token, a player token (it acts
    for every seat its player holds) or a platform key."""

    def __init__(self, url: str | None = None, token: str | None = None,
                 timeout: float = 30.0) -> None:
        self.url = (url or os.environ.get("CARTOUCHE_URL") or DEFAULT_URL).rstrip("/")
        self.token = token
        self.timeout = timeout

    def as_seat(self, token: str | None) -> "Client":
        """The same server seen as another identity (``None``: a spectator)."""
        return Client(self.url, token, self.timeout)

    # -- plumbing

    def _headers(self, extra: dict | None = None) -> dict:
        headers = {"Accept": "application/json"}
        if self.token:
            headers["Authorization"] = f"Bearer {self.token}"
        if extra:
            headers.update(extra)
        return headers

    def _url(self, path: str, query: dict | None = None) -> str:
        url = self.url + path
        if query:
            query = {k: v for k, v in query.items() if v is not None}
            if query:
                url += "?" + urllib.parse.urlencode(query)
        return url

    def request(self, method: str, path: str, body: Any = None, query: dict | None = None,
                headers: dict | None = None) -> Any:
        """Send one request and return its decoded JSON body (raise :class:`ApiError`)."""
        data = None
        hdrs = self._headers(headers)
        if body is not None:
            data = json.dumps(body).encode()
            hdrs["Content-Type"] = "application/json"
        req = urllib.request.Request(self._url(path, query), data=data, method=method,
                                     headers=hdrs)
        try:
            with urllib.request.urlopen(req, timeout=self.timeout) as resp:
                raw = resp.read()
        except urllib.error.HTTPError as exc:
            raise _error_from(exc.code, exc.read()) from None
        except (urllib.error.URLError, OSError) as exc:
            reason = getattr(exc, "reason", exc)
            raise ApiError("connection_failed", f"cannot reach {self.url} ({reason})") from None
        try:
            return json.loads(raw) if raw else None
        except ValueError:
            raise ApiError("invalid_response", f"not JSON from {method} {path}") from None

    # -- catalog and games

    def game_types(self) -> list[GameType]:
        return self.request("GET", "/v1/game-types")["game_types"]

    def create(self, type: str, players: list[dict], options: dict | None = None,
               seed: str | None = None) -> CreatedGame:
        body: dict[str, Any] = {"type": type, "players": players}
        if options is not None:
            body["options"] = options
        if seed is not None:
            body["seed"] = seed
        return self.request("POST", "/v1/games", body)

    def bulk_create(self, games: list[dict]) -> list[CreatedGame]:
        """All or none: each entry is a creation body ``{"type", "players", ...}``."""
        return self.request("POST", "/v1/games/bulk", {"games": games})["games"]

    def list_games(self, type: str | None = None, status: str | None = None, page: int = 1,
                   per_page: int | None = None) -> GameList:
        return self.request("GET", "/v1/games", query={"type": type, "status": status,
                                                       "page": page, "per_page": per_page})

    def get(self, game_id: str) -> GameView:
        return self.request("GET", f"/v1/games/{_q(game_id)}")

    def state(self, game_id: str, version: int) -> GameView:
        """The caller's view as it was at ``version``."""
        return self.request("GET", f"/v1/games/{_q(game_id)}/states/{int(version)}")

    def legal_actions(self, game_id: str) -> LegalActions:
        return self.request("GET", f"/v1/games/{_q(game_id)}/legal-actions")

    def act(self, game_id: str, action: dict, expected_version: int | None = None,
            idempotency_key: str | None = None) -> ActionResponse:
        body: dict[str, Any] = {"action": action}
        if expected_version is not None:
            body["expected_version"] = expected_version
        headers = {"Idempotency-Key": idempotency_key} if idempotency_key else None
        return self.request("POST", f"/v1/games/{_q(game_id)}/actions", body, headers=headers)

    def resign(self, game_id: str) -> GameView:
        return self.request("POST", f"/v1/games/{_q(game_id)}/resign")

    def abort(self, game_id: str) -> GameView:
        return self.request("POST", f"/v1/games/{_q(game_id)}/abort")

    def fork(self, game_id: str, version: int) -> CreatedGame:
        return self.request("POST", f"/v1/games/{_q(game_id)}/fork", {"version": version})

    # -- players

    def create_player(self, name: str, kind: str = "human") -> CreatedPlayer:
        """A new player (``kind``: ``"human"`` or ``"bot"``) and its token, shown this once:
        ``Client(url, token)`` then acts as that player."""
        return self.request("POST", "/v1/players", {"name": name, "kind": kind})

    def player(self, player_id: str) -> PlayerProfile:
        """A player's public profile."""
        return self.request("GET", f"/v1/players/{_q(player_id)}")

    def me(self) -> PlayerProfile:
        """The caller's profile (a player token), with the tables and games it is in."""
        return self.request("GET", "/v1/players/me")

    # -- seeks

    def seek(self, type: str, seats: int | Sequence[int], options: dict | None = None,
             rating_range: Sequence[float] | None = None,
             fill_with_bots: dict | None = None) -> dict[str, Any]:
        """Ask for a game (a player token): ``seats`` a count or ``[min, max]``; the seek as it
        stands, already ``matched`` (``game_id``, ``seat``) when the request found a group."""
        body: dict[str, Any] = {"type": type, "options": options or {},
                                "seats": seats if isinstance(seats, int) else list(seats)}
        if rating_range is not None:
            body["rating_range"] = list(rating_range)
        if fill_with_bots is not None:
            body["fill_with_bots"] = fill_with_bots
        return self.request("POST", "/v1/seeks", body)

    def get_seek(self, seek_id: str) -> dict[str, Any]:
        return self.request("GET", f"/v1/seeks/{_q(seek_id)}")

    def cancel_seek(self, seek_id: str) -> dict[str, Any]:
        """Cancel a waiting seek (409 ``seek_matched`` when it was matched first)."""
        return self.request("DELETE", f"/v1/seeks/{_q(seek_id)}")

    def seeks(self, type: str | None = None) -> dict[str, Any]:
        """The waiting seeks (of ``type``)."""
        return self.request("GET", "/v1/seeks", query={"type": type})

    def leaderboard(self, rating_type: str, limit: int | None = None,
                    offset: int | None = None) -> dict[str, Any]:
        """Players by rating in ``rating_type`` (a game type, or ``scarabya-duel``): the
        established ones from ``offset``, and the provisional ones apart."""
        return self.request("GET", f"/v1/leaderboards/{_q(rating_type)}",
                            query={"limit": limit, "offset": offset})

    # -- tables

    def create_table(self, type: str, open: int = 0, invite: Sequence[str] = (),
                     options: dict | None = None, seed: str | None = None) -> CreatedGame:
        """A table with the caller's player in seat 0 (a player token), then one seat per id
        of ``invite`` (reserved for that player, or a built-in bot player seated at once),
        then ``open`` open seats. It waits (``status: "waiting"``) until every seat is held."""
        seats = [player_seat(self.me()["id"]), *map(player_seat, invite),
                 *(open_seat() for _ in range(open))]
        return self.create(type, seats, options, seed)

    def lobby(self, type: str | None = None, page: int = 1,
              per_page: int | None = None) -> GameList:
        """Tables waiting for players, newest first; each entry has ``open_seats``, ``seats``
        (who sits where) and ``options``."""
        return self.list_games(type, "waiting", page, per_page)

    def join(self, game_id: str, seat: int | None = None, name: str | None = None) -> Joined:
        """Take a seat of a waiting table: with a player token, the seat reserved for it or an
        open one (``seat`` picks one); without a token, an open seat under ``name``. The join
        that fills the table starts the game (``status: "active"``)."""
        body: dict[str, Any] = {}
        if seat is not None:
            body["seat"] = seat
        if name is not None:
            body["name"] = name
        return self.request("POST", f"/v1/games/{_q(game_id)}/join", body)

    def leave(self, game_id: str) -> GameView:
        """Give the caller's seat of a waiting table back."""
        return self.request("POST", f"/v1/games/{_q(game_id)}/leave")

    def decline(self, game_id: str) -> GameView:
        """Turn down an invitation (the seat opens, or the table is aborted)."""
        return self.request("POST", f"/v1/games/{_q(game_id)}/decline")

    def rematch(self, game_id: str) -> CreatedGame:
        """The rematch of a finished game: a new table, the same players invited, seats
        rotated; asking again (from any seat) returns the same one."""
        return self.request("POST", f"/v1/games/{_q(game_id)}/rematch")

    # -- logs, exports

    def events(self, game_id: str, after: int = 0, limit: int = 100) -> EventPage:
        return self.request("GET", f"/v1/games/{_q(game_id)}/events",
                            query={"after": after, "limit": limit})

    def all_events(self, game_id: str, after: int = 0) -> Iterator[Event]:
        """Every event after ``after`` (as the caller may see it), page by page."""
        while True:
            page = self.events(game_id, after, 1000)
            yield from page["events"]
            if not page["events"] or page["next_after"] >= page["version"]:
                return
            after = page["next_after"]

    def export(self, game_id: str) -> Export:
        return self.request("GET", f"/v1/games/{_q(game_id)}/export")

    def verify(self, export: dict) -> VerifyResult:
        """Server-side verification (``service.replay.verify`` does the same offline)."""
        return self.request("POST", "/v1/replays/verify", export)

    # -- health

    def health(self) -> Health:
        return self.request("GET", "/healthz")

    def ready(self) -> Health:
        return self.request("GET", "/readyz")

    # -- live streams

    def stream(self, game_id: str, after: int = 0, reconnect: bool = True,
               read_timeout: float = 60.0, max_retries: int = 20) -> Iterator[StreamItem]:
        """Follow ``GET /v1/games/{id}/events/stream``: yields every event after ``after`` once
        and in order, then the ``end`` item, and returns (without an ``end`` item when
        ``after`` is at or past the end's id, or the connection dropped between the last event
        and the end: the server answers the resumption 204). A dropped connection is resumed with
        ``Last-Event-ID`` (up to ``max_retries`` consecutive failures), so nothing is missed or
        repeated. Keep-alive comments are swallowed."""
        return self._versioned(f"/v1/games/{_q(game_id)}/events/stream", after, reconnect,
                               read_timeout, max_retries)

    def _versioned(self, path: str, after: int, reconnect: bool, read_timeout: float,
                   max_retries: int) -> Iterator[StreamItem]:
        """The items of a stream whose ids are versions, up to its ``end`` item."""
        messages = self._follow_sse(path, str(after), reconnect, read_timeout, max_retries)
        with closing(messages):
            for message in messages:
                item = StreamItem(message.event, _version(message.id), message.data)
                yield item
                if item.kind == "end":
                    return

    def create_tournament(self, body: dict[str, Any]) -> dict[str, Any]:
        """``POST /v1/tournaments``: the tournament, its first round paired."""
        return self.request("POST", "/v1/tournaments", body)

    def tournament(self, tid: str) -> dict[str, Any]:
        return self.request("GET", f"/v1/tournaments/{_q(tid)}")

    def tournament_export(self, tid: str) -> dict[str, Any]:
        return self.request("GET", f"/v1/tournaments/{_q(tid)}/export")

    def tournament_stream(self, tid: str, after: int = 0, reconnect: bool = True,
                          read_timeout: float = 60.0,
                          max_retries: int = 20) -> Iterator[StreamItem]:
        """Follow ``GET /v1/tournaments/{id}/events/stream`` as :meth:`stream` does a game's:
        each event (its data: the event and the standings after it), then ``end``."""
        return self._versioned(f"/v1/tournaments/{_q(tid)}/events/stream", after, reconnect,
                               read_timeout, max_retries)

    def player_events(self, last_event_id: str | None = None, reconnect: bool = True,
                      read_timeout: float = 60.0,
                      max_retries: int = 20) -> Iterator[PlayerEvent]:
        """Follow ``GET /v1/players/me/events/stream`` (a player token) for as long as the
        caller iterates: every notification of every game of the player, once and in order.
        ``last_event_id`` goes on after that notification; without it the stream starts at the
        oldest notification the server keeps. A dropped connection is resumed with
        ``Last-Event-ID`` (up to ``max_retries`` consecutive attempts that bring nothing,
        keep-alives included)."""
        messages = self._follow_sse("/v1/players/me/events/stream", last_event_id,
                                    reconnect, read_timeout, max_retries)
        with closing(messages):
            for message in messages:
                yield PlayerEvent(message.event, message.id, message.data)

    def _follow_sse(self, path: str, last_event_id: str | None, reconnect: bool,
                    read_timeout: float, max_retries: int) -> Iterator[_Message]:
        """Read the event stream at ``path`` for as long as the caller iterates, the way a
        browser's ``EventSource`` does: every message with an ``id:`` moves the resume point,
        and a connection that ends or breaks is opened again with ``Last-Event-ID`` set to it,
        after a short backoff. An error answer raises :class:`ApiError` at once; so do
        ``max_retries`` consecutive attempts that connect to nothing or read nothing (a
        keep-alive comment counts as something). A 204 (a stream resumed at or after its end)
        ends it."""
        failures = 0
        while True:
            hdrs = self._headers({"Accept": "text/event-stream"})
            if last_event_id is not None:
                hdrs["Last-Event-ID"] = last_event_id
            req = urllib.request.Request(self._url(path), headers=hdrs)
            try:
                resp = urllib.request.urlopen(req, timeout=read_timeout)
            except urllib.error.HTTPError as exc:
                raise _error_from(exc.code, exc.read()) from None
            except (urllib.error.URLError, OSError) as exc:
                failures += 1
                if not reconnect or failures > max_retries:
                    reason = getattr(exc, "reason", exc)
                    raise ApiError("connection_failed",
                                   f"cannot reach {self.url} ({reason})") from None
                time.sleep(_backoff(failures))
                continue
            if resp.status == 204:                   # nothing after the resume point: over
                resp.close()
                return
            try:
                with resp:
                    for message in _read_sse(resp):
                        failures = 0
                        if message is None:          # a keep-alive comment
                            continue
                        if message.id is not None:
                            last_event_id = message.id
                        yield message
            # socket.timeout is an OSError; a cut inside a chunk an IncompleteRead
            except (OSError, ValueError, http.client.HTTPException):
                pass
            failures += 1
            if not reconnect or failures > max_retries:
                raise ApiError("stream_interrupted", f"the event stream {path} broke")
            time.sleep(_backoff(failures))


def _q(game_id: str) -> str:
    return urllib.parse.quote(str(game_id), safe="")


def _version(event_id: str | None) -> int | None:
    return int(event_id) if event_id and event_id.isdigit() else None


def _backoff(failures: int) -> float:
    return min(2.0, 0.1 * 2 ** failures)


def _read_sse(resp) -> Iterator[_Message | None]:
    """Minimal ``text/event-stream`` parser (fields event, id, data): yields each message, and
    None for each comment line (the server's keep-alives), so a reader knows the connection
    lives."""
    kind, ev_id, data = "message", None, []
    while True:
        raw = resp.readline()
        if not raw:
            return
        line = raw.decode("utf-8").rstrip("\r\n")
        if not line:
            if data:
                yield _Message(kind, ev_id, json.loads("\n".join(data)))
            kind, ev_id, data = "message", None, []
            continue
        if line.startswith(":"):
            yield None
            continue
        field, _, value = line.partition(":")
        value = value[1:] if value.startswith(" ") else value
        if field == "event":
            kind = value
        elif field == "id":
            ev_id = value
        elif field == "data":
            data.append(value)
