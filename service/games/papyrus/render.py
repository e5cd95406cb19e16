"""Papyrus in the terminal (the CLI): menu labels, the view's state, event lines, the result's
details."""

from __future__ import annotations

from typing import Any

from rich.text import Text

from ...engine.text import compact, listing, multiset, name, names_of, plural, who


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


def _some(value: Any, word: str, many: str | None = None) -> str:
    """Cards or glyphs as the viewer may see them: listed, or only counted when hidden."""
    if isinstance(value, int):
        return plural(value, word, many)
    if isinstance(value, dict):
        return multiset(value) or "nothing"
    return listing(list(value or []), "nothing")


def _count(value: Any) -> Any:
    return value if isinstance(value, int) else len(value or [])


def _why(reason: Any) -> str:
    return f" ({str(reason).replace('-', ' ')})" if reason else ""


def event_text(ev: dict, names: list[str]) -> str | None:
    kind, d = ev.get("type"), ev.get("data") or {}
    who_ = name(names, ev.get("seat"))
    if kind == "DecksShuffled":
        return (f"The decks are shuffled: {plural(_count(d.get('movement_deck')), 'movement card')}"
                f", {plural(_count(d.get('god_deck')), 'god')}, "
                f"{plural(_count(d.get('event_deck')), 'event')}, "
                f"{plural(_count(d.get('bag')), 'glyph')} in the bag")
    if kind == "MovementReshuffled":
        return f"The movement discards are shuffled into a deck of {_count(d.get('deck'))}"
    if kind == "EventDeckReshuffled":
        return f"The event discards are shuffled into a deck of {_count(d.get('deck'))}"
    if kind == "BagRefilled":
        return f"The bag is refilled with {plural(_count(d.get('bag')), 'glyph')}"
    if kind == "HandDealt":
        return (f"{who_} is dealt {_some(d.get('movement'), 'movement card')}; gods: "
                f"{_some(d.get('gods'), 'god')}; glyphs: {_some(d.get('glyphs'), 'glyph')}")
    if kind == "TurnStarted":
        return f"{who_}'s turn"
    if kind == "TurnEnded":
        return f"{who_} ends the turn"
    if kind == "TurnSkipped":
        return f"{who_} skips this turn"
    if kind == "SkipNextTurn":
        return f"{who_} will skip the next turn"
    if kind == "MovementDrawn":
        return f"{who_} draws {_some(d.get('cards'), 'movement card')}"
    if kind == "MovementDiscarded":
        return f"{who_} discards {_some(d.get('cards'), 'movement card')}"
    if kind == "PawnMoved":
        return (f"{who_} moves from {d.get('from')} to {d.get('to')} along {d.get('path')}, "
                f"paying {_some(d.get('cards'), 'card')}")
    if kind == "EventDrawn":
        where = f" at {d['space']}" if d.get("space") is not None else ""
        return f"{who_} draws the event {d.get('card')}{where}"
    if kind == "EventDiscarded":
        return f"The event {d.get('card')} is discarded"
    if kind == "DecisionPending":
        return f"{who_} has a decision to make: {d.get('kind')} ({d.get('count')})"
    if kind == "DecisionResolved":
        return f"{who_} {'declines' if d.get('declined') else 'resolves'} {d.get('kind')}"
    if kind == "GlyphTakenFromMarket":
        return f"{who_} takes {d.get('glyph')} from the market{_why(d.get('reason'))}"
    if kind == "GlyphsToMarket":
        return f"{who_} puts {_some(d.get('glyphs'), 'glyph')} in the market{_why(d.get('reason'))}"
    if kind == "GlyphsDiscarded":
        return f"{who_} discards {_some(d.get('glyphs'), 'glyph')}{_why(d.get('reason'))}"
    if kind == "GlyphsDrawn":
        return f"{who_} draws {_some(d.get('glyphs'), 'glyph')} from the bag"
    if kind == "GlyphBought":
        return f"{who_} buys a glyph"
    if kind == "GodDrawn":
        return f"{who_} draws the god {d['god']}" if "god" in d else f"{who_} draws a god"
    if kind == "GodSwapped":
        if "put" in d:
            return f"{who_} swaps the god {d['put']} for {d.get('drew')}"
        return f"{who_} swaps a god"
    if kind in ("GodConquered", "GodFormed"):
        how = "conquers" if kind == "GodConquered" else "forms"
        return (f"{who_} {how} {d.get('god')} ({plural(d.get('value'), 'point')}), spelled "
                f"{listing(list(d.get('spelling') or []), 'with nothing')}")
    if kind == "FinalRoundStarted":
        return f"{who_} triggers the final round: {names_of(names, d.get('seats'))} play once more"
    if kind == "PlayerResigned":
        return (f"{who_} resigns, giving up {_some(d.get('gods'), 'god')}, "
                f"{_some(d.get('movement'), 'movement card')} and "
                f"{_some(d.get('glyphs'), 'glyph')}")
    if kind == "GameEnded":
        why = {"turn_limit": "the turn limit is reached",
               "final_round": "the final round is over"}.get(d.get("reason"), d.get("reason"))
        return f"Game over: {why}"
    return None


def draw(s: dict, names: list[str], you: int | None) -> list:
    deck = s.get("movement_deck_count")  # (none in the solo game)
    out: list[Any] = [Text(f"{s.get('variant')} · round {s.get('round')} · turn "
                           f"{s.get('turn')} · bag {s.get('bag_count')} · gods left "
                           f"{s.get('god_deck_count')}"
                           + (f" · movement deck {deck}" if deck is not None else ""))]
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
