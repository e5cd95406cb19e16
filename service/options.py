"""The options the server accepts for a game: the game's own (``Game.options_schema``, checked by
``Game.normalize_options``) and the shell's, which the shell takes out of ``options`` before the
game sees them (``clock``, checked by :func:`service.clock.normalize`; ``rated`` and a table's
``on_decline``, checked at creation).

:func:`served_schema` is the one JSON Schema of both that ``GET /v1/game-types`` and the
contract's ``<Game>Options`` components serve.
"""

from __future__ import annotations

import functools

from jsonschema import Draft202012Validator

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
FIXED_DEAL = {"required": ["setup"], "properties": {"setup": {"type": "object"}}}
UNRATED = {"properties": {"rated": {"const": False}}}


def rates(game: Game, options: dict) -> bool:
    """Whether a game with these normalized ``options`` may be rated (its
    :attr:`~service.engine.Game.unrated_options` do not match them)."""
    return game.unrated_options is None or not _unrated_validator(game).is_valid(options)


@functools.lru_cache(maxsize=64)
def _unrated_validator(game: Game) -> Draft202012Validator:
    return Draft202012Validator(game.unrated_options)


@functools.lru_cache(maxsize=64)
def served_schema(game: Game) -> dict:
    """``game``'s options schema with the shell's options among its properties (the same
    dict for a game every time: written once, read by every catalog request; not to be
    changed)."""
    schema = game.options_schema
    served = {**schema, "properties": {**schema.get("properties", {}), **SHELL_PROPERTIES}}
    unrated = ([FIXED_DEAL] if "setup" in served["properties"] else []) + \
        ([game.unrated_options] if game.unrated_options is not None else [])
    if unrated:  # what the server refuses beside rated: true, and rates false by default
        served["allOf"] = [*served.get("allOf", []),
                           *({"if": condition, "then": UNRATED} for condition in unrated)]
    return typed_literals(served)
