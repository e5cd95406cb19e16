"""Stored envelopes: the JSON each stream entry holds around one event (its ``at``:
:func:`service.timestamps.rfc3339`).

``{"type", "seat", "data", "at", "schema"[, "forced"][, "timeout"][, "cmd"][, "shell"]}``: the
first envelope of a command carries what caused it (``cmd``), the last one the shell's state
after it (``shell``, :class:`~service.application.model.Shell`) when the command changed it:
the shell at a version is the newest one stored up to it.
"""

from __future__ import annotations

from ..engine import Game
from ..store.events import StoredEvent


def envelope(game: Game, ev: dict, at: str) -> dict:
    """The stored form of one event the engine produced at ``at``."""
    out = {"type": ev["type"], "seat": ev.get("seat"), "data": ev.get("data", {}),
           "at": at, "schema": game.event_schema}
    for flag in ("forced", "timeout"):
        if ev.get(flag):
            out[flag] = True
    return out


def game_event(game: Game, stored: StoredEvent) -> dict:
    """The event a stored envelope holds, as the rules apply it (upcast to today's schema)."""
    env = stored.envelope
    ev = {"type": env["type"], "seat": env.get("seat"), "data": env.get("data", {})}
    if env.get("forced"):
        ev["forced"] = True
    schema = env.get("schema", 1)
    if schema < game.event_schema:
        ev = game.upcast(ev, schema)
    return ev
