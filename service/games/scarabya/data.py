"""Scarabya's tables (spec sections 3-6): the 10 x 10 site and its quadrants, the 12 pentominoes,
the missions per game, the modes and their seats, the duel's match lengths and the legend of a
site's rows. The rules (``rules.py``) and the served schemas (``schemas.py``) are built from
them."""

from __future__ import annotations

N = 10
ROUNDS = 12
LETTERS = ("F", "I", "L", "N", "P", "T", "U", "V", "W", "X", "Y", "Z")
CANONICAL: dict[str, tuple[tuple[int, int], ...]] = {
    "F": ((0, 1), (0, 2), (1, 0), (1, 1), (2, 1)),
    "I": ((0, 0), (1, 0), (2, 0), (3, 0), (4, 0)),
    "L": ((0, 0), (1, 0), (2, 0), (3, 0), (3, 1)),
    "N": ((0, 1), (1, 1), (2, 0), (2, 1), (3, 0)),
    "P": ((0, 0), (0, 1), (1, 0), (1, 1), (2, 0)),
    "T": ((0, 0), (0, 1), (0, 2), (1, 1), (2, 1)),
    "U": ((0, 0), (0, 2), (1, 0), (1, 1), (1, 2)),
    "V": ((0, 0), (1, 0), (2, 0), (2, 1), (2, 2)),
    "W": ((0, 0), (1, 0), (1, 1), (2, 1), (2, 2)),
    "X": ((0, 1), (1, 0), (1, 1), (1, 2), (2, 1)),
    "Y": ((0, 1), (1, 0), (1, 1), (2, 1), (3, 1)),
    "Z": ((0, 0), (0, 1), (1, 1), (2, 1), (2, 2)),
}
CENTER_CELLS = ((4, 4), (4, 5), (5, 4), (5, 5))
ORIGIN = ((0, 0), (0, 5), (5, 0), (5, 5))  # Q0..Q3
INNER = ((4, 4), (4, 0), (0, 4), (0, 0))  # local coordinates of each quadrant's centre cell

MODES = ("standard", "duel", "solo")
#: Seats each mode takes (section 6).
MODE_PLAYERS = {"standard": (2, 4), "duel": (2, 2), "solo": (1, 1)}
#: The action types (docs/design/api.md's action vocabulary).
ACTIONS = ("place",)
#: The matches a duel may be (options.duel_games).
DUEL_GAMES = (1, 2)
#: What the characters of a site's ``rows`` mean (served in every view).
LEGEND = {".": "blank", "S": "scarab", "R": "rock", "1-4": "scarab with token", "A-Z": "camp",
          "a-z": "camp over a scarab"}
