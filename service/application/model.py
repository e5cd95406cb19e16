"""The application layer's values: a game as loaded (:class:`Table`), the shell's own state
(:class:`Shell`, who controls each seat: :class:`Controller`), what the state cache keeps
(:class:`Cached`) and what an append comes to (:data:`Outcome`).

The shell is stored on the last envelope of every command and in snapshots as a JSON dict
(``{"controllers": ["human", "bot:heuristic", "auto", "left"], "clock", "ended", "aborted"}``);
:meth:`Shell.parse` and :meth:`Shell.stored` are the only places that read and write that form.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass, field
from typing import NamedTuple

from .. import clock as clock_mod
from ..engine import Game, forfeit_result
from ..engine.lobby import unfilled


class Control(enum.Enum):
    """Who plays a seat; the value is what views show as the seat's ``controller``."""

    HUMAN = "human"
    BOT = "bot"  # a bot of the controller's ``level``
    AUTO = "auto"  # the game's own timeout move (a seat that resigned under ``timeout: auto``)
    LEFT = "left"  # forfeited; played by the timeout move if the game goes on
    OPEN = "open"  # a table's seat nobody holds yet (open, or reserved for an invited player)


@dataclass(frozen=True, slots=True)
class Controller:
    control: Control
    #: the bot level (``random``, ``heuristic``, ``mcts``) of a BOT, else None
    level: str | None = None
    # derived once (controllers are few and shared: see parse)
    #: the stored form: ``human``, ``bot:<level>``, ``auto`` or ``left``
    stored: str = field(init=False, compare=False)
    #: what views show: ``human``, ``bot``, ``auto`` or ``left``
    shown: str = field(init=False, compare=False)
    human: bool = field(init=False, compare=False)

    def __post_init__(self) -> None:
        shown = self.control.value
        object.__setattr__(self, "shown", shown)
        object.__setattr__(self, "stored",
                           f"bot:{self.level}" if self.control is Control.BOT else shown)
        object.__setattr__(self, "human", self.control is Control.HUMAN)

    @staticmethod
    def bot(level: str) -> Controller:
        return Controller.parse(f"bot:{level}")

    @staticmethod
    def parse(stored: str) -> Controller:
        known = _PARSED.get(stored)
        if known is None:
            kind, _, level = stored.partition(":")
            known = Controller(Control(kind), level or None)
            if len(_PARSED) < 64:  # the levels are few; anything else is not kept
                _PARSED[stored] = known
        return known


HUMAN = Controller(Control.HUMAN)
AUTO = Controller(Control.AUTO)
LEFT = Controller(Control.LEFT)
OPEN = Controller(Control.OPEN)
_PARSED: dict[str, Controller] = {c.stored: c for c in (HUMAN, AUTO, LEFT, OPEN)}



class Shell(NamedTuple):
    """What the shell (not the rules) knows about a table at a version."""

    controllers: tuple[Controller, ...]
    #: the clock's state (``service.clock``), None without a clock
    clock: dict | None
    #: ``{"reason", "seats"}`` when a forfeit ended a game that cannot go on without the seat
    ended: dict | None
    aborted: bool
    #: the seats that resigned or forfeited, in the order they left: one group a command
    #: (several seats leave together when their clocks run out together). A game whose seats
    #: left before this was kept has them missing here (ratings then rank them alike).
    left: tuple[tuple[int, ...], ...] = ()

    def leaving(self, seats) -> tuple[tuple[int, ...], ...]:
        """:attr:`left` with ``seats`` (one command's) leaving now."""
        return self.left + (tuple(sorted(seats)),)

    @staticmethod
    def initial(created: dict) -> Shell:
        """Before the first command, from the creation event's data."""
        clock = created.get("clock")
        n = len(created["players"])
        controllers = tuple(OPEN if unfilled(p) else
                            Controller.bot(p["bot"]["level"]) if p.get("bot") else HUMAN
                            for p in created["players"])
        # a table's clock starts with the game (Tables.start)
        waiting = OPEN in controllers
        return Shell(controllers,
                     clock_mod.initial(clock, n) if clock and not waiting else None, None,
                     False)

    @staticmethod
    def parse(stored: dict) -> Shell:
        return Shell(tuple(Controller.parse(c) for c in stored["controllers"]),
                     stored["clock"], stored["ended"], stored["aborted"],
                     tuple(tuple(group) for group in stored.get("left", ())))

    def stored(self) -> dict:
        out = {"controllers": [c.stored for c in self.controllers], "clock": self.clock,
               "ended": self.ended, "aborted": self.aborted}
        if self.left:
            out["left"] = [list(group) for group in self.left]
        return out


class Cached(NamedTuple):
    """The state cache's entry for a game: its latest known version. Never mutated."""

    version: int
    state: dict
    shell: Shell


@dataclass
class Table:
    """One game as loaded: immutable facts, the rules' state at ``version``, and the shell's
    state (seat controllers, clock, how the table ended) at the same version."""

    id: str
    game: Game
    meta: dict
    state: dict
    version: int
    shell: Shell
    #: False when taken from this process's cache without asking the store whether the game
    #: has moved on (``Loader.load_for_command``): fine to decide an append on, since the
    #: append is conditional on ``version``, but never to answer an error from.
    checked: bool = True

    @property
    def waiting(self) -> bool:
        """A table with a seat nobody holds yet: no rules state, no clock, no legal action."""
        return self.state is None and not self.shell.aborted

    @property
    def over(self) -> bool:
        if self.state is None:
            return self.shell.aborted
        return (self.game.is_over(self.state) or self.shell.ended is not None
                or self.shell.aborted)

    @property
    def status(self) -> str:
        if self.shell.aborted:
            return "aborted"
        if self.state is None:
            return "waiting"
        return "finished" if self.over else "active"

    @property
    def players(self) -> list[dict]:
        """Who holds each seat now: the creation event's entries, as joins and leaves of a
        table changed them (``{"name", "bot"[, "player"]}``, or an unfilled entry)."""
        return self.meta.get("seats") or self.created["data"]["players"]

    def holder(self, seat: int) -> str | None:
        """The player id holding ``seat`` (None: an anonymous seat, or nobody yet)."""
        return self.players[seat].get("player")

    def seats_of(self, player_id: str) -> list[int]:
        return [i for i, p in enumerate(self.players) if p.get("player") == player_id]

    @property
    def created(self) -> dict:
        return self.meta["created"]

    @property
    def clock(self) -> dict | None:
        return self.created["data"].get("clock")

    def awaiting(self) -> list[int]:
        return [] if self.over or self.state is None else self.game.awaiting(self.state)

    def awaiting_humans(self) -> list[int]:
        """The awaited seats still played by their human: the ones a token may act for now
        (a seat resigned, taken over by a bot or left is its bot's turn)."""
        return [s for s in self.awaiting() if self.shell.controllers[s].human]

    def result(self) -> dict | None:
        if self.state is None:
            return None
        ended = self.shell.ended
        if ended is not None:  # a seat forfeited a game that cannot go on without it
            return forfeit_result(len(self.shell.controllers), ended["seats"], ended["reason"])
        return self.game.result(self.state) if self.game.is_over(self.state) else None


# -- what an append comes to ------------------------------------------------------------------
@dataclass(frozen=True, slots=True)
class Appended:
    """The command's events are stored: the table after them, from ``first_version`` on.
    ``seat``: for a command answered again (a repeated Idempotency-Key), the seat it was
    decided for, which its answer is shown to."""

    table: Table
    first_version: int
    envelopes: list[dict]
    seat: int | None = None

    @property
    def last_version(self) -> int:
        return self.first_version + len(self.envelopes) - 1


@dataclass(frozen=True, slots=True)
class Conflict:
    """Nothing stored: the game had moved on to ``current``."""

    current: int


@dataclass(frozen=True, slots=True)
class Duplicate:
    """Nothing stored: the command's Idempotency-Key already has a stored ``record``
    (``"<body digest>|<first>|<last>"``)."""

    record: str


Outcome = Appended | Conflict | Duplicate
