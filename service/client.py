"""A small typed client for the Cartouche HTTP API (standard library only).

    from service.client import Client

    api = Client("http://127.0.0.1:8000")
    game = api.create("diamant", [{"name": "me"}, {"name": "R", "bot": {"level": "random"}}])
    me = api.as_seat(game["seats"][0]["token"])
    for item in me.stream(game["id"]):          # live events, resumed after a disconnect
        ...

Every method maps to one endpoint of ``openapi.yaml`` and returns the decoded JSON body, typed
with the ``TypedDict``s below. An error body (``{"error": {"code", "message", "details"}}``)
raises :class:`ApiError`; a server that cannot be reached raises :class:`ApiError` with code
``connection_failed`` (status 0), so callers handle one exception type.
"""

from __future__ import annotations

import json
import os
import socket
import time
import urllib.error
import urllib.parse
import urllib.request
from dataclasses import dataclass
from typing import Any, Iterator, NotRequired, TypedDict

DEFAULT_URL = "http://127.0.0.1:8000"

__all__ = [
    "DEFAULT_URL", "ApiError", "Client", "StreamItem",
    "GameType", "CreatedGame", "SeatToken", "GameSummary", "GameList", "GameView", "Seat",
    "Awaiting", "ClockView", "Result", "LegalActions", "Event", "ActionResponse", "EventPage",
    "Export", "VerifyResult", "Health",
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
    status: str
    version: int
    created_ms: int


class GameList(TypedDict):
    games: list[GameSummary]
    page: int
    per_page: int
    total: int


class Seat(TypedDict):
    seat: int
    name: str
    bot: dict[str, Any] | None
    controller: str


class Awaiting(TypedDict):
    seat: int
    deadline: str | None


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
    status: str                     # active | finished | aborted
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
    state: dict[str, Any]
    result: Result | None


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


@dataclass(frozen=True)
class StreamItem:
    """One message of the SSE stream: ``kind`` is ``"game_event"`` (``data`` an :class:`Event`)
    or ``"end"`` (``data``: ``{"status", "version", "result"}``); ``id`` is the version."""

    kind: str
    id: int | None
    data: dict[str, Any]


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
        reason = self.details.get("code") if isinstance(self.details, dict) else None
        if reason and reason != self.code:
            extra = f" ({reason})"
        return f"{head}: {self.message}{extra}"


def _error_from(status: int, body: bytes) -> ApiError:
    try:
        err = json.loads(body)["error"]
        return ApiError(str(err["code"]), str(err.get("message", "")), err.get("details") or {},
                        status)
    except (ValueError, KeyError, TypeError):
        text = body.decode("utf-8", "replace").strip().splitlines()
        return ApiError(f"http_{status}", text[0][:200] if text else "no error body", {}, status)


# --------------------------------------------------------------------------- the client

class Client:
    """One server, optionally one identity (a seat token or a platform key, sent as Bearer)."""

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

    def fork(self, game_id: str, at: int) -> CreatedGame:
        return self.request("POST", f"/v1/games/{_q(game_id)}/fork", {"at": at})

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

    # -- live stream

    def stream(self, game_id: str, after: int = 0, reconnect: bool = True,
               read_timeout: float = 60.0, max_retries: int = 20) -> Iterator[StreamItem]:
        """Follow ``GET /v1/games/{id}/events/stream``: yields every event after ``after`` once
        and in order, then the ``end`` item, and returns. A dropped connection is resumed with
        ``Last-Event-ID`` (up to ``max_retries`` consecutive failures), so nothing is missed or
        repeated. Keep-alive comments are swallowed."""
        last = after
        failures = 0
        while True:
            hdrs = self._headers({"Accept": "text/event-stream", "Last-Event-ID": str(last)})
            req = urllib.request.Request(self._url(f"/v1/games/{_q(game_id)}/events/stream"),
                                         headers=hdrs)
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
                time.sleep(min(2.0, 0.1 * 2 ** failures))
                continue
            try:
                with resp:
                    for item in _parse_sse(resp):
                        failures = 0
                        if item.id is not None and item.kind == "game_event":
                            last = item.id
                        yield item
                        if item.kind == "end":
                            return
            except (OSError, socket.timeout, ValueError):
                pass
            # The server closed the stream (or it broke) before the end: resume.
            failures += 1
            if not reconnect or failures > max_retries:
                raise ApiError("stream_interrupted", f"the event stream of {game_id} broke")
            time.sleep(min(2.0, 0.1 * 2 ** failures))


def _q(game_id: str) -> str:
    return urllib.parse.quote(str(game_id), safe="")


def _parse_sse(resp) -> Iterator[StreamItem]:
    """Minimal ``text/event-stream`` parser (fields event, id, data; comments ignored)."""
    kind, ev_id, data = "message", None, []
    while True:
        raw = resp.readline()
        if not raw:
            return
        line = raw.decode("utf-8").rstrip("\r\n")
        if not line:
            if data:
                payload = json.loads("\n".join(data))
                yield StreamItem(kind, int(ev_id) if ev_id and ev_id.isdigit() else None,
                                 payload)
            kind, ev_id, data = "message", None, []
            continue
        if line.startswith(":"):
            continue
        field, _, value = line.partition(":")
        value = value[1:] if value.startswith(" ") else value
        if field == "event":
            kind = value
        elif field == "id":
            ev_id = value
        elif field == "data":
            data.append(value)
