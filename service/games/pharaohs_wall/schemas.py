"""JSON Schemas (2020-12) of what Pharaoh's Wall serves: ``STATE``, the ``state`` of
:meth:`PharaohsWall.view` for every viewer and at every version (the states inside a command
that ``GET /v1/games/{id}/states/{version}`` serves included), and ``EVENTS``, the ``data`` of
each event type as every viewer is served it (``PharaohsWall.visible``'s redacted forms
included). The explorer and cell forms of the actions live here too (:data:`EXPLORER_FORMS`,
:data:`CELL_FORM`), so actions and events say them once.

Meanings follow ``shared/rules/pharaohs-wall.md`` (section numbers below refer to it). Secrets
(section 9) while the game runs: a hand and a pharaoh card are served to their seat alone (null
for the others); a sarcophagus's id and value to its owner alone (in a stack, to nobody): the
others get its eye count; the piles' order and the unused pharaohs to ``ALL`` alone. Everything
is served to everybody once the game is over. Codes come from the component tables
(:mod:`.data`).
"""

from __future__ import annotations

from ...engine.schemas import closed, described, nullable
from .data import (ANIMALS, CARD_IDS, CURSE_IDS, EXPLORERS, HAND_SIZE, HEIGHT, MAX_END_MOVES,
                   PHARAOH_BONUS, PHARAOHS, SARC_IDS, SARCOPHAGI, SCARABS, START_PILE, WIDTH)

MAX_SEATS = 4
PHASES = ["setup", "play", "curse", "curse_victim", "curse_closed", "curse_give", "draw", "end",
          "over"]
PILES = {"draw": "the draw pile (base game)", "start": "the curse variant's starting pile "
                                                        "(drawn first)",
         "main": "the curse variant's main pile (the 6 curse cards among its cards)"}
EYES = {"type": "integer", "minimum": 1, "maximum": 3,
        "description": "the eye count printed on the sarcophagus's front (public; 1-eye ones "
                       "are opened first)"}


def fields(description: str, required: dict, optional: dict | None = None) -> dict:
    """An object with exactly the keys of ``required`` (always present) and ``optional``."""
    return closed(description, list(required), **required, **(optional or {}))


def array(items: dict, description: str, low: int = 0, high: int | None = None) -> dict:
    out = {"type": "array", "items": items, "description": description, "minItems": low}
    if high is not None:
        out["maxItems"] = high
    return out


def count(description: str, high: int | None = None, low: int = 0) -> dict:
    out = {"type": "integer", "minimum": low, "description": description}
    if high is not None:
        out["maximum"] = high
    return out


def piles_of(names: list[str]) -> dict:
    """The piles of a variant: exactly ``names``."""
    return {"required": names, "properties": {k: False for k in PILES if k not in names}}


def by_seat(items: dict, description: str) -> dict:
    """One entry per seat, seat 0 first."""
    return array(items, f"by seat, seat 0 first: {description}", 2, MAX_SEATS)


SEAT = count("a seat (0-based; play goes clockwise, by increasing seat)", MAX_SEATS - 1)
ANIMAL = {"enum": list(ANIMALS), "type": "string",
          "description": "an animal, which names its pillar too (table 2.1)"}
CARD = {"enum": list(CARD_IDS), "type": "string",
        "description": "a hieroglyph card H-<ANIMAL>-<k> (k 1-7; the first ones face left)"}
CURSE = {"enum": list(CURSE_IDS), "type": "string", "description": "a curse card (table 2.5)"}
PHARAOH = {"enum": list(PHARAOHS), "type": "string", "description": "a pharaoh card P-<ANIMAL>"}
SARC_ID = {"enum": list(SARC_IDS), "type": "string",
           "description": "a sarcophagus id (S01-S07 1 eye, S08-S14 2, S15-S21 3; the id "
                          "determines the value, so it is as secret as the value)"}
VALUE = count("the sarcophagus's points (on its back)", max(s["value"] for s in
                                                            SARCOPHAGI.values()), 1)
COLUMN = count("a shaft of the wall, 0-6 left to right", WIDTH - 1)
ROW = count("a row of the wall, 0 at the bottom", HEIGHT - 1)
#: a wall cell [column, row] (the actions' form, as served in the catalog)
CELL_FORM = {"type": "array", "items": {"type": "integer", "minimum": 0, "maximum": WIDTH - 1},
             "minItems": 2, "maxItems": 2}
CELL = described(CELL_FORM, "a wall cell [column, row], each 0-6 (row 0 at the bottom)")
SEQUENCE = array(ANIMAL, "the curse's sequence of three animals (either way along a segment)",
                 3, 3)
SEGMENT = array(CELL, "three cells in a straight line, ascending by (column, row)", 3, 3)
#: the insert action's explorer field (the actions' form, as served in the catalog)
EXPLORER_FORMS = {"oneOf": [
    {"enum": ["none", "reserve"]},
    {"type": "object", "properties": {"from_pillar": {"enum": ANIMALS}},
     "required": ["from_pillar"], "additionalProperties": False},
]}
EXPLORER = described(EXPLORER_FORMS, 'how the turn placed an explorer at the pillar of the '
                                     'card\'s animal: "none", "reserve" (from the reserve) or '
                                     '{"from_pillar": animal} (moved from another pillar, only '
                                     'with an empty reserve)')
OCCUPANT = nullable(SEAT, "the seat whose explorer stands at the pillar, or null")

SARCOPHAGUS = fields(
    "a sarcophagus as this viewer sees it: its eye count always; its id and value only for its "
    "owner (for a stack's, only for ALL), and for everybody once the game is over",
    {"eyes": EYES}, {"id": SARC_ID, "value": VALUE})
OWNED = fields("a sarcophagus with everything printed on it", {"id": SARC_ID, "eyes": EYES,
                                                              "value": VALUE})
STACK = array(SARCOPHAGUS, "the pillar's sarcophagi, front (next to open) first", 0, 3)
HAND = array(CARD, "a hand's cards", 0, HAND_SIZE)
PILE_SIZES = fields("cards left in each pile: draw (base game), or start and main (curse "
                    "variant)", {}, {k: count(what) for k, what in PILES.items()})
PILE_ORDERS = fields("each pile's cards, top first (served to ALL alone while the game runs)",
                     {}, {"draw": array(CARD, PILES["draw"]),
                          "start": array(CARD, PILES["start"], 0, START_PILE),
                          "main": array({"anyOf": [CARD, CURSE]}, PILES["main"], 0,
                                        len(CARD_IDS) - START_PILE + len(CURSE_IDS))})
TOP_IS_CURSE = {"type": "boolean",
                "description": "curse variant only: the main pile's top card is a curse card "
                               "(curse cards have a different back: public)"}
SCORES = {
    "scores": by_seat(count("points"), "final scores (sarcophagus values + the pharaoh bonus)"),
    "ranks": by_seat(count("rank", low=1), "ranks (1 = best; ties broken by the number of "
                                           "sarcophagi, then shared)"),
    "winners": array(SEAT, "the seats ranked first", 1, MAX_SEATS),
}
RESULT = fields("the final result (once the game is over)", {
    **SCORES,
    "details": fields("the scoring broken down", {
        "seats": by_seat(fields("a seat's score", {
            "sarcophagi": array(OWNED, "the sarcophagi it owns"),
            "sarcophagus_points": count("their values added up"),
            "sarcophagus_count": count("how many (the tie-break)"),
            "pharaoh": PHARAOH,
            "pharaoh_bonus": {"enum": [0, PHARAOH_BONUS], "type": "integer",
                              "description": f"{PHARAOH_BONUS} when its explorer stands at its "
                                             "pharaoh's pillar at the end"},
            "total": count("sarcophagus points + pharaoh bonus")}), "the breakdown"),
        "tie_break": {"const": "number of sarcophagi", "type": "string",
                      "description": "what breaks equal totals"}}),
})

CURSE_ROUND = fields("the curse round under way (section 7)", {
    "card": CURSE,
    "sequence": SEQUENCE,
    "drawer": described(SEAT, "the seat that drew the curse card"),
    "responded": by_seat({"type": "boolean"}, "whether the seat has claimed or passed"),
    "responses": by_seat(nullable({"type": "string", "enum": ["claim", "pass"]}, "null: not "
                                                                                  "yet"),
                         "each seat's answer (claims and passes are public)"),
    "claims": array(fields("a claim, right or wrong", {"seat": SEAT, "cells": SEGMENT}),
                    "the claims made, in order"),
    "finder": nullable(SEAT, "the seat whose claim matched the sequence, once the round closed "
                             "with one"),
    "victim": nullable(SEAT, "the seat the finder chose to give it a sarcophagus"),
})
END_PHASE = fields("the end phase (section 6): each seat in turn may move scarabs between "
                   "pillars its explorers hold, then says done", {
                       "order": by_seat(SEAT, "the order the seats play the end phase in"),
                       "index": count("how many seats have said done", MAX_SEATS),
                       "moves": by_seat(count("scarab moves made", MAX_END_MOVES),
                                        "end-phase moves made"),
                   })

STATE = {
    **fields(
        "A Pharaoh's Wall game as the viewer sees it. main_top_is_curse is present in the "
        "curse variant only, piles and unused_pharaohs for ALL and once the game is over, "
        "result once it is over.", {
            "phase": {"type": "string", "enum": PHASES,
                      "description": "play: the turn's seat inserts a card; curse: every seat "
                                     "claims or passes; curse_victim / curse_give: the finder "
                                     "names a victim, who gives a sarcophagus; end: the end "
                                     "phase; over. setup, draw and curse_closed are only seen "
                                     "inside a command (states at past versions)"},
            "variants": fields("the variants played", {
                "curse": {"type": "boolean", "description": "Pharaoh's Curse (section 7)"},
                "sphinx": {"type": "boolean", "description": "Eyes of the Sphinx (section 8)"}}),
            "setup": {"type": "string", "enum": ["standard", "custom"],
                      "description": "custom when options.setup fixed the shuffles"},
            "turn": described(SEAT, "the seat whose turn it is (or was last)"),
            "turn_number": count("the turn, from 1 (0 before the first)"),
            "awaiting": array(SEAT, "the seats the game waits for", 0, MAX_SEATS),
            "pillar_order": array(ANIMAL, "the pillars as laid out, left to right (display "
                                          "only)", len(ANIMALS), len(ANIMALS)),
            "wall": array(array(CARD, "a shaft's cards, bottom first", 0, HEIGHT),
                          "the wall's seven shafts, left to right (public)", WIDTH, WIDTH),
            "heights": array(count("cards in the shaft", HEIGHT), "each shaft's height", WIDTH,
                             WIDTH),
            "pillars": fields("each animal's pillar", {a: fields(f"the {a} pillar", {
                "occupant": OCCUPANT,
                "scarabs": count("scarabs lying there (3 open the front sarcophagus when an "
                                 "explorer stands there)", 3),
                "stack": STACK}) for a in ANIMALS}),
            "supply": count("scarabs left in the supply", SCARABS),
            "reserves": by_seat(count("explorers", EXPLORERS), "explorers in the reserve"),
            "hand_sizes": by_seat(count("cards", HAND_SIZE), "cards in hand (public)"),
            "hands": by_seat(nullable(HAND, "null: another seat's hand (secret)"),
                             "the hands this viewer sees"),
            "sarcophagi": by_seat(array(SARCOPHAGUS, "in the order won"),
                                  "the sarcophagi each seat owns"),
            "sarcophagus_points": by_seat(nullable(count("points"), "null: another seat's "
                                                                    "(secret)"),
                                          "the owned sarcophagi's values added up"),
            "pharaohs": by_seat(nullable(PHARAOH, "null: another seat's (secret), or before "
                                                  "the setup"),
                                "each seat's pharaoh card (7 points if its explorer holds that "
                                "pillar at the end)"),
            "pile_sizes": PILE_SIZES,
            "curses_done": array(CURSE, "the curse cards resolved, in order", 0, len(CURSE_IDS)),
            "curse": nullable(CURSE_ROUND, "the curse round under way, or null"),
            "end": nullable(END_PHASE, "the end phase once started, or null"),
        }, {
            "main_top_is_curse": TOP_IS_CURSE,
            "piles": PILE_ORDERS,
            "unused_pharaohs": array(PHARAOH, "the pharaoh cards no seat holds"),
            "result": RESULT,
        }),
    "allOf": [
        {"if": {"properties": {"variants": {"properties": {"curse": {"const": True}}}}},
         "then": {"required": ["main_top_is_curse"],
                  "properties": {"pile_sizes": piles_of(["start", "main"]),
                                 "piles": piles_of(["start", "main"])}},
         "else": {"properties": {"main_top_is_curse": False, "pile_sizes": piles_of(["draw"]),
                                 "piles": piles_of(["draw"])}}},
        {"if": {"properties": {"phase": {"const": "over"}}},
         "then": {"required": ["piles", "unused_pharaohs", "result"]},
         "else": {"properties": {"result": False}}},
    ],
}

PAIR = fields("a pair the new card forms (section 5.2; Eyes of the Sphinx: per line)", {
    "cell": CELL,
    "card": described(CARD, "the card it pairs with"),
    "facing": {"type": "string", "enum": ["same", "opposite"],
               "description": "whether the two cards face the same way"}})
EVENTS: dict[str, dict] = {
    "GameSetUp": {
        "description": "the setup (section 4): everything for ALL; the public part and the "
                       "viewer's own hand and pharaoh for the others while the game runs",
        "oneOf": [
            fields("the full setup (ALL, and everybody once the game is over)", {
                "pillar_order": STATE["properties"]["pillar_order"],
                "stacks": fields("each pillar's stack of sarcophagus ids, front first",
                                 {a: array(SARC_ID, f"the {a} pillar's", 3, 3)
                                  for a in ANIMALS}),
                "hands": by_seat(array(CARD, "a seat's cards", HAND_SIZE, HAND_SIZE),
                                 "the hands dealt"),
                "piles": PILE_ORDERS,
                "pharaohs": by_seat(PHARAOH, "the pharaoh cards"),
                "unused_pharaohs": array(PHARAOH, "the pharaoh cards no seat holds", 3, 5)}),
            fields("the setup as a seat or a spectator is served it while the game runs", {
                "pillar_order": STATE["properties"]["pillar_order"],
                "stack_eyes": fields("each pillar's stack as eye counts, front first",
                                     {a: array(EYES, f"the {a} pillar's", 3, 3)
                                      for a in ANIMALS}),
                "hand_sizes": by_seat(count("cards", HAND_SIZE), "cards dealt"),
                "hands": STATE["properties"]["hands"],
                "pile_sizes": PILE_SIZES,
                "pharaohs": by_seat(nullable(PHARAOH, "null: another seat's (secret)"),
                                    "the pharaoh cards this viewer sees")},
                {"main_top_is_curse": TOP_IS_CURSE}),
        ],
    },
    "TurnStarted": fields("a seat's turn begins", {
        "seat": SEAT, "turn_number": count("the turn, from 1", low=1)}),
    "CardInserted": fields("a card slid into a shaft (section 5.1; public)", {
        "seat": SEAT, "card": CARD, "animal": ANIMAL,
        "facing": {"type": "string", "enum": ["LEFT", "RIGHT"],
                   "description": "the way the card faces"},
        "column": COLUMN, "row": ROW,
        "pairs": array(PAIR, "the pairs it forms (empty: none)", 0, 8),
        "explorer": EXPLORER}),
    "ExplorerDisplaced": fields("an explorer sent back to its owner's reserve", {
        "pillar": ANIMAL, "seat": described(SEAT, "the explorer's owner")}),
    "ExplorerPlaced": fields("an explorer placed at a pillar", {
        "pillar": ANIMAL, "seat": SEAT,
        "from": {"description": '"reserve" or the pillar it left',
                 "anyOf": [{"type": "string", "const": "reserve"}, ANIMAL]}}),
    "ScarabPlaced": fields("a scarab from the supply laid at the pillar", {"pillar": ANIMAL}),
    "ScarabSkipped": fields("a scarab the pair earned that could not be laid", {
        "pillar": ANIMAL,
        "reason": {"type": "string", "enum": ["pillar_full", "supply_empty"],
                   "description": "the pillar already has 3, or the supply is empty"}}),
    "SarcophagusOpened": fields(
        "the front sarcophagus goes to the pillar's explorer's owner, its 3 scarabs back to the "
        "supply; id and value are absent for other viewers while the game runs",
        {"seat": SEAT, "pillar": ANIMAL, "eyes": EYES}, {"sarcophagus": SARC_ID,
                                                          "value": VALUE}),
    "CardDrawn": fields("a card drawn back to 3 in hand; the card is absent for other viewers "
                        "while the game runs", {
                            "seat": SEAT,
                            "pile": {"type": "string", "enum": list(PILES),
                                     "description": "the pile drawn from"}},
                        {"card": CARD}),
    "CurseRevealed": fields("a curse card drawn: every seat claims a segment or passes "
                            "(public)", {"seat": SEAT, "card": CURSE, "sequence": SEQUENCE}),
    "CurseClaimed": fields("a claim (its verdict comes with CurseRoundClosed)", {
        "seat": SEAT, "cells": SEGMENT}),
    "CursePassed": fields("a pass", {"seat": SEAT}),
    "CurseRoundClosed": fields("the curse round is over", {
        "card": CURSE,
        "finder": nullable(SEAT, "the seat whose claim matched, or null: nobody")}),
    "CurseVictimChosen": fields("the finder chose who gives it a sarcophagus", {
        "seat": described(SEAT, "the finder"), "victim": SEAT}),
    "SarcophagusGiven": fields(
        "the victim gives the finder a sarcophagus; id and value are absent for the other "
        "viewers while the game runs", {
            "from": described(SEAT, "the victim"), "to": described(SEAT, "the finder"),
            "index": count("its place among the giver's sarcophagi (in the order won)"),
            "eyes": EYES}, {"sarcophagus": SARC_ID, "value": VALUE}),
    "CurseDiscarded": fields("the curse card is put away", {"card": CURSE}),
    "EndPhaseStarted": fields("the wall is full (49 cards): the end phase", {
        "order": END_PHASE["properties"]["order"]}),
    "ScarabMoved": fields("end phase: a scarab moved between two of the seat's pillars", {
        "seat": SEAT, "from": ANIMAL, "to": ANIMAL}),
    "EndDone": fields("end phase: the seat is done", {"seat": SEAT}),
    "GameEnded": fields("the game is over: the scores and every secret", {
        **SCORES,
        "pharaohs": by_seat(PHARAOH, "the pharaoh cards"),
        "unused_pharaohs": array(PHARAOH, "the pharaoh cards no seat held"),
        "owned": by_seat(array(SARC_ID, "in the order won"), "the sarcophagi each seat owns"),
        "stacks": fields("the sarcophagi left at each pillar, front first",
                         {a: array(SARC_ID, f"the {a} pillar's", 0, 3) for a in ANIMALS})}),
}
