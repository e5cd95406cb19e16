"""/v1/players: identities across games. A player token (shown once at creation) acts for every
seat its player holds; ``/v1/players/me/events/stream`` is the player's one live stream."""

from __future__ import annotations

from .. import schemas as s
from ..application.errors import Forbidden, InvalidToken
from . import Blueprint
from .games import bearer_token, service

blp = Blueprint("players", __name__, url_prefix="/v1/players",
                description="Players: identities across games")

ERRORS = {400: "invalid request", 401: "bad token", 403: "this caller may not do that",
          404: "unknown player", 422: "`external_id_taken` (`details.player_id`)",
          429: "rate limited (see Retry-After)", 503: "event store unavailable"}


def _alts(*statuses: int):
    from .errors import alt_errors

    return alt_errors(blp, ERRORS, *statuses)


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
    if "external_id" in body and platform is None:
        raise Forbidden("platform_key_required", "external_id is for platform keys")
    return svc.players.create(body["name"], body["kind"], external_id=body.get("external_id"),
                              platform=platform)


@blp.route("", methods=["GET"])
@blp.arguments(s.PlayersQuerySchema, location="query", error_status_code=400)
@blp.response(200, s.PlayerProfileSchema)
@_alts(400, 403, 404, 503)
@blp.doc(operationId="findPlayer")
def find_player(query):
    """The player a platform key registered under ``external_id``."""
    platform = _platform()
    if platform is None:
        raise Forbidden("platform_key_required", "finding by external_id needs a platform key")
    found = service().players.find_external(platform, query["external_id"])
    return service().player_profile(found["id"])


@blp.route("/me")
@blp.response(200, s.PlayerProfileSchema)
@_alts(401, 503)
@blp.doc(operationId="getMe")
def get_me():
    """Your profile, with the tables and games you are in and your waiting seeks (a player
    token)."""
    svc = service()
    player = me()
    out = svc.player_profile(player)
    out["games"] = svc.player_games(player)
    out["seeks"] = svc.seeks.of_player(player)
    return out


@blp.route("/<player_id>")
@blp.response(200, s.PlayerProfileSchema)
@_alts(404, 503)
@blp.doc(operationId="getPlayer")
def get_player(player_id):
    """A player's public profile: name, kind, created time, and per rating type (a game type,
    or ``scarabya-duel``) games, wins and rating."""
    return service().player_profile(player_id)
