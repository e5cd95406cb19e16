"""Diamant in the terminal (the CLI): menu labels, the view's state, event lines, the result's
details."""

from __future__ import annotations


from rich.table import Table
from rich.text import Text

from ...engine.text import game_over, listing, name, names_of, plural, who


def action_label(action: dict) -> str | None:
    if action.get("type") == "decide":
        return {"continue": "continue exploring", "return": "return to camp"}.get(
            action.get("choice"), str(action.get("choice")))
    return None


def _rubies(n) -> str:
    return plural(n, "ruby", "rubies")


def event_text(ev: dict, names: list[str]) -> str | None:
    kind, d = ev.get("type"), ev.get("data") or {}
    if kind == "RoundStarted":
        return f"Round {d.get('round')} of 5 starts: {d.get('deck_size')} cards in the deck"
    if kind == "CardRevealed":
        card = d.get("card")
        if d.get("kind") == "treasure":
            share = (f"{names_of(names, d.get('recipients'))} take "
                     f"{_rubies(d.get('share_each'))} each" if len(d.get("recipients") or []) > 1
                     else f"{names_of(names, d.get('recipients'))} takes "
                          f"{_rubies(d.get('share_each'))}")
            return (f"Treasure {card} ({_rubies(d.get('value'))}): {share}; "
                    f"{_rubies(d.get('path_rubies'))} on the path")
        if d.get("kind") == "relic":
            return f"A relic is found: {card}"
        return f"A trap: {card}"
    if kind == "ChoiceCommitted":
        choice = d.get("choice")
        if choice is None:
            return f"{name(names, ev.get('seat'))} commits a choice"
        return f"{name(names, ev.get('seat'))} chooses to {choice} (hidden from the others)"
    if kind == "ChoicesRevealed":
        said = [f"{name(names, s)} {'continues' if c == 'continue' else 'returns'}"
                for s, c in enumerate(d.get("choices") or []) if c is not None]
        return "; ".join(said) or "Nobody is in the cave"
    if kind == "PlayersReturned":
        seats = d.get("seats") or []
        text = (f"{names_of(names, seats)} {'return' if len(seats) > 1 else 'returns'} to camp "
                f"with {_rubies(d.get('share_each'))}{' each' if len(seats) > 1 else ''} "
                f"from the path ({_rubies(d.get('remainder'))} left there)")
        if d.get("relics_taken"):
            relics = [f"{r} ({plural(v, 'point')})"
                      for r, v in zip(d["relics_taken"], d.get("relic_values") or [])]
            text += (f"; {names_of(names, seats)} takes the "
                     f"{'relic' if len(relics) == 1 else 'relics'} {listing(relics)}")
        return text
    if kind == "RoundEndedByTrap":
        lost = [f"{name(names, s)} {_rubies(n)}"
                for s, n in enumerate(d.get("lost_pockets") or []) if n]
        return (f"A second {str(d.get('trap')).lower()} trap ({d.get('card')}): everyone in "
                f"the cave flees" + (f", losing their pockets: {listing(lost)}" if lost else ""))
    if kind == "RoundEnded":
        why = "by a trap" if d.get("reason") == "trap" else "with everyone back in camp"
        text = f"Round {d.get('round')} ends {why}"
        if d.get("removed_trap"):
            text += f"; trap {d['removed_trap']} leaves the game"
        if d.get("removed_relics"):
            text += f"; relics left on the path are lost: {listing(d['removed_relics'])}"
        return text
    if kind == "GameEnded":
        return game_over(names, d.get("scores"), d.get("winners"), "ruby", "rubies")
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
