"""/v1/players: identities across games. A player token (shown once at creation) acts for every
seat its player holds; ``/v1/players/me/events/stream`` is the player's one live stream (served
like the game streams: ``stream.py``, ``hub.py``, ``sources.NoticeSource``)."""

from __future__ import annotations

from .. import schemas as s
from ..application.errors import Forbidden, InvalidToken
from . import Blueprint, hands_out_secrets, ratelimit
from .errors import LIMITED_DOC, STORE_DOC
from .games import bearer_token, player_or_none, service
from .sources import START, STREAM_ID, NoticeSource, StreamId
from .stream import CAPPED, app_hubs, event_stream, resume_after

blp = Blueprint("players", __name__, url_prefix="/v1/players",
                description="Players: identities across games")

ERRORS = {400: "invalid request", 401: "bad token", 403: "this caller may not do that",
          404: "unknown player", 422: "`external_id_taken` (`details.player_id`)",
          429: LIMITED_DOC, 503: STORE_DOC}


def _alts(*statuses: int, own: dict[int, str] | None = None):
    """Document the error answers ``statuses``, and ``own``: answers described for this
    endpoint alone, by status."""
    from .errors import alt_errors

    own = own or {}
    return alt_errors(blp, {**ERRORS, **own}, *statuses, *own)


def _platform() -> str | None:
    """The calling platform key's short digest (None: no platform key)."""
    token = bearer_token()
    if token is None or not service().is_platform_key(token):
        return None
    from ..application.identity import token_digest

    return token_digest(token)[:16]


def me() -> str:
    """The id of the player whose token the request carries."""
    player = service().player_for_token(bearer_token())
    if player is None:
        raise InvalidToken("this needs a player token (from POST /v1/players)")
    return player


@blp.route("", methods=["POST"])
@hands_out_secrets
@blp.arguments(s.CreatePlayerSchema, error_status_code=400)
@blp.response(201, s.CreatedPlayerSchema)
@_alts(400, 401, 403, 422, 429, 503)
@blp.doc(operationId="createPlayer")
def create_player(body):
    """A new player and its token (shown this once; stored hashed). With platform keys
    configured only a platform key may create players, and may give its own ``external_id``."""
    svc = service()
    platform = _platform()
    if svc.platform_key_digests and platform is None:
        raise Forbidden("platform_key_required", "creating players needs a platform key")
    if platform is None:
        player_or_none(bearer_token())  # (a player token naming nobody is refused)
    if "external_id" in body and platform is None:
        raise Forbidden("platform_key_required", "external_id is for platform keys")
    return svc.players.create(body["name"], body["kind"], external_id=body.get("external_id"),
                              platform=platform, charge=ratelimit.charge_stored)


@blp.route("", methods=["GET"])
@blp.arguments(s.PlayersQuerySchema, location="query", error_status_code=400)
@blp.response(200, s.PlayerProfileSchema)
@_alts(400, 401, 403, 404, 503)
@blp.doc(operationId="findPlayer")
def find_player(query):
    """The player a platform key registered under ``external_id``."""
    platform = _platform()
    if platform is None:
        raise Forbidden("platform_key_required", "finding by external_id needs a platform key")
    found = service().players.find_external(platform, query["external_id"])
    return service().player_profile(found["id"], private=True)


@blp.route("/me")
@blp.response(200, s.PlayerProfileSchema)
@_alts(401, 503)
@blp.doc(operationId="getMe")
def get_me():
    """Your profile, with the tables and games you are in and your waiting seeks (a player
    token)."""
    svc = service()
    player = me()
    out = svc.player_profile(player, private=True)
    out["games"] = svc.player_games(player)
    out["seeks"] = svc.seeks.of_player(player)
    return out


#: A notice's id as ``Last-Event-ID`` or ``?after=``: a Redis stream id, exactly as served
#: (the pattern ``StreamId.parse`` reads), or empty, read as absent (the stream from its start).
STREAM_ID_OR_EMPTY = f"^({STREAM_ID.pattern})?$"


@blp.route("/me/events/stream")
@blp.doc(operationId="streamPlayerEvents", responses={"200": {
    "description": "text/event-stream: one message per notice, `id:` = its stream id "
                   "(`<ms>-<seq>`), `event:` = its kind (`invitation`, `seek_matched`, "
                   "`game_start`, `your_turn`, `game_finish`, `rating`); first an "
                   "`event: gap` (no id) when notices after the resume id were dropped; "
                   "keep-alive comments; never ends",
    "content": {"text/event-stream": {"schema": {
        "type": "string",
        "description": "the stream's text, read as it comes (never a whole body: the stream "
                       "does not end); each message's data, JSON: invitation {game_id, type, "
                       "from}, seek_matched {seek_id, game_id}, game_start {game_id, seat, type}, "
                       "your_turn {game_id, seat, version, deadline_at}, game_finish "
                       "{game_id, status, result} (a duplicate deal's games: once the deal "
                       "is recorded), rating {type, game_id, before, after} (before and "
                       "after: {mu, sigma, ordinal, games}), gap {after, oldest}"}}}}},
    parameters=[{"in": "header", "name": "Last-Event-ID", "required": False,
                 "schema": {"type": "string", "pattern": STREAM_ID_OR_EMPTY},
                 "description": "resume after this notice (the last `id:` received; empty: "
                                "as if absent)"},
                {"in": "query", "name": "after", "required": False,
                 "schema": {"type": "string", "pattern": STREAM_ID_OR_EMPTY},
                 "description": "the same, where the header cannot be set"}])
@_alts(401, own={400: "`invalid_last_event_id`: the resume id is not a notice id", **CAPPED})
def stream_me():
    """Follow your notices live (a player token): every game start, turn, finish and invitation
    of every game you are in, on one connection.

    Each notice comes once and in order, as ``id:`` (its stream id), ``event:`` (its kind) and
    ``data:`` (JSON); ``your_turn`` comes once per decision awaited from a seat you still play
    (not one you resigned, whose bot plays it), with the game's version and the seat's
    deadline when the game has a clock. Reconnect with ``Last-Event-ID`` (or ``?after=``) set
    to the last id received: nothing is lost or repeated. Without one the stream starts at the
    oldest notice kept. A player's stream keeps its last
    ``CARTOUCHE_PLAYER_STREAM_MAX`` notices (1000); when it has dropped older ones and the
    resume id is older than the oldest kept, ``event: gap`` ``{"after", "oldest"}`` comes first
    (resynchronise from ``GET /v1/players/me``), then everything kept. A malformed id is a 400
    ``invalid_last_event_id``. Keep-alive comments at least every 15 s; the stream never ends
    by itself."""
    player = me()
    after = resume_after(StreamId.parse, START, "Last-Event-ID is a notice id: <ms>-<seq>")
    return event_stream(app_hubs("cartouche_player_hubs", NoticeSource), player, None, after,
                        ends=False)


@blp.route("/<player_id>")
@blp.response(200, s.PlayerProfileSchema)
@_alts(404, 503)
@blp.doc(operationId="getPlayer")
def get_player(player_id):
    """A player's public profile: name, kind, created time, and per rating type (a game type,
    or ``scarabya-duel``) games, wins and rating."""
    return service().player_profile(player_id)
