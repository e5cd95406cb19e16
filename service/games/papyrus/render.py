"""Papyrus in the terminal (the CLI): menu labels, the view's state, the result's details."""

from __future__ import annotations

from typing import Any

from rich.text import Text

from ...engine.text import compact, multiset, who


def action_label(action: dict) -> str | None:
    kind = action.get("type")
    if kind == "move":
        cards = ", ".join(f"{n} {k}" for k, n in (action.get("cards") or {}).items() if n)
        return f"move along {action.get('path')} paying {cards or 'nothing'}"
    if kind == "exchange":
        return f"exchange {action.get('pay')} for {action.get('take')}"
    if kind == "draw_movement":
        return "draw movement cards"
    return None


def draw(s: dict, names: list[str], you: int | None) -> list:
    out: list[Any] = [Text(f"{s.get('variant')} · round {s.get('round')} · turn "
                           f"{s.get('turn')} · bag {s.get('bag_count')} · gods left "
                           f"{s.get('god_deck_count')} · movement deck "
                           f"{s.get('movement_deck_count')}")]
    market = multiset(s.get("market") or {})
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
            out.append(Text(f"  holder ({p.get('holder_count')}): {multiset(p['holder'])}",
                            style="bold"))
        else:
            out.append(Text(f"  holder: {p.get('holder_count')} glyphs", style="dim"))
        if p.get("movement") is not None:
            out.append(Text(f"  movement cards: {multiset(p['movement']) or 'none'}"))
        else:
            out.append(Text(f"  movement cards: {p.get('movement_count')}", style="dim"))
        if p.get("gods") is not None:
            out.append(Text(f"  gods in hand: {', '.join(p['gods']) or 'none'}"))
        pawn = p.get("pawn")
        if seat == you and pawn and paths:
            near = [f"{pid}→{q['b'] if q['a'] == pawn else q['a']} "
                    f"({multiset(q.get('squares') or {})})"
                    + (f" owner {owners.get(q['b'] if q['a'] == pawn else q['a'])}"
                       if owners.get(q['b'] if q['a'] == pawn else q['a']) is not None else "")
                    for pid, q in paths.items() if pawn in (q["a"], q["b"])]
            out.append(Text("  paths from here: " + "; ".join(near)))
    return out
