"""Tides of Time's tables (spec 2): the five suits, the 18 cards (number, id, English and Czech
names, suit, objective kind and its parameters), the hand, round and draw sizes and the phases.
The rules (``rules.py``) and the served schemas (``schemas.py``) are built from them."""

from __future__ import annotations

from typing import Any

SUITS: tuple[str, ...] = ("palace", "library", "garden", "temple", "stronghold")

#: The 18 cards: (number, id, English name, Czech name, suit or None, kind, parameters).
_CARD_ROWS: tuple[tuple[int, str, str, str, str | None, str, dict], ...] = (
    (1, "kings_nest", "The Kings Nest", "Útočiště králů", "palace", "TIES", {}),
    (2, "ancient_divide", "The Ancient Divide", "Předěl věků", "palace", "MAJ",
     {"suit": "stronghold", "points": 7}),
    (3, "eternal_palace", "The Eternal Palace", "Palác věčnosti", "palace", "EACH",
     {"suit": "library", "points": 3}),
    (4, "great_library", "The Great Library of Ahmu", "Velká knihovna Ahmu", "library", "MAJ",
     {"suit": "temple", "points": 7}),
    (5, "mana_well", "The Mana Well", "Zřídlo moci", "library", "SET",
     {"suits": ["palace", "stronghold", "temple"], "points": 9}),
    (6, "citadel_of_prophets", "The Citadel of the Prophets", "Pevnost proroků", "library",
     "EACH", {"suit": "garden", "points": 3}),
    (7, "golden_ziggurat", "The Golden Ziggurat", "Zlatý zikkurat", "garden", "MAJ",
     {"suit": "palace", "points": 7}),
    (8, "gods_baths", "The Gods' Baths", "Lázně bohů", "garden", "EACH",
     {"suit": "stronghold", "points": 3}),
    (9, "maze_of_the_damned", "The Maze of the Damned", "Labyrint zatracených", "garden", "SET",
     {"suits": list(SUITS), "points": 13}),
    (10, "eye_of_the_north", "The Eye of the North", "Oko severu", "stronghold", "MISSING",
     {"points": 3}),
    (11, "jinn_shackles", "The Jinn Shackles", "Džinovy okovy", "stronghold", "EACH",
     {"suit": "temple", "points": 3}),
    (12, "old_mans_pass", "Old Man's Pass", "Průsmyk starého muže", "stronghold", "MAJ",
     {"suit": "library", "points": 7}),
    (13, "blood_tear_spring", "Blood-tear Spring", "Pramen krvavých slz", "temple", "MAJ",
     {"suit": "garden", "points": 7}),
    (14, "sky_pillars", "The Sky Pillars", "Pilíře nebes", "temple", "SET",
     {"suits": ["library", "garden"], "points": 5}),
    (15, "vestibule", "The Vestibule", "Dvorana", "temple", "EACH",
     {"suit": "palace", "points": 3}),
    (16, "molehill", "The Molehill", "Štítová hora", None, "SINGLES", {"points": 8}),
    (17, "roof_of_the_world", "The Roof of the World", "Střecha světa", None, "DOUBLE", {}),
    (18, "sapphire_port", "The Sapphire Port", "Safírový přístav", None, "BEST", {"points": 8}),
)

CARDS: dict[int, dict[str, Any]] = {
    number: {"number": number, "id": cid, "name": name, "czech": czech, "suit": suit,
             "kind": kind, "params": params}
    for number, cid, name, czech, suit, kind, params in _CARD_ROWS
}
NUMBERS: tuple[int, ...] = tuple(sorted(CARDS))

HAND_SIZE = 5
PICKS_PER_ROUND = 5
ROUNDS = 3
DRAW_AFTER_RELICS = 2

#: SETUP: the state of the creation event alone (version 1), before the first deal.
SETUP, DRAFT, RELIC, SCORED, GAME_OVER = "SETUP", "DRAFT", "RELIC", "SCORED", "GAME_OVER"
