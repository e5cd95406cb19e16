"""Bots. A bot sees exactly what its seat may see — the same view a human gets, the event log as
that seat may read it, and its legal actions — and answers one action. Nothing here touches
Redis or the clock; the worker builds the :class:`Observation` and posts the action through the
same command path as a human.

Levels (docs/design/api.md): ``random`` (uniform legal action), ``heuristic`` (a documented per-game
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
from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Callable

from .fold import visible
from .game import ALL, Action, Game, State
from .ismcts import PRIOR_MARGIN, search

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


class LogPrefix(Sequence):
    """The first ``n`` entries of a list that only grows: a read-only, O(1) snapshot of a
    :class:`SeatLog`'s events (it compares equal to the list of the same events)."""

    __slots__ = ("_items", "_n")

    def __init__(self, items: list, n: int) -> None:
        self._items = items
        self._n = n

    def __len__(self) -> int:
        return self._n

    def __getitem__(self, i):
        if isinstance(i, slice):
            return self._items[:self._n][i]
        if i < 0:
            i += self._n
        if not 0 <= i < self._n:
            raise IndexError(i)
        return self._items[i]

    def __iter__(self):
        items = self._items
        for i in range(self._n):
            yield items[i]

    def __eq__(self, other) -> bool:
        if isinstance(other, (list, LogPrefix)):
            return len(other) == self._n and all(a == b for a, b in zip(self, other))
        return NotImplemented

    def __repr__(self) -> str:
        return f"LogPrefix({self._items[:self._n]!r})"


class SeatLog:
    """One seat's observation kept up to date: the seat's visible log grows by the new events
    only, and the game's :meth:`BotHooks.digest` (a fold over that log, e.g. which cards a
    pile may still hold) is fed the same events. :meth:`observe` then costs ``view`` +
    ``legal_actions`` + the new events, whatever the game's length.

    ``consumed`` is the number of the game's own events (version 2 on) already folded in; the
    caller hands :meth:`observe` the events after them (or the whole log, see ``log_start``).
    The result is the same observation as :func:`observe` builds from scratch.
    """

    def __init__(self, game: Game, created: dict, seat: int) -> None:
        assert seat != ALL
        self.game = game
        self.seat = seat
        self.players = created["players"]
        self.options = {k: v for k, v in created["options"].items() if k != "setup"}
        self.seen: list[dict] = []
        self.consumed = 0
        hooks = game.bots
        self.digest = hooks.new_digest(seat, len(self.players)) if hooks is not None else None

    def feed(self, events) -> None:
        """Fold the game's next events (in log order) into the seat's log."""
        game, seat, seen, digest = self.game, self.seat, self.seen, self.digest
        for ev in events:
            shown = visible(game, ev, seat, False)
            if shown is not None:
                seen.append(shown)
                if digest is not None:
                    digest.feed(shown)
            self.consumed += 1

    def observe(self, events, state: dict, version: int = 0, *, log_start: int | None = None,
                ) -> Observation:
        """The observation at ``state``. ``events`` are the game's events not folded in yet;
        or, with ``log_start``, a whole log whose index ``log_start`` is the game's first own
        event (e.g. ``LocalGame.events`` with ``log_start=1``): only its tail is read."""
        if log_start is not None:
            events = events[log_start + self.consumed:]
        self.feed(events)
        extra = {} if self.digest is None else {"digest": self.digest.copy()}
        return Observation(game=self.game, seat=self.seat, players=self.players,
                           options=self.options, view=self.game.view(state, self.seat),
                           events=LogPrefix(self.seen, len(self.seen)),
                           legal=self.game.legal_actions(state, self.seat), version=version,
                           extra=extra)


class SeatLogs:
    """A bounded cache of :class:`SeatLog` per (game id, seat) for a process that plays bot
    turns of many games (the autoplay). Versions are the log's: the creation event is version
    1, the game's own events follow. A log is dropped and rebuilt when the caller's version
    went back (another game under the same id) or the players changed."""

    def __init__(self, size: int = 256) -> None:
        self.size = size
        self._logs: OrderedDict[Any, tuple[SeatLog, int]] = OrderedDict()

    def observe(self, key: Any, game: Game, created: dict, seat: int, state: dict,
                version: int, read: Callable[[int], list[dict]]) -> Observation:
        """``seat``'s observation of the game ``key`` at ``version``. ``read(after)`` returns
        the game's own events with a version in ``(after, version]``, in order."""
        k = (key, seat)
        log, seen = self._logs.pop(k, (None, 1))
        if log is None or seen > version or log.players != created["players"]:
            log, seen = SeatLog(game, created, seat), 1
        obs = log.observe(read(seen) if seen < version else [], state, version)
        self._logs[k] = (log, version)
        while len(self._logs) > self.size:
            self._logs.popitem(last=False)
        return obs


def digest(obs: Observation) -> Any:
    """The game's digest of ``obs.events`` (:meth:`BotHooks.digest`): the one a
    :class:`SeatLog` kept, else folded once from the log and remembered on the observation."""
    d = obs.extra.get("digest")
    if d is None:
        d = obs.game.bots.new_digest(obs.seat, len(obs.players))
        for ev in obs.events:
            d.feed(ev)
        obs.extra["digest"] = d
    return d


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

    def new_digest(self, seat: int, n: int) -> Any:
        """An empty fold over ``seat``'s visible events (``n`` seats), or None. A digest has
        ``feed(event)`` and ``copy()``; :class:`SeatLog` keeps it up to date and
        :func:`digest` reads it, so that a determinizer reads the log's summary without
        replaying the log at every decision."""
        return None

    def rollout(self, game: Game, state: State, seat: int, legal: list[Action],
                rnd: random.Random) -> Action:
        """A fast policy on a full (determinized) state: uniform random by default."""
        return legal[rnd.randrange(len(legal))]

    def candidates(self, game: Game, state: State, seat: int, legal: list[Action]
                   ) -> list[Action]:
        """The observer's actions the search tree considers at a node, a subset of ``legal``
        that must not depend on what ``seat`` cannot see (e.g. one payment per path instead
        of every payment): all of them by default. With :meth:`tree_every_seat`, also asked
        for the other seat's decisions in the tree."""
        return legal

    def tree_every_seat(self, obs: "Observation") -> bool:
        """Whether the search for ``obs`` branches on the other seat's decisions too (two
        seats, alternating public decisions; that seat maximises 1 - the observer's reward)
        instead of letting it play :meth:`rollout` in the tree phase (see
        :mod:`service.engine.ismcts`). Off by default."""
        return False

    def progressive_widening(self, obs: "Observation") -> bool:
        """Whether :meth:`candidates` lists its actions best first and the search's tree widens
        progressively: a node expands its next untried candidate, in that order, only while
        (tried children)^2 <= their visits (see :mod:`service.engine.ismcts`). Off by default
        (untried actions are expanded first, in random order)."""
        return False

    def exact(self, obs: "Observation", rnd: random.Random) -> Action | None:
        """The action for ``obs`` when the game's policy solves this kind of decision exactly
        (e.g. a claim that can only help, a plan over the seat's own moves), from the
        observation and the decision's secret stream ``rnd`` (its ties) only:
        :func:`~service.engine.ismcts.search` then answers it without searching. None by
        default (every decision is searched)."""
        return None

    def next_to_commit(self, state: State, awaited: list[int], observer: int,
                       rnd: random.Random) -> int:
        """Which of several awaited seats commits next in a simulation: by default the first
        other seat (the observer commits last, so no other seat's pending choice can depend on
        its own)."""
        return awaited[1] if awaited[0] == observer else awaited[0]

    #: how much higher the most visited action's mean reward must be to overrule :meth:`prior`
    prior_margin = PRIOR_MARGIN

    def prior(self, obs: "Observation", rnd: random.Random) -> Action | None:
        """An action the search keeps unless another one is clearly better (its mean reward
        above this one's by :attr:`prior_margin`): e.g. the heuristic's, its ties broken from
        the decision's secret stream ``rnd``. None by default (the most visited action
        wins)."""
        return None

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
           budget_ms: int | None = None, started: float | None = None) -> dict[str, Any]:
    """The action a bot of ``level`` plays for ``obs``. The mcts level's budget
    (``DEFAULT_BUDGET_MS`` unless given) counts from ``started``, a ``time.perf_counter()``
    reading taken when the decision began (e.g. before its observation was built); from the
    search's start when None."""
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
    return search(obs, hooks, rnd, budget_ms=budget_ms or DEFAULT_BUDGET_MS, started=started)
