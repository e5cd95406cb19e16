"""/v1/seeks: matchmaking. A player (its token) asks for a game; compatible seeks are matched
into one new game at once (``application.seeks``), and the player stream says ``seek_matched``
then ``game_start``."""

from __future__ import annotations

from .. import schemas as s
from . import Blueprint, ratelimit
from .errors import LIMITED_DOC, STORE_DOC, alt_errors
from .games import service
from .players import me

blp = Blueprint("seeks", __name__, url_prefix="/v1/seeks",
                description="Matchmaking: seeks for a game with players you do not know")

ERRORS = {400: "invalid request", 401: "this needs a player token", 403: "`not_your_seek`",
          404: "`seek_not_found`",
          409: "`seek_matched` (`details.game_id`) or `seek_expired`: too late to cancel; "
               "`too_many_seeks`: the player has as many waiting seeks as allowed "
               "(`details.max`)",
          422: "`unknown_game_type`, `invalid_player_count` (a seat count the game or its "
               "options do not take, `details.min`, `details.max`), `invalid_options` (the "
               "option's code in `details.code`, as for a creation), `invalid_rating_range`, "
               "`bot_level_unavailable`, `invalid_fill_with_bots` (`details.max_after_s`)",
          429: LIMITED_DOC,
          503: STORE_DOC + "; or "
               "`seeks_full`: the server holds as many seeks as "
               "it may (see Retry-After)"}

SEEK_LINKS = {name: {"operationId": op, "parameters": {"seek_id": "$response.body#/id"}}
              for name, op in (("GetSeek", "getSeek"), ("CancelSeek", "cancelSeek"))}


@blp.route("", methods=["POST"])
@blp.arguments(s.CreateSeekSchema, error_status_code=400)
@blp.response(201, s.SeekSchema)
@blp.doc(responses={201: {"links": SEEK_LINKS}})
@alt_errors(blp, ERRORS, 401, 409, 422, 429, 503)
@blp.doc(operationId="createSeek")
def create_seek(body):
    """Ask for a game (a player token). Compatible waiting seeks (same type and options, a
    common seat count, rating ranges that accept each other's players) are matched into one
    new game at once: the answer then says ``matched`` with the game and your seat, else
    ``waiting`` until another seek matches it, its bots fill it, it is cancelled or it
    expires."""
    player = me()
    return service().seeks.open(player, body["type"], body["seats"], body["options"],
                                body.get("rating_range"), body.get("fill_with_bots"),
                                charge=ratelimit.charge_stored)


@blp.route("", methods=["GET"])
@blp.arguments(s.SeeksQuerySchema, location="query", error_status_code=400)
@blp.response(200, s.SeekListSchema)
@alt_errors(blp, ERRORS, 400, 503)
@blp.doc(operationId="listSeeks")
def list_seeks(query):
    """The waiting seeks, newest first (of one game type with ``type``).

    Seeks opened in the same millisecond come by id, descending."""
    return service().seeks.waiting(query.get("type"), query["offset"], query["limit"])


@blp.route("/<seek_id>", methods=["GET"])
@blp.response(200, s.SeekSchema)
@alt_errors(blp, ERRORS, 404, 503)
@blp.doc(operationId="getSeek")
def get_seek(seek_id):
    """A seek: ``waiting``, ``matched`` (with ``game_id`` and ``seat``), ``cancelled`` or
    ``expired``. Ended seeks can be read for a day."""
    return service().seeks.show(seek_id)


@blp.route("/<seek_id>", methods=["DELETE"])
@blp.response(200, s.SeekSchema)
@alt_errors(blp, ERRORS, 401, 403, 404, 409, 503)
@blp.doc(operationId="cancelSeek")
def cancel_seek(seek_id):
    """Cancel your waiting seek (a player token); cancelling it again answers the same. Too
    late once matched (409 ``seek_matched``) or expired (409 ``seek_expired``)."""
    return service().seeks.cancel(seek_id, me())
