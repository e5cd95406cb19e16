"""/v1/tournaments: round robin and Swiss tournaments paired by the server
(``application.tournaments``)."""

from __future__ import annotations

from dataclasses import dataclass

from marshmallow import fields, validate

from ..application import GameService
from ..application.players import PLATFORM
from ..engine import Viewer
from ..engine.tournament import Tournament
from ..schemas import GamesQuerySchema, JsonInteger, List, Query, Strict, Timestamp
from ..schemas import tournaments as s
from ..store.events import StreamFollower
from ..store.tournaments import read_blocking
from ..timestamps import rfc3339
from . import Blueprint, json_response, ratelimit
from .errors import STORE_DOC, alt_errors
from .games import _require_creator, service
from .hub import sse
from .stream import (CAPPED, ENDED, RESUME_AFTER_VERSION, _version, app_hubs, event_stream,
                     resume_after)

blp = Blueprint("tournaments", __name__, url_prefix="/v1/tournaments",
                description="Tournaments: rounds paired by the server, duplicate deals")

ERRORS = {400: "invalid request, or a bad `Last-Event-ID`", 401: "invalid token",
          403: "`platform_key_required` (where platform keys are configured)",
          404: "`tournament_not_found`",
          409: "`game_not_finished`: the tournament is still running",
          422: "`unknown_game_type`, `invalid_player_count` (seats_per_game), "
               "`invalid_options`, `invalid_format`, `invalid_rounds`, "
               "`duplicate_participant`, `invalid_participant_count`, `too_many_games`, "
               "`player_not_found` (`details.index`)",
          429: "`rate_limited`: the caller's writes are over their limit (see Retry-After)",
          503: STORE_DOC + "; or `tournaments_full` (see Retry-After)"}


class TournamentsQuerySchema(GamesQuerySchema):
    """``GET /v1/games``' paging; no type filter, the tournaments' statuses."""

    class Meta(Query.Meta):
        exclude = ("type",)

    status = fields.String(validate=validate.OneOf(["running", "finished"]))


class TournamentSummarySchema(Strict):
    id = fields.String(required=True)
    name = fields.String(required=True)
    type = fields.String(required=True)
    format = fields.String(required=True)
    status = fields.String(required=True, validate=validate.OneOf(["running", "finished"]))
    rounds_total = JsonInteger(required=True)
    participants = JsonInteger(required=True, metadata={"description": "how many"})
    duplicate = fields.Boolean(required=True)
    created_at = Timestamp(required=True)


class TournamentListSchema(Strict):
    tournaments = List(fields.Nested(TournamentSummarySchema), required=True)
    page = JsonInteger(required=True)
    per_page = JsonInteger(required=True)
    total = JsonInteger(required=True)


@blp.route("", methods=["GET"])
@blp.arguments(TournamentsQuerySchema, location="query", error_status_code=400)
@blp.response(200, TournamentListSchema)
@alt_errors(blp, ERRORS, 400, 503)
@blp.doc(operationId="listTournaments")
def list_tournaments(query):
    """List tournaments, newest first, filtered by status (the index keeps the newest
    10 000; an older one is still read by its id)."""
    page, per_page = query["page"], query["per_page"]
    found, total = service().tournaments.store.listed(query.get("status"),
                                                      (page - 1) * per_page, per_page)
    return {"tournaments": [
        {"id": tid, "name": c["name"], "type": c["type"], "format": c["format"],
         "status": status, "rounds_total": c["rounds"], "participants": len(c["participants"]),
         "duplicate": c["duplicate"], "created_at": rfc3339(int(created_ms))}
        for tid, created_ms, first, status in found for c in (first["data"],)],
        "page": page, "per_page": per_page, "total": total}


@blp.route("", methods=["POST"])
@blp.arguments(s.CreateTournamentSchema, error_status_code=400)
@blp.response(201, s.TournamentSchema)
@alt_errors(blp, ERRORS, 401, 403, 422, 429, 503)
@blp.doc(operationId="createTournament")
def create_tournament(body):
    """Create a tournament (a platform key, or anybody where none is configured; a rated one,
    a platform key only): its first round is paired at once, the next ones by a worker when a
    round's last game ends."""
    creator = _require_creator()
    return service().tournaments.create(body, charge=ratelimit.charge_stored,
                                        platform=creator == PLATFORM)


@blp.route("/<tid>", methods=["GET"])
@blp.response(200, s.TournamentSchema)
@alt_errors(blp, ERRORS, 404, 503)
@blp.doc(operationId="getTournament")
def get_tournament(tid):
    """A tournament: its rounds, their games and the standings so far."""
    return service().tournaments.show(tid)


@blp.route("/<tid>/export", methods=["GET"])
@blp.response(200, s.TournamentExportSchema)
@alt_errors(blp, ERRORS, 404, 409, 503)
@blp.doc(operationId="exportTournament")
def export_tournament(tid):
    """A finished tournament: its events, its standings and every game's export, signed as a
    game's export is; verified by ``POST /v1/replays/verify`` and ``cartouche verify``."""
    # the bytes signed, not dumped again by the schema (which would write 6 points as 6.0)
    return json_response(service().export_tournament(tid))


# -- the live stream -------------------------------------------------------------------------
@dataclass(frozen=True)
class Entries:
    """Events of one tournament read in one go: (version, event), and the standings after
    each (folded from the start of the stream)."""

    read: list[tuple[int, dict]]
    standings: list[list[dict]]

    @property
    def first(self) -> int:
        return self.read[0][0]

    @property
    def last(self) -> int:
        return self.read[-1][0]

    @property
    def size(self) -> int:
        return len(self.read)


class TournamentSource:
    """A tournament's events (``hub.Source``): positions are versions, one viewer class
    (everything is public), the stream ends with ``TournamentFinished``."""

    kind = "tournament"

    def __init__(self, svc: GameService, follower: StreamFollower) -> None:
        self.store, self.follower = svc.tournaments.store, follower

    def read(self, tid: str, after: int, *, upto: int | None = None,
             count: int) -> Entries | None:
        return self._folded(tid, self.store.read(tid, after, upto, count))

    def read_blocking(self, tid: str, after: int, *, count: int,
                      block_ms: int) -> Entries | None:
        return self._folded(tid, read_blocking(self.follower, tid, after, count=count,
                                               block_ms=block_ms))

    def _folded(self, tid: str, read: list[tuple[int, dict]]) -> Entries | None:
        if not read:
            return None
        t = Tournament.of([e for _, e in self.store.read(tid, 0, read[0][0] - 1)])
        standings = []
        for _, ev in read:
            t.apply(ev)
            standings.append(t.standings())
        return Entries(read, standings)

    def encode(self, batch: Entries, viewer: Viewer) -> tuple[tuple[int, bytes], ...]:
        return tuple((v, sse("tournament_event", {"version": v, **ev, "standings": st}, v))
                     for (v, ev), st in zip(batch.read, batch.standings))

    def preface(self, batch: Entries, after: int) -> bytes:
        return b""

    def ending(self, batch: Entries) -> bytes | None:
        version, last = batch.read[-1]
        if last["type"] != "TournamentFinished":
            return None
        return sse("end", {"status": "finished", "version": version,
                           "standings": last["data"]["standings"]}, version)

    def settle(self, tid: str, after: int, last: Entries | None) -> tuple[bytes | None, int]:
        length = self.store.length(tid)
        if last is None and after >= length and length:
            last = self.read(tid, length - 1, count=1)
        end = self.ending(last) if last is not None and after >= last.last else None
        return end, min(after, length)


@blp.route("/<tid>/events/stream")
@blp.doc(operationId="streamTournament", responses={"200": {
    "description": "text/event-stream: `event: tournament_event` (id = version; data: the "
                   "event and the standings after it) ... `event: end` (the final standings)",
    "content": {"text/event-stream": {"schema": {
        "type": "string", "description": "the stream's text, read as it comes; each message's "
                                         "data, JSON"}}}},
    "204": {"description": ENDED}}, parameters=RESUME_AFTER_VERSION)
@blp.alt_response(400, schema="Error", description="bad Last-Event-ID")
@blp.alt_response(401, schema="Error", description="a malformed Authorization header")
@blp.alt_response(404, schema="Error", description="`tournament_not_found`")
@blp.alt_response(429, schema="Error", description=CAPPED[429])
@blp.alt_response(503, schema="Error", description=CAPPED[503])
def stream_tournament(tid):
    """Follow a tournament live: each event with the standings after it, then an end event
    with the final standings."""
    service().tournaments.events(tid)  # 404 for an unknown one
    after = resume_after(_version, 0, "Last-Event-ID is a version number")
    return event_stream(app_hubs("cartouche_tournament_hubs", TournamentSource), tid, None,
                        after)
