"""Drawing game views, actions, events and results in the terminal (Rich).

Each game has a ``draw_<game>(view, names, you)`` returning Rich renderables; anything a drawer
does not understand falls back to compact JSON, so a new field or game never breaks the CLI.
"""

from __future__ import annotations

import json
from typing import Any, Callable

from rich.columns import Columns
from rich.console import Console, Group
from rich.table import Table
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


# --------------------------------------------------------------------------- actions

def action_label(game: str, action: dict) -> str:
    kind = action.get("type", "?")
    rest = {k: v for k, v in action.items() if k != "type"}
    if game == "diamant" and kind == "decide":
        return {"continue": "continue exploring", "return": "return to camp"}.get(
            rest.get("choice"), str(rest.get("choice")))
    if game == "tides-of-time":
        if kind == "pick":
            return f"pick {tides_card(rest.get('card'))}"
        if kind == "relic":
            return (f"keep {tides_card(rest.get('keep'))} as a relic, remove "
                    f"{tides_card(rest.get('remove'))}")
    if game == "pharaohs-wall":
        if kind == "insert":
            ex = rest.get("explorer")
            exs = ("" if ex in (None, "none") else
                   " + explorer from reserve" if ex == "reserve" else
                   f" + explorer from pillar {ex.get('from_pillar')}" if isinstance(ex, dict)
                   else f" + explorer {compact(ex)}")
            return f"insert {rest.get('card')} in column {rest.get('column')}{exs}"
        if kind == "move_scarab":
            return f"move a scarab {rest.get('from')} -> {rest.get('to')}"
        if kind == "curse_claim":
            return "claim cells " + " ".join(f"({c},{r})" for c, r in rest.get("cells", []))
    if game == "scarabya" and kind == "place":
        cells = " ".join(f"{r}{'abcdefghij'[c] if 0 <= c < 10 else c}"
                         for r, c in rest.get("cells", []))
        return f"place {rest.get('piece')} on {cells}"
    if game == "papyrus":
        if kind == "move":
            cards = ", ".join(f"{n} {k}" for k, n in (rest.get("cards") or {}).items() if n)
            return f"move along {rest.get('path')} paying {cards or 'nothing'}"
        if kind == "exchange":
            return f"exchange {rest.get('pay')} for {rest.get('take')}"
        if kind == "draw_movement":
            return "draw movement cards"
    if not rest:
        return kind.replace("_", " ")
    return kind.replace("_", " ") + " " + " ".join(
        f"{k}={compact(v, 40)}" for k, v in rest.items())


def tides_card(number: Any) -> str:
    card = _tides_cards().get(number)
    if card is None:
        return str(number)
    suit = card["suit"] or "no suit"
    return f"{number} {card['name']} [{suit}] {_tides_goal(card)}"


def _tides_goal(card: dict) -> str:
    k, p = card["kind"], card["params"]
    return {
        "MAJ": lambda: f"{p['points']} if most {p['suit']}",
        "EACH": lambda: f"{p['points']} per {p['suit']}",
        "SET": lambda: f"{p['points']} per set of {'+'.join(p['suits'])}",
        "MISSING": lambda: f"{p['points']} per missing suit",
        "SINGLES": lambda: f"{p['points']} if most single suits",
        "BEST": lambda: f"{p['points']} if largest suit",
        "TIES": lambda: "wins your ties",
        "DOUBLE": lambda: "doubles your largest suit",
    }.get(k, lambda: k)()


_TIDES: dict | None = None


def _tides_cards() -> dict:
    global _TIDES
    if _TIDES is None:
        try:
            from ..games.tides_of_time import CARDS
            _TIDES = CARDS
        except Exception:  # noqa: BLE001 - names are a nicety
            _TIDES = {}
    return _TIDES


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

def event_line(ev: dict, names: list[str], you: int | None = None) -> Text:
    line = Text(f"v{ev.get('version', '?'):<4} ", style="dim")
    line.append_text(who(names, ev.get("seat"), you))
    line.append(" " + str(ev.get("type")), style="bold")
    data = ev.get("data") or {}
    if data:
        line.append(" " + " ".join(f"{k}={compact(v, 40)}" for k, v in data.items())[:150])
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
    drawer = DRAWERS.get(game)
    try:
        parts += drawer(state, names, you) if drawer else [Text(compact(state, 2000))]
    except Exception:  # noqa: BLE001 - an unexpected view shape must not crash the client
        parts.append(Text(compact(state, 2000)))
    return Group(*parts)


def _diamant(s: dict, names: list[str], you: int | None) -> list:
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


def _tides(s: dict, names: list[str], you: int | None) -> list:
    out: list[Any] = [Text(f"round {s.get('round')}/3 · pick {s.get('pick')} · phase "
                           f"{s.get('phase')} · draw pile {s.get('draw_pile_size')}")]
    for p in s.get("seats", []):
        seat = p["seat"]
        title = who(names, seat, you)
        title.append(f"  total {p.get('total')}  rounds {p.get('round_scores')}")
        out.append(title)
        out.append(Text("  kingdom: " + ("; ".join(tides_card(c) for c in p.get("kingdom", []))
                                         or "empty")))
        if p.get("relics"):
            out.append(Text("  relics: " + "; ".join(tides_card(c) for c in p["relics"])))
        if p.get("hand") is not None:
            out.append(Text("  hand: " + "; ".join(tides_card(c) for c in p["hand"]),
                            style="bold"))
        else:
            out.append(Text(f"  hand: {p.get('hand_size')} cards (hidden)", style="dim"))
        if p.get("committed"):
            out.append(Text("  has picked" + (f": {tides_card(p['pending'])}"
                                              if p.get("pending") else ""), style="dim"))
    return out


def _pharaohs_wall(s: dict, names: list[str], you: int | None) -> list:
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


def _scarabya(s: dict, names: list[str], you: int | None) -> list:
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


def _papyrus(s: dict, names: list[str], you: int | None) -> list:
    out: list[Any] = [Text(f"{s.get('variant')} · round {s.get('round')} · turn "
                           f"{s.get('turn')} · bag {s.get('bag_count')} · gods left "
                           f"{s.get('god_deck_count')} · movement deck "
                           f"{s.get('movement_deck_count')}")]
    market = _multiset(s.get("market") or {})
    out.append(Text(f"market: {market or 'empty'}"))
    if s.get("event_card"):
        out.append(Text(f"event: {compact(s['event_card'], 150)}", style="yellow"))
    if s.get("pending"):
        out.append(Text(f"pending: {compact(s['pending'], 150)}", style="yellow"))
    paths = {p["id"]: p for p in (s.get("board") or {}).get("paths", [])}
    owners = s.get("owners") or {}
    for p in s.get("seats", []):
        seat = p["seat"]
        line = who(names, seat, you)
        line.append(f"  score {p.get('score')} · scarabs {p.get('scarabs')} · at "
                    f"{p.get('pawn')} · conquered {', '.join(p.get('conquered') or []) or '-'}")
        out.append(line)
        if p.get("holder") is not None:
            out.append(Text(f"  holder ({p.get('holder_count')}): {_multiset(p['holder'])}",
                            style="bold"))
        else:
            out.append(Text(f"  holder: {p.get('holder_count')} glyphs", style="dim"))
        if p.get("movement") is not None:
            out.append(Text(f"  movement cards: {_multiset(p['movement']) or 'none'}"))
        else:
            out.append(Text(f"  movement cards: {p.get('movement_count')}", style="dim"))
        if p.get("gods") is not None:
            out.append(Text(f"  gods in hand: {', '.join(p['gods']) or 'none'}"))
        pawn = p.get("pawn")
        if seat == you and pawn and paths:
            near = [f"{pid}→{q['b'] if q['a'] == pawn else q['a']} "
                    f"({_multiset(q.get('squares') or {})})"
                    + (f" owner {owners.get(q['b'] if q['a'] == pawn else q['a'])}"
                       if owners.get(q['b'] if q['a'] == pawn else q['a']) is not None else "")
                    for pid, q in paths.items() if pawn in (q["a"], q["b"])]
            out.append(Text("  paths from here: " + "; ".join(near)))
    return out


def _multiset(counts: dict) -> str:
    return ", ".join(f"{k}×{v}" if v != 1 else k for k, v in counts.items() if v)


DRAWERS: dict[str, Callable[[dict, list[str], int | None], list]] = {
    "diamant": _diamant, "tides-of-time": _tides, "pharaohs-wall": _pharaohs_wall,
    "scarabya": _scarabya, "papyrus": _papyrus,
}


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
    out: list[Any] = []
    if game == "diamant":
        t = Table(title="scoring", show_edge=False)
        for col in ("player", "rubies in chest", "relics", "relic points"):
            t.add_column(col)
        for seat, chest in enumerate(d.get("chests", [])):
            t.add_row(who(names, seat, you), str(chest), str(d["relics"][seat]),
                      str(d["relic_points"][seat]))
        return [t]
    if game == "tides-of-time":
        for rnd in d.get("rounds", []):
            t = Table(title=f"round {rnd['round']}", show_edge=False)
            t.add_column("player")
            t.add_column("card")
            t.add_column("points", justify="right")
            for seat, cards in enumerate(rnd.get("per_card", [])):
                for i, c in enumerate(cards):
                    t.add_row(who(names, seat, you) if i == 0 else "",
                              tides_card(c.get("card")), str(c.get("points")))
                t.add_row("", Text("round total", style="bold"),
                          Text(str(rnd["totals"][seat]), style="bold"))
            out.append(t)
        return out
    seats = d.get("seats")
    if game == "scarabya" and isinstance(seats, list):
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


def make_console(no_color: bool = False) -> Console:
    return Console(no_color=no_color, highlight=False, soft_wrap=False, markup=False)
