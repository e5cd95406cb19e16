"""Leaving a table: a seat resigns or forfeits, or the whole game is aborted before the first
move, or by the server when nothing happened in it for too long (:meth:`Seats.settle_idle`).
These are shell commands (``cmd: {"shell": ...}``): their events are about seats and the
table, and the rules see only what a forfeit makes them decide."""

from __future__ import annotations

from dataclasses import dataclass

from .. import timestamps
from ..engine import (RESIGNED_BOT, Rng, Viewer, event, forfeit, idle_resigners,
                      result_counts)
from ..store.events import EventStore
from .commands import MAX_RETRIES, Appender
from .errors import CannotAbort, NotYourTurn, SeatNotHuman, VersionConflict
from .loading import Loader
from .model import AUTO, LEFT, Appended, Controller, Outcome, Shell, Table


def _ms(last: int | str) -> int:
    """``EventStore.last_activity``'s answer in epoch milliseconds."""
    return last if isinstance(last, int) else timestamps.ms(last)


def counts(table: Table) -> bool:
    """Whether ``table``'s result counts beyond it: for ratings or in a tournament
    (``result_counts``)."""
    return result_counts(table.created["data"], table.players)


def _left(table: Table, seats: list[int]) -> tuple[Controller, ...]:
    """The table's controllers with ``seats`` gone (forfeited)."""
    return tuple(LEFT if i in seats else c for i, c in enumerate(table.shell.controllers))


def _replaced(table: Table, seats: list[int], controller: Controller) -> tuple[Controller, ...]:
    """The table's controllers with ``controller`` playing ``seats`` (they resigned)."""
    return tuple(controller if i in seats else c for i, c in enumerate(table.shell.controllers))


def forfeit_command(seats: list[int]) -> dict:
    """The record of a forfeit (``cmd``): one seat's as ``seat``, several seats' leaving at
    one instant (their clocks ran out together) as ``seats``, in seat order."""
    return {"shell": "forfeit", "seat": seats[0]} if len(seats) == 1 else \
        {"shell": "forfeit", "seats": seats}


@dataclass(eq=False)
class Seats:
    store: EventStore
    loader: Loader
    appender: Appender
    #: for games whose creation event records none (created before the limit existed)
    idle_abort_s: int = 0

    def forfeit(self, table: Table, seats: list[int], reason: str) -> Outcome:
        """The rules' consequence of ``seats`` leaving at one instant, or (for games that
        cannot go on without them) the end of the game with them all last. Several seats
        forfeit together when their clocks ran out together: one at a time, the first to go
        would end the game and the others, as late, would win it."""
        seats = sorted(seats)
        left = forfeit(table.game, table.state, seats,
                       Rng(bytes.fromhex(self.loader.seed(table.id)), table.version + 1))
        if left is not None:
            events, after = left
            changes = {}
        else:
            events, after = [], table.state
            changes = {"ended": {"reason": f"forfeit_{reason}", "seats": seats}}
        markers = [event("SeatForfeited", {"reason": reason, "game_continues": left is not None},
                         seat) for seat in seats]
        shell = self.appender.next_shell(table, after, set(seats),
                                         controllers=_left(table, seats),
                                         left=table.shell.leaving(seats), **changes)
        return self.appender.append(table, markers + events, after, shell,
                                    cmd=forfeit_command(seats))

    def resign(self, game_id: str, seat: int) -> Table:
        """The seat leaves: the rules' forfeit when its clock says so, else a bot (or the
        clock's automatic move) plays it from now on. The caller settles overdue clocks
        first."""
        for _ in range(MAX_RETRIES):
            table = self.loader.load(game_id)
            if table.over:
                raise NotYourTurn("game_over", "the game is over")
            if table.waiting:
                raise NotYourTurn("game_not_started", "the game has not started: leave instead")
            if not table.shell.controllers[seat].human:
                raise SeatNotHuman()
            clock = table.clock
            if clock and clock["timeout"] == "forfeit":
                outcome = self.forfeit(table, [seat], "resigned")
            else:
                replacement = (AUTO if clock and clock["timeout"] == "auto" else
                               Controller.bot(clock["bot_level"] if clock else RESIGNED_BOT))
                marker = event("SeatResigned", {"replaced_by": replacement.stored}, seat)
                shell = self.appender.next_shell(table, table.state, set(),
                                                 controllers=_replaced(table, [seat], replacement),
                                                 left=table.shell.leaving([seat]))
                outcome = self.appender.append(table, [marker], table.state, shell,
                                               cmd={"shell": "resign", "seat": seat})
            if isinstance(outcome, Appended):
                return outcome.table
        raise VersionConflict(self.store.version(game_id))

    def abort(self, game_id: str, by: Viewer) -> Table:
        """End a game before anybody has moved, or a table still waiting for players
        (status ``aborted``). A game whose result counts (rated, or a tournament's), once
        dealt, only by a platform key."""
        table = self.loader.load(game_id)
        if table.over:
            raise CannotAbort("the game is already over")
        if not table.waiting and table.version != table.meta["created_version"]:
            raise CannotAbort("the game has started: a move was made")
        if not table.waiting and isinstance(by, int) and counts(table):
            # the seat has seen its deal: aborting would deal again until a hand suits it, or
            # wipe a tournament game it expects to lose
            raise CannotAbort("a rated or tournament game cannot be aborted by a seat once it "
                              "is dealt: resign instead")
        marker = event("GameAborted", {"by": by if isinstance(by, int) else "platform"})
        outcome = self.appender.append(
            table, [marker], table.state,
            self.appender.next_shell(table, table.state, set(), aborted=True),
            cmd={"shell": "abort"})
        if not isinstance(outcome, Appended):
            raise CannotAbort("the game has started: a move was made")
        return outcome.table

    def idle_limit_s(self, table: Table) -> int:
        """How long ``table`` may stay idle (0: for ever): its creation event's
        ``idle_abort_s``, this server's for a game created before that was recorded."""
        return table.created["data"].get("idle_abort_s", self.idle_abort_s)

    def _idle_limit_ms(self, table: Table) -> int:
        """The idle limit an idle abort goes by, in milliseconds: 0 (never) for a game not
        active or with a clock (its clock ends it)."""
        if table.status != "active" or table.clock:
            return 0
        return self.idle_limit_s(table) * 1000

    def idle_candidates(self, tables: list[Table], created: dict[str, int]) -> list[str]:
        """Of ``tables`` (a page of the sweep's rotation through the active games, loaded;
        ``created``: their creation times), the games without a clock whose own idle limit
        (:meth:`idle_limit_s`, recorded at their creation) has passed since their creation
        and since their last append (``last_ms`` in the meta hash, else their last event's
        ``at``; read in one round trip for those old enough): what :meth:`abort_idle` is then
        asked about (it checks again)."""
        now = self.appender.now_ms()
        limits = {table.id: limit for table in tables
                  if (limit := self._idle_limit_ms(table))
                  and created.get(table.id, now) <= now - limit}
        ids = list(limits)
        return [game_id for game_id, last in zip(ids, self.store.last_activity(ids))
                if last is not None and _ms(last) <= now - limits[game_id]]

    def settle_idle(self, game_id: str) -> bool:
        """End the wait of an active game without a clock in which nothing was appended for
        its idle limit (``cmd: {"shell": "idle"}``): in a game whose result counts (rated, or a
        tournament's), the awaited seats still played by their human resign when another seat
        is in the game (:func:`~service.engine.idle_resigners`: ``SeatResigned {"replaced_by":
        "bot:heuristic", "reason": "idle"}``; a bot plays on, ratings rank them below every
        seat that played on); otherwise the game is aborted (``GameAborted {"by": "server",
        "reason": "idle"}``, status ``aborted``, unrated). Conditional on the version like any
        append: a command that lands first keeps the game going. False (nothing done) for any
        other game."""
        for _ in range(MAX_RETRIES):
            table = self.loader.load(game_id)
            limit_ms = self._idle_limit_ms(table)
            if not limit_ms:
                return False
            last = self.store.last_activity([game_id])[0]
            if last is None or self.appender.now_ms() - _ms(last) < limit_ms:
                return False
            outcome = self.appender.append(table, *self._idle_end(table), cmd={"shell": "idle"})
            if isinstance(outcome, Appended):
                return True
        return False

    def _idle_end(self, table: Table) -> tuple[list[dict], dict, Shell]:
        """The events, state and shell :meth:`settle_idle` appends for ``table``."""
        gone = idle_resigners(counts(table), table.awaiting(),
                              [c.human for c in table.shell.controllers])
        if not gone:
            marker = event("GameAborted", {"by": "server", "reason": "idle"})
            return [marker], table.state, self.appender.next_shell(
                table, table.state, set(), aborted=True)
        replacement = Controller.bot(RESIGNED_BOT)
        markers = [event("SeatResigned", {"replaced_by": replacement.stored, "reason": "idle"},
                         seat) for seat in gone]
        return markers, table.state, self.appender.next_shell(
            table, table.state, set(), controllers=_replaced(table, gone, replacement),
            left=table.shell.leaving(gone))
