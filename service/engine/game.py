"""The decider contract every game implements, and the small helpers games share.

A game is a pure object: no Flask, Redis, clock or global random inside. State is a JSON-plain
``dict`` (str keys, lists, ints, strings, bools, None) so it can be snapshotted as JSON and cloned
cheaply. Events are plain dicts ``{"type": str, "seat": int | None, "data": dict}`` (the engine
adds ``"forced": True`` to events of moves it plays for a seat with a single legal action).

Split of responsibilities (docs/design/architecture.md, "a game is a decider"):

* ``initial(players, options)`` -> the state before any event of the game's own;
* ``create(state, rng)`` -> ``(events, state after them)``: the setup events (shuffles resolved
  and written into the events);
* ``decide(state, seat, action, rng)`` -> ``(events, state after them)``, or raise
  :class:`IllegalAction`;
* ``resign(state, seat)`` -> ``(events, state after them)``, or None;
* ``apply(state, event)`` mutates ``state`` in place; the pure ``evolve`` of the decider pattern
  is :func:`service.engine.fold.evolve` (clone, then apply);
* ``awaiting``, ``legal_actions``, ``view``, ``visible``, ``timeout_action``, ``result``.

``create``, ``decide`` and ``resign`` never mutate the ``state`` they are given; the state they
return is exactly ``fold(game, clone(state), events)``, built while deciding (each event applied
to a working clone as it is emitted: :class:`service.engine.outcome.Outcome`), so nobody applies
those events again. The events' data and that state may share objects, so neither is mutated
afterwards (the engine only flags an event itself, e.g. ``"forced"``; whoever applies more
events works on a clone).

The engine (not the game) handles forced moves, the "everything is public after the end" rule
for events, the seat/turn check (409 ``not_your_turn``), the malformed-action check and the
random stream (:mod:`service.engine.runner`); the error codes of malformed actions are
:mod:`service.engine.actions`.
"""

from __future__ import annotations

from typing import Any, Iterable, Sequence

State = dict[str, Any]
Event = dict[str, Any]
Action = dict[str, Any]

#: The viewer that sees everything (platform keys, exports). Seats are ints; spectators are None.
ALL = "all"
Viewer = int | str | None


def sees(viewer: Viewer, seat: int) -> bool:
    """True when ``viewer`` may see what belongs to ``seat`` alone."""
    return viewer == ALL or (viewer is not None and viewer == seat)


def is_int(value: Any) -> bool:
    """A JSON integer (``True`` and ``False`` are not)."""
    return type(value) is int or (isinstance(value, int) and not isinstance(value, bool))


def event(type_: str, data: dict | None = None, seat: int | None = None) -> Event:
    return {"type": type_, "seat": seat, "data": data if data is not None else {}}


class CodedError(Exception):
    """The base of every error Cartouche answers a client with: a stable snake_case ``code``, a
    human ``message`` and JSON-plain ``details``. The HTTP status of each subclass is set in one
    table (``service.api.errors``), never at the raise."""

    def __init__(self, code: str, message: str, details: dict | None = None) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.details = details or {}


class IllegalAction(CodedError):
    """An awaited seat's action breaks a rule (HTTP 422 ``illegal_action``).

    ``code`` is the rule-specific snake_case code served as ``details.code``. The message must not
    reveal anything the acting seat may not see.
    """


class InvalidOptions(CodedError):
    """Creation options (including ``options.setup``) are not acceptable (HTTP 422)."""


def fields_detail(field: str, message: str) -> dict:
    """``details`` naming the field a refusal is about, in the one shape every refusal uses:
    ``{"fields": {field: [message]}}`` (``field``: a dotted path where nested)."""
    return {"fields": {field: [message]}}


def illegal(code: str, message: str, *, field: str | None = None,
            **details: Any) -> IllegalAction:
    """An :class:`IllegalAction` with ``details`` given as keyword arguments; ``field`` names
    the field it is about (``details.fields``, :func:`fields_detail`)."""
    if field is not None:
        details = {**fields_detail(field, message), **details}
    return IllegalAction(code, message, details or None)


class Game:
    """Base class with the contract and harmless defaults. One subclass instance per game type."""

    type_id: str = ""
    name: str = ""
    min_players: int = 1
    max_players: int = 1
    #: Schema version stamped on every event this game writes (see :meth:`upcast`).
    event_schema: int = 1
    #: JSON Schema of ``options`` (served by GET /v1/game-types).
    options_schema: dict = {"type": "object"}
    #: Variants as served in the catalog: [{"id", "name", "options": {...}}].
    variants: list[dict] = []
    #: JSON Schema that (normalized) options match when a game played with them cannot be
    #: compared with the others of its rating type (cut short, on another board): such a game
    #: is never rated. None: every set of options the game takes may be rated.
    unrated_options: dict | None = None
    #: JSON Schema per action type (served by GET /v1/game-types).
    action_schemas: dict[str, dict] = {}
    #: JSON Schema (2020-12) of the ``state`` :meth:`view` serves, for every viewer (each seat,
    #: a spectator, ``ALL``) in every phase; the contract's ``<Name>State``.
    state_schema: dict = {"type": "object"}
    #: JSON Schema of the ``data`` of each event type this game writes, as every viewer is
    #: served it (the redacted forms of :meth:`visible` included).
    event_schemas: dict[str, dict] = {}
    #: Place in the catalog (GET /v1/game-types lists games by it, then by id).
    catalog_position: int = 1000
    #: The bot hooks (:class:`service.engine.bots.BotHooks`) for the ``heuristic`` and ``mcts``
    #: levels, attached by the game's package; None when only ``random`` bots can play it.
    bots: Any = None

    # -- creation -------------------------------------------------------------------------
    def normalize_options(self, options: dict, players: Sequence[dict]) -> dict:
        """Validate ``options`` for these players and return them with every default filled in.

        Raise :class:`InvalidOptions` for anything wrong (including a bad ``options.setup``).
        The result is stored in the creation event, so it must be JSON-plain.
        """
        return self.checked_options(options)

    def checked_options(self, options: Any) -> dict:
        """``options`` checked against :attr:`options_schema`, its top-level defaults filled in
        (:func:`service.engine.options.validate_options`); raises :class:`InvalidOptions`."""
        from .options import validate_options  # options.py builds on this module

        return validate_options(self.options_schema, options)

    def initial(self, players: Sequence[dict], options: dict) -> State:
        raise NotImplementedError

    def create(self, state: State, rng) -> tuple[list[Event], State]:
        """The setup events and the state after them (``state``, the :meth:`initial` one, is
        not mutated). Every random draw of the setup is made here, from ``rng``, and written
        into the events."""
        raise NotImplementedError

    # -- the decider ----------------------------------------------------------------------
    def decide(self, state: State, seat: int, action: Action,
               rng) -> tuple[list[Event], State]:
        """The events of ``seat`` playing ``action`` and the state after them.

        ``state`` is not mutated; the returned state equals ``fold(self, clone(state), events)``.
        Raise :class:`IllegalAction` when the action breaks a rule (malformed actions with the
        codes of :mod:`service.engine.actions`). The runner calls it for an awaited ``seat``
        only, and for a client's action only once it is an object with a string ``type``;
        ``decide`` still refuses anything else it is given with an :class:`IllegalAction`,
        never another exception.
        """
        raise NotImplementedError

    def apply(self, state: State, event: Event) -> None:
        raise NotImplementedError

    # -- questions about a state ----------------------------------------------------------
    def is_over(self, state: State) -> bool:
        raise NotImplementedError

    def awaiting(self, state: State) -> list[int]:
        """Seats whose input the game waits for now (several in simultaneous phases)."""
        raise NotImplementedError

    def not_awaited_reason(self, state: State, seat: int) -> str:
        """``details.code`` of the 409 for a seat that is not awaited (no secret of others!)."""
        return "not_awaited"

    def legal_actions(self, state: State, seat: int) -> list[Action]:
        raise NotImplementedError

    def only_action(self, state: State, seat: int) -> Action | None:
        """The awaited ``seat``'s one legal action when it has exactly one and every other seat
        can tell it has (the runner plays it at once, a forced move, flagged and timed with
        the command before it), else None. The runner asks after every command, for every
        awaited seat: a game whose seats never face a single choice, or that can tell without
        listing every legal action, answers it more cheaply. A game where only a seat's hidden
        holdings can make its choice single must answer None there (the seat is then awaited
        with that one action), or the forced move would show them; this default suits games
        whose count of legal actions is public."""
        return self.single_action(state, seat)

    def single_action(self, state: State, seat: int) -> Action | None:
        """The awaited ``seat``'s one legal action when it has exactly one, public or not. An
        export may hold commands recorded by this rule (every single choice forced): the
        verifier accepts them where :meth:`only_action`'s events differ and these match."""
        actions = self.legal_actions(state, seat)
        return actions[0] if len(actions) == 1 else None

    def timeout_action(self, state: State, seat: int) -> Action:
        """What the clock plays for an awaited seat that ran out of time."""
        return self.legal_actions(state, seat)[0]

    def result(self, state: State) -> dict | None:
        """None until the end, then ``{"scores", "ranks", "winners", "details"}``."""
        raise NotImplementedError

    def rating_type(self, options: dict) -> str:
        """The ratings a rated game with these (normalized) options counts for: one ledger
        and leaderboard per rating type. A mode that measures another skill is rated apart."""
        return self.type_id

    @property
    def rating_types(self) -> tuple[str, ...]:
        """Every rating type :meth:`rating_type` may answer."""
        return (self.type_id,)

    def resign(self, state: State, seat: int) -> tuple[list[Event], State] | None:
        """The events of ``seat`` leaving the game under the rules (e.g. Papyrus 12.4) and the
        state after them (``state`` not mutated), or None when the game cannot go on without it
        (the shell then ends it with that seat last)."""
        return None

    # -- information ----------------------------------------------------------------------
    def view(self, state: State, viewer: Viewer) -> dict:
        """What ``viewer`` may see (everything once the game is over)."""
        raise NotImplementedError

    def visible(self, event: Event, viewer: Viewer) -> Event | None:
        """The event as ``viewer`` may see it while the game runs (redacted copy, or None).

        Never mutate ``event``. After the end the engine serves every event unredacted.
        """
        return event

    def public_tables(self) -> dict:
        """The game's public reference data a client needs to draw it (card tables and the
        like), JSON-plain; served to the viewer (``GET /viewer/games.json``)."""
        return {}

    def upcast(self, event: Event, schema: int) -> Event:
        """Bring an event written with an older ``schema`` up to :attr:`event_schema`."""
        return event


def competition_ranks(keys: Sequence[Any]) -> list[int]:
    """Standard competition ranking (1, 1, 3) of ``keys`` where a larger key is better.

    ``keys`` may be ints or tuples (score first, then tie-breakers in order).
    """
    return [1 + sum(1 for other in keys if other > mine) for mine in keys]


def standard_result(scores: Sequence[int], keys: Sequence[Any] | None = None,
                    details: dict | None = None) -> dict:
    """A result where the best key wins (``keys`` defaults to the scores themselves)."""
    ranks = competition_ranks(list(keys) if keys is not None else list(scores))
    return {
        "scores": list(scores),
        "ranks": ranks,
        "winners": [seat for seat, rank in enumerate(ranks) if rank == 1],
        "details": details or {},
    }


def require(condition: bool, code: str, message: str, **details: Any) -> None:
    """Raise :class:`IllegalAction` unless ``condition`` holds."""
    if not condition:
        raise illegal(code, message, **details)


def redact(ev: Event, *, drop: Iterable[str] = (), replace: dict | None = None) -> Event:
    """A copy of ``ev`` with ``drop`` data fields removed and ``replace`` fields overwritten."""
    data = {k: v for k, v in ev["data"].items() if k not in set(drop)}
    if replace:
        data.update(replace)
    out = dict(ev)
    out["data"] = data
    return out
