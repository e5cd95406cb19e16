"""Running commands: the one loop through which every command of every game is played.

The cross-cutting rules of docs/design/api.md live here once for every game: the turn check (409
``not_your_turn``), the malformed-action check (422 ``malformed_action``, see
:mod:`.actions`), and forced moves (an awaited seat with exactly one legal action has it played
at once, its events flagged ``"forced": true``).

Every caller goes through :func:`command` (or :func:`start` and :func:`forfeit`, which play the
same forced moves): the server, :class:`~service.engine.local.LocalGame`, export verification
(:mod:`service.replay`) and the ISMCTS simulations (``simulated=True``).

Each step takes the state that ``Game.create``/``decide``/``resign`` return with their events
(the events already applied there): no event is applied twice, and no state given to these
functions is mutated.
"""

from __future__ import annotations

from collections.abc import Sequence

from .actions import action_type
from .game import Action, CodedError, Event, Game, State


class NotYourTurn(CodedError):
    """The seat is not awaited now (HTTP 409 ``not_your_turn``, reason in ``details.code``)."""

    def __init__(self, reason: str, message: str = "the game is not waiting for this seat") -> None:
        super().__init__("not_your_turn", message, {"code": reason})
        self.reason = reason


#: Safety net against a game that keeps forcing moves forever.
MAX_FORCED_MOVES = 10_000


def command(game: Game, state: State, seat: int, action: Action, rng, *,
            simulated: bool = False, only=None) -> tuple[list[Event], State]:
    """Play ``action`` for ``seat`` against ``state`` (not mutated).

    Returns every event the command causes and the state after them: ``decide``'s, followed by
    the forced moves they make due (:func:`forced_moves`). Raises :class:`NotYourTurn` for a
    seat the game does not await, or :class:`~service.engine.game.IllegalAction`.

    ``simulated=True`` is a command of an ISMCTS simulation: ``decide`` alone. Its seat comes
    from ``awaiting`` and its action from ``legal_actions`` or the rollout policy, so the turn
    and malformed-action checks are left out; so is the search for forced moves after it (that
    costs a ``legal_actions`` per awaited seat after every command, and a simulation plays a
    seat's single legal action anyway when it picks that seat).

    ``only``: what finds a forced move (default ``game.only_action``; the verifier passes
    ``game.single_action`` for a command recorded by that rule).
    """
    if simulated:
        return game.decide(state, seat, action, rng)
    if game.is_over(state):
        raise NotYourTurn("game_over", "the game is over")
    if seat not in game.awaiting(state):
        raise NotYourTurn(game.not_awaited_reason(state, seat))
    action_type(action)
    events, after = game.decide(state, seat, action, rng)
    forced, after = forced_moves(game, after, rng, only)
    return events + forced, after


def forced_moves(game: Game, state: State, rng, only=None) -> tuple[list[Event], State]:
    """Play every awaited seat's only legal action (``game.only_action``, or ``only``) until
    none is left (seats in ``awaiting`` order, the scan starting over after each move).
    Returns the events, each flagged ``"forced": True``, and the state after them (``state``
    itself when none is due)."""
    only = only or game.only_action
    out: list[Event] = []
    for _ in range(MAX_FORCED_MOVES):
        if game.is_over(state):
            return out, state
        for seat in game.awaiting(state):
            action = only(state, seat)
            if action is not None:
                events, state = game.decide(state, seat, action, rng)
                for ev in events:
                    ev["forced"] = True
                out += events
                break
        else:
            return out, state
    raise RuntimeError("forced moves did not settle")


def start(game: Game, state: State, rng, only=None) -> tuple[list[Event], State]:
    """The game's setup events (``Game.create`` on the initial ``state``, not mutated) and the
    forced moves after them (found by ``only``, as :func:`command`'s), with the state after
    them all."""
    events, after = game.create(state, rng)
    forced, after = forced_moves(game, after, rng, only)
    return events + forced, after


def forfeit(game: Game, state: State, seats: Sequence[int],
            rng) -> tuple[list[Event], State] | None:
    """The rules' consequence of ``seats`` leaving at one instant (``Game.resign`` for each, in
    the order given) and the forced moves after them, with the state after them (``state``
    untouched); None when the game cannot go on without them: the rules cannot take one of
    them out, or the game ends before the last of them has left (the seats still to leave were
    as late as the others, so the rules' ending must not make them winners)."""
    events: list[Event] = []
    for i, seat in enumerate(seats):
        left = game.resign(state, seat)
        if left is None or not left[0]:
            return None
        events += left[0]
        state = left[1]
        if i < len(seats) - 1 and game.is_over(state):
            return None
    forced, after = forced_moves(game, state, rng)
    return events + forced, after


def counts_for_ratings(rated: bool, players: Sequence[dict]) -> bool:
    """Whether a game created with ``rated`` and seated with ``players`` (its creation's, or
    its table's once full) counts for ratings when it finishes: every seat held by a distinct
    player (humans, third-party bots and the built-in bot players alike), two at least."""
    ids = [p.get("player") for p in players]
    return rated and len(ids) >= 2 and None not in ids and len(set(ids)) == len(ids)


def result_counts(created: dict, players: Sequence[dict]) -> bool:
    """Whether a game's result counts beyond the game: for ratings (:func:`counts_for_ratings`,
    from its creation event's data ``created`` and its seats ``players``) or in the standings of
    the tournament its creation names. Such a game a seat may not abort once it is dealt, and
    its idle seats resign (:func:`idle_resigners`)."""
    return bool(created.get("tournament")) or counts_for_ratings(bool(created.get("rated")),
                                                                 players)


#: The bot level that plays on for a seat resigned in a game without a clock (by its human, or
#: by the idle rule: :func:`idle_resigners`).
RESIGNED_BOT = "heuristic"


def idle_resigners(counts: bool, awaiting: Sequence[int], humans: Sequence[bool]) -> list[int]:
    """The seats that resign when a game without a clock has been idle for its limit: in a
    game whose result ``counts`` (:func:`result_counts`), the awaited seats still played by
    their human (``humans``, per seat), provided some other seat is in the game: one that
    still plays waits on them, and one that resigned or forfeited before them ranks below
    them (ratings rank the seats that left by when they left). They resign as a human would
    (a bot plays on). Empty otherwise, and the game is aborted: a game whose result counts for
    nothing, or one whose every seat is an idle human (nobody moved in a simultaneous phase)."""
    idle = [s for s in awaiting if humans[s]] if counts else []
    return idle if idle and len(idle) < len(humans) else []


def forfeit_result(n: int, seats: list[int], reason: str) -> dict:
    """The result of a game ended by ``seats`` forfeiting a game that cannot go on without
    them (:func:`forfeit` gave None): they rank last, the others share the win."""
    return {"scores": [0] * n, "ranks": [n if s in seats else 1 for s in range(n)],
            "winners": [s for s in range(n) if s not in seats],
            "details": {"ended_by": reason, "forfeited": list(seats)}}
