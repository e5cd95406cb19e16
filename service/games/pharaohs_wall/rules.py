"""Pharaoh's Wall (``pharaohs-wall``): the 7x7 hieroglyph wall, pillars, scarabs, sarcophagi.

Normative spec: ../shared/rules/pharaohs-wall.md (section numbers below refer to it). Wire
vocabulary: docs/design/api.md. Reconstructed component data (animals, facing split,
sarcophagus values, curse sequences) lives in ``data.json`` next to this file.

Variants: ``options.curse`` (Pharaoh's Curse, section 7) and ``options.sphinx`` (Eyes of the
Sphinx, section 8), combinable.

Canonical orders (every shuffle starts from one of these)
---------------------------------------------------------
* Animals: CAMEL, MULE, SNAKE, IBIS, CROCODILE, FALCON, CAT (table 2.1).
* Hieroglyph cards: animals in canonical order, and within an animal ``k`` = 1..7, i.e.
  H-CAMEL-1 .. H-CAMEL-7, H-MULE-1, ..., H-CAT-7 (49 ids).
* Sarcophagus tiers: S01..S07 (1 eye), S08..S14 (2 eyes), S15..S21 (3 eyes).
* Pharaoh cards: P-CAMEL, P-MULE, ..., P-CAT.
* Curse cards: C1..C6.

Exact sequence of RNG calls in ``create`` (nothing else ever draws; ``decide`` never draws)
-----------------------------------------------------------------------------------------
``create`` receives the engine's start stream (``Rng(seed, 1)``) and makes these calls in order:

1. ``rng.shuffle(animals)`` -> ``pillar_order`` (display only, section 4 step 2).
2. Hieroglyph deck, skipped when ``options.setup`` fixes it:
   * curse off: ``rng.shuffle(cards)`` -> draw pile, top first (``deck_order`` overrides);
   * curse on: ``rng.shuffle(cards)``; its first 20 cards are the start pile (top first); then
     ``rng.shuffle(rest + curses)`` where ``rest`` = the other 29 hieroglyph ids in *canonical*
     order followed by C1..C6 -> main pile, top first (``start_pile`` + ``main_pile`` override
     both calls; they must be given together).
   Hands are dealt blockwise from the top (cards 3s, 3s+1, 3s+2 to seat s), the rest stays.
3. Sarcophagi, skipped when ``setup.sarcophagi`` is given: ``rng.shuffle`` of tier 1, then tier
   2, then tier 3 (each from its canonical order); stack ``i`` = (tier1[i], tier2[i], tier3[i]),
   front first, stands at the pillar of the i-th animal in canonical order.
4. Pharaohs, skipped when ``setup.pharaohs`` is given: ``rng.shuffle`` of the 7 pharaoh ids;
   seat s takes index s; the rest are unused (with ``setup.pharaohs`` the unused ones are the
   remaining ids in canonical order).

Events (``data`` fields; secrets are redacted by :meth:`PharaohsWall.visible` while running)
-------------------------------------------------------------------------------------------
GameSetUp, TurnStarted, CardInserted, ExplorerDisplaced, ExplorerPlaced, ScarabPlaced,
ScarabSkipped, SarcophagusOpened, CardDrawn, CurseRevealed, CurseClaimed, CursePassed,
CurseRoundClosed, CurseVictimChosen, SarcophagusGiven, CurseDiscarded, EndPhaseStarted,
ScarabMoved, EndDone, GameEnded. Secret fields: GameSetUp (stacks, other hands, piles, other
pharaohs), CardDrawn.card, SarcophagusOpened.sarcophagus/value (owner only),
SarcophagusGiven.sarcophagus/value (giver and receiver only). The engine itself hides the
creation event's ``options.setup`` (deck order, stacks, pharaohs) from every viewer but ``ALL``
until the end (``service.engine.fold.visible``), for every game.

Illegal-action codes: the engine's for malformed actions (:mod:`service.engine.actions`:
malformed_action, unknown_action, unexpected_field, missing_field, invalid_field), then
wrong_phase, not_your_turn, card_not_in_hand, invalid_column, column_full,
explorer_not_allowed, reserve_empty, reserve_not_empty, not_your_explorer, unknown_pillar,
same_pillar, no_scarab, pillar_full, not_a_segment, invalid_victim, not_your_sarcophagus.
Options (``service.engine.options``): invalid_options, invalid_player_count,
unknown_option, invalid_option, invalid_setup (``details.option``, and ``details.expected`` or
``details.reason``).

With one animal per card every pair of a turn has the new card's animal (spec 14 item 4), so a
turn has at most one pair group and the insert action's single ``explorer`` field covers it.

Curse rounds and secrecy: a claim is recorded as ``CurseClaimed`` with its cells only (no
verdict). A wrong claim is that seat's pass; a correct one closes the round at once
(``CurseRoundClosed`` with the finder). ``legal_actions`` lists every straight segment of three
occupied cells (the same list for every seat, independent of the curse card) plus ``curse_pass``;
the only claim error, ``not_a_segment``, depends on the public wall alone.
"""

from __future__ import annotations

from typing import Any, Sequence

from ...engine import (ALL, Action, Event, Game, IllegalAction, InvalidOptions, Outcome, State,
                       Viewer, fields_detail, is_int, sees, standard_result)
from ...engine.actions import action_type, check_fields, invalid_field
from ...engine.options import invalid
from .data import (ANIMALS, CARD_IDS, CARDS, CELLS, CURSE_IDS, CURSES, EXPLORERS, HAND_SIZE,
                   HEIGHT, LEFT_FACING, MAX_END_MOVES, MAX_PAIR_SCARABS, PHARAOH_BONUS, PHARAOHS,
                   SARC_IDS, SARCOPHAGI, SCARABS, START_PILE, TIERS, WIDTH)
from . import schemas
from .schemas import CELL_FORM, EXPLORER_FORMS

# ---------------------------------------------------------------------------------------------
# Data (the component tables and fixed numbers: data.py)
# ---------------------------------------------------------------------------------------------

#: The message of an ``explorer`` field that is none of its three forms.
EXPLORER_VALUES = 'explorer is "none", "reserve" or {"from_pillar": animal}'

DIRECTIONS8 = [(-1, -1), (-1, 0), (-1, 1), (0, -1), (0, 1), (1, -1), (1, 0), (1, 1)]
#: Line directions, chosen so a segment's cells come out sorted ascending by (col, row).
LINES4 = [(1, 0), (0, 1), (1, 1), (1, -1)]


def animal_of(card: str) -> str:
    return CARDS[card]["animal"]


def facing_of(card: str) -> str:
    return CARDS[card]["facing"]


# ---------------------------------------------------------------------------------------------
# Geometry helpers
# ---------------------------------------------------------------------------------------------

def cell(wall: list[list[str]], c: int, r: int) -> str | None:
    if 0 <= c < WIDTH and 0 <= r < len(wall[c]):
        return wall[c][r]
    return None


def wall_count(wall: list[list[str]]) -> int:
    return sum(len(col) for col in wall)


def find_pairs(wall: list[list[str]], col: int, row: int, card: str,
               sphinx: bool) -> list[dict]:
    """Pairs formed by ``card`` landing at (col, row): [{"cell", "card", "facing"}].

    Base game: occupied king's-move neighbours with the same animal. Eyes of the Sphinx: per line
    through the cell (row, column, both diagonals) the other cards of the animal; exactly one
    gives a pair.
    """
    animal = animal_of(card)
    out = []

    def pair(c: int, r: int, other: str) -> dict:
        same = facing_of(other) == facing_of(card)
        return {"cell": [c, r], "card": other, "facing": "same" if same else "opposite"}

    if not sphinx:
        for dc, dr in DIRECTIONS8:
            other = cell(wall, col + dc, row + dr)
            if other is not None and animal_of(other) == animal:
                out.append(pair(col + dc, row + dr, other))
        return out
    for dc, dr in LINES4:
        found = []
        for sign in (-1, 1):
            c, r = col + sign * dc, row + sign * dr
            while 0 <= c < WIDTH and 0 <= r < HEIGHT:
                other = cell(wall, c, r)
                if other is not None and animal_of(other) == animal:
                    found.append((c, r, other))
                c, r = c + sign * dc, r + sign * dr
        if len(found) == 1:
            out.append(pair(*found[0]))
    return out


def segments(wall: list[list[str]]) -> list[list[list[int]]]:
    """Every straight segment of three occupied cells, cells ascending by (col, row)."""
    out = []
    for c in range(WIDTH):
        for r in range(len(wall[c])):
            for dc, dr in LINES4:
                cells = [[c + i * dc, r + i * dr] for i in range(3)]
                if all(cell(wall, x, y) is not None for x, y in cells):
                    out.append(cells)
    out.sort()
    return out


def segment_matches(wall: list[list[str]], cells: list[list[int]], sequence: list[str]) -> bool:
    animals = [animal_of(cell(wall, c, r)) for c, r in cells]
    return animals == sequence or animals[::-1] == sequence


# ---------------------------------------------------------------------------------------------
# Options
# ---------------------------------------------------------------------------------------------

def _setup_error(option: str, reason: str, message: str, **extra: Any) -> InvalidOptions:
    return invalid("invalid_setup", f"setup.{option}", message, reason=reason, **extra)


#: The setup lists that replace the shuffles, by curse setting (rules section 4 and 7).
_PILES = {False: ("deck_order",), True: ("start_pile", "main_pile")}


def _checked_setup(setup: dict, curse: bool, players: int) -> dict:
    """``options.setup`` (schema-checked) after the rules the schema cannot say, its fields in
    a fixed order."""
    for key in _PILES[not curse]:
        if key in setup:
            raise _setup_error(key, "wrong_mode", f"is not accepted with curse={curse}")
    if "start_pile" in setup:
        start = set(setup["start_pile"])
        both = next((cid for cid in setup["main_pile"] if cid in start), None)
        if both is not None:
            raise _setup_error("main_pile", "duplicate_id",
                               "holds an id start_pile holds too", id=both)
    if "sarcophagi" in setup:
        seen: set[str] = set()
        for animal in ANIMALS:
            for sid in setup["sarcophagi"][animal]:
                if sid in seen:
                    raise _setup_error(f"sarcophagi.{animal}", "duplicate_id",
                                       "a sarcophagus id is used twice", id=sid)
                seen.add(sid)
    if "pharaohs" in setup and len(setup["pharaohs"]) != players:
        raise _setup_error("pharaohs", "wrong_length", "needs one pharaoh card id per seat",
                           players=players)
    out = {key: list(setup[key]) for key in ("deck_order", "start_pile", "main_pile")
           if key in setup}
    if "sarcophagi" in setup:
        out["sarcophagi"] = {animal: list(setup["sarcophagi"][animal]) for animal in ANIMALS}
    if "pharaohs" in setup:
        out["pharaohs"] = list(setup["pharaohs"])
    return out


# ---------------------------------------------------------------------------------------------
# The game
# ---------------------------------------------------------------------------------------------

def _schema(type_: str, props: dict) -> dict:
    return {"type": "object",
            "properties": {"type": {"const": type_}, **props},
            "required": ["type", *props], "additionalProperties": False}


class PharaohsWall(Game):
    type_id = "pharaohs-wall"
    catalog_position = 1
    name = "Pharaoh's Wall"
    min_players = 2
    max_players = 4
    options_schema = {
        "type": "object",
        "properties": {
            "curse": {"type": "boolean", "default": False,
                      "description": "variant Pharaoh's Curse"},
            "sphinx": {"type": "boolean", "default": False,
                       "description": "variant Eyes of the Sphinx"},
            "setup": {
                "type": ["object", "null"],
                "x-error": {"code": "invalid_setup"},
                "properties": {
                    "deck_order": {"type": "array", "items": {"enum": CARD_IDS},
                                   "minItems": 49, "maxItems": 49, "uniqueItems": True,
                                   "description": "curse off: the 49 card ids, top first"},
                    "start_pile": {"type": "array", "items": {"enum": CARD_IDS},
                                   "minItems": 20, "maxItems": 20, "uniqueItems": True,
                                   "description": "curse on: 20 card ids, top first"},
                    "main_pile": {"type": "array", "items": {"enum": CARD_IDS + CURSE_IDS},
                                  "minItems": 35, "maxItems": 35, "uniqueItems": True,
                                  "description": "curse on: the 29 card ids start_pile does "
                                                 "not hold and C1..C6, top first"},
                    "sarcophagi": {"type": "object",
                                   "description": "each animal's stack, front first: a 1-eye, "
                                                  "a 2-eye and a 3-eye id, each id once",
                                   "properties": {a: {"type": "array", "minItems": 3,
                                                      "maxItems": 3,
                                                      "prefixItems": [{"enum": tier}
                                                                      for tier in TIERS]}
                                                  for a in ANIMALS},
                                   "required": ANIMALS, "additionalProperties": False},
                    "pharaohs": {"type": "array", "items": {"enum": PHARAOHS},
                                 "minItems": 2, "maxItems": 4, "uniqueItems": True,
                                 "description": "one distinct pharaoh card id per seat"},
                },
                "dependentRequired": {"start_pile": ["main_pile"], "main_pile": ["start_pile"]},
                "additionalProperties": False,
            },
        },
        "additionalProperties": False,
    }
    variants = [
        {"id": "base", "name": "Base game", "options": {"curse": False, "sphinx": False}},
        {"id": "curse", "name": "Pharaoh's Curse", "options": {"curse": True, "sphinx": False}},
        {"id": "sphinx", "name": "Eyes of the Sphinx",
         "options": {"curse": False, "sphinx": True}},
        {"id": "curse-sphinx", "name": "Pharaoh's Curse + Eyes of the Sphinx",
         "options": {"curse": True, "sphinx": True}},
    ]
    state_schema = schemas.STATE
    event_schemas = schemas.EVENTS
    action_schemas = {
        "insert": _schema("insert", {"card": {"enum": CARD_IDS},
                                     "column": {"type": "integer", "minimum": 0, "maximum": 6},
                                     "explorer": EXPLORER_FORMS}),
        "move_scarab": _schema("move_scarab", {"from": {"enum": ANIMALS},
                                               "to": {"enum": ANIMALS}}),
        "done": _schema("done", {}),
        "curse_claim": _schema("curse_claim", {"cells": {"type": "array", "items": CELL_FORM,
                                                         "minItems": 3, "maxItems": 3}}),
        "curse_pass": _schema("curse_pass", {}),
        "curse_victim": _schema("curse_victim", {"seat": {"type": "integer", "minimum": 0,
                                                          "maximum": 3}}),
        "curse_give": _schema("curse_give", {"sarcophagus": {"enum": SARC_IDS}}),
    }

    # -- creation -------------------------------------------------------------------------
    def normalize_options(self, options: dict, players: Sequence[dict]) -> dict:
        n = len(players)
        if not self.min_players <= n <= self.max_players:
            raise InvalidOptions("invalid_player_count", "pharaohs-wall needs 2 to 4 players",
                                 {"option": "", "min": self.min_players,
                                  "max": self.max_players, "got": n})
        checked = self.checked_options(options)
        out = {"curse": checked["curse"], "sphinx": checked["sphinx"]}
        if checked.get("setup") is not None:
            setup = _checked_setup(checked["setup"], out["curse"], n)
            if setup:
                out["setup"] = setup
        return out

    def initial(self, players: Sequence[dict], options: dict) -> State:
        n = len(players)
        return {
            "players": n,
            "names": [p.get("name") for p in players],
            "curse_variant": bool(options.get("curse")),
            "sphinx": bool(options.get("sphinx")),
            "setup": "custom" if options.get("setup") else "standard",
            "overrides": options.get("setup") or {},
            "phase": "setup",
            "turn": 0,
            "turn_number": 0,
            "pillar_order": list(ANIMALS),
            "wall": [[] for _ in range(WIDTH)],
            "hands": [[] for _ in range(n)],
            "piles": {"start": [], "main": []} if options.get("curse") else {"draw": []},
            "pillars": {a: {"occupant": None, "scarabs": 0, "stack": []} for a in ANIMALS},
            "supply": SCARABS,
            "reserves": [EXPLORERS] * n,
            "owned": [[] for _ in range(n)],
            "pharaohs": [None] * n,
            "unused_pharaohs": [],
            "curse": None,
            "curses_done": [],
            "end": None,
            "last_inserter": None,
        }

    def create(self, state: State, rng) -> tuple[list[Event], State]:
        n = state["players"]
        ov = state["overrides"]
        pillar_order = list(ANIMALS)
        rng.shuffle(pillar_order)
        if state["curse_variant"]:
            if "start_pile" in ov:
                start, main = list(ov["start_pile"]), list(ov["main_pile"])
            else:
                deck = list(CARD_IDS)
                rng.shuffle(deck)
                start = deck[:START_PILE]
                chosen = set(start)
                main = [c for c in CARD_IDS if c not in chosen] + list(CURSE_IDS)
                rng.shuffle(main)
            source = start
        else:
            if "deck_order" in ov:
                deck = list(ov["deck_order"])
            else:
                deck = list(CARD_IDS)
                rng.shuffle(deck)
            source = deck
        hands = [source[3 * s:3 * s + 3] for s in range(n)]
        rest = source[3 * n:]
        piles = {"start": rest, "main": main} if state["curse_variant"] else {"draw": rest}
        if "sarcophagi" in ov:
            stacks = {a: list(ov["sarcophagi"][a]) for a in ANIMALS}
        else:
            tiers = [list(t) for t in TIERS]
            for t in tiers:
                rng.shuffle(t)
            stacks = {a: [tiers[0][i], tiers[1][i], tiers[2][i]] for i, a in enumerate(ANIMALS)}
        if "pharaohs" in ov:
            pharaohs = list(ov["pharaohs"])
            unused = [p for p in PHARAOHS if p not in pharaohs]
        else:
            deck_p = list(PHARAOHS)
            rng.shuffle(deck_p)
            pharaohs, unused = deck_p[:n], deck_p[n:]
        out = Outcome(self, state)
        out.emit("GameSetUp", {"pillar_order": pillar_order, "stacks": stacks, "hands": hands,
                               "piles": piles, "pharaohs": pharaohs, "unused_pharaohs": unused})
        out.emit("TurnStarted", {"seat": 0, "turn_number": 1})
        return out.done()

    # -- apply ----------------------------------------------------------------------------
    def apply(self, state: State, ev: Event) -> None:
        t, d = ev["type"], ev["data"]
        if t == "GameSetUp":
            state["pillar_order"] = list(d["pillar_order"])
            for a in ANIMALS:
                state["pillars"][a]["stack"] = list(d["stacks"][a])
            state["hands"] = [list(h) for h in d["hands"]]
            state["piles"] = {k: list(v) for k, v in d["piles"].items()}
            state["pharaohs"] = list(d["pharaohs"])
            state["unused_pharaohs"] = list(d["unused_pharaohs"])
        elif t == "TurnStarted":
            state["phase"] = "play"
            state["turn"] = d["seat"]
            state["turn_number"] = d["turn_number"]
        elif t == "CardInserted":
            seat = d["seat"]
            state["hands"][seat].remove(d["card"])
            state["wall"][d["column"]].append(d["card"])
            state["last_inserter"] = seat
        elif t == "ExplorerDisplaced":
            state["pillars"][d["pillar"]]["occupant"] = None
            state["reserves"][d["seat"]] += 1
        elif t == "ExplorerPlaced":
            if d["from"] == "reserve":
                state["reserves"][d["seat"]] -= 1
            else:
                state["pillars"][d["from"]]["occupant"] = None
            state["pillars"][d["pillar"]]["occupant"] = d["seat"]
        elif t == "ScarabPlaced":
            state["supply"] -= 1
            state["pillars"][d["pillar"]]["scarabs"] += 1
        elif t == "ScarabSkipped":
            pass
        elif t == "SarcophagusOpened":
            pillar = state["pillars"][d["pillar"]]
            sid = pillar["stack"].pop(0)
            state["owned"][d["seat"]].append(sid)
            pillar["scarabs"] -= 3
            state["supply"] += 3
        elif t == "CardDrawn":
            card = state["piles"][d["pile"]].pop(0)
            state["hands"][d["seat"]].append(card)
        elif t == "CurseRevealed":
            state["piles"]["main"].pop(0)
            state["phase"] = "curse"
            state["curse"] = {"card": d["card"], "drawer": d["seat"],
                              "responses": [None] * state["players"], "claims": [],
                              "finder": None, "victim": None}
        elif t == "CurseClaimed":
            state["curse"]["responses"][d["seat"]] = "claim"
            state["curse"]["claims"].append({"seat": d["seat"], "cells": d["cells"]})
        elif t == "CursePassed":
            state["curse"]["responses"][d["seat"]] = "pass"
        elif t == "CurseRoundClosed":
            state["curse"]["finder"] = d["finder"]
            if d["finder"] is not None and self._victims(state, d["finder"]):
                state["phase"] = "curse_victim"
            else:
                state["phase"] = "curse_closed"
        elif t == "CurseVictimChosen":
            state["curse"]["victim"] = d["victim"]
            state["phase"] = "curse_give"
        elif t == "SarcophagusGiven":
            state["owned"][d["from"]].pop(d["index"])
            state["owned"][d["to"]].append(d["sarcophagus"])
        elif t == "CurseDiscarded":
            state["curses_done"].append(state["curse"]["card"])
            state["curse"] = None
            state["phase"] = "draw"
        elif t == "EndPhaseStarted":
            state["phase"] = "end"
            state["end"] = {"order": list(d["order"]), "index": 0,
                            "moves": [0] * state["players"]}
        elif t == "ScarabMoved":
            state["pillars"][d["from"]]["scarabs"] -= 1
            state["pillars"][d["to"]]["scarabs"] += 1
            state["end"]["moves"][d["seat"]] += 1
        elif t == "EndDone":
            state["end"]["index"] += 1
        elif t == "GameEnded":
            state["phase"] = "over"
        else:  # pragma: no cover - never emitted
            raise ValueError(f"unknown event {t}")

    # -- questions ------------------------------------------------------------------------
    def is_over(self, state: State) -> bool:
        return state["phase"] == "over"

    def awaiting(self, state: State) -> list[int]:
        phase = state["phase"]
        if phase == "play":
            return [state["turn"]]
        if phase == "curse":
            return [s for s, r in enumerate(state["curse"]["responses"]) if r is None]
        if phase == "curse_victim":
            return [state["curse"]["finder"]]
        if phase == "curse_give":
            return [state["curse"]["victim"]]
        if phase == "end":
            end = state["end"]
            # index == len(order) only between two events of one command (time travel).
            return [end["order"][end["index"]]] if end["index"] < len(end["order"]) else []
        return []

    def not_awaited_reason(self, state: State, seat: int) -> str:
        if state["phase"] == "curse" and state["curse"]["responses"][seat] is not None:
            return "already_committed"
        if state["phase"] in ("curse_victim", "curse_give"):
            return "wrong_phase"
        return "not_your_turn"

    @staticmethod
    def _victims(state: State, finder: int) -> list[int]:
        return [s for s in range(state["players"]) if s != finder and state["owned"][s]]

    def _explorer_options(self, state: State, seat: int, animal: str,
                          pairs: list[dict]) -> list[Any]:
        if not pairs:
            return ["none"]
        occ = state["pillars"][animal]["occupant"]
        if occ == seat:
            return ["none"]
        if occ is not None and not any(p["facing"] == "same" for p in pairs):
            return ["none"]
        if state["reserves"][seat] > 0:
            return ["none", "reserve"]
        return ["none"] + [{"from_pillar": a} for a in ANIMALS
                           if state["pillars"][a]["occupant"] == seat]

    def _end_moves(self, state: State, seat: int) -> list[Action]:
        if state["end"]["moves"][seat] >= MAX_END_MOVES:
            return []
        mine = [a for a in ANIMALS if state["pillars"][a]["occupant"] == seat]
        return [{"type": "move_scarab", "from": x, "to": y} for x in mine for y in mine
                if x != y and state["pillars"][x]["scarabs"] > 0
                and state["pillars"][y]["scarabs"] < 3]

    def legal_actions(self, state: State, seat: int) -> list[Action]:
        if seat not in self.awaiting(state):
            return []
        phase = state["phase"]
        if phase == "play":
            out = []
            wall = state["wall"]
            for card in state["hands"][seat]:
                for col in range(WIDTH):
                    row = len(wall[col])
                    if row >= HEIGHT:
                        continue
                    pairs = find_pairs(wall, col, row, card, state["sphinx"])
                    for opt in self._explorer_options(state, seat, animal_of(card), pairs):
                        out.append({"type": "insert", "card": card, "column": col,
                                    "explorer": opt})
            return out
        if phase == "curse":
            return ([{"type": "curse_claim", "cells": cells}
                     for cells in segments(state["wall"])] + [{"type": "curse_pass"}])
        if phase == "curse_victim":
            return [{"type": "curse_victim", "seat": s}
                    for s in self._victims(state, seat)]
        if phase == "curse_give":
            return [{"type": "curse_give", "sarcophagus": sid} for sid in state["owned"][seat]]
        if phase == "end":
            return self._end_moves(state, seat) + [{"type": "done"}]
        return []

    def only_action(self, state: State, seat: int) -> Action | None:
        """A play is never forced: with one card and one open column, whether the insert has a
        single explorer option depends on the card, which the others do not see (the forced
        move would show it). The other phases' choices are public."""
        if state["phase"] == "play":
            return None
        return super().only_action(state, seat)

    def single_action(self, state: State, seat: int) -> Action | None:
        if state["phase"] != "play" or seat not in self.awaiting(state):
            return super().single_action(state, seat)
        # every card of the hand in every open column is at least one insert (explorer
        # "none"), so there is a single action only with one card and one open column
        hand = state["hands"][seat]
        wall = state["wall"]
        open_columns = [col for col in range(WIDTH) if len(wall[col]) < HEIGHT]
        if len(hand) != 1 or len(open_columns) != 1:
            return None
        (card,), (col,) = hand, open_columns
        pairs = find_pairs(wall, col, len(wall[col]), card, state["sphinx"])
        options = self._explorer_options(state, seat, animal_of(card), pairs)
        if len(options) != 1:
            return None
        return {"type": "insert", "card": card, "column": col, "explorer": options[0]}

    def timeout_action(self, state: State, seat: int) -> Action:
        phase = state["phase"]
        if phase == "curse":
            return {"type": "curse_pass"}
        if phase == "end":
            return {"type": "done"}
        actions = self.legal_actions(state, seat)
        if phase == "play":
            # Lowest open column for the first card, placing an explorer when allowed.
            first = actions[0]
            same = [a for a in actions
                    if a["card"] == first["card"] and a["column"] == first["column"]]
            return same[-1]
        return actions[0]

    # -- decide ---------------------------------------------------------------------------
    #: action type -> (the phase it is played in, the method deciding it)
    HANDLERS = {
        "insert": ("play", "_decide_insert"),
        "move_scarab": ("end", "_decide_move"),
        "done": ("end", "_decide_done"),
        "curse_claim": ("curse", "_decide_claim"),
        "curse_pass": ("curse", "_decide_pass"),
        "curse_victim": ("curse_victim", "_decide_victim"),
        "curse_give": ("curse_give", "_decide_give"),
    }
    ACTIONS = tuple(sorted(HANDLERS))

    def decide(self, state: State, seat: int, action: Action,
               rng) -> tuple[list[Event], State]:
        kind = action_type(action, self.ACTIONS)
        phase, handler = self.HANDLERS[kind]
        if state["phase"] != phase:
            raise IllegalAction("wrong_phase", f"'{kind}' is not possible now",
                                {"phase": state["phase"]})
        if seat not in self.awaiting(state):
            raise IllegalAction("not_your_turn", "the game is not waiting for this seat")
        out = Outcome(self, state)
        getattr(self, handler)(out, seat, action)
        return out.done()

    def _opening_check(self, out: Outcome, animal: str) -> None:
        work = out.state
        p = work["pillars"][animal]
        if p["scarabs"] == 3 and p["occupant"] is not None and p["stack"]:
            sid = p["stack"][0]
            out.emit("SarcophagusOpened", {
                "seat": p["occupant"], "pillar": animal, "sarcophagus": sid,
                "eyes": SARCOPHAGI[sid]["eyes"], "value": SARCOPHAGI[sid]["value"]},
                p["occupant"])

    def _decide_insert(self, out: Outcome, seat: int, action: Action) -> None:
        work = out.state
        check_fields(action, ("card", "column", "explorer"))
        card, col, explorer = action["card"], action["column"], action["explorer"]
        if not isinstance(card, str):
            raise invalid_field("card", "card must be a card id string")
        if card not in work["hands"][seat]:
            raise IllegalAction("card_not_in_hand", "that card is not in your hand")
        if not is_int(col):
            raise invalid_field("column", "column must be an integer")
        if not 0 <= col < WIDTH:
            raise IllegalAction("invalid_column", "column must be 0..6", {"min": 0, "max": 6})
        if len(work["wall"][col]) >= HEIGHT:
            raise IllegalAction("column_full", "that shaft is full", {"column": col})
        if isinstance(explorer, dict):
            if set(explorer) != {"from_pillar"} or not isinstance(explorer["from_pillar"], str):
                raise invalid_field("explorer", EXPLORER_VALUES)
            if explorer["from_pillar"] not in ANIMALS:
                raise IllegalAction("unknown_pillar", "unknown pillar", {"allowed": ANIMALS})
        elif explorer not in ("none", "reserve"):
            raise invalid_field("explorer", EXPLORER_VALUES)
        row = len(work["wall"][col])
        animal = animal_of(card)
        pairs = find_pairs(work["wall"], col, row, card, work["sphinx"])
        options = self._explorer_options(work, seat, animal, pairs)
        if explorer not in options:
            if options == ["none"]:
                raise IllegalAction("explorer_not_allowed",
                                    "this insertion allows no explorer placement")
            if explorer == "reserve":
                raise IllegalAction("reserve_empty", "your reserve is empty")
            if work["reserves"][seat] > 0:
                raise IllegalAction("reserve_not_empty",
                                    "an explorer may only be moved when the reserve is empty")
            raise IllegalAction("not_your_explorer", "you have no explorer at that pillar")
        out.emit("CardInserted", {
            "seat": seat, "card": card, "animal": animal, "facing": facing_of(card),
            "column": col, "row": row, "pairs": pairs, "explorer": explorer}, seat)
        pillar = work["pillars"][animal]
        if explorer != "none":
            occ = pillar["occupant"]
            if occ is not None:
                out.emit("ExplorerDisplaced", {"pillar": animal, "seat": occ}, seat)
            source = "reserve" if explorer == "reserve" else explorer["from_pillar"]
            out.emit("ExplorerPlaced", {"pillar": animal, "seat": seat, "from": source}, seat)
        if pairs:
            self._opening_check(out, animal)
        for _ in range(min(len(pairs), MAX_PAIR_SCARABS)):
            if pillar["scarabs"] >= 3 or work["supply"] == 0:
                reason = "pillar_full" if pillar["scarabs"] >= 3 else "supply_empty"
                out.emit("ScarabSkipped", {"pillar": animal, "reason": reason}, seat)
                continue
            out.emit("ScarabPlaced", {"pillar": animal}, seat)
            self._opening_check(out, animal)
        self._continue_turn(out)

    def _current_pile(self, work: State) -> str | None:
        piles = work["piles"]
        for name in ("draw", "start", "main"):
            if piles.get(name):
                return name
        return None

    def _continue_turn(self, out: Outcome) -> None:
        """Draw (section 5.6 / 7) for the active player, then end the turn (5.7)."""
        work = out.state
        seat = work["turn"]
        while len(work["hands"][seat]) < HAND_SIZE:
            pile = self._current_pile(work)
            if pile is None:
                break
            top = work["piles"][pile][0]
            if top in CURSES:
                out.emit("CurseRevealed", {
                    "seat": seat, "card": top, "sequence": CURSES[top]}, seat)
                return  # the curse round awaits every seat
            out.emit("CardDrawn", {"seat": seat, "pile": pile, "card": top}, seat)
        n = work["players"]
        if wall_count(work["wall"]) >= CELLS:
            last = work["last_inserter"]
            out.emit("EndPhaseStarted", {
                "order": [(last + 1 + i) % n for i in range(n)]})
        else:
            out.emit("TurnStarted", {
                "seat": (seat + 1) % n, "turn_number": work["turn_number"] + 1})

    # curse ---------------------------------------------------------------------------------
    def _decide_claim(self, out: Outcome, seat: int, action: Action) -> None:
        work = out.state
        check_fields(action, ("cells",))
        cells = action["cells"]
        if (not isinstance(cells, list) or len(cells) != 3
                or not all(isinstance(c, list) and len(c) == 2 and all(is_int(v) for v in c)
                           for c in cells)):
            raise invalid_field("cells", "cells are three [col, row] integer pairs")
        triple = sorted([list(c) for c in cells])
        if triple not in segments(work["wall"]):
            raise IllegalAction("not_a_segment",
                                "the cells are not a straight segment of three occupied cells")
        out.emit("CurseClaimed", {"seat": seat, "cells": triple}, seat)
        curse = work["curse"]
        if segment_matches(work["wall"], triple, CURSES[curse["card"]]):
            self._close_curse(out, seat)
        elif all(r is not None for r in curse["responses"]):
            self._close_curse(out, None)

    def _decide_pass(self, out: Outcome, seat: int, action: Action) -> None:
        work = out.state
        check_fields(action, ())
        out.emit("CursePassed", {"seat": seat}, seat)
        if all(r is not None for r in work["curse"]["responses"]):
            self._close_curse(out, None)

    def _close_curse(self, out: Outcome, finder: int | None) -> None:
        work = out.state
        curse = work["curse"]
        out.emit("CurseRoundClosed", {"card": curse["card"], "finder": finder})
        if work["phase"] == "curse_closed":
            self._discard_curse(out)

    def _discard_curse(self, out: Outcome) -> None:
        work = out.state
        out.emit("CurseDiscarded", {"card": work["curse"]["card"]})
        self._continue_turn(out)

    def _decide_victim(self, out: Outcome, seat: int, action: Action) -> None:
        work = out.state
        check_fields(action, ("seat",))
        victim = action["seat"]
        if not is_int(victim):
            raise invalid_field("seat", "seat must be an integer")
        if victim not in self._victims(work, seat):
            raise IllegalAction("invalid_victim",
                                "the victim is another player owning a sarcophagus",
                                {"allowed": self._victims(work, seat)})
        out.emit("CurseVictimChosen", {"seat": seat, "victim": victim}, seat)

    def _decide_give(self, out: Outcome, seat: int, action: Action) -> None:
        work = out.state
        check_fields(action, ("sarcophagus",))
        sid = action["sarcophagus"]
        if not isinstance(sid, str):
            raise invalid_field("sarcophagus", "sarcophagus must be an id string")
        owned = work["owned"][seat]
        if sid not in owned:
            raise IllegalAction("not_your_sarcophagus", "you do not own that sarcophagus")
        finder = work["curse"]["finder"]
        out.emit("SarcophagusGiven", {
            "from": seat, "to": finder, "index": owned.index(sid), "sarcophagus": sid,
            "eyes": SARCOPHAGI[sid]["eyes"], "value": SARCOPHAGI[sid]["value"]}, seat)
        self._discard_curse(out)

    # end phase -----------------------------------------------------------------------------
    def _decide_move(self, out: Outcome, seat: int, action: Action) -> None:
        work = out.state
        check_fields(action, ("from", "to"))
        src, dst = action["from"], action["to"]
        for name, value in (("from", src), ("to", dst)):
            if not isinstance(value, str):
                raise invalid_field(name, f"{name} must be an animal id")
            if value not in ANIMALS:
                raise IllegalAction("unknown_pillar", "unknown pillar",
                                    {**fields_detail(name, "unknown pillar"),
                                     "allowed": ANIMALS})
        if src == dst:
            raise IllegalAction("same_pillar", "from and to must differ")
        pillars = work["pillars"]
        if pillars[src]["occupant"] != seat or pillars[dst]["occupant"] != seat:
            raise IllegalAction("not_your_explorer",
                                "both pillars must have one of your explorers")
        if pillars[src]["scarabs"] == 0:
            raise IllegalAction("no_scarab", "no scarab lies at that pillar")
        if pillars[dst]["scarabs"] >= 3:
            raise IllegalAction("pillar_full", "that pillar already has 3 scarabs")
        if work["end"]["moves"][seat] >= MAX_END_MOVES:  # pragma: no cover - forced done
            raise IllegalAction("move_limit", "at most 16 end-game moves")
        out.emit("ScarabMoved", {"seat": seat, "from": src, "to": dst}, seat)
        self._opening_check(out, dst)

    def _decide_done(self, out: Outcome, seat: int, action: Action) -> None:
        work = out.state
        check_fields(action, ())
        out.emit("EndDone", {"seat": seat}, seat)
        if work["end"]["index"] >= work["players"]:
            res = self._score(work)
            out.emit("GameEnded", {
                "scores": res["scores"], "ranks": res["ranks"], "winners": res["winners"],
                "pharaohs": work["pharaohs"], "unused_pharaohs": work["unused_pharaohs"],
                "owned": work["owned"],
                "stacks": {a: work["pillars"][a]["stack"] for a in ANIMALS}})

    # -- scoring --------------------------------------------------------------------------
    def _score(self, state: State) -> dict:
        n = state["players"]
        scores, keys, per_seat = [], [], []
        for s in range(n):
            owned = state["owned"][s]
            points = sum(SARCOPHAGI[sid]["value"] for sid in owned)
            pharaoh = state["pharaohs"][s]
            animal = pharaoh[2:] if pharaoh else None
            bonus = PHARAOH_BONUS if animal and state["pillars"][animal]["occupant"] == s else 0
            scores.append(points + bonus)
            keys.append((points + bonus, len(owned)))
            per_seat.append({
                "sarcophagi": [{"id": sid, **SARCOPHAGI[sid]} for sid in owned],
                "sarcophagus_points": points, "sarcophagus_count": len(owned),
                "pharaoh": pharaoh, "pharaoh_bonus": bonus, "total": points + bonus})
        return standard_result(scores, keys, {"seats": per_seat,
                                              "tie_break": "number of sarcophagi"})

    def result(self, state: State) -> dict | None:
        if not self.is_over(state):
            return None
        return self._score(state)

    # -- information ----------------------------------------------------------------------
    def public_tables(self) -> dict:
        return {"animals": list(ANIMALS), "left_facing": dict(LEFT_FACING)}

    def view(self, state: State, viewer: Viewer) -> dict:
        over = self.is_over(state)
        who = ALL if over else viewer
        n = state["players"]

        def sarc(sid: str, visible_: bool) -> dict:
            out = {"eyes": SARCOPHAGI[sid]["eyes"]}
            if visible_:
                out.update({"id": sid, "value": SARCOPHAGI[sid]["value"]})
            return out

        piles = state["piles"]
        curse = state["curse"]
        out = {
            "phase": state["phase"],
            "variants": {"curse": state["curse_variant"], "sphinx": state["sphinx"]},
            "setup": state["setup"],
            "turn": state["turn"],
            "turn_number": state["turn_number"],
            "awaiting": self.awaiting(state),
            "pillar_order": state["pillar_order"],
            "wall": [list(col) for col in state["wall"]],
            "heights": [len(col) for col in state["wall"]],
            "pillars": {a: {"occupant": p["occupant"], "scarabs": p["scarabs"],
                            "stack": [sarc(sid, who == ALL) for sid in p["stack"]]}
                        for a, p in state["pillars"].items()},
            "supply": state["supply"],
            "reserves": list(state["reserves"]),
            "hand_sizes": [len(h) for h in state["hands"]],
            "hands": [list(h) if sees(who, s) else None for s, h in enumerate(state["hands"])],
            "sarcophagi": [[sarc(sid, sees(who, s)) for sid in state["owned"][s]]
                           for s in range(n)],
            "sarcophagus_points": [sum(SARCOPHAGI[sid]["value"] for sid in state["owned"][s])
                                   if sees(who, s) else None for s in range(n)],
            "pharaohs": [p if sees(who, s) else None for s, p in enumerate(state["pharaohs"])],
            "pile_sizes": {k: len(v) for k, v in piles.items()},
            "curses_done": list(state["curses_done"]),
            "curse": None,
            "end": None,
        }
        if state["curse_variant"]:
            out["main_top_is_curse"] = bool(piles["main"]) and piles["main"][0] in CURSES
        if who == ALL:
            out["piles"] = {k: list(v) for k, v in piles.items()}
            out["unused_pharaohs"] = list(state["unused_pharaohs"])
        if curse is not None:
            out["curse"] = {
                "card": curse["card"], "sequence": CURSES[curse["card"]],
                "drawer": curse["drawer"],
                "responded": [r is not None for r in curse["responses"]],
                "responses": list(curse["responses"]),
                "claims": [dict(c) for c in curse["claims"]],
                "finder": curse["finder"], "victim": curse["victim"]}
        if state["end"] is not None:
            out["end"] = {"order": list(state["end"]["order"]), "index": state["end"]["index"],
                          "moves": list(state["end"]["moves"])}
        if over:
            out["result"] = self._score(state)
        return out

    def visible(self, ev: Event, viewer: Viewer) -> Event | None:
        if viewer == ALL:
            return ev
        t, d = ev["type"], ev["data"]
        if t == "GameSetUp":
            data = {
                "pillar_order": d["pillar_order"],
                "stack_eyes": {a: [SARCOPHAGI[s]["eyes"] for s in st]
                               for a, st in d["stacks"].items()},
                "hand_sizes": [len(h) for h in d["hands"]],
                "hands": [h if sees(viewer, s) else None for s, h in enumerate(d["hands"])],
                "pile_sizes": {k: len(v) for k, v in d["piles"].items()},
                "pharaohs": [p if sees(viewer, s) else None for s, p in enumerate(d["pharaohs"])],
            }
            if "main" in d["piles"]:
                main = d["piles"]["main"]
                data["main_top_is_curse"] = bool(main) and main[0] in CURSES
            out = dict(ev)
            out["data"] = data
            return out
        if t in ("CardDrawn", "SarcophagusOpened"):
            if sees(viewer, d["seat"]):
                return ev
            out = dict(ev)
            out["data"] = {k: v for k, v in d.items() if k not in ("card", "sarcophagus", "value")}
            return out
        if t == "SarcophagusGiven":
            if sees(viewer, d["from"]) or sees(viewer, d["to"]):
                return ev
            out = dict(ev)
            out["data"] = {k: v for k, v in d.items() if k not in ("sarcophagus", "value")}
            return out
        return ev


GAME = PharaohsWall()
