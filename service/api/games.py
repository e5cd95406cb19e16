"""/v1: game types, games, actions, events and time travel."""

from __future__ import annotations

from flask import Response, current_app, request

from .. import schemas as s
from ..application import GameService, Table, body_digest
from ..application.identity import TOKEN_PREFIX
from ..application.players import PLATFORM
from ..application.errors import (Forbidden, GameNotFinished, InvalidRequest, InvalidToken,
                                  NotFound, SeatUnavailable)
from ..engine import ALL
from ..games import GAMES, guide_summary, guide_text
from ..options import served_schema
from . import Blueprint, hands_out_secrets, json_response, ratelimit
from .errors import LIMITED_DOC, STORE_DOC, MalformedRequest, alt_errors

blp = Blueprint("games", __name__, url_prefix="/v1", description="Games and their events")

MAX_VERSION = 2**53
ERRORS = {400: "invalid request", 401: "bad token", 403: "this caller may not do that",
          404: "unknown game or version", 409: "not now", 413: "body too large",
          422: "a rule or option violation. `illegal_action`: the reason in `details.code`, for "
               "a malformed action one of `malformed_action`, `unknown_action` "
               "(`details.allowed`), `unexpected_field`, `missing_field`, `invalid_field` "
               "(`details.fields`: {field: [message]}), else the rule's own code. "
               "`invalid_options`: `details.code` "
               "one of `unknown_option`, `invalid_option`, `invalid_setup`, `invalid_layout`, "
               "`invalid_board`, `invalid_player_count` (`details.option`, and "
               "`details.expected` or `details.reason`) or `invalid_clock`. Also "
               "`invalid_player_count`, `unknown_game_type`, `bot_level_unavailable`, "
               "`player_not_found` (`details.seat`), "
               "`not_a_command_boundary`, `fork_too_long`, `idempotency_key_reused`",
          429: LIMITED_DOC,
          503: STORE_DOC}


def _alts(*statuses: int):
    return alt_errors(blp, ERRORS, *statuses)


def service() -> GameService:
    return current_app.extensions["cartouche"]


def bearer_token() -> str | None:
    return bearer_from(request.headers.get("Authorization"))


def bearer_from(header: str | None) -> str | None:
    """The token of an ``Authorization`` header (None without one)."""
    if header is None:
        return None
    scheme, _, token = header.partition(" ")
    token = token.strip()
    if scheme.lower() != "bearer" or not token or len(token) > 512 or not token.isascii() \
            or not token.isprintable():
        raise InvalidToken("use 'Authorization: Bearer <token>'")
    return token


def load(game_id: str, version: int | None = None) -> Table:
    return service().load(game_id, version)


def caller(table: Table):
    """The seat the request's token acts as, ALL for a platform key, None without a token."""
    return service().viewer_for(table, bearer_token())


def catalog_entry(g) -> dict:
    """One game type as the catalog serves it, with its guide's summary and link."""
    has_guide = guide_text(g.type_id) is not None
    return {
        "id": g.type_id, "name": g.name, "min_players": g.min_players,
        "max_players": g.max_players, "variants": list(g.variants),
        "options": served_schema(g), "actions": g.action_schemas,
        "summary": guide_summary(g.type_id),
        "rules": f"/v1/game-types/{g.type_id}/rules" if has_guide else None,
    }


def known_type(type_id: str):
    game = GAMES.get(type_id)
    if game is None:
        raise NotFound("game_type_not_found", f"no game type {type_id[:64]!r}",
                       {"known": list(GAMES)})
    return game


@blp.route("/game-types")
@blp.response(200, s.GameTypeListSchema)
@blp.doc(operationId="listGameTypes")
def game_types():
    """The catalog: every game type with its options, action schemas and guide."""
    return {"game_types": [catalog_entry(g) for g in GAMES.values()]}


@blp.route("/game-types/<type_id>")
@blp.response(200, s.GameTypeSchema)
@blp.alt_response(404, schema="Error", description="`game_type_not_found` (`details.known`)")
@blp.doc(operationId="getGameType")
def game_type(type_id):
    """One game type's catalog entry, with its guide's summary and link."""
    return catalog_entry(known_type(type_id))


@blp.route("/game-types/<type_id>/rules")
@blp.doc(operationId="getGameRules", responses={"200": {
    "description": "the game's guide for client developers (Markdown): the aim, every action "
                   "with an example and its refusal codes, codes and coordinates, the state "
                   "fields, variants, scoring and a worked turn",
    "content": {"text/markdown": {"schema": {"type": "string"}}}}})
@blp.alt_response(404, schema="Error", description="`game_type_not_found` (`details.known`), "
                                                    "or `guide_not_found`")
def game_rules(type_id):
    """The game's guide, as Markdown."""
    text = guide_text(known_type(type_id).type_id)
    if text is None:
        raise NotFound("guide_not_found", "this game type has no guide")
    return Response(text, mimetype="text/markdown")


GAME_LINKS = {
    name: {"operationId": op, "parameters": {"game_id": "$response.body#/id"}}
    for name, op in (("GetGame", "getGame"), ("GetLegalActions", "getLegalActions"),
                     ("PostAction", "postAction"), ("GetEvents", "getEvents"))
}


@blp.route("/games", methods=["POST"])
@hands_out_secrets
@blp.arguments(s.CreateGameSchema, error_status_code=400)
@blp.response(201, s.CreatedGameSchema)
@blp.doc(responses={201: {"links": GAME_LINKS}})
@_alts(401, 403, 413, 422, 429, 503)
@blp.doc(operationId="createGame")
def create_game(body):
    """Create a game; returns one secret token per filled seat, once (none for a seat another
    player holds, such as a built-in bot player, unless a platform key asks). A table (a seat
    ``{"open": true}`` or ``{"player": id}`` of another player) waits for players: status
    ``waiting`` until its last seat is joined."""
    return service().create(body["type"], body["players"], body["options"], body.get("seed"),
                            creator=_require_creator(), charge=ratelimit.charge_stored)


def _require_creator() -> str | None:
    """Who creates: ``PLATFORM`` for a platform key, a player's id for a player token, None
    for anybody else (where no platform keys are configured)."""
    svc = service()
    token = bearer_token()
    if token is not None and svc.is_platform_key(token):
        return PLATFORM
    if svc.platform_key_digests:
        raise Forbidden("platform_key_required", "creating games needs a platform key")
    return player_or_none(token)


def player_or_none(token: str | None) -> str | None:
    """The player a token names; None without a token or with another kind of token (a seat's:
    they are told apart by game). A player token that names nobody is refused (401), rather
    than read as no token: the request would otherwise go on anonymously."""
    if token is None or not token.startswith(TOKEN_PREFIX):  # (player tokens all carry it)
        return None
    player = service().player_for_token(token)
    if player is None:
        raise InvalidToken("this player token belongs to no player")
    return player


@blp.route("/games/bulk", methods=["POST"])
@hands_out_secrets
@blp.arguments(s.BulkCreateSchema, error_status_code=400)
@blp.response(201, s.BulkCreatedSchema)
@_alts(401, 403, 413, 422, 429, 503)
@blp.doc(operationId="createGamesBulk")
def create_games_bulk(body):
    """Create up to 100 games at once, all or none (tournaments). A 422 names the failing
    game's ``details.index``. Each game counts as one write against the rate limits."""
    ratelimit.charge_writes(len(body["games"]) - 1)  # the request was counted as one
    creator = _require_creator()
    specs = [(g["type"], g["players"], g["options"], g.get("seed")) for g in body["games"]]
    return {"games": service().create_many(specs, creator, charge=ratelimit.charge_stored)}


@blp.route("/games", methods=["GET"])
@blp.arguments(s.GamesQuerySchema, location="query", error_status_code=400)
@blp.response(200, s.GameListSchema)
@_alts(400, 503)
@blp.doc(operationId="listGames")
def list_games(query):
    """List games, newest first, filtered by type and status.

    Games created in the same millisecond (as a bulk request's can be) come by id,
    descending: every page of a listing has the same order."""
    return service().list_games(query.get("type"), query.get("status"), query["page"],
                                query["per_page"])


@blp.route("/games/<gid:game_id>")
@blp.response(200, s.GameViewSchema)
@_alts(401, 404, 503)
@blp.doc(operationId="getGame")
def get_game(game_id):
    """The caller's view of a game (a seat's, or a spectator's without a token)."""
    table = load(game_id)
    return service().view(table, caller(table))


@blp.route("/games/<gid:game_id>/states/<int:version>")
@blp.response(200, s.GameViewSchema)
@_alts(401, 404, 409, 503)
@blp.doc(operationId="getState")
def get_state(game_id, version):
    """The caller's view as it was at ``version`` (hidden information still hidden).

    409 ``game_not_finished`` for a version from the command that ended a tournament's game
    whose duplicate deal is still played elsewhere on (it holds the end, which that game does
    not show until then), but to a platform key."""
    if not 1 <= version <= MAX_VERSION:
        raise NotFound.version(version)
    current = load(game_id)
    viewer = caller(current)
    # everything is public once the game is over, unless it is withheld (a duplicate deal
    # still played elsewhere): then each version is served as it was while the game ran, and
    # none from the command that ended it on, which holds the end, like an export (nor is
    # where its log ends told: every version from there is a 409)
    withheld_from = service().withheld_from(current) if current.over else None
    if withheld_from is not None and version >= withheld_from and viewer != ALL:
        raise GameNotFinished()
    if version > current.version:
        raise NotFound.version(version)
    table = load(game_id, version)
    # a past version's clocks as they were when it was written, not as they would be now
    at = service().reached_ms(table) if table.clock and version < current.version else None
    view = service().view(table, viewer, at)
    if current.over and withheld_from is None:
        view = service().view(table, ALL, at)
        view["you"] = viewer if isinstance(viewer, int) else None
    return view


@blp.route("/games/<gid:game_id>/legal-actions")
@blp.response(200, s.LegalActionsSchema)
@_alts(401, 404, 503)
@blp.doc(operationId="getLegalActions")
def legal_actions(game_id):
    """The caller seat's legal actions now, each exactly postable.

    Empty when the seat is not awaited, or is no longer played by its human (resigned, taken
    over by a bot, left)."""
    table = load(game_id)
    viewer = caller(table)
    return {"version": service().shown_version(table, viewer),
            "seat": viewer if isinstance(viewer, int) else None,
            "actions": service().legal_actions(table, viewer)}


# The common body does not run this route: fastpaths.lean_action_view (service/api/fastpaths.py).
@blp.route("/games/<gid:game_id>/actions", methods=["POST"])
@blp.arguments(s.ActionRequestSchema, error_status_code=400)
@blp.response(201, s.ActionResponseSchema)
@blp.doc(parameters=[{"in": "header", "name": "Idempotency-Key", "required": False,
                      "schema": {"type": "string", "minLength": 1, "maxLength": 255},
                      "description": "retries with the same key and body get the original "
                                     "response; another body gets 422. A key is kept 24 "
                                     "hours, per game and per the seats the token holds"}])
@_alts(401, 403, 404, 409, 413, 422, 429, 503)
@blp.doc(operationId="postAction")
def post_action(body, game_id):
    """Act as the caller's seat."""
    return act_as_caller(body, game_id)


def act_as_caller(body: dict, game_id: str):
    """``POST /v1/games/{id}/actions`` with its body loaded."""
    return act_as(service(), game_id, body, request.headers.get("Authorization"),
                  request.headers.get("Idempotency-Key"), ratelimit.pending_quota())


def act_as(svc: GameService, game_id: str, body: dict, authorization: str | None,
           idempotency_key: str | None, quota):
    """An action by the seat of ``authorization``'s token: its 201 answer; ``quota``: what its
    append charges."""
    return json_response(acted(svc, game_id, body, authorization, idempotency_key, quota), 201)


def acted(svc: GameService, game_id: str, body: dict, authorization: str | None,
          idempotency_key: str | None, quota) -> dict:
    """:func:`act_as`'s work: the body of its 201 (the action route in front of Flask,
    ``fastpaths.ActionRoute``, calls it and answers the body itself)."""
    # the cached game, unless another process moved it on (see load_for_command)
    table = svc.load_for_command(game_id)
    token = bearer_from(authorization)
    viewer = svc.viewer_for(table, token)
    if not isinstance(viewer, int):
        raise Forbidden("spectator_cannot_act", "only a seat token can act")
    key_scope = None
    if idempotency_key is not None:
        if not 1 <= len(idempotency_key) <= 255:
            raise MalformedRequest("invalid_idempotency_key",
                                   "Idempotency-Key takes 1-255 characters")
        key_scope = svc.key_scope(table, token, viewer)
    # the body's digest is what an Idempotency-Key's record keeps: only made for one
    done = svc.act(game_id, viewer, body["action"], body.get("expected_version"),
                   idempotency_key, body_digest(body) if idempotency_key is not None else "",
                   loaded=table, quota=quota, key_scope=key_scope)
    shown_to = viewer if done.seat is None else done.seat
    return {"version": svc.shown_version(done.table, shown_to),
            "events": svc.served_events(done.table, done.envelopes, done.first_version,
                                        shown_to)}


@blp.route("/games/<gid:game_id>/events")
@blp.arguments(s.EventsQuerySchema, location="query", error_status_code=400)
@blp.response(200, s.EventPageSchema)
@_alts(400, 401, 404, 503)
@blp.doc(operationId="getEvents")
def get_events(query, game_id):
    """The event log as the caller may see it, oldest first, paged by version."""
    table = load(game_id)
    viewer = caller(table)
    events, last = service().events(table, viewer, query["after"], query["limit"])
    return {"type": table.game.type_id, "version": service().shown_version(table, viewer),
            "events": events, "next_after": last}


def _seat_caller(game_id: str) -> tuple[Table, int]:
    table = load(game_id)
    viewer = caller(table)
    if not isinstance(viewer, int):
        raise Forbidden("spectator_cannot_act", "only a seat token can do that")
    return table, viewer


@blp.route("/games/<gid:game_id>/resign", methods=["POST"])
@blp.response(200, s.GameViewSchema)
@_alts(401, 403, 404, 409, 429, 503)
@blp.doc(operationId="resign")
def resign(game_id):
    """Leave the game: the seat is then played as the clock's timeout policy says (a bot by
    default), or forfeited when the policy is ``forfeit``."""
    _, seat = _seat_caller(game_id)
    return service().view(service().resign(game_id, seat), seat)


@blp.route("/games/<gid:game_id>/abort", methods=["POST"])
@blp.response(200, s.GameViewSchema)
@_alts(401, 403, 404, 409, 429, 503)
@blp.doc(operationId="abort")
def abort(game_id):
    """Abort a game before anybody has moved (a seat or a platform key; a game whose result
    counts, for ratings or in a tournament, once dealt a platform key only: its seats resign
    instead)."""
    table = load(game_id)
    viewer = caller(table)
    if viewer is None:
        raise Forbidden("spectator_cannot_act", "only a seat or a platform key can abort")
    return service().view(service().abort(game_id, viewer), viewer)


@blp.route("/games/<gid:game_id>/export")
@blp.response(200, s.ExportSchema)
@_alts(401, 404, 409, 503)
@blp.doc(operationId="exportGame")
def export_game(game_id):
    """A finished game's full log, revealed seed and result: enough to verify and replay it
    offline (``python -m service.replay verify EXPORT.json``)."""
    caller(load(game_id))
    return service().export(game_id)


@blp.route("/games/<gid:game_id>/fork", methods=["POST"])
@hands_out_secrets
@blp.arguments(s.ForkRequestSchema, error_status_code=400)
@blp.response(201, s.CreatedGameSchema)
@_alts(401, 403, 404, 422, 429, 503)
@blp.doc(operationId="forkGame")
def fork_game(body, game_id):
    """A new game continuing from ``version`` (finished games; running games with a
    platform key), with new seat tokens."""
    table = load(game_id)
    viewer = caller(table)
    if not table.over and viewer != ALL:
        raise Forbidden("fork_forbidden", "only platform keys may fork a running game")
    _require_creator()  # a fork creates a game: the same rule as POST /v1/games
    return service().fork(game_id, body["version"], charge=ratelimit.charge_stored)


@blp.route("/games/<gid:game_id>/join", methods=["POST"])
@hands_out_secrets
@blp.arguments(s.JoinSchema, error_status_code=400)
@blp.response(201, s.JoinedSchema)
@_alts(400, 401, 404, 409, 422, 429, 503)
@blp.doc(operationId="joinGame")
def join_game(body, game_id):
    """Take a seat of a waiting table: with a player token, the seat reserved for you or an
    open one; without a token, an open seat under ``name``. The join that fills the last seat
    starts the game. 409: ``seat_taken``, ``game_full``, ``not_invited``, ``already_seated``,
    ``game_aborted``."""
    svc = service()
    token = bearer_token()
    player = svc.player_for_token(token)
    if player is None:
        if token is not None and not svc.is_platform_key(token):
            raise InvalidToken("joining takes a player token, or no token and a name")
        if "name" not in body:
            raise InvalidRequest("name_required", "without a player token, give a name")
    elif "name" in body:
        raise InvalidRequest("unexpected_name", "a player joins under its own name")
    return svc.join(game_id, body.get("seat"), player, body.get("name"))


def _holder(game_id: str) -> tuple[Table, int]:
    """The caller's seat: a seat token's, or the seat the caller's player holds."""
    table = load(game_id)
    viewer = caller(table)
    if not isinstance(viewer, int):
        raise SeatUnavailable("not_seated", "you hold no seat of this game")
    return table, viewer


@blp.route("/games/<gid:game_id>/leave", methods=["POST"])
@blp.response(200, s.GameViewSchema)
@_alts(401, 404, 409, 429, 503)
@blp.doc(operationId="leaveGame")
def leave_game(game_id):
    """Give your seat of a waiting table back (409 ``game_started`` once it has begun: resign
    instead)."""
    _, seat = _holder(game_id)
    return service().view(service().leave(game_id, seat), None)


@blp.route("/games/<gid:game_id>/decline", methods=["POST"])
@blp.response(200, s.GameViewSchema)
@_alts(401, 403, 404, 409, 429, 503)
@blp.doc(operationId="declineGame")
def decline_game(game_id):
    """Turn down your invitation to a table (a player token): the seat opens, or the table is
    aborted, as its ``options.on_decline`` says."""
    player = service().player_for_token(bearer_token())
    if player is None:
        raise Forbidden("player_token_required", "declining takes the invited player's token")
    return service().view(service().decline(game_id, player), None)


@blp.route("/games/<gid:game_id>/rematch", methods=["POST"])
@hands_out_secrets
@blp.response(201, s.RematchSchema)
@blp.alt_response(200, schema=s.RematchSchema, description="the rematch asked for already")
@_alts(401, 403, 404, 409, 422, 429, 503)
@blp.doc(operationId="rematchGame")
def rematch_game(game_id):
    """A new table for the same players (invited again), seats rotated by one; the caller
    sits at once. Asking again (from any seat) answers the same rematch with 200."""
    table, seat = _holder(game_id)
    answer, created = service().rematch(game_id, seat, table.holder(seat),
                                        charge=ratelimit.charge_stored)
    return json_response(answer, 201 if created else 200)
