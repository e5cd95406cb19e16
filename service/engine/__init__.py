"""What every game shares: the decider contract, the public RNG, replay and forced moves."""

from .fold import (NotYourTurn, clone, command, evolve, fold, forced_moves, forfeit, start,
                   visible)
from .game import (ALL, Action, CodedError, Event, Game, IllegalAction, InvalidOptions, State,
                   Viewer, competition_ranks, event, illegal, is_int, redact, require, sees,
                   standard_result)
from .outcome import Outcome
from .rng import Rng, commitment

__all__ = [
    "ALL", "Action", "CodedError", "Event", "Game", "IllegalAction", "InvalidOptions",
    "NotYourTurn", "Outcome", "Rng", "State", "Viewer", "clone", "command", "commitment",
    "competition_ranks", "event", "evolve", "fold", "forced_moves", "forfeit", "illegal",
    "is_int", "redact", "require", "sees", "standard_result", "start", "visible",
]
