"""Tides of Time in the terminal (the CLI): menu labels, the view's state, the result's details."""

from __future__ import annotations

from typing import Any

from rich.table import Table
from rich.text import Text

from ...engine.text import who

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
