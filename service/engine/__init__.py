"""What every game shares: the decider contract, the command runner (turn check, malformed
actions, forced moves), the public RNG and replay."""

from .fold import clone, evolve, fold, visible
from .game import (ALL, Action, CodedError, Event, Game, IllegalAction, InvalidOptions, State,
                   Viewer, competition_ranks, event, fields_detail, illegal, is_int, redact,
                   require, sees, standard_result)
from .outcome import Outcome
from .rng import Rng, commitment
from .runner import NotYourTurn, command, forced_moves, forfeit, forfeit_result, start

__all__ = [
    "ALL", "Action", "CodedError", "Event", "Game", "IllegalAction", "InvalidOptions",
    "NotYourTurn", "Outcome", "Rng", "State", "Viewer", "clone", "command", "commitment",
    "competition_ranks", "event", "evolve", "fields_detail", "fold", "forced_moves", "forfeit",
    "forfeit_result", "illegal",
    "is_int", "redact", "require", "sees", "standard_result", "start", "visible",
]
