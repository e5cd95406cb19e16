"""JSON Schemas (2020-12) of what the shell serves around every game: the ``data`` of the
events the engine and the application write for all games alike (creation, a table's seats,
resignations, forfeits, aborts), and the envelope every served event has. Each game declares its
own (``Game.state_schema``, ``Game.event_schemas``); the contract (openapi.yaml) composes both
(``service.api.contract``)."""

from __future__ import annotations

_PLAYER_ID = {"type": "string", "description": "a player id (`p-...` or `bot-<level>`)"}
_SEAT = {"type": "integer", "minimum": 0}

BOT = {
    "type": "object",
    "properties": {"level": {"type": "string"}, "budget_ms": {"type": "integer"}},
    "required": ["level"],
}

SEAT_ENTRY = {
    "type": "object",
    "description": "A seat as created: its name and bot (null for a seat nobody holds yet), "
                   "the player holding it, or open / the invited player for a table's seat.",
    "properties": {
        "name": {"type": ["string", "null"]},
        "bot": {"anyOf": [BOT, {"type": "null"}]},
        "player": _PLAYER_ID,
        "invited": _PLAYER_ID,
        "open": {"type": "boolean", "description": "true: anyone may take the seat"},
    },
    "required": ["name", "bot"],
    "additionalProperties": False,
}

#: who aborted a game: a seat (before any move, or the last one leaving a table), a platform
#: key, the server (idle or event limit) or the lobby (a table that expired)
_ABORTED_BY = {"anyOf": [_SEAT, {"enum": ["platform", "server", "lobby"]}]}

SHELL_EVENT_SCHEMAS: dict[str, dict] = {
    "GameCreated": {
        "type": "object",
        "description": "Version 1 of every game: the table, its normalized options (without "
                       "options.setup while the game runs), the seed's commitment, and what "
                       "the shell holds the game to.",
        "properties": {
            "game_type": {"type": "string"},
            "players": {"type": "array", "items": SEAT_ENTRY, "minItems": 1},
            "options": {"type": "object", "description": "the game's normalized options"},
            "seed_commitment": {"type": "string"},
            "seed": {"enum": ["server", "supplied"]},
            "setup": {"enum": ["standard", "custom"]},
            "clock": {"type": ["object", "null"], "description": "the turn clock, if any"},
            "on_decline": {"enum": ["open", "abort"], "description": "tables only"},
            "rated": {"type": "boolean", "description": "true (present) when the game is rated"},
            "max_events": {"type": "integer", "minimum": 1},
            "idle_abort_s": {"type": "integer", "minimum": 0},
            "lobby_ttl_s": {"type": "integer", "minimum": 0,
                            "description": "tables only: how long the table may wait for "
                                           "players"},
            "rematch_of": {"type": "string", "description": "a rematch: the game it follows"},
            "seeks": {"type": "array", "items": {"type": ["string", "null"]},
                      "description": "a seek's game: the seek of each seat (null: a bot's)"},
            "tournament": {"type": "string", "description": "a tournament's game: its id"},
            "round": {"type": "integer", "minimum": 1, "description": "... and round"},
            "forked_from": {
                "type": "object", "description": "a fork: the game and version it continues",
                "properties": {"id": {"type": "string"}, "version": {"type": "integer"}},
                "required": ["id", "version"], "additionalProperties": False},
        },
        "required": ["game_type", "players", "options", "seed_commitment", "seed", "setup"],
        "additionalProperties": False,
    },
    "SeatJoined": {
        "type": "object",
        "description": "A player (or a name, without a player token) took a table's seat.",
        "properties": {"name": {"type": "string"},
                       "player": {"anyOf": [_PLAYER_ID, {"type": "null"}]}},
        "required": ["name", "player"],
        "additionalProperties": False,
    },
    "SeatLeft": {
        "type": "object",
        "description": "The seat's holder left the table before it started: the seat is open "
                       "again (reserved again when its invited player left it).",
        "properties": {},
        "additionalProperties": False,
    },
    "SeatDeclined": {
        "type": "object",
        "description": "The invited player turned the seat down: it is open now.",
        "properties": {"player": _PLAYER_ID},
        "required": ["player"],
        "additionalProperties": False,
    },
    "GameStarted": {
        "type": "object",
        "description": "The table's last seat filled: the seats as the game starts with them.",
        "properties": {"players": {"type": "array", "items": SEAT_ENTRY, "minItems": 1}},
        "required": ["players"],
        "additionalProperties": False,
    },
    "GameAborted": {
        "type": "object",
        "description": "The game ended before it was played: status `aborted`, unrated.",
        "properties": {
            "by": _ABORTED_BY,
            "reason": {"enum": ["empty", "declined", "expired", "idle", "event_limit"],
                       "description": "absent for an abort asked for by a seat or a platform"},
        },
        "required": ["by"],
        "additionalProperties": False,
    },
    "SeatResigned": {
        "type": "object",
        "description": "The seat's human resigned, or, in a rated game without a clock, was "
                       "resigned by the server after the game waited on it for its idle limit "
                       "(`reason: idle`): who plays it from now on. Ratings rank it last.",
        "properties": {"replaced_by": {
            "type": "string", "pattern": "^(auto|bot:[a-z]+)$",
            "description": "`bot:<level>`, or `auto` (the clock's automatic move)"},
            "reason": {"enum": ["idle"],
                       "description": "absent for a resignation asked for by the seat"}},
        "required": ["replaced_by"],
        "additionalProperties": False,
    },
    "SeatForfeited": {
        "type": "object",
        "description": "The seat left the game (resigned under `timeout: forfeit`, or ran out "
                       "of time, with every seat whose time ran out at the same instant): the "
                       "rules go on without it, or the game ends with it last.",
        "properties": {"reason": {"enum": ["resigned", "timeout"]},
                       "game_continues": {"type": "boolean"}},
        "required": ["reason", "game_continues"],
        "additionalProperties": False,
    },
}

#: JSON Schema's type of a literal's Python value
_JSON_TYPES = {str: "string", bool: "boolean", int: "integer", float: "number",
               type(None): "null"}


def typed_literals(node):
    """``node`` with a ``type`` beside each ``const`` or ``enum`` that has none, from its
    values (one type, or one and null): the same schema, which Java's and Go's generators
    need to type a discriminator or an enum (without it they warn and fall back to an
    untyped value)."""
    if isinstance(node, list):
        return [typed_literals(item) for item in node]
    if not isinstance(node, dict):
        return node
    out = {key: typed_literals(value) for key, value in node.items()}
    values = [out["const"]] if "const" in out else out.get("enum")
    if "type" not in out and isinstance(values, list) and values:
        kinds = {_JSON_TYPES.get(type(v)) for v in values}
        if None not in kinds:
            if len(kinds) == 1:
                out["type"] = kinds.pop()
            elif len(kinds) == 2 and "null" in kinds:
                out["type"] = [(kinds - {"null"}).pop(), "null"]
    return out


#: A point in time as text: RFC 3339 (Cartouche writes UTC with milliseconds and ``Z``,
#: ``2026-12-02T09:14:03.512Z``), a JSON Schema ``pattern``. Events and exports give their
#: instants as text with it rather than ``format: date-time``: an export's signature covers
#: them as written, and a client generated from the contract that parsed them into dates and
#: wrote them back would spell them otherwise (``+00:00``, microseconds) and break it.
INSTANT_PATTERN = (r"^[0-9]{4}-(0[1-9]|1[0-2])-(0[1-9]|[12][0-9]|3[01])[Tt]"
                   r"([01][0-9]|2[0-3]):[0-5][0-9]:[0-5][0-9](\.[0-9]+)?"
                   r"([Zz]|[+-]([01][0-9]|2[0-3]):[0-5][0-9])$")
INSTANT_DESCRIPTION = ("RFC 3339 (2026-12-02T09:14:03.512Z), as text: an export's signature "
                       "covers it as written")

#: The envelope of every served event (``GET /v1/games/{id}/events``, an action's response,
#: an export's ``events``) around its ``type`` and ``data``.
EVENT_ENVELOPE: dict[str, dict] = {
    "version": {"type": "integer", "minimum": 1, "description": "the game's version it made"},
    "seat": {"type": ["integer", "null"], "minimum": 0,
             "description": "the seat it is about, null for the table"},
    "at": {"type": ["string", "null"], "pattern": INSTANT_PATTERN,
           "description": f"when it was written: {INSTANT_DESCRIPTION}"},
    "forced": {"type": "boolean",
               "description": "played by the engine: the seat had one legal action"},
    "timeout": {"type": "boolean",
                "description": "played for the seat when its clock ran out"},
    "cmd": {"type": "object", "description": "exports only, on the first event of each "
                                            "command: what caused it ({seat, action} or "
                                            "{shell, ...})"},
}
EVENT_REQUIRED = ["version", "type", "seat", "at", "data"]


# -- building blocks of the games' schemas ----------------------------------------------------
def closed(description: str, required: list[str], **properties: dict) -> dict:
    """An object with exactly these properties, ``required`` always present."""
    return {"type": "object", "description": description, "properties": properties,
            "required": required, "additionalProperties": False}


def described(schema: dict, description: str) -> dict:
    """``schema`` with its own description."""
    return {**schema, "description": description}


def nullable(schema: dict, description: str) -> dict:
    """``schema`` or null. An ``anyOf``: client generators make it an optional value, where a
    type list with null in an enum gives them three enum classes."""
    return {"anyOf": [schema, {"type": "null"}], "description": description}
