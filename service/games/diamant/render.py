"""Diamant in the terminal (the CLI): menu labels, the view's state, the result's details."""

from __future__ import annotations


from rich.table import Table
from rich.text import Text

from ...engine.text import who


def action_label(action: dict) -> str | None:
    if action.get("type") == "decide":
        return {"continue": "continue exploring", "return": "return to camp"}.get(
            action.get("choice"), str(action.get("choice")))
    return None


def draw(s: dict, names: list[str], you: int | None) -> list:
    path = Text("path: ")
    for card in s.get("path", []):
        style = ("red" if not card.startswith(("T", "R")) or card.startswith("RAM")
                 else "yellow" if card.startswith("R") else "green")
        path.append(card + " ", style=style)
    traps = ", ".join(f"{k}×{v}" for k, v in (s.get("traps_on_path") or {}).items())
    info = Text(f"round {s.get('round')}/5 · rubies left on the path {s.get('path_rubies')} · "
                f"deck {s.get('deck_size')} · traps seen: {traps or 'none'}")
    if s.get("removed"):
        info.append(f" · removed: {' '.join(s['removed'])}")
    t = Table(title=None, show_edge=False, pad_edge=False)
    for col in ("player", "where", "pocket", "chest", "relics", "decision"):
        t.add_column(col)
    for p in s.get("players", []):
        seat = p["seat"]
        decision = (p.get("choice") or ("committed" if p.get("committed") else "")) \
            if p.get("in_cave") else ""
        t.add_row(who(names, seat, you), "in the cave" if p.get("in_cave") else "camp",
                  str(p.get("pocket")), "?" if p.get("chest") is None else str(p.get("chest")),
                  str(p.get("relics")), decision)
    return [path, info, t]



def details(d: dict, names: list[str], you: int | None) -> list:
    t = Table(title="scoring", show_edge=False)
    for col in ("player", "rubies in chest", "relics", "relic points"):
        t.add_column(col)
    for seat, chest in enumerate(d.get("chests", [])):
        t.add_row(who(names, seat, you), str(chest), str(d["relics"][seat]),
                  str(d["relic_points"][seat]))
    return [t]
