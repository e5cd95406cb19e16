"""Scheduling what happens without a request, on RQ.

After every change of a game the service tells the scheduler; it enqueues a bot job for each
awaited seat played by a bot (or by the clock's automatic move) and a clock job at each awaited
seat's deadline. A table created waiting for players gets one job at its lobby deadline, which
aborts it if nobody completed it; a seek gets a job at its bots' time (when it asked for bots)
and one at its expiry, each doing nothing unless the seek still waits. Every job carries the
version it was scheduled for (or re-checks the table or seek) and does nothing when the game has
moved on, so stale, duplicated or late jobs are harmless. A game that ends gets an entry in the
archive due set (``cartouche:archive:due`` on the queue's server, scored by when it is due:
``archive_after_s`` after it ended) and no job: one ``ZADD`` is all a game's end pays for its
archive. Every worker's sweep claims the entries that are due (:meth:`RqScheduler.claim_archives`:
``sweep_max`` at most, each leased for ``ARCHIVE_LEASE_MS`` so that no other sweep takes it
meanwhile), archives them (``EventStore.archive``: idempotent) and removes them; a claim whose
worker died comes due again when its lease runs out (a worker started with ``--burst`` does
not sweep, so it archives nothing). RQ's scheduler has a resolution of about a second: it is
the backstop; the authority on time is the deadline check every command makes on arrival
(``GameService.act``).
"""

from __future__ import annotations

import functools
import logging
import time
from datetime import datetime, timezone
from typing import Callable

import redis
from rq import Queue, Retry
from rq.job import Job, JobStatus

from . import clock as clock_mod
from .store import due

log = logging.getLogger("cartouche.jobs")

BOT_QUEUE = "cartouche-high"
CLOCK_QUEUE = "cartouche-high"
DEFAULT_QUEUE = "cartouche-default"
#: Webhook deliveries (``service.webhooks``), last: a worker takes one only when no bot, clock,
#: expiry, archive or rating job waits, so a receiver's slowness never delays those.
WEBHOOK_QUEUE = "cartouche-webhooks"
#: The queues every worker listens to, in the order it takes their jobs.
QUEUES = (BOT_QUEUE, DEFAULT_QUEUE, WEBHOOK_QUEUE)
#: Games over waiting for their archive, scored by when it is due (ms); removed once archived.
ARCHIVE_DUE = "cartouche:archive:due"
#: A sweep's claim on a due archive: no other sweep takes the game for this long.
ARCHIVE_LEASE_MS = 60_000

#: A job in one of these states waits in a queue or in the schedule: the sweep's backstop does not
#: enqueue it again (:meth:`RqScheduler.resume`). A started one it does, in case its worker died:
#: the copy waits behind it and does nothing once the original has played.
#: A clock job due sooner than this is not cancelled when its game moves on (see
#: ``RqScheduler._cancel_clocks``).
CANCEL_MARGIN_MS = 10_000
_WAITING = frozenset(s.value for s in (JobStatus.QUEUED, JobStatus.SCHEDULED, JobStatus.DEFERRED))


def _wall_clock_ms() -> int:
    return int(time.time() * 1000)


class RqScheduler:
    """``archive_after_s``: seconds after a game ends that it is archived (None: never).
    ``sweep_max``: the most games one sweep archives (:meth:`claim_archives`)."""

    def __init__(self, connection: redis.Redis, *, archive_after_s: int | None = None,
                 sweep_max: int = 500, now_ms: Callable[[], int] | None = None) -> None:
        self.r = connection
        self.queue = Queue(BOT_QUEUE, connection=connection)
        self.later = Queue(DEFAULT_QUEUE, connection=connection)
        self.archive_after_s = archive_after_s
        self.sweep_max = sweep_max
        self.now_ms = now_ms or _wall_clock_ms

    def changed(self, table, previous=None) -> None:
        """``table`` was written (``previous``: the game as the command found it, if any):
        the jobs it needs now, and none left of ``previous``'s clock."""
        if previous is not None and previous.clock:
            self._cancel_clocks(previous)
        if table.over:
            if table.status == "finished" and table.created["data"].get("rated") and \
                    not table.created["data"].get("tournament"):  # rated when recorded
                self.enqueue_rating(table.id)
            if table.created["data"].get("tournament"):
                self._enqueue_tournament(table.created["data"]["tournament"], table.id)
            if self.archive_after_s is not None:
                self._mark_archive_due(table.id)
            return
        self._turn_jobs(table)

    def resume(self, tables) -> None:
        """The sweep's backstop for games not over: the jobs :meth:`changed` schedules for
        them, each unless it already waits in a queue or in the schedule (:meth:`_waiting`).
        A game waiting for a busy worker is thus not queued again at every sweep of every
        worker: however long the backlog, a turn has one job waiting, two while it runs."""
        todo: dict[str, Callable[..., object]] = {}
        for table in tables:
            if not table.over:
                todo.update(self._jobs_of(table))
        try:
            for job_id in self._waiting(list(todo)):
                del todo[job_id]
        except redis.RedisError:
            log.exception("could not read the states of %d jobs", len(todo))
            return
        for job_id, enqueue in todo.items():
            try:
                enqueue(job_id=job_id)
            except redis.RedisError:
                log.exception("could not schedule job %s", job_id)

    def _waiting(self, job_ids: list[str]) -> list[str]:
        """The jobs of :attr:`queue` among ``job_ids`` that wait where a worker will find
        them: queued and in the queue (or a worker's intermediate list), scheduled and in the
        schedule, or deferred. A job's status alone is not enough: a store that lost its
        last writes (``kill -9``), or a worker killed as it took the job, can leave a job
        "queued" in no list, which no worker would ever run. Two round trips: the states
        (the field ``Job.set_status`` writes), then where the queued and scheduled ones are."""
        if not job_ids:
            return []
        pipe = self.r.pipeline(transaction=False)
        for job_id in job_ids:
            pipe.hget(Job.key_for(job_id), "status")
        states = [(job_id, s.decode()) for job_id, s in zip(job_ids, pipe.execute())
                  if s is not None and s.decode() in _WAITING]
        pipe = self.r.pipeline(transaction=False)
        for job_id, status in states:
            if status == JobStatus.QUEUED.value:
                pipe.lpos(self.queue.key, job_id)
                pipe.lpos(self.queue.intermediate_queue_key, job_id)
            elif status == JobStatus.SCHEDULED.value:
                pipe.zscore(self.queue.scheduled_job_registry.key, job_id)
        found = iter(pipe.execute() if len(pipe) else [])
        waiting = []
        for job_id, status in states:
            if status == JobStatus.QUEUED.value:
                listed = [next(found), next(found)]
            elif status == JobStatus.SCHEDULED.value:
                listed = [next(found)]
            else:
                listed = [True]
            if any(x is not None for x in listed):
                waiting.append(job_id)
        return waiting

    def _turn_jobs(self, table) -> None:
        """A bot job for each awaited seat a bot plays, a clock job at each awaited seat's
        deadline."""
        try:
            for job_id, enqueue in self._jobs_of(table).items():
                enqueue(job_id=job_id)
        except redis.RedisError:
            # The command is already stored; a lost job is caught up by the next command's
            # deadline check or by `workers.jobs.sweep` (every few seconds in every worker).
            # Never fail the request.
            log.exception("could not schedule jobs for game %s", table.id)

    def _cancel_clocks(self, previous) -> None:
        """Remove the clock jobs scheduled at ``previous``'s deadlines: they would find the
        game moved on and do nothing, but wait in RQ's schedule (a job hash each) until then,
        up to a clock's longest deadline. One due within :data:`CANCEL_MARGIN_MS` is left
        alone: RQ's scheduler may be handing it to a worker, which may be running it."""
        now = self.now_ms()
        ids = [job_id for job_id, at in self._clock_jobs(previous).items()
               if at > now + CANCEL_MARGIN_MS]
        if not ids:
            return
        try:
            pipe = self.r.pipeline(transaction=False)
            pipe.zrem(self.queue.scheduled_job_registry.key, *ids)
            pipe.delete(*(Job.key_for(job_id) for job_id in ids))
            pipe.execute()
        except redis.RedisError:  # left to run and find nothing to do, as before
            log.exception("could not cancel the clock jobs of game %s", previous.id)

    @staticmethod
    def _clock_jobs(table) -> dict[str, int]:
        """The clock job of each awaited seat of ``table`` with a deadline: its id, and the
        deadline (epoch ms) it runs at."""
        jobs = {}
        for seat in table.awaiting():
            at = clock_mod.deadline(table.clock, table.shell.clock, seat)
            if at is not None:
                jobs[f"clock-{table.id}-{table.version}-{seat}"] = at
        return jobs

    def _jobs_of(self, table) -> dict[str, Callable[..., object]]:
        """The jobs a game not over needs now, by job id: each one's enqueue, given its id."""
        jobs: dict[str, Callable[..., object]] = {}
        for seat in table.awaiting():
            if not table.shell.controllers[seat].human:
                jobs[f"bot-{table.id}-{table.version}-{seat}"] = functools.partial(
                    self._enqueue_bot, table.id, seat, table.version)
        if table.clock:
            for job_id, at in self._clock_jobs(table).items():
                jobs[job_id] = functools.partial(_enqueue_at, self.queue, at,
                                                 "workers.jobs.clock_due", table.id,
                                                 table.version, at)
        return jobs

    def _enqueue_bot(self, game_id: str, seat: int, version: int, *, job_id: str) -> None:
        self.queue.enqueue("workers.jobs.bot_turn", game_id, seat, version, job_id=job_id,
                           result_ttl=60, failure_ttl=24 * 3600, job_timeout=120,
                           retry=Retry(max=3, interval=[1, 2, 4]))

    def seek_opened(self, seek_id: str, expires_ms: int, fill_ms: int | None) -> None:
        """A seek just opened: its bots at ``fill_ms`` (if it asked for them) and its expiry
        at ``expires_ms``, each done only if the seek still waits then. A lost job is made up
        for by the sweep."""
        try:
            if fill_ms is not None:
                _enqueue_at(self.queue, fill_ms, "workers.jobs.seek_fill", seek_id, fill_ms,
                            job_id=f"seek-fill-{seek_id}")
            _enqueue_at(self.later, expires_ms, "workers.jobs.seek_expiry", seek_id,
                        expires_ms, job_id=f"seek-expiry-{seek_id}")
        except redis.RedisError:
            log.exception("could not schedule the jobs of seek %s", seek_id)

    def enqueue_rating(self, game_id: str) -> None:
        """The rating job of a finished rated game (idempotent: ``Ratings.rate``): at its end,
        or when its tournament records it (``Tournaments.advance``)."""
        try:
            self.queue.enqueue("workers.jobs.rate_game", game_id, job_id=f"rate-{game_id}",
                               result_ttl=60, failure_ttl=24 * 3600, job_timeout=60,
                               retry=Retry(max=5, interval=[1, 2, 4, 8, 16]))
        except redis.RedisError:
            log.exception("could not schedule the rating of game %s", game_id)

    def _enqueue_tournament(self, tid: str, game_id: str) -> None:
        """A game of a tournament is over: the job that records it and pairs the next round
        once the round is over (idempotent: ``Tournaments.advance``; the sweep makes up for
        a lost one)."""
        try:
            self.queue.enqueue("workers.jobs.tournament_advance", tid,
                               job_id=f"tournament-{tid}-{game_id}", result_ttl=60,
                               failure_ttl=24 * 3600, job_timeout=120,
                               retry=Retry(max=5, interval=[1, 2, 4, 8, 16]))
        except redis.RedisError:
            log.exception("could not schedule tournament %s after game %s", tid, game_id)

    def _mark_archive_due(self, game_id: str) -> None:
        """A game that just ended: its entry in the due set, ``archive_after_s`` from now (the
        sweep archives it then)."""
        try:
            self.r.zadd(ARCHIVE_DUE, {game_id: self.now_ms() + self.archive_after_s * 1000},
                        nx=True)
        except redis.RedisError:
            log.exception("could not schedule the archive of game %s", game_id)

    def claim_archives(self) -> list[str]:
        """The games whose archive is due, oldest first, ``sweep_max`` at most, each claimed
        for ``ARCHIVE_LEASE_MS`` (it comes due again then unless :meth:`archived` removed it)."""
        return due.claim(self.r, ARCHIVE_DUE, self.now_ms(), self.sweep_max, ARCHIVE_LEASE_MS)

    def archived(self, game_id: str) -> None:
        """The game's archive is done (or there is nothing to archive): out of the due set."""
        self.r.zrem(ARCHIVE_DUE, game_id)

    def expires(self, table, at_ms: int) -> None:
        """A table just created waiting for players: abort it at ``at_ms`` unless it has
        started (or ended) by then. A lost job is made up for by the sweep."""
        try:
            _enqueue_at(self.later, at_ms, "workers.jobs.lobby_due", table.id, at_ms,
                        job_id=f"lobby-{table.id}")
        except redis.RedisError:
            log.exception("could not schedule the expiry of table %s", table.id)


def _enqueue_at(queue: Queue, at_ms: int, func: str, *args, job_id: str) -> None:
    """``func(*args)`` at ``at_ms`` (RQ's scheduler keeps whole seconds: the job waits out
    the rest itself)."""
    queue.enqueue_at(datetime.fromtimestamp(at_ms / 1000, timezone.utc), func, *args,
                     job_id=job_id, result_ttl=60, failure_ttl=24 * 3600)
