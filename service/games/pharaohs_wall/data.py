"""Pharaoh's Wall component data (rules tables 2.1-2.5), loaded once at import from
``data.json`` (reconstructed where the real components are unknown) and the game's fixed numbers:
the rules (:mod:`.rules`), the schemas (:mod:`.schemas`) and the bots read them from here."""

from __future__ import annotations

import json
from pathlib import Path

_DATA = json.loads((Path(__file__).parent / "data.json").read_text(encoding="utf-8"))

ANIMALS: list[str] = list(_DATA["animals"])
WIDTH = HEIGHT = 7
CELLS = WIDTH * HEIGHT
HAND_SIZE = 3
EXPLORERS = 5
SCARABS = 16
PHARAOH_BONUS = 7
MAX_END_MOVES = 16
MAX_PAIR_SCARABS = 2
START_PILE = 20

CARDS: dict[str, dict[str, str]] = {}
for _animal in ANIMALS:
    for _k in range(1, _DATA["cards_per_animal"] + 1):
        CARDS[f"H-{_animal}-{_k}"] = {
            "animal": _animal,
            "facing": "LEFT" if _k <= _DATA["left_facing"][_animal] else "RIGHT",
        }
CARD_IDS: list[str] = list(CARDS)
assert len(CARD_IDS) == CELLS

SARCOPHAGI: dict[str, dict[str, int]] = {
    s["id"]: {"eyes": s["eyes"], "value": s["value"]} for s in _DATA["sarcophagi"]}
SARC_IDS: list[str] = list(SARCOPHAGI)
TIERS: list[list[str]] = [[s for s in SARC_IDS if SARCOPHAGI[s]["eyes"] == e] for e in (1, 2, 3)]
PHARAOHS: list[str] = [f"P-{a}" for a in ANIMALS]
CURSES: dict[str, list[str]] = {k: list(v) for k, v in _DATA["curses"].items()}
CURSE_IDS: list[str] = list(CURSES)
#: how many cards of each animal face left (the first ones: H-CAMEL-1..4 of 7)
LEFT_FACING: dict[str, int] = dict(_DATA["left_facing"])
