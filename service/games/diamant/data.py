"""Diamant's tables (spec 2): the 35 cards and their canonical order, the relic values, the
rounds, the choices and the seat counts. The rules (``rules.py``) and the served schemas
(``schemas.py``) are built from them."""

from __future__ import annotations

TREASURES: list[tuple[str, int]] = [
    ("T1", 1), ("T2", 2), ("T3", 3), ("T4", 4), ("T5a", 5), ("T5b", 5), ("T7a", 7), ("T7b", 7),
    ("T9", 9), ("T11a", 11), ("T11b", 11), ("T13", 13), ("T14", 14), ("T15", 15), ("T17", 17),
]
TRAP_TYPES: list[str] = ["SPIDER", "SNAKE", "LAVA", "BOULDER", "RAM"]
TRAPS: list[str] = [f"{t}{i}" for t in TRAP_TYPES for i in (1, 2, 3)]
RELICS: list[str] = [f"R{i}" for i in range(1, 6)]
CANONICAL: list[str] = [cid for cid, _ in TREASURES] + TRAPS + RELICS
TREASURE_VALUE: dict[str, int] = dict(TREASURES)
TRAP_TYPE: dict[str, str] = {f"{t}{i}": t for t in TRAP_TYPES for i in (1, 2, 3)}
#: Value of the k-th relic brought back, game-wide (spec 2.3).
RELIC_VALUES: list[int] = [5, 5, 5, 10, 10]
ROUNDS = 5
CHOICES = ("continue", "return")
#: The action types (docs/design/api.md's action vocabulary).
ACTIONS = ("decide",)
MIN_PLAYERS, MAX_PLAYERS = 3, 8
