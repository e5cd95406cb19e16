"""Commands: deciding one through the engine and appending its events (:class:`Appender`), and a
human seat's command with its optimistic retries and Idempotency-Key (:class:`Commands`)."""

from __future__ import annotations

import hashlib
import hmac
import logging
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Callable

import orjson

from .. import clock as clock_mod
from ..engine import Rng, command, event
from ..store.errors import StoreError
from ..store.events import AppendStatus, EventStore
from ..store.quota import Quota, QuotaExceeded
from ..timestamps import rfc3339
from .envelopes import envelope
from .errors import (DeadlinePassed, IdempotencyKeyReused, IllegalAction, NotFound,
                     NotYourTurn, SeatNotHuman, VersionConflict)
from .listeners import ListenerBus
from .loading import Loader
from .model import Appended, Cached, Conflict, Duplicate, Outcome, Shell, Table
from .observer import CONFLICTS, NULL_OBSERVER, Observer

if TYPE_CHECKING:
    from .autoplay import Autoplay

log = logging.getLogger("cartouche.application")

#: How many times a command without ``expected_version`` is re-decided after losing a race.
MAX_RETRIES = 50


def body_digest(payload: Any) -> str:
    """What an Idempotency-Key's record remembers of the request body."""
    return hashlib.sha256(orjson.dumps(payload, option=orjson.OPT_SORT_KEYS)).hexdigest()


@dataclass(eq=False)
class Appender:
    """Appends one command's events, and does what a stored command needs next: the cache, a
    snapshot every ``snapshot_every`` versions, the game index when it ends, the scheduler
    and the listeners."""

    store: EventStore
    loader: Loader
    bus: ListenerBus
    scheduler: Any
    now_ms: Callable[[], int]
    snapshot_every: int
    #: told of every append conflict (``GameService.observe``)
    observer: Observer = NULL_OBSERVER

    def run(self, table: Table, seat: int, action: Any, *, idem=None, timeout: bool = False,
            quota: Quota | None = None) -> Outcome:
        """Decide and append one command for ``seat`` against ``table`` (``timeout``: played
        for the seat when its clock ran out). Raises NotYourTurn / IllegalAction / NotFound."""
        rng = Rng(bytes.fromhex(self.loader.seed(table.id)), table.version + 1)
        events, after = command(table.game, table.state, seat, action, rng)
        if timeout:
            for ev in events:
                ev["timeout"] = True
        actors = {seat} | {ev["seat"] for ev in events if ev.get("forced")
                           and isinstance(ev.get("seat"), int)}
        cmd = {"seat": seat, "action": action}
        if timeout:
            cmd["timeout"] = True
        return self.append(table, events, after, self.next_shell(table, after, actors),
                           idem=idem, cmd=cmd, quota=quota)

    def next_shell(self, table: Table, after: dict, actors, **changes) -> Shell:
        """The shell after a command that left the rules at ``after``: ``changes`` applied,
        the clock advanced (``actors`` made a decision)."""
        shell = table.shell._replace(**changes) if changes else table.shell
        if table.clock and table.shell.clock is not None:
            over = table.game.is_over(after) or shell.ended is not None or shell.aborted
            shell = shell._replace(clock=clock_mod.advance(
                table.clock, table.shell.clock, self.now_ms(), table.awaiting(),
                [] if over else table.game.awaiting(after), actors))
        return shell

    def append(self, table: Table, events: list[dict], after: dict | None, shell: Shell, *,
               cmd: dict, idem=None, quota: Quota | None = None, meta: dict | None = None,
               new_meta: dict | None = None) -> Outcome:
        """Append one command's events. ``cmd`` (stored on the first envelope, never served
        while the game runs) records what caused them, so an export can be re-derived. The
        last envelope carries ``shell`` when the command changed it (a load takes the newest
        stored one: the creation's, or a later command's).

        ``quota``: charged in the same script; over the limit nothing is appended and
        :class:`QuotaExceeded` is raised.

        ``meta``: fields of the stored meta hash the command changes (a table's seats, as
        strings), written in the same script; ``new_meta`` the table's meta after them. Every
        append also records its time in the meta hash (``last_ms``: what the idle sweep reads).

        The game's event cap (its creation event's ``max_events``): a command whose events
        would take the log past ``max_events - 1`` is not appended; the game is aborted
        instead (``GameAborted {"by": "server", "reason": "event_limit"}``, the refused command
        recorded as ``cmd: {"shell": "event_limit", "refused": cmd}``) and
        :func:`event_limit_reached` is raised (or the append's Conflict returned when the game
        moved on meanwhile: the caller decides again, as after any lost race)."""
        cap = table.created["data"].get("max_events")
        if cap and table.version + len(events) > cap - 1 and cmd.get("shell") != "event_limit":
            return self._event_limit(table, cmd)
        now = self.now_ms()
        at = rfc3339(now)
        envelopes = [envelope(table.game, e, at) for e in events]
        envelopes[0]["cmd"] = cmd
        if shell != table.shell:  # else the newest stored shell is this one (what loads read)
            envelopes[-1]["shell"] = shell.stored()
        new = Table(table.id, table.game, new_meta or table.meta, after,
                    table.version + len(events), shell)
        changed = new.status != table.status
        reads = self.bus.reads()
        result = self.store.append(table.id, table.version, envelopes,
                                   status=new.status if changed else None,
                                   meta={**(meta or {}), "last_ms": str(now)},
                                   idempotency=idem,
                                   reads=[read for _, wanted in reads for read in wanted],
                                   quota=quota,
                                   listing=(table.game.type_id, table.meta["created_ms"]))
        outcome = result.outcome
        if outcome is AppendStatus.OK:
            self.loader.cache.put(table.id, Cached(new.version, after, shell))
            k = self.snapshot_every
            try:
                if k and new.version // k > table.version // k:
                    self.store.save_snapshot(table.id, new.version,
                                             {"state": after, "shell": shell.stored()})
            except StoreError as exc:  # derived data (the store full, say): the command stands
                log.warning("game %s v%s: snapshot not written: %s", table.id, new.version, exc)
            self.scheduler.changed(new, previous=table)
            self.bus.notify(new, table.version + 1, envelopes, reads, result.reads,
                            previous=table)
            return Appended(new, table.version + 1, envelopes)
        if outcome is AppendStatus.CONFLICT:
            self.observer.append_conflict(table.game.type_id)
            seen = CONFLICTS.get()
            if seen is not None:
                seen.append(result.version)
            return Conflict(result.version)
        if outcome is AppendStatus.IDEM:
            return Duplicate(result.record)
        if outcome is AppendStatus.LIMITED:
            raise QuotaExceeded(quota, result.charged)
        raise NotFound.game(table.id)

    def _event_limit(self, table: Table, refused: dict) -> Outcome:
        """Abort ``table`` at its event cap instead of appending the ``refused`` command."""
        marker = event("GameAborted", {"by": "server", "reason": "event_limit"})
        outcome = self.append(table, [marker], table.state,
                              self.next_shell(table, table.state, set(), aborted=True),
                              cmd={"shell": "event_limit", "refused": refused})
        if isinstance(outcome, Appended):
            raise event_limit_reached(table.created["data"]["max_events"])
        return outcome


def event_limit_reached(cap: int) -> NotYourTurn:
    """The answer to a command refused at the game's event cap (409 ``not_your_turn``,
    ``details`` ``{"code": "game_over", "reason": "event_limit", "max_events"}``): the game
    was aborted instead."""
    exc = NotYourTurn("game_over", f"the game reached its limit of {cap} events and was "
                      "aborted")
    exc.details.update({"reason": "event_limit", "max_events": cap})
    return exc


@dataclass(eq=False)
class Commands:
    """A human seat's command: overdue clocks settled first, decided against the cached game
    when there is one, re-decided after a lost race, answered again for a repeated
    Idempotency-Key."""

    store: EventStore
    loader: Loader
    appender: Appender
    autoplay: Autoplay
    now_ms: Callable[[], int]
    #: told of every command's end (``GameService.observe``)
    observer: Observer = NULL_OBSERVER

    def act(self, game_id: str, seat: int, action: Any, expected_version: int | None,
            idempotency_key: str | None, body_digest: str, *, loaded: Table | None = None,
            quota: Quota | None = None, key_scope: str | None = None) -> Appended:
        """Run one command of a human seat.

        A replay of the same Idempotency-Key and body (``body_digest``, read only with a key)
        returns the original outcome. A key names one request of the seats the caller's token
        holds (``key_scope``, by default ``seat``): a player token holding several seats of the
        game acts for whichever is awaited, and its retry must find the command it made.

        Overdue clocks are settled first; if the acting seat was overdue its timeout stands and
        :class:`DeadlinePassed` is raised.

        ``loaded``: the game as the caller just loaded it (the API does, to authenticate, with
        ``load_for_command``). The first attempt decides against it instead of reading the
        game again; that is safe because the append is conditional on the stream still being at
        ``loaded.version`` (else the command is re-decided against a fresh load, as for any lost
        race). A refusal decided on a table that was not ``checked`` against the store is
        decided again on a fresh load before it is raised. ``loaded`` is ignored when a timeout
        was just settled.

        ``quota``: the caller's rate-limit counters, charged by the command's first append (in
        the same script: ``EventStore.append``); over the limit nothing is appended and
        :class:`QuotaExceeded` is raised. A command that never reaches an append leaves the
        quota uncharged (``quota.charged`` False) for the caller to charge.
        """
        conflicts: list[int] = []
        token = CONFLICTS.set(conflicts)
        try:
            appended = self._act_once(game_id, seat, action, expected_version, idempotency_key,
                                      body_digest, loaded, quota,
                                      str(seat) if key_scope is None else key_scope)
        except BaseException as exc:
            self.observer.command(loaded.game.type_id if loaded is not None else "unknown",
                                  exc, len(conflicts))
            raise
        finally:
            CONFLICTS.reset(token)
        self.observer.command(appended.table.game.type_id, None, len(conflicts))
        return appended

    def _act_once(self, game_id, seat, action, expected_version, idempotency_key, body_digest,
                  loaded, quota, key_scope) -> Appended:
        idem = None
        if idempotency_key is not None:
            key_digest = hashlib.sha256(f"{key_scope}\x00{idempotency_key}".encode()).hexdigest()
            idem = (key_digest, body_digest)
            record = self.store.idempotency_record(game_id, key_digest)
            if record is not None:
                return self._replayed(game_id, record, body_digest)
        try:
            return self._act(game_id, seat, action, expected_version, idem, body_digest, loaded,
                             quota)
        except (NotYourTurn, IllegalAction, VersionConflict, DeadlinePassed, SeatNotHuman):
            # A retry that raced its own original (same key) must get the original answer,
            # not the error that deciding it again against the moved-on game gives.
            if idem is not None:
                record = self.store.idempotency_record(game_id, idem[0])
                if record is not None:
                    return self._replayed(game_id, record, body_digest)
            raise

    def _act(self, game_id, seat, action, expected_version, idem, body_digest, loaded,
             quota) -> Appended:
        timed_out = self.autoplay.settle_timeouts(game_id)
        if seat in timed_out:
            raise DeadlinePassed()
        if timed_out or (loaded is not None and loaded.id != game_id):
            loaded = None
        for _ in range(MAX_RETRIES):
            table, loaded = (loaded, None) if loaded is not None else \
                (self.loader.load(game_id), None)
            try:
                if table.over:
                    raise NotYourTurn("game_over", "the game is over")
                if table.waiting:
                    raise NotYourTurn("game_not_started", "the table is waiting for players")
                if not table.shell.controllers[seat].human:
                    raise SeatNotHuman()
                if expected_version is not None and expected_version != table.version:
                    raise VersionConflict(table.version)
                if table.clock and seat in clock_mod.overdue(
                        table.clock, table.shell.clock, self.now_ms(), table.awaiting()):
                    self.autoplay.settle_timeouts(game_id)
                    raise DeadlinePassed()
                outcome = self.appender.run(table, seat, action, idem=idem, quota=quota)
            except (NotYourTurn, IllegalAction, VersionConflict, SeatNotHuman) as exc:
                if table.checked or exc.details.get("reason") == "event_limit":
                    raise  # (an abort at the cap was appended, conditional on the version)
                # decided on a cached table: decide again on the game as stored (read first
                # next time too, unless that read finds the cache was not behind)
                self.loader.moved_on(game_id)
                continue
            if isinstance(outcome, Appended):
                return outcome
            if isinstance(outcome, Duplicate):
                return self._replayed(game_id, outcome.record, body_digest)
            if not table.checked:
                self.loader.moved_on(game_id)
            if expected_version is not None:
                raise VersionConflict(outcome.current)
        raise VersionConflict(self.store.version(game_id))

    def _replayed(self, game_id: str, record: str, body_digest: str) -> Appended:
        """The stored outcome of an Idempotency-Key's command, as it was answered: the game as
        the command left it (what its events showed then, not what the game's end has revealed
        since), for the seat it was decided for."""
        digest, first, last = record.rsplit("|", 2)
        if not hmac.compare_digest(digest, body_digest):
            raise IdempotencyKeyReused()
        first_v, last_v = int(first), int(last)
        table = self.loader.load(game_id, last_v)
        envelopes = [s.envelope for s in self.store.read(game_id, first_v - 1, last_v)]
        seat = (envelopes[0].get("cmd") or {}).get("seat") if envelopes else None
        return Appended(table, first_v, envelopes, seat)
