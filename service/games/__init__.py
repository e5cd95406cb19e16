"""The rules: one module (or package) per game, pure, no I/O. ``GAMES`` is the registry."""

from __future__ import annotations

import importlib

from ..engine import Game

#: Modules of the games this server hosts, in catalog order.
MODULES = ("pharaohs_wall", "scarabya", "tides_of_time", "diamant", "papyrus")

GAMES: dict[str, Game] = {}


def register(game: Game) -> Game:
    GAMES[game.type_id] = game
    return game


for _name in MODULES:
    register(importlib.import_module(f"{__name__}.{_name}").GAME)
