"""Pebbles in the terminal."""

from __future__ import annotations

from rich.text import Text

from service.engine.text import who


def action_label(action: dict) -> str | None:
    return f"take {action.get('count')}" if action.get("type") == "take" else None


def draw(state: dict, names: list[str], you: int | None) -> list:
    line = Text(f"pile: {'●' * state['pile']} ({state['pile']} left) · to move: ")
    line.append_text(who(names, state["turn"], you))
    return [line]
