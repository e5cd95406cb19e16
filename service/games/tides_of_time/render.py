"""Tides of Time in the terminal (the CLI): menu labels, the view's state, event lines, the
result's details."""

from __future__ import annotations

from typing import Any

from rich.table import Table
from rich.text import Text

from ...engine.text import game_over, listing, name, per_seat, plural, who

from .rules import CARDS, objective


def action_label(action: dict) -> str | None:
    kind = action.get("type")
    if kind == "pick":
        return f"pick {tides_card(action.get('card'))}"
    if kind == "relic":
        return (f"keep {tides_card(action.get('keep'))} as a relic, remove "
                f"{tides_card(action.get('remove'))}")
    return None


def tides_card(number: Any) -> str:
    card = CARDS.get(number)
    if card is None:
        return str(number)
    suit = card["suit"] or "no suit"
    return f"{number} {card['name']} [{suit}] {objective(card)}"


def card_name(number: Any) -> str:
    """A card's number and name (``7 The Golden Ziggurat``)."""
    card = CARDS.get(number)
    return f"{number} {card['name']}" if card is not None else str(number)


def _cards(cards: Any) -> str:
    return listing([card_name(c) for c in cards or []], "no card")


def _hands(d: dict, names: list[str]) -> str:
    """The hands the viewer may see (others: their sizes only)."""
    hands = d.get("hands") or []
    sizes = d.get("hand_sizes") or [len(h) if h is not None else None for h in hands]
    return "; ".join(f"{name(names, s)} holds {_cards(h)}" if h is not None
                     else f"{name(names, s)} holds {plural(sizes[s], 'card')}"
                     if s < len(sizes) and sizes[s] is not None
                     else f"{name(names, s)}'s hand is hidden"
                     for s, h in enumerate(hands))


def event_text(ev: dict, names: list[str]) -> str | None:
    kind, d = ev.get("type"), ev.get("data") or {}
    who_ = name(names, ev.get("seat"))
    if kind == "CardsDealt":
        return f"Cards dealt: {_hands(d, names)}; {plural(d.get('pile_size'), 'card')} to draw"
    if kind == "PickCommitted":
        return (f"{who_} picks {card_name(d['card'])} (hidden from the other)" if "card" in d
                else f"{who_} commits a pick")
    if kind == "PicksRevealed":
        picks = "; ".join(f"{name(names, s)} plays {card_name(c)}"
                          for s, c in enumerate(d.get("cards") or []))
        return f"Round {d.get('round')}, pick {d.get('pick')}: {picks}"
    if kind == "HandsExchanged":
        return f"Hands exchanged after pick {d.get('pick')}: {_hands(d, names)}"
    if kind == "RoundScored":
        scores = per_seat(names, d.get("totals"))
        running = ", ".join(f"{name(names, s)} {v}"
                            for s, v in enumerate(d.get("running_totals") or []))
        return (f"Round {d.get('round')} scored: {scores}"
                + (f" (totals: {running})" if running else ""))
    if kind == "RelicCommitted":
        if "keep" in d:
            return (f"{who_} keeps {card_name(d['keep'])} as a relic and removes "
                    f"{card_name(d.get('remove'))} (hidden from the other)")
        return f"{who_} commits a relic choice"
    if kind == "RelicsRevealed":
        return "; ".join(f"{name(names, s)} keeps {card_name(k)} as a relic and removes "
                         f"{card_name(r)}" for s, (k, r) in
                         enumerate(zip(d.get("kept") or [], d.get("removed") or [])))
    if kind == "CardsDrawn":
        if "cards" in d:
            return f"{who_} draws {_cards(d['cards'])}"
        return f"{who_} draws {plural(d.get('count'), 'card')}"
    if kind == "RoundStarted":
        return f"Round {d.get('round')} of 3 starts"
    if kind == "GameEnded":
        return game_over(names, d.get("totals"), d.get("winners"))
    return None


def draw(s: dict, names: list[str], you: int | None) -> list:
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



def details(d: dict, names: list[str], you: int | None) -> list:
    out: list[Any] = []
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
