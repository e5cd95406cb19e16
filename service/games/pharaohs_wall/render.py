"""Pharaoh's Wall in the terminal (the CLI): menu labels, the view's state, event lines, the
result's details."""

from __future__ import annotations

from typing import Any

from rich.table import Table
from rich.text import Text

from ...engine.text import compact, game_over, listing, name, names_of, plural, who


def action_label(action: dict) -> str | None:
    kind = action.get("type")
    if kind == "insert":
        ex = action.get("explorer")
        exs = ("" if ex in (None, "none") else
               " + explorer from reserve" if ex == "reserve" else
               f" + explorer from pillar {ex.get('from_pillar')}" if isinstance(ex, dict)
               else f" + explorer {compact(ex)}")
        return f"insert {action.get('card')} in column {action.get('column')}{exs}"
    if kind == "move_scarab":
        return f"move a scarab {action.get('from')} -> {action.get('to')}"
    if kind == "curse_claim":
        return "claim cells " + " ".join(f"({c},{r})" for c, r in action.get("cells", []))
    return None


def _pillar(animal: Any) -> str:
    return f"the {str(animal).lower()} pillar"


def _cells(cells: Any) -> str:
    return " ".join(f"({c},{r})" for c, r in cells or [])


def _sarcophagus(d: dict) -> str:
    """A sarcophagus as the viewer may see it: its eyes, and its id and value when shown."""
    text = f"a sarcophagus with {plural(d.get('eyes'), 'eye')}"
    if d.get("sarcophagus") is not None:
        text += f" ({d['sarcophagus']}, worth {plural(d.get('value'), 'point')})"
    return text


def event_text(ev: dict, names: list[str]) -> str | None:
    kind, d = ev.get("type"), ev.get("data") or {}
    who_ = name(names, d.get("seat", ev.get("seat")))
    if kind == "GameSetUp":
        hands = d.get("hands") or []
        sizes = d.get("hand_sizes") or [len(h) for h in hands if h is not None]
        pharaohs = d.get("pharaohs") or []
        held = []
        for s, hand in enumerate(hands):
            if hand is not None:
                line = f"{name(names, s)} holds {listing(hand, 'no card')}"
                if s < len(pharaohs) and pharaohs[s]:
                    line += f" and pharaoh {pharaohs[s]}"
                held.append(line)
            elif s < len(sizes):
                held.append(f"{name(names, s)} holds {plural(sizes[s], 'card')}")
        return (f"The wall is set up, pillars in order {' '.join(d.get('pillar_order') or [])}"
                + (f"; {'; '.join(held)}" if held else ""))
    if kind == "TurnStarted":
        return f"Turn {d.get('turn_number')}: {who_} to play"
    if kind == "CardDrawn":
        card = d.get("card")
        return f"{who_} draws {card or 'a card'} from the {d.get('pile')} pile"
    if kind == "CardInserted":
        pairs = d.get("pairs") or []
        return (f"{who_} inserts {d.get('card')} facing {str(d.get('facing')).lower()} in "
                f"column {d.get('column')}, row {d.get('row')}: "
                f"{plural(len(pairs), 'pair')} formed")
    if kind == "ExplorerPlaced":
        source = d.get("from")
        return (f"{who_} places an explorer on {_pillar(d.get('pillar'))}"
                + (f" (from the {source})" if source == "reserve" else
                   f" (from {_pillar(source)})" if source else ""))
    if kind == "ExplorerDisplaced":
        return (f"{name(names, ev.get('seat'))} displaces {who_}'s explorer from "
                f"{_pillar(d.get('pillar'))}")
    if kind == "ScarabPlaced":
        return f"{name(names, ev.get('seat'))} puts a scarab on {_pillar(d.get('pillar'))}"
    if kind == "ScarabMoved":
        return f"{who_} moves a scarab from {_pillar(d.get('from'))} to {_pillar(d.get('to'))}"
    if kind == "ScarabSkipped":
        why = " (it is full)" if d.get("reason") == "pillar_full" else ""
        return f"{name(names, ev.get('seat'))} puts no scarab on {_pillar(d.get('pillar'))}{why}"
    if kind == "SarcophagusOpened":
        return f"{who_} opens {_sarcophagus(d)} of {_pillar(d.get('pillar'))}"
    if kind == "SarcophagusGiven":
        return (f"{name(names, d.get('from'))} gives {name(names, d.get('to'))} "
                f"{_sarcophagus(d)}")
    if kind == "EndPhaseStarted":
        return f"The end phase starts: {names_of(names, d.get('order'))}, in that order"
    if kind == "EndDone":
        return f"{who_} is done"
    if kind == "CurseRevealed":
        return (f"{who_} reveals curse {d.get('card')}: "
                f"{' '.join(str(a).lower() for a in d.get('sequence') or [])}")
    if kind == "CurseClaimed":
        return f"{who_} claims the curse's sequence at {_cells(d.get('cells'))}"
    if kind == "CursePassed":
        return f"{who_} passes on the curse"
    if kind == "CurseVictimChosen":
        return f"{who_} chooses {name(names, d.get('victim'))} as the curse's victim"
    if kind == "CurseRoundClosed":
        finder = d.get("finder")
        return (f"Curse {d.get('card')} closes: "
                + (f"{name(names, finder)} found it" if finder is not None else
                   "nobody found it"))
    if kind == "CurseDiscarded":
        return f"Curse {d.get('card')} is discarded"
    if kind == "GameEnded":
        return game_over(names, d.get("scores"), d.get("winners"))
    return None


def draw(s: dict, names: list[str], you: int | None) -> list:
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
