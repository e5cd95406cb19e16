"""/v1/leaderboards: players by rating, per rating type (a game type, or ``scarabya-duel``)."""

from __future__ import annotations

from .. import schemas as s
from . import Blueprint
from .errors import alt_errors
from .games import service

blp = Blueprint("ratings", __name__, url_prefix="/v1/leaderboards",
                description="Ratings and leaderboards")

ERRORS = {400: "invalid request", 404: "`unknown_rating_type`", 503: "store unavailable"}


@blp.route("/<rating_type>")
@blp.arguments(s.LeaderboardQuerySchema, location="query", error_status_code=400)
@blp.response(200, s.LeaderboardSchema)
@alt_errors(blp, ERRORS, 400, 404, 503)
@blp.doc(operationId="getLeaderboard")
def leaderboard(query, rating_type):
    """Players by ordinal (``mu - 3 sigma``, OpenSkill Plackett-Luce), with the players who
    have fewer than ``min_games`` rated games listed apart as provisional."""
    return service().leaderboard(rating_type, query["offset"], query["limit"],
                                 query["provisional_offset"])
