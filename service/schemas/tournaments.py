"""The wire of /v1/tournaments (``service.api.tournaments``)."""

from __future__ import annotations

from marshmallow import fields, validate

from . import (GAME_TYPES, ExportSchema, JsonBoolean, JsonInteger, List, SignatureSchema,
               Strict, Text)


class CreateTournamentSchema(Strict):
    name = Text(required=True, validate=validate.Length(1, 100))
    type = fields.String(required=True, validate=validate.OneOf(GAME_TYPES))
    options = fields.Dict(keys=fields.String(), load_default=dict, metadata={
        "description": "game options (see GET /v1/game-types) and `clock`, as for a "
                       "creation; every game of the tournament is created with them"})
    # the values the contract declares; any other is the service's 422 (``invalid_format``,
    # ``invalid_participant_count``), as the README's table says
    format = fields.String(required=True, validate=validate.Length(1, 64),
                           metadata={"enum": ["round_robin", "swiss"]})
    rounds = JsonInteger(metadata={"description": "Swiss: the number of rounds"})
    seats_per_game = JsonInteger(required=True)
    participants = List(fields.String(validate=validate.Length(1, 64)),
                               required=True, validate=validate.Length(max=1000),
                               metadata={"description": "player ids (bots: `bot-<level>`)",
                                         "minItems": 2})
    duplicate = JsonBoolean(load_default=False, metadata={
        "description": "every deal (one seed) played once per seat rotation by its group"})
    rated = JsonBoolean(load_default=False)


class TournamentGameSchema(Strict):
    id = fields.String(required=True)
    seats = List(fields.String(), required=True)
    deal = JsonInteger(required=True)
    status = fields.String(required=True)
    result = List(JsonInteger(), required=True, allow_none=True, metadata={
        "description": "each seat's rank once recorded (null: not yet, or aborted)"})


class TournamentRoundSchema(Strict):
    number = JsonInteger(required=True)
    games = List(fields.Nested(TournamentGameSchema), required=True)
    byes = List(fields.String(), required=True)


class TournamentStandingSchema(Strict):
    rank = JsonInteger(required=True)
    player = fields.String(required=True)
    points = fields.Float(required=True)
    tiebreak = fields.Float(required=True, metadata={
        "description": "Buchholz (Swiss) or head-to-head points (round robin)"})
    rating = fields.Float(required=True)
    games = JsonInteger(required=True)


class TournamentSchema(Strict):
    id = fields.String(required=True)
    name = fields.String(required=True)
    type = fields.String(required=True)
    options = fields.Dict(required=True)
    format = fields.String(required=True)
    rounds_total = JsonInteger(required=True)
    seats_per_game = JsonInteger(required=True)
    duplicate = fields.Boolean(required=True)
    rated = fields.Boolean(required=True)
    status = fields.String(required=True, validate=validate.OneOf(["running", "finished"]))
    participants = List(fields.Dict(), required=True)
    rounds = List(fields.Nested(TournamentRoundSchema), required=True)
    standings = List(fields.Nested(TournamentStandingSchema), required=True)
    version = JsonInteger(required=True, metadata={"description": "events in its stream"})


class TournamentExportSchema(Strict):
    format = fields.String(required=True, validate=validate.Equal("cartouche-tournament"))
    id = fields.String(required=True)
    events = List(fields.Dict(), required=True)
    standings = List(fields.Nested(TournamentStandingSchema), required=True)
    games = List(fields.Nested(ExportSchema), required=True, metadata={
        "description": "every game's export, as GET /v1/games/{id}/export serves it"})
    signature = fields.Nested(SignatureSchema, metadata={
        "description": "the server's Ed25519 signature of the whole export (keys: GET "
                       "/v1/replays/keys), as a game's export has"})
