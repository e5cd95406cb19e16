"""Pebbles: a game kept outside ``service/games`` to show that one folder makes a game.

Registered like the five built-in games, by ``service.games.load_package`` — here through
``CARTOUCHE_GAME_PACKAGES=tests.tiny_game`` (tests/test_new_game.py) — with its rules, its bot
hooks and its CLI rendering in this folder and nothing anywhere else.
"""

from .rules import GAME
from .bots import BOTS

GAME.bots = BOTS
