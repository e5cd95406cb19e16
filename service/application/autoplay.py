"""Moves the service makes by itself: a seat's clock running out, and a bot's turn (the RQ jobs
of ``workers.jobs`` call these; commands settle overdue clocks on arrival too)."""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any, Callable

from .. import clock as clock_mod
from ..engine.bots import DEFAULT_BUDGET_MS, SeatLogs
from ..replay import SHELL_EVENTS
from ..store.events import EventStore
from .commands import MAX_RETRIES, Appender
from .envelopes import game_event
from .errors import NotFound
from .loading import Loader, valid_id
from .model import Appended, Control, Outcome, Table
from .observer import NULL_OBSERVER, Observer
from .seats import Seats

#: Every seat's observation log this process keeps up to date between its bot turns.
SEAT_LOGS = SeatLogs()


#: The least budget an mcts decision searches with; under a clock leaving less, the bot plays
#: the heuristic's move.
LEAST_SEARCH_MS = 20


@dataclass(eq=False)
class Autoplay:
    store: EventStore
    loader: Loader
    appender: Appender
    seats: Seats
    now_ms: Callable[[], int]
    #: told how long each bot took to choose (``GameService.observe``)
    observer: Observer = NULL_OBSERVER

    def settle_timeouts(self, game_id: str, version: int | None = None) -> list[int]:
        """Apply the timeout of every awaited seat whose deadline has passed; returns them.

        With ``version``, does nothing unless the game is still at that version (clock jobs
        carry the version they were scheduled for).
        """
        timed_out: list[int] = []
        if not valid_id(game_id):
            raise NotFound.game(game_id)
        if not self.loader.meta(game_id)["created"]["data"].get("clock"):
            return timed_out  # no clock, no deadline: the same answer, without loading the game
        for _ in range(MAX_RETRIES * 4):
            table = self.loader.load(game_id)
            if version is not None and table.version != version and not timed_out:
                return timed_out
            due = self.overdue(table)
            if not due:
                return timed_out
            if table.clock["timeout"] == "forfeit":  # the late seats leave together
                if isinstance(self.seats.forfeit(table, due, "timeout"), Appended):
                    timed_out += due
            elif isinstance(self._timeout(table, due[0]), Appended):
                timed_out.append(due[0])
        return timed_out

    def overdue(self, table: Table) -> list[int]:
        """The awaited seats of ``table`` past their deadline (none without a clock, and none
        in a game over or a table waiting for players)."""
        if not table.clock or table.over or table.waiting:
            return []
        return clock_mod.overdue(table.clock, table.shell.clock, self.now_ms(), table.awaiting())

    def _timeout(self, table: Table, seat: int) -> Outcome:
        if table.clock["timeout"] == "bot" or table.shell.controllers[seat].control is Control.BOT:
            level = table.clock.get("bot_level", "heuristic")
            action = self._bot_action(table, seat, level, budget_ms=200)
        else:
            action = table.game.timeout_action(table.state, seat)
        return self.appender.run(table, seat, action, timeout=True)

    def play_bot(self, game_id: str, seat: int, version: int) -> bool:
        """The bot job: play ``seat``'s decision if the game still awaits it at ``version``."""
        table = self.loader.load(game_id)
        if table.version != version or seat not in table.awaiting():
            return False
        controller = table.shell.controllers[seat]
        if controller.control is Control.HUMAN:
            return False
        if controller.control is Control.BOT:
            bot = table.players[seat].get("bot") or {}
            level, budget_ms = self._within_clock(table, seat, controller.level,
                                                  bot.get("budget_ms"))
            action = self._bot_action(table, seat, level, budget_ms)
        else:  # resigned under ``timeout: auto``, or left a game that goes on
            action = table.game.timeout_action(table.state, seat)
        return isinstance(self.appender.run(table, seat, action), Appended)

    def _within_clock(self, table: Table, seat: int, level: str,
                      budget_ms: int | None) -> tuple[str, int | None]:
        """The level and budget a bot seat thinks with: under a clock, an mcts budget of at
        most half the time the seat has left (the rest for its observation, its append and the
        queue), and the heuristic's move when that is under :data:`LEAST_SEARCH_MS`, so that
        a bot never loses on time to a clock its budget does not fit."""
        if level != "mcts" or not table.clock:
            return level, budget_ms
        due = clock_mod.deadline(table.clock, table.shell.clock, seat)
        if due is None:
            return level, budget_ms
        fits = (due - self.now_ms()) // 2
        if fits < LEAST_SEARCH_MS:
            return "heuristic", None
        return level, min(budget_ms or DEFAULT_BUDGET_MS, fits)

    def _bot_action(self, table: Table, seat: int, level: str, budget_ms: int | None) -> Any:
        """The bot's action. An mcts decision takes its whole budget, whatever it found: one
        answered sooner (a single legal action, an endgame solved exactly) would be told by
        its event's time, and a seat's single choice can come from its hidden holdings."""
        started = time.perf_counter()
        try:
            action = self._bot_choice(table, seat, level, budget_ms, started)
            if level == "mcts":
                left = started + (budget_ms or DEFAULT_BUDGET_MS) / 1000 - time.perf_counter()
                if left > 0:
                    time.sleep(left)
            return action
        finally:
            self.observer.bot_decided(table.game.type_id, level, time.perf_counter() - started)

    def _bot_choice(self, table: Table, seat: int, level: str, budget_ms: int | None,
                    started: float | None = None) -> Any:
        """The bot's action; an mcts budget counts from ``started`` (``time.perf_counter()``
        when the decision began: the observation's reading is part of it)."""
        from ..engine.bots import choose, secret_random

        rnd = secret_random(bytes.fromhex(self.loader.seed(table.id)), table.id, table.version,
                            seat)
        if level == "random":  # needs nothing but the seat's own legal actions
            return rnd.choice(table.game.legal_actions(table.state, seat))

        obs = self._observe(table, seat)
        return choose(level, obs, rnd, budget_ms, started)

    def _observe(self, table: Table, seat: int):
        """The seat's observation, from its cached log plus the events since (O(new events))."""
        def read(after: int) -> list[dict]:
            return [game_event(table.game, s)
                    for s in self.store.read(table.id, after, table.version)
                    if s.envelope["type"] not in SHELL_EVENTS]

        created = {**table.created["data"], "players": table.players}
        return SEAT_LOGS.observe(table.id, table.game, created, seat, table.state,
                                 table.version, read)
