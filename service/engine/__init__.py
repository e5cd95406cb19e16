"""What every game shares: the decider contract, the command runner (turn check, malformed
actions, forced moves), the public RNG and replay."""

from .fold import clone, evolve, fold, visible
from .game import (ALL, Action, CodedError, Event, Game, IllegalAction, InvalidOptions, State,
                   Viewer, competition_ranks, event, fields_detail, illegal, is_int, redact,
                   require, sees, standard_result)
from .outcome import Outcome
from .rng import Rng, commitment
from .runner import (RESIGNED_BOT, NotYourTurn, command, counts_for_ratings, forced_moves,
                     forfeit, forfeit_result, idle_resigners, result_counts, start)

__all__ = [
    "ALL", "Action", "CodedError", "Event", "Game", "IllegalAction", "InvalidOptions",
    "NotYourTurn", "Outcome", "RESIGNED_BOT", "Rng", "State", "Viewer", "clone", "command",
    "commitment",
    "competition_ranks", "counts_for_ratings", "event", "evolve", "fields_detail", "fold",
    "forced_moves", "forfeit",
    "forfeit_result", "idle_resigners", "illegal",
    "is_int", "redact", "require", "result_counts", "sees", "standard_result", "start", "visible",
]
