"""What every game's text rendering (``service/games/<game>/render.py``) shares: seat names in
their colours, compact JSON, multisets. Used by the CLI through :mod:`service.cli.render`.

A game's ``render`` module may define any of::

    action_label(action: dict) -> str | None       # a menu line; None: the generic label
    draw(state: dict, names, you) -> list           # the view's ``state`` as Rich renderables
    details(details: dict, names, you) -> list | None   # a result's details; None: generic
"""

from __future__ import annotations

import json
from typing import Any

from rich.text import Text

SEAT_COLOURS = ["cyan", "magenta", "green", "yellow", "blue", "red", "bright_cyan",
                "bright_magenta"]


def seat_style(seat: int | None) -> str:
    return SEAT_COLOURS[seat % len(SEAT_COLOURS)] if isinstance(seat, int) else "white"


def who(names: list[str], seat: int | None, you: int | None = None) -> Text:
    if seat is None:
        return Text("game", style="dim")
    name = names[seat] if 0 <= seat < len(names) else f"seat {seat}"
    label = f"{name} (you)" if seat == you and name.lower() != "you" else name
    return Text(label, style=seat_style(seat))


def compact(value: Any, limit: int = 90) -> str:
    text = json.dumps(value, separators=(",", ":")) if not isinstance(value, str) else value
    return text if len(text) <= limit else text[:limit - 1] + "…"


def multiset(counts: dict) -> str:
    return ", ".join(f"{k}×{v}" if v != 1 else k for k, v in counts.items() if v)
