"""Scarabya in the terminal (the CLI): menu labels, the view's state, the result's details."""

from __future__ import annotations

from typing import Any

from rich.table import Table
from rich.text import Text

from ...engine.text import compact, who


def action_label(action: dict) -> str | None:
    if action.get("type") == "place":
        cells = " ".join(f"{r}{'abcdefghij'[c] if 0 <= c < 10 else c}"
                         for r, c in action.get("cells", []))
        return f"place {action.get('piece')} on {cells}"
    return None


def draw(s: dict, names: list[str], you: int | None) -> list:
    out: list[Any] = [Text(f"mode {s.get('mode')} · round {s.get('round')}/{s.get('rounds')} · "
                           f"piece to place: {s.get('piece')} · revealed "
                           f"{' '.join(s.get('revealed', []))} · scores {s.get('scores')}")]
    sites = s.get("sites") or []
    grid = Table.grid(padding=(0, 3))
    for _ in sites:
        grid.add_column()
    heads, boards = [], []
    for site in sites:
        seat = site.get("seat")
        heads.append(who(names, seat, you) if isinstance(seat, int) else Text("shared site"))
        board = Text("   a b c d e f g h i j\n")
        for r, row in enumerate(site.get("rows", [])):
            board.append(f"{r:>2} ")
            for ch in row:
                board.append(ch + " ", style=_scarabya_style(ch))
            board.append("\n")
        boards.append(board)
    if sites:
        grid.add_row(*heads)
        grid.add_row(*boards)
        out.append(grid)
    out.append(Text("legend: . blank  S scarab  R rock  1-4 scarab token  A-Z camp  "
                    "a-z camp over a scarab", style="dim"))
    return out


def _scarabya_style(ch: str) -> str:
    if ch == "S":
        return "bold yellow"
    if ch == "R":
        return "red"
    if ch.isdigit():
        return "bold green"
    if ch.isupper():
        return "cyan"
    if ch.islower():
        return "magenta"
    return "dim"



def details(d: dict, names: list[str], you: int | None) -> list | None:
    seats = d.get("seats")
    if not isinstance(seats, list):
        return None
    out: list[Any] = []
    for seat, row in enumerate(seats):
        line = who(names, seat, you)
        tokens = ", ".join(f"{t['value']} at {t['cell'][0]}{'abcdefghij'[t['cell'][1]]}"
                           for t in row.get("tokens", []))
        line.append(f"  {row.get('score')} points · scarab tokens: {tokens or 'none'} · "
                    f"covered scarabs {row.get('covered_scarabs')}"
                    + (f" · discarded {' '.join(row['discarded'])}"
                       if row.get("discarded") else ""))
        out.append(line)
        if row.get("rows"):
            out.append(Text("\n".join("   " + " ".join(r) for r in row["rows"]),
                            style="dim"))
    rest = {k: v for k, v in d.items() if k != "seats"}
    if rest:
        out.append(Text(" · ".join(f"{k}: {compact(v, 80)}" for k, v in rest.items())))
    return out
