"""Replaying events into states: ``clone``, ``evolve`` and ``fold``; and ``visible``, the rule
"after the end every event is public" for every game. Commands are run by :mod:`.runner`.
"""

from __future__ import annotations

from typing import Iterable

import orjson

from .game import ALL, Event, Game, State, Viewer


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
