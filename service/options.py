"""The options the server accepts for a game: the game's own (``Game.options_schema``, checked by
``Game.normalize_options``) and the shell's, which the shell takes out of ``options`` before the
game sees them (``clock``, checked by :func:`service.clock.normalize`; ``rated`` and a table's
``on_decline``, checked at creation).

:func:`served_schema` is the one JSON Schema of both that ``GET /v1/game-types`` and the
contract's ``<Game>Options`` components serve.
"""

from __future__ import annotations

import functools

from . import clock
from .engine import Game
from .engine.schemas import typed_literals

#: The options every game takes, owned by the shell.
SHELL_PROPERTIES = {
    "clock": clock.SCHEMA,
    "rated": {"type": "boolean", "description": (
        "rate the game when it ends (OpenSkill, per game type): every seat must be held by a "
        "distinct player; default true for tables and seeks, false otherwise; never for solo "
        "games, nor for a deal somebody fixed (a supplied seed, `setup`)")},
    "on_decline": {"type": "string", "enum": ["open", "abort"], "default": "open",
                   "description": ("tables with an invited seat: what an invitation turned "
                                   "down does to the table")},
}

#: A deal a client fixed (``setup``) is never rated (``service.application.creation``).
FIXED_DEAL_UNRATED = {
    "if": {"required": ["setup"], "properties": {"setup": {"type": "object"}}},
    "then": {"properties": {"rated": {"const": False}}},
}


@functools.lru_cache(maxsize=64)
def served_schema(game: Game) -> dict:
    """``game``'s options schema with the shell's options among its properties (the same
    dict for a game every time: written once, read by every catalog request; not to be
    changed)."""
    schema = game.options_schema
    served = {**schema, "properties": {**schema.get("properties", {}), **SHELL_PROPERTIES}}
    if "setup" in served["properties"] and "if" not in served:
        served.update(FIXED_DEAL_UNRATED)
    return typed_literals(served)
