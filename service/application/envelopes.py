"""Stored envelopes: the JSON each stream entry holds around one event, and its timestamps.

``{"type", "seat", "data", "at", "schema"[, "forced"][, "timeout"][, "cmd"][, "shell"]}``: the
first envelope of a command carries what caused it (``cmd``), the last one the shell's state
after it (``shell``, :class:`~service.application.model.Shell`).
"""

from __future__ import annotations

from datetime import datetime, timezone

from ..engine import Game
from ..store.events import StoredEvent

_last_second: tuple[int | None, str] = (None, "")  # the last whole second, formatted


def rfc3339(ms: int) -> str:
    """``ms`` (Unix epoch milliseconds) as ``2026-01-02T03:04:05.678Z``."""
    global _last_second
    second, milli = divmod(ms, 1000)
    cached = _last_second  # a tuple, replaced whole: safe to share between threads
    if cached[0] != second:
        cached = _last_second = (
            second, datetime.fromtimestamp(second, timezone.utc).strftime("%Y-%m-%dT%H:%M:%S"))
    return f"{cached[1]}.{milli:03d}Z"


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
