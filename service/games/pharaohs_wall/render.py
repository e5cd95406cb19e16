"""Pharaoh's Wall in the terminal (the CLI): menu labels, the view's state, the result's details."""

from __future__ import annotations

from typing import Any

from rich.table import Table
from rich.text import Text

from ...engine.text import compact, who


def action_label(action: dict) -> str | None:
    kind = action.get("type")
    if kind == "insert":
        ex = action.get("explorer")
        exs = ("" if ex in (None, "none") else
               " + explorer from reserve" if ex == "reserve" else
               f" + explorer from pillar {ex.get('from_pillar')}" if isinstance(ex, dict)
               else f" + explorer {compact(ex)}")
        return f"insert {action.get('card')} in column {action.get('column')}{exs}"
    if kind == "move_scarab":
        return f"move a scarab {action.get('from')} -> {action.get('to')}"
    if kind == "curse_claim":
        return "claim cells " + " ".join(f"({c},{r})" for c, r in action.get("cells", []))
    return None


def draw(s: dict, names: list[str], you: int | None) -> list:
    wall = s.get("wall", [])
    height = max([len(c) for c in wall] + [1])
    t = Table(show_edge=False, pad_edge=False, title="the wall")
    t.add_column("row")
    for c in range(len(wall)):
        t.add_column(f"col {c}")
    for r in range(height):
        t.add_row(str(r), *[Text(col[r], style=_animal_style(col[r])) if r < len(col) else ""
                            for col in wall])
    pillars = Text("pillars: ")
    for animal in s.get("pillar_order", []):
        p = (s.get("pillars") or {}).get(animal, {})
        occ = p.get("occupant")
        pillars.append(f"{animal}", style=_animal_style(animal))
        explorer = f", {names[occ]}" if isinstance(occ, int) and occ < len(names) else ""
        pillars.append(f"[{len(p.get('stack', []))} sarc, {p.get('scarabs', 0)} scarab"
                       f"{explorer}] ")
    out: list[Any] = [Text(f"turn {s.get('turn_number')} · phase {s.get('phase')} · supply "
                           f"{s.get('supply')} · piles {s.get('pile_sizes')}"), t, pillars]
    for seat in range(len(s.get("reserves", []))):
        line = who(names, seat, you)
        hand = (s.get("hands") or [None] * (seat + 1))[seat]
        pts = (s.get("sarcophagus_points") or [None] * (seat + 1))[seat]
        line.append(f"  reserve {s['reserves'][seat]} · sarcophagi "
                    f"{len((s.get('sarcophagi') or [[]] * (seat + 1))[seat])}"
                    f"{'' if pts is None else f' ({pts} pts)'}")
        pharaoh = (s.get("pharaohs") or [None] * (seat + 1))[seat]
        if pharaoh:
            line.append(f" · pharaoh {pharaoh}")
        line.append(" · hand: " + (" ".join(hand) if hand is not None else
                                   f"{s.get('hand_sizes', [0] * (seat + 1))[seat]} hidden"))
        out.append(line)
    if s.get("curse"):
        out.append(Text(f"curse: {compact(s['curse'], 200)}", style="red"))
    return out


def _animal_style(card: str) -> str:
    for animal, style in (("CAMEL", "yellow"), ("FALCON", "cyan"), ("CAT", "magenta"),
                          ("CROCODILE", "green"), ("MULE", "white"), ("IBIS", "bright_blue"),
                          ("SNAKE", "red")):
        if animal in card:
            return style
    return ""
