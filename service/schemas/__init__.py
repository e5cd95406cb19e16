"""Marshmallow schemas of requests and responses: the source of ``openapi.yaml``."""

from __future__ import annotations

import re

import marshmallow as ma
from marshmallow import fields, validate

from ..engine import CodedError, InvalidOptions, fields_detail
from ..engine.bots import LEVELS as BOT_LEVELS
from ..engine.schemas import INSTANT_DESCRIPTION, INSTANT_PATTERN
from ..engine.text import TEXT_PATTERN, InvalidText, check_text
from ..games import GAMES

GAME_TYPES = tuple(GAMES)


class NotAnInteger(CodedError):
    """An integer written with a fraction (``3.0``), or past 64 bits (which JSON reads as a
    number with one): JSON Schema counts either as an integer, the server does not (HTTP 422
    ``not_an_integer``)."""

    def __init__(self, field: str, past_64_bits: bool = False) -> None:
        name = field or "a field"
        message = (f"{name} takes an integer of at most 64 bits" if past_64_bits else
                   f"{name} takes an integer written without a fraction (3, not 3.0)")
        super().__init__("not_an_integer", message, fields_detail(field, message))


class JsonInteger(fields.Integer):
    """An integer written as one: ``3``. A string, a boolean or a fraction is refused by the
    schema (400); ``3.0``, which JSON Schema counts as an integer, with 422
    ``not_an_integer``."""

    def _deserialize(self, value, attr, data, **kwargs):
        if type(value) is float and value.is_integer():
            raise NotAnInteger(attr or "", past_64_bits=abs(value) >= 2 ** 64)
        if type(value) is not int:
            raise self.make_error("invalid")
        return value


class FullMatch(validate.Regexp):
    """``validate.Regexp`` matching the whole string: ``re.match`` with a pattern ending in
    ``$`` also accepts a trailing newline (Python's ``$`` matches before one), JSON Schema's
    does not. The pattern is documented as given (``^...$``)."""

    def __call__(self, value: str) -> str:
        if self.regex.fullmatch(value) is None:
            raise ma.ValidationError(self._format_error(value))
        return value


class JsonBoolean(fields.Boolean):
    """``true`` or ``false`` and nothing else (not ``0``, ``"yes"`` ...)."""

    def _deserialize(self, value, attr, data, **kwargs):
        if not isinstance(value, bool):
            raise self.make_error("invalid", input=value)
        return value


#: Bad items of one list a refusal reports: the list is refused at the next one.
LIST_ERRORS = 10


class List(fields.List):
    """A list of a request: its ``Length`` checked before its items, and its items one after
    another until :data:`LIST_ERRORS` have failed, which refuses the list at once
    (marshmallow's own reads every item and keeps an error for each: a body of many bad items
    cost seconds of CPU and an answer of megabytes). Every list of the schemas is one."""

    def _deserialize(self, value, attr, data, **kwargs):
        if not ma.utils.is_collection(value):
            raise self.make_error("invalid")
        for check in self.validators:
            if isinstance(check, validate.Length):
                check(value)
        items, errors = [], {}
        for index, item in enumerate(value):
            try:
                items.append(self.inner.deserialize(item, **kwargs))
            except ma.ValidationError as error:
                errors[index] = error.messages
                if len(errors) >= LIST_ERRORS:
                    break
        if errors:
            raise ma.ValidationError(errors)
        return items


class Text(fields.String):
    """Free text a client stores for others to read (a name, a description): a string without
    control, format or separator characters (``engine.text.NOT_TEXT``), else a 400
    ``invalid_text`` naming the field. Documented with that rule as its ``pattern``."""

    def __init__(self, **kwargs) -> None:
        kwargs["metadata"] = {"pattern": TEXT_PATTERN, **kwargs.get("metadata", {})}
        super().__init__(**kwargs)

    def _deserialize(self, value, attr, data, **kwargs):
        text = super()._deserialize(value, attr, data, **kwargs)
        check_text(text, attr or "")
        return text


class Timestamp(fields.String):
    """A point in time as served (``format: date-time``): RFC 3339 in UTC with milliseconds
    and ``Z`` (``2026-12-02T09:14:03.512Z``, :func:`service.timestamps.rfc3339`), in a field
    named ``at`` or ``*_at``; answers only (the instants a request carries, an export's, are
    :class:`Instant`). Durations are integers named ``*_ms``."""

    def __init__(self, **kwargs) -> None:
        kwargs["metadata"] = {"format": "date-time", **kwargs.get("metadata", {})}
        super().__init__(**kwargs)


class Instant(fields.String):
    """A point in time an export holds (its ``created_at``, each event's ``at``: the envelope
    every served event shares), documented as text with ``INSTANT_PATTERN`` rather than
    ``format: date-time`` (why: ``service.engine.schemas.INSTANT_PATTERN``). In a request (an
    export sent to be verified) a string the pattern refuses is a 400, as the contract says; a
    date the pattern takes that the calendar has not (30 February) is the verifier's to find
    (``malformed_event``)."""

    def __init__(self, **kwargs) -> None:
        kwargs["metadata"] = {"pattern": INSTANT_PATTERN, "description": INSTANT_DESCRIPTION,
                              **kwargs.get("metadata", {})}
        super().__init__(**kwargs)

    def _deserialize(self, value, attr, data, **kwargs):
        text = super()._deserialize(value, attr, data, **kwargs)
        if re.fullmatch(INSTANT_PATTERN, text) is None:
            raise ma.ValidationError("an RFC 3339 date-time, e.g. 2026-12-02T09:14:03.512Z")
        return text


class Options(fields.Dict):
    """A game's options, stored as given: every string in them, keys included, at any depth,
    is free text (:class:`Text`'s rule), refused as the options' other rules are: 422
    ``invalid_options`` with ``details.code`` ``invalid_text`` and ``details.option`` its
    dotted path (a JSON Schema cannot say it of a free-form object)."""

    def _deserialize(self, value, attr, data, **kwargs):
        loaded = super()._deserialize(value, attr, data, **kwargs)
        try:
            check_text(loaded)
        except InvalidText as exc:
            raise InvalidOptions(exc.code, exc.message, {"option": exc.field,
                                                         "position": exc.details["position"],
                                                         "character": exc.details["character"]}
                                 ) from None
        return loaded


class Strict(ma.Schema):
    class Meta:
        unknown = ma.RAISE


class ErrorBodySchema(Strict):
    code = fields.String(required=True, metadata={"description": "stable snake_case code"})
    message = fields.String(required=True)
    details = fields.Dict(required=True, metadata={
        "description": "what the code needs said; a refusal naming fields says them in "
                       "`fields`: {name (a dotted path where nested): [message, ...]}"})


class ErrorSchema(Strict):
    error = fields.Nested(ErrorBodySchema, required=True)


class BotSchema(Strict):
    # another level is the service's 422 ``bot_level_unavailable``
    level = fields.String(required=True, validate=validate.Length(1, 64),
                          metadata={"enum": list(BOT_LEVELS)})
    budget_ms = JsonInteger(validate=validate.Range(1, 60_000))


PLAYER_ID = r"^(p-[0-9a-f]{16}|bot-[a-z]{1,20})$"


class PlayerSchema(Strict):
    """One seat at creation: a name (and a bot), a player (``{"player": id}``: the creator's
    own seat, a built-in bot player, or an invitation), or an open seat (``{"open": true}``)."""

    name = Text(validate=validate.Length(1, 64))
    bot = fields.Nested(BotSchema, allow_none=True)
    player = fields.String(validate=FullMatch(PLAYER_ID), metadata={
        "description": "a player id: seats the creator (their own id) or a built-in bot "
                       "player (`bot-<level>`) at once, or reserves the seat for that player "
                       "(an invitation on their stream). A platform key seats any player."})
    open = JsonBoolean(validate=validate.Equal(True), metadata={
        "description": "a seat anyone may join (`POST /v1/games/{id}/join`)"})

    @ma.validates_schema
    def _one_shape(self, data, **kwargs):
        shapes = [k for k in ("name", "player", "open") if k in data]
        if len(shapes) != 1:
            raise ma.ValidationError("a seat is one of {name[, bot]}, {player} or "
                                     "{open: true}", "_schema")
        if "bot" in data and "name" not in data:
            raise ma.ValidationError("bot goes with a name", "bot")
        if "name" in data:
            data.setdefault("bot", None)


_SEAT_SHAPES = [
    {"type": "object", "title": "named seat", "required": ["name"],
     "additionalProperties": False,
     "properties": {"name": {"type": "string", "minLength": 1, "maxLength": 64,
                             "pattern": TEXT_PATTERN},
                    "bot": {"anyOf": [
                        {"type": "object", "required": ["level"],
                         "additionalProperties": False,
                         "properties": {"level": {"type": "string", "enum": list(BOT_LEVELS)},
                                        "budget_ms": {"type": "integer", "minimum": 1,
                                                      "maximum": 60_000}}},
                        {"type": "null"}]}}},
    {"type": "object", "title": "player seat", "required": ["player"],
     "additionalProperties": False,
     "properties": {"player": {"type": "string", "pattern": PLAYER_ID}}},
    {"type": "object", "title": "open seat", "required": ["open"],
     "additionalProperties": False, "properties": {"open": {"const": True}}},
]


class SeatEntry(fields.Field):
    """One seat of a creation request, loaded by :class:`PlayerSchema` and documented as the
    ``oneOf`` of its three shapes."""

    def __init__(self, **kwargs) -> None:
        super().__init__(metadata={"oneOf": _SEAT_SHAPES, "description": PlayerSchema.__doc__},
                         **kwargs)
        self._schema = PlayerSchema()

    def _deserialize(self, value, attr, data, **kwargs):
        return self._schema.load(value)


class CreateGameSchema(Strict):
    type = fields.String(required=True, validate=validate.Length(1, 64),
                         metadata={"description": "a game type id from GET /v1/game-types",
                                   "example": "diamant"})
    players = List(SeatEntry(), required=True, validate=validate.Length(1, 16))
    options = Options(keys=fields.String(), load_default=dict,
                          metadata={"description": "game options, see GET /v1/game-types"})
    seed = fields.String(validate=FullMatch(r"^(?:[0-9a-fA-F]{2}){16,64}$"),
                         metadata={"description": "16 to 64 bytes as hex; makes the game "
                                                  "predictable to whoever supplied it"})


class SeatTokenSchema(Strict):
    seat = JsonInteger(required=True)
    name = fields.String(required=True, allow_none=True,
                         metadata={"description": "null for a table's unfilled seat"})
    token = fields.String(required=True, allow_none=True,
                          metadata={"description": "null for a table's unfilled seat (its "
                                                   "token goes to whoever joins), and for a "
                                                   "seat another player holds (a built-in "
                                                   "bot player) unless a platform key asks"})


class CreatedGameSchema(Strict):
    id = fields.String(required=True)
    version = JsonInteger(required=True)
    seats = List(fields.Nested(SeatTokenSchema), required=True)
    seed_commitment = fields.String(required=True)


class ActionRequestSchema(Strict):
    action = fields.Dict(required=True, metadata={
        "description": "one action of the game's vocabulary, e.g. "
                       '{"type": "decide", "choice": "continue"}'})
    expected_version = JsonInteger(validate=validate.Range(0, 2**53),
                                      metadata={"description": "reject with 409 unless the "
                                                               "game is at this version"})

    @staticmethod
    def fast_load(body) -> dict | None:
        """What ``load`` returns for the common well-formed body, without marshmallow (the
        action endpoint is the hottest path); None for anything else, which the schema then
        loads or refuses itself."""
        if type(body) is not dict or type(body.get("action")) is not dict:
            return None
        if len(body) == 1:
            return {"action": body["action"]}
        version = body.get("expected_version")
        if len(body) == 2 and type(version) is int and 0 <= version <= 2**53:
            return {"action": body["action"], "expected_version": version}
        return None


class EventSchema(Strict):
    version = JsonInteger(required=True)
    type = fields.String(required=True)
    at = Instant(required=True, allow_none=True)
    seat = JsonInteger(required=True, allow_none=True)
    data = fields.Dict(required=True)
    forced = JsonBoolean(metadata={
        "description": "played by the engine: the seat had one legal action"})
    timeout = JsonBoolean(metadata={"description": "played for the seat when its clock ran out"})


class ActionResponseSchema(Strict):
    version = JsonInteger(required=True)
    events = List(fields.Nested(EventSchema), required=True)


class AwaitingSchema(Strict):
    seat = JsonInteger(required=True)
    deadline_at = Timestamp(required=True, allow_none=True, metadata={
        "description": "when the seat's clock runs out (null: no clock)"})


class SeatSchema(Strict):
    seat = JsonInteger(required=True)
    name = fields.String(required=True, allow_none=True)
    bot = fields.Dict(required=True, allow_none=True)
    controller = fields.String(required=True, validate=validate.OneOf(
        ["human", "bot", "auto", "left", "open"]), metadata={
        "description": "who plays the seat now: its human, a bot, the clock's automatic move "
                       "(after resigning under timeout=auto), nobody (forfeited), or nobody "
                       "yet (`open`: a table's seat waiting for a player)"})
    player = fields.String(metadata={"description": "the player holding the seat"})
    invited = fields.String(metadata={"description": "an unfilled seat reserved for this "
                                                     "player"})


class ClockViewSchema(Strict):
    remaining_ms = List(JsonInteger(allow_none=True), required=True, allow_none=True,
                               metadata={"description": "each seat's time left (null for a "
                                                        "seat with no limit running); null "
                                                        "while a table waits for players"})
    per_decision_ms = JsonInteger(required=True, allow_none=True)
    increment_ms = JsonInteger(required=True)
    timeout = fields.String(required=True)


class ResultSchema(Strict):
    scores = List(JsonInteger(), required=True)
    ranks = List(JsonInteger(), required=True)
    winners = List(JsonInteger(), required=True)
    details = fields.Dict(required=True)


class GameViewSchema(Strict):
    id = fields.String(required=True)
    type = fields.String(required=True)
    status = fields.String(required=True, validate=validate.OneOf(["waiting", "active",
                                                                   "finished", "aborted"]))
    version = JsonInteger(required=True)
    created_at = Timestamp(required=True, allow_none=True)
    players = List(fields.Nested(SeatSchema), required=True)
    you = JsonInteger(required=True, allow_none=True,
                         metadata={"description": "the caller's seat, null for others"})
    options = fields.Dict(required=True)
    seed = fields.String(required=True, validate=validate.OneOf(["server", "supplied"]))
    seed_commitment = fields.String(required=True)
    setup = fields.String(required=True, validate=validate.OneOf(["standard", "custom"]))
    awaiting = List(fields.Nested(AwaitingSchema), required=True)
    clock = fields.Nested(ClockViewSchema, required=True, allow_none=True)
    state = fields.Dict(required=True, allow_none=True,
                        metadata={"description": "game-specific view (null while a table "
                                                 "waits for players)"})
    result = fields.Nested(ResultSchema, required=True, allow_none=True)
    rematch_of = fields.String(metadata={"description": "the game this one is a rematch of"})
    rematch = fields.String(metadata={"description": "this finished game's rematch"})


class LegalActionsSchema(Strict):
    version = JsonInteger(required=True)
    seat = JsonInteger(required=True, allow_none=True)
    actions = List(fields.Dict(), required=True)


class Query(ma.Schema):
    class Meta:
        unknown = ma.EXCLUDE  # unknown query parameters (cache busters) are ignored

    @ma.pre_load
    def _single_values(self, data, **kwargs):
        """A known parameter given twice (``?page=1&page=2``) is an error, not a silent pick."""
        getlist = getattr(data, "getlist", None)
        if getlist is not None:
            repeated = [k for k in self.fields if len(getlist(k)) > 1]
            if repeated:
                raise ma.ValidationError({k: ["give this parameter once"] for k in repeated})
        return data


class EventsQuerySchema(Query):
    after = fields.Integer(load_default=0, validate=validate.Range(0, 2**53))
    limit = fields.Integer(load_default=100, validate=validate.Range(1, 1000))


class EventPageSchema(Strict):
    type = fields.String(required=True, metadata={"description": "the game type"})
    version = JsonInteger(required=True, metadata={"description": "the game's version"})
    events = List(fields.Nested(EventSchema), required=True)
    next_after = JsonInteger(required=True, metadata={
        "description": "pass as `after` for the next page (the last version read)"})


class GamesQuerySchema(Query):
    type = fields.String(validate=validate.OneOf(GAME_TYPES))
    status = fields.String(validate=validate.OneOf(["waiting", "active", "finished",
                                                    "aborted"]), metadata={
        "description": "`waiting`: the lobby (tables with open seats)"})
    page = fields.Integer(load_default=1, validate=validate.Range(1, 100_000))
    per_page = fields.Integer(load_default=20, validate=validate.Range(1, 100))


class GameSummarySchema(Strict):
    id = fields.String(required=True)
    type = fields.String(required=True)
    status = fields.String(required=True)
    version = JsonInteger(required=True)
    created_at = Timestamp(required=True)
    open_seats = JsonInteger(metadata={"description": "tables: seats nobody holds yet"})
    seats = List(fields.Nested(SeatSchema), metadata={
        "description": "tables: who holds each seat"})
    options = fields.Dict(metadata={"description": "tables: the game's public options"})


class GameListSchema(Strict):
    games = List(fields.Nested(GameSummarySchema), required=True)
    page = JsonInteger(required=True)
    per_page = JsonInteger(required=True)
    total = JsonInteger(required=True)


class GameTypeSchema(Strict):
    id = fields.String(required=True)
    name = fields.String(required=True)
    min_players = JsonInteger(required=True)
    max_players = JsonInteger(required=True)
    variants = List(fields.Dict(), required=True)
    options = fields.Dict(required=True, metadata={"description": "JSON Schema of options"})
    actions = fields.Dict(required=True, metadata={
        "description": "JSON Schema per action type"})
    summary = fields.String(required=True, allow_none=True, metadata={
        "description": "the first paragraph of the game's guide, plain text (null for a game "
                       "without a guide)"})
    rules = fields.String(required=True, allow_none=True, metadata={
        "description": "the URL path of the game's guide (GET /v1/game-types/{type}/rules, "
                       "Markdown), null for a game without a guide",
        "example": "/v1/game-types/diamant/rules"})


class GameTypeListSchema(Strict):
    game_types = List(fields.Nested(GameTypeSchema), required=True)


class HealthSchema(Strict):
    status = fields.String(required=True)


class ExportedEventSchema(Strict):
    version = JsonInteger(required=True)
    type = fields.String(required=True)
    seat = JsonInteger(required=True, allow_none=True)
    data = fields.Dict(required=True)
    at = Instant(required=True, allow_none=True)
    forced = JsonBoolean()
    timeout = JsonBoolean()
    cmd = fields.Dict(metadata={"description": "on the first event of each command: what "
                                               "caused it ({seat, action} or {shell})"})


class ForkedFromSchema(Strict):
    id = fields.String(required=True)
    version = JsonInteger(required=True)


class SignatureSchema(Strict):
    alg = fields.String(required=True, validate=validate.Equal("Ed25519"))
    key_id = fields.String(required=True, metadata={
        "description": "the first 16 hex digits of the SHA-256 of the raw public key"})
    value = fields.String(required=True, metadata={
        "description": "base64 of the 64-byte signature of the export without `signature`, "
                       "as JSON with sorted keys and no whitespace"})


class ExportSchema(Strict):
    format = fields.String(required=True, validate=validate.Equal("cartouche-export/1"))
    id = fields.String(required=True)
    type = fields.String(required=True)
    status = fields.String(required=True)
    created_at = Instant(required=True, allow_none=True)
    players = List(fields.Dict(), required=True)
    options = fields.Dict(required=True)
    clock = fields.Dict(required=True, allow_none=True)
    seed = fields.String(required=True, metadata={"description": "the revealed seed (hex)"})
    seed_source = fields.String(required=True, validate=validate.OneOf(["server", "supplied"]))
    seed_commitment = fields.String(required=True)
    forked_from = fields.Nested(ForkedFromSchema, required=True, allow_none=True)
    events = List(fields.Nested(ExportedEventSchema), required=True)
    result = fields.Nested(ResultSchema, required=True, allow_none=True)
    signature = fields.Nested(SignatureSchema, metadata={
        "description": "the server's Ed25519 signature (keys: GET /v1/replays/keys)"})


class VerifiableSchema(ExportSchema):
    """What ``POST /v1/replays/verify`` takes: a game's export, or a tournament's (format
    ``cartouche-tournament``: ``schemas.tournaments.TournamentExportSchema``)."""

    def load(self, data, *args, **kwargs):
        if isinstance(data, dict) and data.get("format") == "cartouche-tournament":
            from .tournaments import TournamentExportSchema

            return TournamentExportSchema().load(data, *args, **kwargs)
        return super().load(data, *args, **kwargs)


class SigningKeySchema(Strict):
    key_id = fields.String(required=True)
    alg = fields.String(required=True)
    current = JsonBoolean(required=True, metadata={
        "description": "the key new exports are signed with (else a retired key, still "
                       "accepted)"})
    public_key = fields.String(required=True, metadata={"description": "raw 32 bytes, base64"})
    pem = fields.String(required=True, metadata={"description": "SubjectPublicKeyInfo PEM"})


class SigningKeysSchema(Strict):
    keys = List(fields.Nested(SigningKeySchema), required=True)


class VerifyResultSchema(Strict):
    valid = JsonBoolean(required=True)
    version = JsonInteger(required=True, allow_none=True,
                             metadata={"description": "the first version that diverges"})
    reason = fields.String(required=True, allow_none=True)
    details = fields.Dict(required=True, metadata={
        "description": "valid: `checked` (events), `signature` (`valid` or `unchecked`), "
                       "for a fork `copied` and `forked_from`, for a tournament `games`; "
                       "a game's `signature_invalid` and "
                       "`not_signed`: `content`, what the seed and the rules find "
                       "(`valid`, `version`, `reason`)"})


class ForkRequestSchema(Strict):
    version = JsonInteger(required=True, validate=validate.Range(1, 2**53), metadata={
        "description": "the version the fork continues from (one that ends a command)"})


class BulkCreateSchema(Strict):
    games = List(fields.Nested(CreateGameSchema), required=True,
                        validate=validate.Length(1, 100))


class BulkCreatedSchema(Strict):
    games = List(fields.Nested(CreatedGameSchema), required=True)


# -- players and tables ---------------------------------------------------------------------
class CreatePlayerSchema(Strict):
    name = Text(required=True, validate=validate.Length(1, 64))
    kind = fields.String(load_default="human", validate=validate.OneOf(["human", "bot"]))
    external_id = Text(validate=validate.Length(1, 128), metadata={
        "description": "the platform's own user id (platform keys only; unique per key)"})


class CreatedPlayerSchema(Strict):
    id = fields.String(required=True)
    name = fields.String(required=True)
    kind = fields.String(required=True)
    token = fields.String(required=True, metadata={
        "description": "the player's secret token, shown this once: it acts for every seat "
                       "the player holds"})
    external_id = fields.String()


class RatingSchema(Strict):
    mu = fields.Float(required=True)
    sigma = fields.Float(required=True)
    ordinal = fields.Float(required=True, metadata={"description": "mu - 3 sigma"})
    games = JsonInteger(required=True, metadata={"description": "rated games counted"})


class PlayerStatsSchema(Strict):
    games = JsonInteger(required=True)
    wins = JsonInteger(required=True, metadata={
        "description": "games finished with a seat the player held ranked first as ratings rank "
                       "them (the seats resigned or forfeited below every seat that played on, "
                       "the last to leave first among them); ties for first count for each"})
    rating = fields.Nested(RatingSchema, required=True, allow_none=True, metadata={
        "description": "null until the player has a rated game of this type"})


class PlayerGameSchema(Strict):
    id = fields.String(required=True)
    type = fields.String(required=True)
    status = fields.String(required=True)
    seats = List(JsonInteger(), required=True)


class PlayerProfileSchema(Strict):
    id = fields.String(required=True)
    name = fields.String(required=True)
    kind = fields.String(required=True, validate=validate.OneOf(["human", "bot"]))
    created_at = Timestamp(required=True)
    external_id = fields.String(metadata={
        "description": "the platform's own user id, given to GET /v1/players?external_id= "
                       "(the platform key that registered it) and GET /v1/players/me only, "
                       "never to the public profile"})
    stats = fields.Dict(keys=fields.String(), values=fields.Nested(PlayerStatsSchema),
                        required=True, metadata={"description": "per game type"})
    games = List(fields.Nested(PlayerGameSchema), metadata={
        "description": "GET /v1/players/me only: every table and game the player is in that is "
                       "waiting or running, newest first (up to CARTOUCHE_PLAYER_GAMES_MAX, "
                       "1000: past it the oldest drop out of the list)"})
    seeks = List(fields.Nested(lambda: SeekSchema()), metadata={
        "description": "GET /v1/players/me only: the player's waiting seeks"})


class PlayersQuerySchema(Query):
    external_id = fields.String(required=True, validate=validate.Length(1, 128))


class JoinSchema(Strict):
    seat = JsonInteger(validate=validate.Range(0, 15), metadata={
        "description": "the seat wanted (default: the one reserved for you, else the first "
                       "open one)"})
    name = Text(validate=validate.Length(1, 64), metadata={
        "description": "without a player token: the name to sit under (open seats only)"})


class JoinedSchema(Strict):
    seat = JsonInteger(required=True)
    token = fields.String(required=True, metadata={"description": "the seat's token, once"})
    status = fields.String(required=True, metadata={
        "description": "`active` when this join filled the table and started the game"})
    version = JsonInteger(required=True)


class RematchSchema(Strict):
    id = fields.String(required=True)
    version = JsonInteger(required=True)
    seats = List(fields.Nested(SeatTokenSchema), required=True)
    seed_commitment = fields.String(required=True)


class LeaderboardQuerySchema(Query):
    limit = fields.Integer(load_default=50, validate=validate.Range(1, 100))
    offset = fields.Integer(load_default=0, validate=validate.Range(0, 1_000_000))
    provisional_offset = fields.Integer(
        load_default=0, validate=validate.Range(0, 1_000_000),
        metadata={"description": "where the `provisional` list starts (`offset` pages "
                                 "`players`)"})


class StandingSchema(Strict):
    rank = JsonInteger(required=True)
    id = fields.String(required=True)
    name = fields.String(required=True, allow_none=True)
    kind = fields.String(required=True, allow_none=True)
    mu = fields.Float(required=True)
    sigma = fields.Float(required=True)
    ordinal = fields.Float(required=True, metadata={"description": "mu - 3 sigma"})
    games = JsonInteger(required=True)


class LeaderboardSchema(Strict):
    type = fields.String(required=True)
    players = List(fields.Nested(StandingSchema), required=True, metadata={
        "description": "players with at least `min_games` rated games, best ordinal first "
                       "(equal ordinals: by id, descending), `limit` of them from `offset`"})
    total = JsonInteger(required=True)
    provisional = List(fields.Nested(StandingSchema), required=True, metadata={
        "description": "players with fewer rated games, in the same order, `limit` of them "
                       "from `provisional_offset`"})
    provisional_total = JsonInteger(required=True)
    min_games = JsonInteger(required=True)


# -- seeks ----------------------------------------------------------------------------------
_SEAT_COUNT = {"type": "integer", "minimum": 1, "maximum": 16}


class SeatCount(fields.Field):
    """A seek's seat counts: one count, or ``[min, max]``; loaded as ``(min, max)``."""

    def __init__(self, **kwargs) -> None:
        super().__init__(metadata={"oneOf": [
            {**_SEAT_COUNT, "title": "exactly"},
            {"type": "array", "title": "from min to max", "items": _SEAT_COUNT,
             "minItems": 2, "maxItems": 2}],
            "description": "how many seats the game has: a count, or [min, max]"}, **kwargs)
        self._count = JsonInteger(validate=validate.Range(1, 16))

    def _deserialize(self, value, attr, data, **kwargs):
        if isinstance(value, list):
            if len(value) != 2:
                raise ma.ValidationError("a count or [min, max]")
            low, high = (self._count.deserialize(v, attr) for v in value)
            return low, high
        count = self._count.deserialize(value, attr)
        return count, count


class FillWithBotsSchema(Strict):
    # out of range, or another level: the service's 422 (``invalid_fill_with_bots``,
    # ``bot_level_unavailable``)
    after_s = JsonInteger(required=True, metadata={
        "description": "seconds the seek waits for players before bots fill it (shorter than "
                       "a seek's life, `CARTOUCHE_SEEK_TTL_S`)", "minimum": 0})
    level = fields.String(required=True, validate=validate.Length(1, 64), metadata={
        "description": "the built-in bot player that takes the other seats (`bot-<level>`)",
        "enum": list(BOT_LEVELS)})


class CreateSeekSchema(Strict):
    type = fields.String(required=True, validate=validate.Length(1, 64),
                         metadata={"description": "a game type id from GET /v1/game-types"})
    seats = SeatCount(required=True)
    options = fields.Dict(keys=fields.String(), load_default=dict, metadata={
        "description": "game options (see GET /v1/game-types), `clock` and `rated` (default "
                       "true); seeks are matched only with seeks of the same options"})
    rating_range = List(
        fields.Float(allow_nan=False, validate=validate.Range(-1e6, 1e6)),
        validate=validate.Length(max=16), metadata={
            "description": "[low, high]: the ordinals (mu - 3 sigma, in the game's rating "
                           "type; 0 for an unrated player) of the players this seek accepts "
                           "(another shape: 422 `invalid_rating_range`)",
            "minItems": 2, "maxItems": 2})
    fill_with_bots = fields.Nested(FillWithBotsSchema, metadata={
        "description": "still unmatched after `after_s`, the seek takes bot seats up to its "
                       "least seat count and starts"})


class SeekSchema(Strict):
    id = fields.String(required=True)
    status = fields.String(required=True, validate=validate.OneOf(
        ["waiting", "matched", "cancelled", "expired"]))
    player = fields.String(required=True)
    type = fields.String(required=True)
    seats = List(JsonInteger(), required=True, metadata={
        "description": "[min, max]"})
    options = fields.Dict(required=True)
    rating_range = List(fields.Float(), required=True, allow_none=True)
    fill_with_bots = fields.Nested(FillWithBotsSchema, required=True, allow_none=True)
    created_at = Timestamp(required=True)
    expires_at = Timestamp(required=True)
    game_id = fields.String(required=True, allow_none=True, metadata={
        "description": "the game it was matched into"})
    seat = JsonInteger(required=True, allow_none=True, metadata={
        "description": "its player's seat in that game"})


class SeeksQuerySchema(Query):
    type = fields.String(validate=validate.OneOf(GAME_TYPES))
    limit = fields.Integer(load_default=50, validate=validate.Range(1, 100))
    offset = fields.Integer(load_default=0, validate=validate.Range(0, 1_000_000))


class SeekListSchema(Strict):
    seeks = List(fields.Nested(SeekSchema), required=True)
    total = JsonInteger(required=True)
