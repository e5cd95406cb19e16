"""What ``create``, ``decide`` and ``resign`` build: the events of a command and the state after
them, on a working clone of the state they were given."""

from __future__ import annotations

from typing import TYPE_CHECKING

from .fold import clone
from .game import Event, State, event

if TYPE_CHECKING:  # pragma: no cover
    from .game import Game


class Outcome:
    """A working clone of a state (``state``) and the events emitted on it (``events``), each
    applied to the clone through ``game.apply`` the moment it is emitted, so the rules can read
    the consequences of one event before deciding the next. ``rng`` is the command's random
    stream (None where nothing may draw). The state given is never touched."""

    __slots__ = ("game", "state", "events", "rng")

    def __init__(self, game: "Game", state: State, rng=None) -> None:
        self.game = game
        self.state = clone(state)
        self.events: list[Event] = []
        self.rng = rng

    def emit(self, type_: str, data: dict | None = None, seat: int | None = None) -> Event:
        """Append the event and apply it to :attr:`state`."""
        ev = event(type_, data, seat)
        self.game.apply(self.state, ev)
        self.events.append(ev)
        return ev

    def done(self) -> tuple[list[Event], State]:
        """The events and the state after them, as ``create``/``decide``/``resign`` return."""
        return self.events, self.state
