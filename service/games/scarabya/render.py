"""Scarabya in the terminal (the CLI): menu labels, the view's state, event lines, the result's
details."""

from __future__ import annotations

from typing import Any

from rich.table import Table
from rich.text import Text

from ...engine.text import compact, game_over, name, per_seat, plural, who


def cells_text(cells: Any) -> str:
    """Cells ``[row, col]`` as the board labels them: row number, column letter (``3d``)."""
    return " ".join(f"{r}{'abcdefghij'[c] if 0 <= c < 10 else c}" for r, c in cells or [])


def action_label(action: dict) -> str | None:
    if action.get("type") == "place":
        return f"place {action.get('piece')} on {cells_text(action.get('cells', []))}"
    return None


def event_text(ev: dict, names: list[str]) -> str | None:
    kind, d = ev.get("type"), ev.get("data") or {}
    who_ = name(names, d.get("seat", ev.get("seat")))
    if kind == "LayoutCreated":
        rows = "".join(d.get("rows") or [])
        return (f"The site is laid out ({d.get('source')}): {plural(rows.count('S'), 'scarab')}, "
                f"{plural(rows.count('R'), 'rock')}")
    if kind == "MissionDeckShuffled":
        return "The mission deck is shuffled" + (
            f": {' '.join(d['order'])}" if d.get("order") else
            " (its order stays hidden)" if d.get("source") == "shuffled" else "")
    if kind == "MissionRevealed":
        text = f"Round {d.get('round')}: the mission is piece {d.get('piece')}"
        if isinstance(d.get("seat"), int):
            text += f", {who_} to place it"
        return text
    if kind == "PlacementCommitted":
        if "cells" in d:
            return (f"{who_} places {d.get('piece')} on {cells_text(d['cells'])} "
                    "(hidden until the reveal)")
        return f"{who_} commits a placement of {d.get('piece')}"
    if kind == "PlacementsRevealed":
        each = "; ".join(f"{name(names, s)} on {cells_text(c)}" if c else
                         f"{name(names, s)} discards it"
                         for s, c in enumerate(d.get("placements") or []))
        return f"Round {d.get('round')}, piece {d.get('piece')}: {each}"
    if kind == "CampPlaced":
        return f"{who_} places {d.get('piece')} on {cells_text(d.get('cells'))}"
    if kind == "CampDiscarded":
        return f"{who_} cannot place {d.get('piece')}: the camp is discarded"
    if kind == "RegionsScored":
        regions = d.get("regions") or []
        scarabs = sum(len(r.get("scarabs") or []) for r in regions)
        return (f"{who_} encloses {plural(len(regions), 'region')} with "
                f"{plural(scarabs, 'scarab')}: {plural(d.get('points'), 'point')}")
    if kind == "DuelGameStarted":
        return f"Duel game {d.get('game')} starts; {name(names, d.get('starter'))} begins"
    if kind == "DuelGameEnded":
        return f"Duel game {d.get('game')} ends: {per_seat(names, d.get('scores'))}"
    if kind == "GameEnded":
        result = d.get("result") or {}
        return game_over(names, result.get("scores"), result.get("winners"))
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
