"""JSON Schemas (2020-12) of what Diamant serves: ``STATE`` (the ``state`` of a game view, for
every viewer) and ``EVENTS`` (event type -> schema of its ``data``), the redacted forms included.

Meanings are those of the spec (shared/rules/diamant.md); shapes are those of
:meth:`Diamant.view` and :meth:`Diamant.visible`. While the game runs a viewer does not see: the
round's deck order (``RoundStarted.deck``, absent), another seat's pending choice
(``ChoiceCommitted.choice`` absent, ``players[].choice`` null) or another seat's chest (null).
The platform key (``all``) and everybody after the end see everything.
"""

from __future__ import annotations

from ...engine.schemas import closed, described, nullable
from .data import (CANONICAL, CHOICES, MAX_PLAYERS, MIN_PLAYERS, RELIC_VALUES, RELICS, ROUNDS,
                   TRAP_TYPES, TRAPS, TREASURES)

#: The longest path: every treasure, every relic, one trap of each type and the second trap
#: that ends the round (spec 8; served only by GET /states/{version} between that trap's
#: CardRevealed and the RoundEnded of the same command, which clears the path).
LONGEST_PATH = len(TREASURES) + len(RELICS) + len(TRAP_TYPES) + 1
#: Removed cards: every relic at most, and one trap per round at most.
MOST_REMOVED = len(RELICS) + ROUNDS

RUBIES = {"type": "integer", "minimum": 0}
CARD = {"type": "string", "enum": list(CANONICAL),
        "description": "a card id (spec 2.4): treasure T<value>[a|b], trap <TYPE><1-3>, "
                       "relic R1-R5"}
TRAP_CARD = {"type": "string", "enum": list(TRAPS), "description": "a trap card id"}
RELIC_CARD = {"type": "string", "enum": list(RELICS), "description": "a relic card id"}
TRAP_TYPE = {"type": "string", "enum": list(TRAP_TYPES), "description": "a trap type"}
SEAT = {"type": "integer", "minimum": 0, "maximum": MAX_PLAYERS - 1}
ROUND = {"type": "integer", "minimum": 1, "maximum": ROUNDS, "description": "the round, 1-5"}
SEATS = {"type": "array", "items": SEAT, "uniqueItems": True, "maxItems": MAX_PLAYERS}
RELIC_CARDS = {"type": "array", "items": RELIC_CARD, "uniqueItems": True,
               "maxItems": len(RELICS)}


def per_seat(items: dict, description: str) -> dict:
    """An array with one entry per seat, in seat order."""
    return {"type": "array", "items": items, "minItems": MIN_PLAYERS, "maxItems": MAX_PLAYERS,
            "description": description}


CHOICE = {"type": "string", "enum": list(CHOICES)}

PLAYER = closed(
    "One seat's expedition.",
    ["seat", "in_cave", "pocket", "chest", "relics", "committed", "choice"],
    seat=described(SEAT, "the seat number"),
    in_cave=described({"type": "boolean"},
                      "true while the seat is in the cave this round, false once in camp"),
    pocket=described(RUBIES, "rubies picked up this round, not yet banked (public; lost if "
                             "the round ends on a trap while in the cave)"),
    chest={"type": ["integer", "null"], "minimum": 0,
           "description": "rubies banked in the seat's chest, relic values included (seen by "
                          "its owner only while the game runs, others get null)"},
    relics=described({"type": "integer", "minimum": 0, "maximum": len(RELICS)},
                     "how many relics the seat has brought back (public)"),
    committed=described({"type": "boolean"},
                        "the seat is in the cave and has chosen for this decision"),
    choice=nullable(CHOICE, "the seat's committed choice: seen by the seat itself only while "
                            "the game runs; null to others, and null when nothing is committed"),
)

STATE = closed(
    "Diamant as the viewer may see it.",
    ["round", "phase", "path", "path_rubies", "deck_size", "removed", "relics_brought_back",
     "traps_on_path", "players"],
    round=described(ROUND, "the round being played (the last one, 5, after the end)"),
    phase={"type": "string", "enum": ["decision", "game_over"],
           "description": "decision: the seats in the cave choose (simultaneously, hidden); "
                          "game_over after round 5"},
    path={"type": "array", "items": CARD, "uniqueItems": True, "maxItems": LONGEST_PATH,
          "description": "cards turned this round, in order (relics taken by a lone returner "
                         "have left it); empty between rounds and after the end"},
    path_rubies=described(RUBIES, "rubies left lying on the path (shared by the next "
                                  "returners)"),
    deck_size={"type": "integer", "minimum": 0, "maximum": len(CANONICAL),
               "description": "cards left in the deck (its order is secret)"},
    removed={"type": "array", "items": CARD, "uniqueItems": True, "maxItems": MOST_REMOVED,
             "description": "cards removed from the game, in removal order: unclaimed "
                            "relics and the trap that ended a round"},
    relics_brought_back=described(
        {"type": "integer", "minimum": 0, "maximum": len(RELICS)},
        "relics brought back so far game-wide (the next is worth "
        f"{RELIC_VALUES} at that position)"),
    traps_on_path={"type": "object", "propertyNames": TRAP_TYPE,
                   "additionalProperties": {"type": "integer", "minimum": 1, "maximum": 2},
                   "description": "trap types seen on this round's path, with their count: 1 "
                                  "(a second of a type ends the round: 2 only in the state "
                                  "between that card and the round's end)"},
    players=per_seat(PLAYER, "every seat, by seat number"),
)

EVENTS: dict[str, dict] = {
    "RoundStarted": closed(
        "A round begins: everybody enters the cave with an empty pocket.",
        ["round", "deck_size"],
        round=ROUND,
        deck=described({"type": "array", "items": CARD, "uniqueItems": True,
                        "maxItems": len(CANONICAL)},
                       "the round's deck order, top first: absent while the game runs "
                       "(secret to every player), present after the end"),
        deck_size=described({"type": "integer", "minimum": 1, "maximum": len(CANONICAL)},
                            "cards in the round's deck"),
    ),
    "CardRevealed": closed(
        "The top card of the deck is turned onto the path.",
        ["card", "kind", "value", "share_each", "remainder", "path_rubies", "recipients"],
        card=CARD,
        kind={"type": "string", "enum": ["treasure", "trap", "relic"],
              "description": "what the card is"},
        value={"type": ["integer", "null"], "minimum": 1,
               "description": "a treasure's rubies; null for traps and relics"},
        share_each=described(RUBIES, "rubies each seat in the cave pockets (0 unless a "
                                     "treasure)"),
        remainder=described(RUBIES, "rubies of the treasure left on the path"),
        path_rubies=described(RUBIES, "rubies on the path after this card"),
        recipients=described(SEATS, "the seats in the cave that shared a treasure "
                                    "(ascending); [] for traps and relics"),
    ),
    "ChoiceCommitted": closed(
        "The event's seat has chosen (the event's seat field says who).",
        [],
        choice=described(CHOICE, "the choice: for the seat itself (and after the end) only, "
                                 "absent for others while the game runs"),
    ),
    "ChoicesRevealed": closed(
        "Every choice of the decision, revealed together.",
        ["choices"],
        choices=per_seat(nullable(CHOICE, "continue or return; null for a seat already in camp"),
                         "every seat's choice, by seat"),
    ),
    "PlayersReturned": closed(
        "Seats that chose return go back to camp and bank their pockets.",
        ["seats", "share_each", "remainder", "relics_taken", "relic_values"],
        seats=described({**SEATS, "minItems": 1}, "the returning seats (ascending)"),
        share_each=described(RUBIES, "path rubies each returner takes"),
        remainder=described(RUBIES, "path rubies that stay on the path"),
        relics_taken=described(RELIC_CARDS, "relics taken, in path order: only a lone "
                                            "returner takes them ([] otherwise)"),
        relic_values={"type": "array", "maxItems": len(RELICS),
                      "items": {"type": "integer", "enum": sorted(set(RELIC_VALUES))},
                      "description": "value of each relic taken, by its game-wide order"},
    ),
    "RoundEndedByTrap": closed(
        "A second trap of a type: everybody still in the cave flees and loses the pocket.",
        ["trap", "card", "lost_pockets"],
        trap=TRAP_TYPE,
        card=described(TRAP_CARD, "the trap card that ended the round (it is removed)"),
        lost_pockets=per_seat(RUBIES, "rubies each seat lost (0 for seats in camp)"),
    ),
    "RoundEnded": closed(
        "Cleanup: path rubies back to the bank, unclaimed relics and the ending trap removed.",
        ["round", "reason", "removed_trap", "removed_relics"],
        round=ROUND,
        reason={"type": "string", "enum": ["trap", "all_returned"],
                "description": "a second trap of a type, or every seat went back to camp"},
        removed_trap=nullable(TRAP_CARD, "the trap card removed, null when all returned"),
        removed_relics=described(RELIC_CARDS, "relics left on the path, now removed"),
    ),
    "GameEnded": closed(
        "After round 5: the chests are the scores; the highest wins, ties share the win.",
        ["scores", "winners"],
        scores=per_seat(RUBIES, "each seat's chest"),
        winners=described({**SEATS, "minItems": 1}, "the winning seats"),
    ),
}
