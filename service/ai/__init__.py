"""Bots. A bot sees exactly what its seat may see — the same view a human gets, the event log as
that seat may read it, and its legal actions — and answers one action. Nothing here touches
Redis or the clock; the worker builds the :class:`Observation` and posts the action through the
same command path as a human.

Levels (api.md): ``random`` (uniform legal action), ``heuristic`` (a documented per-game
strategy), ``mcts`` (information-set MCTS over states sampled by a per-game determinizer).

Per game, ``service/ai/<module>.py`` (module name as in ``service/games``) provides:

* ``heuristic(obs, rnd) -> action`` — the heuristic level, from the observation only;
* ``rollout(game, state, seat, legal, rnd) -> action`` — a fast policy on a *full* state, used
  inside simulations (where the state is a determinization, never the true one);
* ``determinize(obs, rnd) -> state`` — a full engine state consistent with the observation,
  sampled with ``rnd`` (a ``random.Random``); it must never read anything but ``obs``.
"""

from __future__ import annotations

import importlib
import random
from dataclasses import dataclass, field
from typing import Any

from ..engine import ALL, Game, visible

LEVELS = ("random", "heuristic", "mcts")
#: Default thinking budget of the mcts level per decision.
DEFAULT_BUDGET_MS = 800


@dataclass(frozen=True)
class Observation:
    """Everything one seat may know at a decision point, and nothing more."""

    game: Game
    seat: int
    players: list[dict]          # [{"name", "bot"}] from the creation event
    options: dict                # creation options without ``setup`` (hidden until the end)
    view: dict                   # game.view(state, seat)
    events: list[dict]           # the log as the seat may see it: [{"type","seat","data"}, ...]
    legal: list[dict]            # game.legal_actions(state, seat)
    version: int = 0
    extra: dict = field(default_factory=dict)


def observe(game: Game, created: dict, events: list[dict], state: dict, seat: int,
            version: int = 0) -> Observation:
    """Build a seat's observation from the true state through ``view``/``visible`` only.

    ``created`` is the creation event's data; ``events`` the game's own events (version 2 on),
    each ``{"type", "seat", "data"}``.
    """
    assert seat != ALL
    seen = []
    for ev in events:
        shown = visible(game, ev, seat, False)
        if shown is not None:
            seen.append(shown)
    options = {k: v for k, v in created["options"].items() if k != "setup"}
    return Observation(game=game, seat=seat, players=created["players"], options=options,
                       view=game.view(state, seat), events=seen,
                       legal=game.legal_actions(state, seat), version=version)


def module_for(game: Game):
    from ..games import GAMES, MODULES

    for name in MODULES:
        if importlib.import_module(f"service.games.{name}").GAME is game:
            return importlib.import_module(f"{__name__}.{name}")
    raise KeyError(game.type_id)


def available(game: Game, level: str) -> bool:
    """Whether this server can field a bot of ``level`` for ``game``."""
    if level == "random":
        return True
    try:
        module_for(game)
    except (KeyError, ModuleNotFoundError):
        return False
    return level in LEVELS


def choose(level: str, obs: Observation, rnd: random.Random | None = None,
           budget_ms: int | None = None) -> dict[str, Any]:
    """The action a bot of ``level`` plays for ``obs``."""
    rnd = rnd or random.Random()
    if len(obs.legal) == 1:
        return obs.legal[0]
    if level == "random":
        return rnd.choice(obs.legal)
    mod = module_for(obs.game)
    if level == "heuristic":
        return mod.heuristic(obs, rnd)
    if level == "mcts":
        from .ismcts import search
        return search(obs, mod, rnd, budget_ms=budget_ms or DEFAULT_BUDGET_MS)
    raise ValueError(f"unknown bot level {level!r}")
