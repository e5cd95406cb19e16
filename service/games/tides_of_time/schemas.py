"""JSON Schemas (2020-12) of what Tides of Time serves: ``STATE`` (the ``state`` of a game view,
for every viewer) and ``EVENTS`` (event type -> schema of its ``data``), the redacted forms
included.

Meanings are those of the spec (shared/rules/tides-of-time.md); shapes are those of
:meth:`TidesOfTime.view` and :meth:`TidesOfTime.visible`. Cards are their numbers 1-18 (the
catalog's ``public_tables`` gives each one's id, name, suit and objective). While the game runs
a viewer does not see: the other seat's hand (null), a pick or relic choice the other seat has
committed and not yet revealed (null in the view, absent from the event) and the draw pile's
order (absent). The platform key (``all``) and everybody after the end see everything.
"""

from __future__ import annotations

from ...engine.schemas import closed
from .data import (CARDS, DRAFT, DRAW_AFTER_RELICS, GAME_OVER, HAND_SIZE, PICKS_PER_ROUND, RELIC,
                   ROUNDS, SCORED, SETUP, SUITS)

#: Each seat keeps one relic after every round but the last; both remove one card then.
RELICS_PER_SEAT = ROUNDS - 1
KINGDOM_SIZE = RELICS_PER_SEAT + PICKS_PER_ROUND
PILE_SIZE = len(CARDS) - 2 * HAND_SIZE
#: The most cards of one suit a kingdom can hold (every card of the suit).
SUIT_CARDS = max(sum(1 for c in CARDS.values() if c["suit"] == s) for s in SUITS)

CARD = {"type": "integer", "minimum": min(CARDS), "maximum": max(CARDS),
        "description": "a card number (1-18; public_tables.cards says what each is)"}
assert sorted(CARDS) == list(range(min(CARDS), max(CARDS) + 1))
#: What a seat's own secret is served as.
OWN = "for the seat itself (and after the end) only, absent for others while the game runs"
SEAT = {"type": "integer", "minimum": 0, "maximum": 1, "description": "a seat (0 or 1)"}
POINTS = {"type": "integer", "minimum": 0, "description": "victory points"}
ROUND = {"type": "integer", "minimum": 1, "maximum": ROUNDS, "description": "the round, 1-3"}
PICK = {"type": "integer", "minimum": 1, "maximum": PICKS_PER_ROUND,
        "description": "the pick of the round, 1-5"}
SUIT = {"type": "string", "enum": list(SUITS), "description": "the suit the objective counts"}
SUIT_LIST = {"type": "array", "items": SUIT, "uniqueItems": True, "maxItems": len(SUITS)}


def cards(most: int, description: str) -> dict:
    return {"type": "array", "items": CARD, "uniqueItems": True, "maxItems": most,
            "description": description}


def both(items: dict, description: str) -> dict:
    """A pair: seat 0's entry, then seat 1's."""
    return {"type": "array", "items": items, "minItems": 2, "maxItems": 2,
            "description": description}


def suit_counts(most: int, description: str) -> dict:
    return closed(description, list(SUITS),
                  **{s: {"type": "integer", "minimum": 0, "maximum": most,
                         "description": f"{s} cards"} for s in SUITS})


# -- a round's scoring, card by card (spec 2.3 and 6) -------------------------------------------

COMPARED = {  # the comparisons of MAJ, SINGLES and BEST
    "mine": {**POINTS, "description": "the owner's value compared"},
    "theirs": {**POINTS, "description": "the opponent's value compared"},
    "tie_won": {"type": "boolean", "description": "won on a tie thanks to The Kings Nest"},
}
PER = {"per": {**POINTS, "description": "points per suit card, set or missing suit"}}
#: What each objective kind says about how it scored (besides card, id, kind and points).
WHY: dict[str, tuple[str, dict]] = {
    "EACH": ("points per card of a suit in the kingdom", {
        "suit": SUIT, **PER,
        "count": {**POINTS, "description": "the suit's effective count"}}),
    "MAJ": ("7 when the owner has more of a suit than the opponent", {
        "suit": SUIT, **COMPARED}),
    "SET": ("points per complete set of suits", {
        "suits": {**SUIT_LIST, "minItems": 2, "description": "the suits of a set"}, **PER,
        "sets": {**POINTS, "description": "complete sets"}}),
    "MISSING": ("points per suit missing from the kingdom", {
        "missing": {**SUIT_LIST, "description": "the suits missing"}, **PER}),
    "SINGLES": ("8 when the owner holds more suits exactly once (mine/theirs: how many)",
                COMPARED),
    "BEST": ("8 when one of the owner's other cards beats the opponent's best (mine/theirs: "
             "the best other card's points)", COMPARED),
    "TIES": ("The Kings Nest: no points, wins the owner's ties", {}),
    "DOUBLE": ("The Roof of the World: no points, doubles the most numerous suit(s)", {}),
}
assert set(WHY) == {c["kind"] for c in CARDS.values()}


def scored_card(kind: str) -> dict:
    description, why = WHY[kind]
    numbers = sorted(n for n, c in CARDS.items() if c["kind"] == kind)
    return closed(
        f"{kind}: {description}.", ["card", "id", "kind", "points", *why],
        card={**CARD, "enum": numbers},
        id={"type": "string", "enum": [CARDS[n]["id"] for n in numbers],
            "description": "the card's id"},
        kind={"type": "string", "const": kind, "description": "the card's objective kind"},
        points={**POINTS, "description": "points the card scored"}, **why)


SCORED_CARD = {"oneOf": [scored_card(kind) for kind in WHY],
               "description": "one kingdom card's score and why (its kind's fields)"}

ROUND_BREAKDOWN = {
    "round": ROUND,
    "kingdoms": both(cards(KINGDOM_SIZE, "relics first, then this round's cards in play "
                                         "order"), "the kingdoms scored"),
    "per_card": both({"type": "array", "items": SCORED_CARD, "maxItems": KINGDOM_SIZE},
                     "each kingdom card's score, in kingdom order"),
    "counts": both(suit_counts(2 * SUIT_CARDS, "suit counts after The Roof of the World"),
                   "effective suit counts"),
    "raw_counts": both(suit_counts(SUIT_CARDS, "suit cards in the kingdom"),
                       "suit counts as laid"),
    "totals": both(POINTS, "the round's score of each seat"),
}
ROUND_SCORES = {"type": "array", "items": POINTS, "maxItems": ROUNDS,
                "description": "score of each round scored so far"}

RELIC_CHOICE = closed("a relic choice", ["keep", "remove"], keep=CARD, remove=CARD)

SEAT_VIEW = closed(
    "One seat.",
    ["seat", "hand", "hand_size", "kingdom", "relics", "played_this_round", "committed",
     "pending", "round_scores", "total"],
    seat=SEAT,
    hand={**cards(HAND_SIZE, "the cards in hand (in the relic phase, the 5 cards played this "
                             "round, taken back: public all the same); null to the other seat "
                             "and spectators while the game runs"),
          "type": ["array", "null"]},
    hand_size={"type": "integer", "minimum": 0, "maximum": HAND_SIZE,
               "description": "cards in hand (public)"},
    kingdom=cards(KINGDOM_SIZE, "the face-up kingdom: relics, then this round's cards"),
    relics=cards(RELICS_PER_SEAT, "the cards kept for good after earlier rounds"),
    played_this_round=cards(PICKS_PER_ROUND, "this round's cards in play order (kept until "
                                             "the relic choices are revealed)"),
    committed={"type": "boolean", "description": "the seat has committed this step's choice"},
    pending={"oneOf": [{"type": "null"}, CARD, RELIC_CHOICE],
             "description": "the seat's committed, unrevealed choice: a card number in the "
                            "draft, {keep, remove} in the relic phase; seen by the seat "
                            "itself only while the game runs (null to others)"},
    round_scores=ROUND_SCORES,
    total={**POINTS, "description": "the sum of the round scores"},
)

STATE = closed(
    "Tides of Time as the viewer may see it.",
    ["phase", "round", "pick", "seats", "draw_pile_size", "removed", "rounds",
     "strict_zero_ties", "setup"],
    phase={"type": "string", "enum": [SETUP, DRAFT, RELIC, SCORED, GAME_OVER],
           "description": "SETUP: before the first deal (only the state at version 1, "
                          "between the creation and the deal of one command); DRAFT: both pick a "
                          "card (hidden, simultaneous); RELIC: after rounds "
                          "1-2 both keep one card played this round and remove another; "
                          "SCORED: round 3 scored, the game not yet ended (only the state "
                          "between those two events of one command); GAME_OVER after round 3"},
    round={**ROUND, "minimum": 0, "description": "the round, 1-3; 0 in SETUP"},
    pick={"type": ["integer", "null"], "minimum": 1, "maximum": PICKS_PER_ROUND,
          "description": "the pick of the round (1-5) in the draft, else null"},
    seats=both(SEAT_VIEW, "both seats"),
    draw_pile_size={"type": "integer", "minimum": 0, "maximum": PILE_SIZE,
                    "description": "cards left in the draw pile (its order is secret)"},
    removed=cards(2 * RELICS_PER_SEAT, "cards removed from the game in relic phases (public)"),
    rounds={"type": "array", "maxItems": ROUNDS,
            "items": closed("a scored round", list(ROUND_BREAKDOWN), **ROUND_BREAKDOWN),
            "description": "every scored round's breakdown"},
    strict_zero_ties={"type": "boolean",
                      "description": "The Kings Nest does not win 0-0 ties (option)"},
    setup={"type": "string", "enum": ["standard", "custom"],
           "description": "custom when options.setup fixed the deck order"},
    draw_pile=cards(PILE_SIZE, "the draw pile, top first: only for the platform key and "
                               "after the end (absent otherwise)"),
)

HANDS = both({**cards(HAND_SIZE, "a hand"), "type": ["array", "null"]},
             "each seat's hand; null for the other seat's while the game runs")
HAND_SIZES = both({"type": "integer", "minimum": 0, "maximum": HAND_SIZE}, "hand sizes")

EVENTS: dict[str, dict] = {
    "CardsDealt": closed(
        "The deal: 5 cards to each seat, the rest face down.", ["hands", "pile_size"],
        hands=HANDS,
        pile=cards(PILE_SIZE, "the draw pile, top first: absent while the game runs"),
        pile_size={"type": "integer", "const": PILE_SIZE,
                   "description": "cards in the draw pile"}),
    "PickCommitted": closed(
        "The event's seat has picked.", [],
        card={**CARD, "description": f"the card picked: {OWN}"}),
    "PicksRevealed": closed(
        "Both picks revealed; each card joins its picker's kingdom.",
        ["round", "pick", "cards"],
        round=ROUND, pick=PICK,
        cards=both(CARD, "seat 0's card, seat 1's card")),
    "HandsExchanged": closed(
        "The seats swap hands before the next pick.", ["pick", "hands", "hand_sizes"],
        pick={**PICK, "minimum": 2, "description": "the pick that comes next"},
        hands=HANDS, hand_sizes=HAND_SIZES),
    "RoundScored": closed(
        "Both kingdoms scored at the end of a round.",
        [*ROUND_BREAKDOWN, "round_scores", "running_totals"],
        **ROUND_BREAKDOWN,
        round_scores=both(ROUND_SCORES, "each seat's round scores so far"),
        running_totals=both(POINTS, "each seat's total so far")),
    "RelicCommitted": closed(
        f"The event's seat has chosen its relic: keep and remove are {OWN}.", [],
        keep={**CARD, "description": "the card kept for good"},
        remove={**CARD, "description": "the card removed from the game"}),
    "RelicsRevealed": closed(
        "Both relic choices revealed.", ["round", "kept", "removed"],
        round={**ROUND, "maximum": RELICS_PER_SEAT,
               "description": "the round just scored (relics follow rounds 1-2)"},
        kept=both(CARD, "each seat's new relic"), removed=both(CARD, "each seat's removed "
                                                                     "card")),
    "CardsDrawn": closed(
        "The event's seat draws from the pile.", ["count"],
        cards=cards(DRAW_AFTER_RELICS, f"the cards drawn: {OWN}"),
        count={"type": "integer", "minimum": 0, "maximum": DRAW_AFTER_RELICS,
               "description": "how many cards were drawn (public)"}),
    "RoundStarted": closed(
        "The next round's draft begins.", ["round"],
        round={**ROUND, "minimum": 2, "description": "the round starting, 2-3"}),
    "GameEnded": closed(
        "After round 3: the higher total wins; equal totals share the victory.",
        ["totals", "ranks", "winners", "round_scores"],
        totals=both(POINTS, "each seat's total"),
        ranks=both({"type": "integer", "minimum": 1, "maximum": 2},
                   "each seat's rank (1, 1 for a tie)"),
        winners={"type": "array", "items": SEAT, "minItems": 1, "maxItems": 2,
                 "uniqueItems": True, "description": "the winning seats (both: shared)"},
        round_scores=both({**ROUND_SCORES, "minItems": ROUNDS}, "each seat's round scores")),
}
