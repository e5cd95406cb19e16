"""JSON Schemas (2020-12) of what the shell serves around every game: the ``data`` of the
events the engine and the application write for all games alike (creation, a table's seats,
resignations, forfeits, aborts). Each game declares its own (``Game.state_schema``,
``Game.event_schemas``); the contract (openapi.yaml) composes both."""

from __future__ import annotations

SEAT_ENTRY = {
    "type": "object",
    "description": "A seat as created: its name and bot (null for a seat nobody holds yet), "
                   "the player holding it, or open / the invited player for a table's seat.",
    "properties": {
        "name": {"type": ["string", "null"]},
        "bot": {"type": ["object", "null"]},
        "player": {"type": "string"},
        "invited": {"type": "string"},
        "open": {"const": True},
    },
    "required": ["name", "bot"],
    "additionalProperties": False,
}

SHELL_EVENT_SCHEMAS: dict[str, dict] = {
    "GameCreated": {
        "type": "object",
        "description": "Version 1 of every game: the table, its normalized options (without "
                       "options.setup while the game runs) and the seed's commitment.",
        "properties": {
            "game_type": {"type": "string"},
            "players": {"type": "array", "items": SEAT_ENTRY, "minItems": 1},
            "options": {"type": "object"},
            "seed_commitment": {"type": "string"},
            "seed": {"type": "string"},
            "setup": {"enum": ["standard", "custom"]},
            "max_events": {"type": "integer", "minimum": 1},
            "idle_abort_s": {"type": "integer", "minimum": 1},
        },
        "required": ["game_type", "players", "options", "seed_commitment", "seed", "setup"],
    },
}
