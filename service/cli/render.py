"""Drawing game views, actions, events and results in the terminal (Rich).

Each game draws its own state, menu labels, event sentences and result details in
``service/games/<game>/render.py`` (see :mod:`service.engine.text`); the events every game has
(creation, lobby, resignations, forfeits, aborts) are worded here, once (:func:`shell_text`).
Anything a game does not draw falls back to compact JSON here, so a new field or game never
breaks the CLI.

Everything the CLI prints goes through a console of :func:`make_console`, which escapes every
piece of text it is given (:func:`service.engine.text.escape`): a name, an event or an error
from any server is shown, never obeyed by the terminal.
"""

from __future__ import annotations

from typing import Any

from rich.columns import Columns
from rich.console import Console, Group
from rich.segment import Segment
from rich.table import Table
from rich.text import Text

from ..engine.text import (SEAT_COLOURS, compact, escape, listing, name,  # noqa: F401
                           seat_style, who)
from ..games import render_module


def _hook(game: str, name: str):
    module = render_module(game)
    return getattr(module, name, None) if module is not None else None


# --------------------------------------------------------------------------- actions

def action_label(game: str, action: dict) -> str:
    kind = action.get("type", "?")
    rest = {k: v for k, v in action.items() if k != "type"}
    label = _hook(game, "action_label")
    if label is not None:
        text = label(action)
        if text is not None:
            return text
    if not rest:
        return kind.replace("_", " ")
    return kind.replace("_", " ") + " " + " ".join(
        f"{k}={compact(v, 40)}" for k, v in rest.items())


def menu(game: str, actions: list[dict]) -> Any:
    if len(actions) > 20:   # long menus (Scarabya, Papyrus) in columns
        width = len(str(len(actions)))
        return Columns([Text(f"{i:>{width}}) {action_label(game, a)}")
                        for i, a in enumerate(actions, 1)], column_first=True, padding=(0, 3))
    table = Table.grid(padding=(0, 1))
    table.add_column(justify="right", style="bold")
    table.add_column()
    for i, action in enumerate(actions, 1):
        table.add_row(f"{i})", action_label(game, action))
    return table


# --------------------------------------------------------------------------- events

ABORTED_BY = {"platform": "the platform", "lobby": "the lobby", "server": "the server"}
ABORT_REASONS = {"empty": "every player left the table",
                 "declined": "an invited player declined",
                 "expired": "nobody filled the table in time",
                 "event_limit": "it reached the most events a game may have",
                 "idle": "nobody moved for too long"}


def _controller(stored: Any) -> str:
    kind, _, level = str(stored).partition(":")
    if kind == "auto":
        return "automatic moves play the seat on"
    if kind == "bot":
        return f"a {level} bot takes the seat" if level else "a bot takes the seat"
    return f"{kind} takes the seat"


def shell_text(ev: dict, names: list[str]) -> str | None:
    """The events every game has (creation, the lobby, resignations, forfeits, aborts) as one
    sentence, or None for a game's own event."""
    kind, d, seat = ev.get("type"), ev.get("data") or {}, ev.get("seat")
    someone = name(names, seat)
    if kind == "GameCreated":
        seats = d.get("players") or []
        label = [p.get("name") or ("(open)" if p.get("open") else
                                   "(invited)" if p.get("invited") else f"seat {i}")
                 for i, p in enumerate(seats)]
        return (f"A game of {d.get('game_type', '?')} is created for {len(seats)}: "
                f"{listing(label)}")
    if kind == "SeatJoined":
        return f"{d.get('name') or someone} takes seat {seat}"
    if kind == "SeatLeft":
        return f"{someone} leaves the table"
    if kind == "SeatDeclined":
        return f"The player invited to seat {seat} declines"
    if kind == "GameStarted":
        return "Every seat is taken: the game starts"
    if kind == "SeatResigned":
        why = " after the game waited on them too long" if d.get("reason") == "idle" else ""
        return f"{someone} resigns{why}; {_controller(d.get('replaced_by'))}"
    if kind == "SeatForfeited":
        why = {"timeout": "runs out of time", "resigned": "resigns"}.get(d.get("reason"),
                                                                       "is out")
        goes = "the game goes on without them" if d.get("game_continues") else "the game ends"
        return f"{someone} {why} and forfeits; {goes}"
    if kind == "GameAborted":
        by = d.get("by")
        who_ = name(names, by) if isinstance(by, int) else ABORTED_BY.get(by, str(by or "?"))
        reason = d.get("reason")
        why = f": {ABORT_REASONS.get(reason, str(reason).replace('_', ' '))}" if reason else ""
        return f"The game is aborted by {who_}{why}"
    return None


def event_text(game: str | None, ev: dict, names: list[str]) -> str | None:
    """``ev`` as a sentence: the shell's wording, else the game's ``event_text`` hook (None
    when neither words it, or the hook cannot read an unexpected shape)."""
    try:
        text = shell_text(ev, names)
        if text is None and game:
            hook = _hook(game, "event_text")
            text = hook(ev, names) if hook is not None else None
    except Exception:  # noqa: BLE001 - an unexpected event shape falls back to compact JSON
        return None
    return text


def event_line(ev: dict, names: list[str], you: int | None = None,
               game: str | None = None) -> Text:
    """One line per event: its version, then the sentence :func:`event_text` makes of it (a
    compact ``key=value`` line for an event nobody words)."""
    line = Text(f"v{ev.get('version', '?'):<4} ", style="dim")
    shown = [f"{n} (you)" if i == you and n.lower() != "you" else n
             for i, n in enumerate(names)]
    text = event_text(game, ev, shown)
    if text is not None:
        line.append(text, style=seat_style(ev.get("seat")) if ev.get("seat") is not None
                    else "")
    else:
        line.append_text(who(names, ev.get("seat"), you))
        line.append(" " + str(ev.get("type")), style="bold")
        data = ev.get("data") or {}
        if data:
            line.append(" " + " ".join(f"{k}={compact(v, 40)}"
                                       for k, v in data.items())[:150])
    if ev.get("forced"):
        line.append(" (forced)", style="dim")
    if ev.get("timeout"):
        line.append(" (timeout)", style="red")
    return line


# --------------------------------------------------------------------------- views

def draw_view(view: dict, names: list[str], you: int | None) -> Group:
    game = view.get("type", "")
    state = view.get("state") or {}
    head = Text(f"{game}  v{view.get('version')}  {view.get('status')}", style="bold")
    waiting = [a["seat"] for a in view.get("awaiting") or []]
    if waiting:
        head.append("   waiting for: ")
        for i, s in enumerate(waiting):
            if i:
                head.append(", ")
            head.append_text(who(names, s, you))
    parts: list[Any] = [head]
    drawer = _hook(game, "draw")
    try:
        parts += drawer(state, names, you) if drawer else [Text(compact(state, 2000))]
    except Exception:  # noqa: BLE001 - an unexpected view shape must not crash the client
        parts.append(Text(compact(state, 2000)))
    return Group(*parts)


# --------------------------------------------------------------------------- the lobby

def seat_label(seat: dict) -> Text:
    """Who holds a table's seat: a name (a bot's level after it), or that it is open or kept
    for an invited player."""
    if seat.get("controller") == "open":
        invited = seat.get("invited")
        return Text(f"(invited: {invited})" if invited else "(open)", style="dim")
    label = Text(seat.get("name") or f"seat {seat.get('seat')}", style=seat_style(seat["seat"]))
    if seat.get("bot"):
        label.append(f" [{seat['bot'].get('level')} bot]", style="dim")
    return label


def lobby(tables: list[dict], defaults: dict[str, dict]) -> Table:
    """The waiting tables: id, type, open seats, who sits where, and the options that differ
    from their defaults (``defaults``: per game type, from the catalog)."""
    t = Table(title="tables waiting for players", show_edge=False)
    for col in ("game", "type", "open", "seats", "options"):
        t.add_column(col)
    for entry in tables:
        seats = Text(", ").join(Text(f"{s['seat']}: ").append_text(seat_label(s))
                                for s in entry.get("seats") or [])
        usual = defaults.get(entry["type"], {})
        options = {k: v for k, v in (entry.get("options") or {}).items()
                   if k not in usual or usual[k] != v}
        t.add_row(entry["id"], entry["type"], str(entry.get("open_seats", "?")), seats,
                  compact(options, 60) if options else "")
    return t


# --------------------------------------------------------------------------- players

def _standings(title: str, rows: list[dict]) -> Table:
    t = Table(title=title, show_edge=False)
    for col, justify in (("#", "right"), ("player", "left"), ("ordinal", "right"),
                         ("mu", "right"), ("sigma", "right"), ("games", "right")):
        t.add_column(col, justify=justify)
    for row in rows:
        name = Text(row.get("name") or row["id"])
        name.append(f"  {row['id']}", style="dim")
        t.add_row(str(row["rank"]), name, f"{row['ordinal']:.1f}", f"{row['mu']:.1f}",
                  f"{row['sigma']:.2f}", str(row["games"]))
    return t


def leaderboard(board: dict) -> Group:
    """A leaderboard: the established players by ordinal, then the provisional ones."""
    parts: list = [_standings(f"{board['type']}: rated players", board["players"])
                   if board["players"] else
                   Text(f"{board['type']}: nobody has {board['min_games']} rated games yet.")]
    if board["provisional"]:
        parts.append(_standings(f"provisional (fewer than {board['min_games']} rated games)",
                                board["provisional"]))
    return Group(*parts)


def profile(player: dict) -> Group:
    """A player's profile: who, and per rating type the games, wins and rating."""
    head = Text(player["name"], style="bold")
    head.append(f"  {player['id']} ({player['kind']}), since {player['created_at']}",
                style="dim")
    t = Table(show_edge=False)
    for col, justify in (("rating type", "left"), ("games", "right"), ("wins", "right"),
                         ("ordinal", "right"), ("mu", "right"), ("sigma", "right")):
        t.add_column(col, justify=justify)
    for rating_type, s in sorted(player["stats"].items()):
        r = s.get("rating")
        t.add_row(rating_type, str(s["games"]), str(s["wins"]),
                  *((f"{r['ordinal']:.1f}", f"{r['mu']:.1f}", f"{r['sigma']:.2f}") if r
                    else ("-", "-", "-")))
    parts: list = [head, t if player["stats"] else Text("No finished game yet.")]
    games = player.get("games")
    if games:
        parts.append(Text("In: " + ", ".join(f"{g['id']} ({g['type']}, {g['status']})"
                                             for g in games)))
    return Group(*parts)


# --------------------------------------------------------------------------- results

def draw_result(game: str, result: dict | None, names: list[str], you: int | None,
                status: str = "finished") -> Group:
    if not result:
        return Group(Text(f"The game is {status} (no result).", style="bold"))
    t = Table(title="result", show_edge=False)
    for col in ("rank", "player", "score"):
        t.add_column(col)
    order = sorted(range(len(result["scores"])), key=lambda s: (result["ranks"][s], s))
    for seat in order:
        name = who(names, seat, you)
        if seat in result.get("winners", []):
            name.append(" ★", style="bold yellow")
        t.add_row(str(result["ranks"][seat]), name, str(result["scores"][seat]))
    parts: list[Any] = [t]
    try:
        parts += _details(game, result.get("details") or {}, names, you)
    except Exception:  # noqa: BLE001
        parts.append(Text(compact(result.get("details"), 2000)))
    return Group(*parts)


def _details(game: str, d: dict, names: list[str], you: int | None) -> list:
    drawn = _hook(game, "details")
    if drawn is not None:
        out = drawn(d, names, you)
        if out is not None:
            return out
    out: list[Any] = []
    seats = d.get("seats")
    if isinstance(seats, list) and seats and all(isinstance(x, dict) for x in seats):
        keys = [k for k in seats[0] if not isinstance(seats[0][k], (dict, list))]
        t = Table(title="scoring", show_edge=False)
        t.add_column("player")
        for k in keys:
            t.add_column(k.replace("_", " "))
        for seat, row in enumerate(seats):
            t.add_row(who(names, seat, you), *[str(row.get(k)) for k in keys])
        out.append(t)
        for seat, row in enumerate(seats):
            lists = {k: v for k, v in row.items() if isinstance(v, list) and k != "rows"}
            for k, v in lists.items():
                if v:
                    line = who(names, seat, you)
                    line.append(f" {k}: {compact(v, 300)}")
                    out.append(line)
        rest = {k: v for k, v in d.items() if k != "seats"}
        if rest:
            out.append(Text(" · ".join(f"{k}: {compact(v, 80)}" for k, v in rest.items())))
        return out
    out.append(Text(" · ".join(f"{k}: {compact(v, 120)}" for k, v in d.items())))
    return out


class EscapingConsole(Console):
    """A Rich console that writes every text segment through :func:`escape` (Rich's own
    control segments, and the colours it adds, pass as they are). Rich strips a few controls
    itself (BEL, BS, VT, FF, CR) but not ESC, the bidi overrides or the zero-width characters.

    ``_render_buffer`` is where Rich turns the segments of whatever was printed (tables,
    groups, columns, plain strings) into the characters it writes: the one place every piece of
    text passes."""

    def _render_buffer(self, buffer) -> str:
        return super()._render_buffer(
            segment if segment.control else Segment(escape(segment.text), segment.style)
            for segment in buffer)


def make_console(no_color: bool = False, stderr: bool = False) -> Console:
    """The CLI's console (stdout, or stderr): every command prints through one."""
    return EscapingConsole(no_color=no_color, highlight=False, soft_wrap=False, markup=False,
                           stderr=stderr)
