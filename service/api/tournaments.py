"""/v1/tournaments: round robin and Swiss tournaments paired by the server
(``application.tournaments``)."""

from __future__ import annotations

from ..schemas import tournaments as s
from . import Blueprint
from .errors import STORE_DOC, alt_errors
from .games import _require_creator, service

blp = Blueprint("tournaments", __name__, url_prefix="/v1/tournaments",
                description="Tournaments: rounds paired by the server, duplicate deals")

ERRORS = {400: "invalid request", 401: "invalid token",
          403: "`platform_key_required` (where platform keys are configured)",
          404: "`tournament_not_found`",
          409: "`game_not_finished`: the tournament is still running",
          422: "`unknown_game_type`, `invalid_player_count` (seats_per_game), "
               "`invalid_options`, `invalid_format`, `invalid_rounds`, "
               "`duplicate_participant`, `invalid_participant_count`, `too_many_games`, "
               "`player_not_found` (`details.index`)",
          503: STORE_DOC + "; or `tournaments_full` (see Retry-After)"}


@blp.route("", methods=["POST"])
@blp.arguments(s.CreateTournamentSchema, error_status_code=400)
@blp.response(201, s.TournamentSchema)
@alt_errors(blp, ERRORS, 401, 403, 422, 503)
@blp.doc(operationId="createTournament")
def create_tournament(body):
    """Create a tournament (a platform key, or anybody where none is configured): its first
    round is paired at once, the next ones by a worker when a round's last game ends."""
    _require_creator()
    return service().tournaments.create(body)


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
    """A finished tournament: its events, its standings and every game's export; verified by
    ``POST /v1/replays/verify`` and ``cartouche verify``."""
    return service().tournaments.export(tid)
