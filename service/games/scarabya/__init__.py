"""Scarabya: one folder holds the game — ``data`` (the site, pieces and modes), ``rules`` (the
decider), ``schemas`` (the JSON Schemas of its served state and events), ``bots`` (the hooks of
the heuristic and mcts levels) and ``render`` (the CLI's text drawing)."""

from .rules import *  # noqa: F401,F403 - the rules' public names, as ``service.games.scarabya.X``
from .rules import GAME
from .bots import BOTS

GAME.bots = BOTS
