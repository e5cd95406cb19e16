"""Bots. A bot sees exactly what its seat may see — the same view a human gets, the event log as
that seat may read it, and its legal actions — and answers one action. Nothing here touches
Redis or the clock; the worker builds the :class:`Observation` and posts the action through the
same command path as a human.

Levels (api.md): ``random`` (uniform legal action), ``heuristic`` (a documented per-game
strategy), ``mcts`` (information-set MCTS over states sampled by a per-game determinizer).

Every draw a bot makes comes from :func:`secret_random`: a stream keyed by the game's seed,
which nobody sees before the end, so that nobody can run the bot's code on what they see and
read its pending secret choice. Where a game's decisions are secret commits made at once
(Diamant, Tides of Time's picks, Scarabya's standard mode), its heuristic picks among the
choices it scores nearly equal with :func:`mix`, from that stream: a spectator who runs the
same code guesses no better than by always naming the bot's most likely choice.

A game that fields the ``heuristic`` and ``mcts`` levels gives its bots a :class:`BotHooks`
(``service/games/<game>/bots.py``, attached as ``Game.bots`` by the game's package); every game
gets ``random``.
"""

from __future__ import annotations

import hashlib
import hmac
import random
from dataclasses import dataclass, field
from typing import Any, Sequence

from .fold import visible
from .game import ALL, Action, Game, State
from .ismcts import search

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


class BotHooks:
    """What a game gives its bots: the protocol :func:`choose` and the ISMCTS search call.

    ``heuristic`` and ``determinize`` are required; the rest have defaults. Every hook reads only
    what it is given: an observation, or a full state that is a determinization (never the true
    state of a running game).
    """

    #: Whether :meth:`horizon` and :meth:`evaluate` cut simulations short (else every simulated
    #: game is played to its end).
    cuts_simulations = False

    def heuristic(self, obs: "Observation", rnd: random.Random) -> Action:
        """The heuristic level's action, from the observation only."""
        raise NotImplementedError

    def determinize(self, obs: "Observation", rnd: random.Random) -> State:
        """A full engine state consistent with ``obs``, sampled with ``rnd``."""
        raise NotImplementedError

    def rollout(self, game: Game, state: State, seat: int, legal: list[Action],
                rnd: random.Random) -> Action:
        """A fast policy on a full (determinized) state: uniform random by default."""
        return legal[rnd.randrange(len(legal))]

    def for_simulation(self, state: State) -> State:
        """``state`` without what only views and result details read (cheaper to copy)."""
        return state

    def horizon(self, state: State) -> Any:
        """A key; a simulation stops when it differs from its value at the iteration's start
        (used only when :attr:`cuts_simulations`)."""
        return None

    def evaluate(self, game: Game, state: State, seat: int) -> float:
        """``seat``'s estimated win share in [0, 1] at a cut-off (when
        :attr:`cuts_simulations`, or a simulation that ran too long)."""
        return 0.5


def secret_random(seed: bytes, game_id: str, version: int, seat: int) -> random.Random:
    """The generator of one bot decision: seeded with ``HMAC-SHA256(seed, "cartouche-bot/1:"
    game_id ":" version ":" seat)``. The game's seed is served only in its export, after the
    end; before that nobody but the server can reproduce a bot's draws."""
    message = f"cartouche-bot/1:{game_id}:{version}:{seat}".encode()
    return random.Random(hmac.new(seed, message, hashlib.sha256).digest())


def mix(scored: Sequence[tuple[Action, float]], rnd: random.Random, margin: float) -> Action:
    """One of the ``(action, score)`` pairs scored within ``margin`` of the best, uniformly
    from ``rnd`` (``margin`` 0: among the exact ties)."""
    best = max(score for _, score in scored)
    near = [action for action, score in scored if score >= best - margin - 1e-9]
    return near[rnd.randrange(len(near))]


def available(game: Game, level: str) -> bool:
    """Whether this server can field a bot of ``level`` for ``game``."""
    if level == "random":
        return True
    return level in LEVELS and game.bots is not None


def choose(level: str, obs: Observation, rnd: random.Random | None = None,
           budget_ms: int | None = None) -> dict[str, Any]:
    """The action a bot of ``level`` plays for ``obs``."""
    rnd = rnd or random.Random()
    if len(obs.legal) == 1:
        return obs.legal[0]
    if level == "random":
        return rnd.choice(obs.legal)
    hooks = obs.game.bots
    if hooks is None or level not in LEVELS:
        raise ValueError(f"no {level!r} bot for {obs.game.type_id}")
    if level == "heuristic":
        return hooks.heuristic(obs, rnd)
    return search(obs, hooks, rnd, budget_ms=budget_ms or DEFAULT_BUDGET_MS)
