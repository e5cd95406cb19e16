"""Replaying events into states, and running one command through a game.

This is where the cross-cutting rules of api.md live once for every game: the turn check
(409 ``not_your_turn``), forced moves (a seat with exactly one legal action has it played at once,
``"forced": true``), and "after the end every event is public".
"""

from __future__ import annotations

from typing import Iterable

import orjson

from .game import ALL, Action, CodedError, Event, Game, IllegalAction, State, Viewer


class NotYourTurn(CodedError):
    """The seat is not awaited now (HTTP 409 ``not_your_turn``, reason in ``details.code``)."""

    def __init__(self, reason: str, message: str = "the game is not waiting for this seat") -> None:
        super().__init__("not_your_turn", message, {"code": reason})
        self.reason = reason


#: Safety net against a game that keeps forcing moves forever.
MAX_FORCED_MOVES = 10_000


def clone(state: State) -> State:
    """A deep copy of a JSON-plain state (fast: one orjson round trip)."""
    return orjson.loads(orjson.dumps(state))


def evolve(game: Game, state: State, ev: Event) -> State:
    """The pure evolve of the decider pattern: a new state, the input untouched."""
    out = clone(state)
    game.apply(out, ev)
    return out


def fold(game: Game, state: State, events: Iterable[Event]) -> State:
    """Apply ``events`` to ``state`` in place and return it."""
    for ev in events:
        game.apply(state, ev)
    return state


def forced_moves(game: Game, state: State, rng) -> list[Event]:
    """Play every awaited seat's only legal action until none is left; mutates ``state``."""
    out: list[Event] = []
    for _ in range(MAX_FORCED_MOVES):
        if game.is_over(state):
            return out
        for seat in game.awaiting(state):
            actions = game.legal_actions(state, seat)
            if len(actions) == 1:
                events = game.decide(state, seat, actions[0], rng)
                for ev in events:
                    ev["forced"] = True
                    game.apply(state, ev)
                out.extend(events)
                break
        else:
            return out
    raise RuntimeError("forced moves did not settle")


def start(game: Game, state: State, rng) -> list[Event]:
    """The game's setup events plus any forced moves; mutates ``state``."""
    events = game.create(state, rng)
    fold(game, state, events)
    return events + forced_moves(game, state, rng)


def command(game: Game, state: State, seat: int, action: Action,
            rng) -> tuple[list[Event], State]:
    """Decide ``action`` for ``seat`` against ``state`` (not mutated).

    Returns every event the command causes, forced follow-ups included, and the state after
    them. Raises :class:`NotYourTurn` or :class:`IllegalAction`.
    """
    if game.is_over(state):
        raise NotYourTurn("game_over", "the game is over")
    if seat not in game.awaiting(state):
        raise NotYourTurn(game.not_awaited_reason(state, seat))
    if not isinstance(action, dict) or not isinstance(action.get("type"), str):
        raise IllegalAction("malformed_action", "an action is an object with a string 'type'")
    events, work = game.decide_and_apply(state, seat, action, rng)
    events += forced_moves(game, work, rng)
    return events, work


def forfeit(game: Game, state: State, seat: int, rng) -> tuple[list[Event], State] | None:
    """The rules' consequence of ``seat`` leaving (``Game.resign``) and any forced moves after
    it, with the state after them (``state`` untouched); None when the game cannot go on
    without the seat."""
    events = game.resign(state, seat)
    if not events:
        return None
    after = fold(game, clone(state), events)
    return events + forced_moves(game, after, rng), after


def visible(game: Game, ev: Event, viewer: Viewer, over: bool) -> Event | None:
    """``ev`` as ``viewer`` may see it; everything is public once the game is over.

    The creation event's ``options.setup`` (fixed deck orders and the like) is hidden from
    everybody while the game runs, for every game; its presence is public as ``setup: custom``.
    """
    if over or viewer == ALL:
        return ev
    if ev["type"] == "GameCreated" and "setup" in ev["data"].get("options", {}):
        options = {k: v for k, v in ev["data"]["options"].items() if k != "setup"}
        ev = {**ev, "data": {**ev["data"], "options": options}}
    return game.visible(ev, viewer)
