"""``python -m workers.main``: one RQ worker on the ``cartouche`` queues.

Jobs (clock timeouts, bot turns, webhook deliveries) are added by later issues; the worker is
already part of every deployment so that they need no new process.

Logs: the service's format (``service/logs.py``, ``CARTOUCHE_LOG_FORMAT``). RQ's own logger
(``rq.worker``) is at ``CARTOUCHE_RQ_LOG_LEVEL`` (default ``WARNING``): RQ logs two lines per
job at INFO ("cartouche-high: workers.jobs.bot_turn(...)", "Job OK"), which were most of
``make run``'s console; failures still show.

Metrics: every job counted in ``cartouche_jobs_total{function, outcome}`` (:class:`Worker`), and
the bots' decision times. With ``PROMETHEUS_MULTIPROC_DIR`` set (``make run`` gives the worker
the API's) they are in the API's ``/metrics``; a worker on a machine of its own serves them on
``CARTOUCHE_WORKER_METRICS_PORT`` (all interfaces, path ``/metrics``) when that is set.
"""

from __future__ import annotations

import argparse
import itertools
import logging
import os
import signal
import sys
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

import redis
from rq import Queue, SimpleWorker
from rq.command import send_command

from service import embedded, logs
from service.config import SettingError, env_count, env_seconds
from service.jobs import QUEUES, WEBHOOK_QUEUE

log = logging.getLogger("cartouche.worker")

#: a command RQ's handler ignores (it acts on stop-execution, stop-job, shutdown and
#: kill-horse): what wakes the thread listening to a worker's channel so that it ends
WAKE = "wake"


class Worker(SimpleWorker):
    """RQ's SimpleWorker, counting each job by its function and outcome (``ok``: it returned;
    ``failed``: it raised or timed out) in ``cartouche_jobs_total``, and remembering whether
    it was asked to stop (SIGTERM or SIGINT: :attr:`stop_asked`)."""

    stop_asked = False
    #: set once the worker stops its scheduler (its teardown): the watch leaves it alone then
    scheduler_stopped = False

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        #: held by whatever looks at or starts the scheduler: the watch, RQ's start of its
        #: loop and its maintenance (re-entrant: a signal handler stopping the scheduler may
        #: run in a thread that holds it)
        self.scheduler_lock = threading.RLock()
        self._own_pid = os.getpid()

    def request_stop(self, signum, frame) -> None:
        """RQ's warm shutdown (SIGTERM, SIGINT), except in the scheduler's process before it
        has installed its own handlers: forked from this one, it runs this worker's until
        then. There RQ's would act on the worker's copy and end the process on an error, idle
        or during a job, the scheduler's locks left to expire a minute later. The scheduler
        is asked to stop instead: it does at its first turn, releasing its locks."""
        if os.getpid() != self._own_pid:
            if self.scheduler is not None:
                self.scheduler.request_stop(signum, frame)
            return
        super().request_stop(signum, frame)

    def handle_warm_shutdown_request(self) -> None:
        self.stop_asked = True
        super().handle_warm_shutdown_request()

    def _install_signal_handlers(self) -> None:
        """RQ's SIGTERM and SIGINT handlers, installed as its loop starts; a stop asked
        before them (:data:`_stop`) ends the loop at its first turn, scheduler included."""
        super()._install_signal_handlers()
        if _stop.is_set():
            self.stop_asked = self._stop_requested = True

    def unsubscribe(self) -> None:
        """RQ's, with no thread but the listening one using the subscription's connection.

        RQ unsubscribes on that connection, then stops the thread, whose read may take the
        unsubscription's reply and go on waiting, up to RQ's 60 s. Telling the thread to stop
        first is not enough: woken by any message, it closes the connection, maybe in the
        middle of the unsubscription's write. Here the thread is told to stop, then woken by a
        command RQ ignores (:data:`WAKE`, sent on another connection): it ends and closes its
        connection, which ends the subscription. Should the wake not come (the store gone), the
        wait is at most 1 s."""
        thread = self.pubsub_thread
        if thread is None:
            return
        thread.stop(timeout=0)  # clears its flag; does not wait
        try:
            send_command(self.connection, self.name, WAKE)
        except redis.RedisError:
            pass  # the thread's read fails with the store and it ends at its next turn
        thread.join(timeout=1)
        self.pubsub.close()

    def _start_scheduler(self, *args, **kwargs) -> None:
        """RQ's, under :attr:`scheduler_lock`: the watch sees no scheduler or one whose
        process has started, never one in between, where it would start a second process
        that nothing stops and the ending worker waits for at exit."""
        with self.scheduler_lock:
            super()._start_scheduler(*args, **kwargs)

    def run_maintenance_tasks(self) -> None:
        """RQ's (it starts the scheduler again when its process is gone, as the watch does),
        under :attr:`scheduler_lock`, so that only one of them starts it."""
        with self.scheduler_lock:
            super().run_maintenance_tasks()

    def stop_scheduler(self) -> None:
        """RQ's, after which the watch (:func:`watch_scheduler`) never starts it again: it
        could otherwise start a new scheduler process while the worker ends, and the ended
        process would wait for that child for ever."""
        with self.scheduler_lock:
            self.scheduler_stopped = True
        super().stop_scheduler()

    def perform_job(self, job, queue, execution) -> bool:
        from service import metrics

        ok = super().perform_job(job, queue, execution)
        name = job.func_name if job.func_name.startswith("workers.") else "other"
        metrics.JOBS.labels(name, "ok" if ok else "failed").inc()
        return ok


def serve_metrics(port: int) -> None:
    """This process's metrics (every process's, with a multiprocess directory) on ``port``."""
    from prometheus_client import REGISTRY, start_http_server

    from service import metrics  # the metrics exist before the first scrape

    registry = REGISTRY
    if os.environ.get("PROMETHEUS_MULTIPROC_DIR"):
        registry = metrics.multiprocess_registry()
    start_http_server(port, registry=registry)


def start_sweeper(every_s: float, games: int) -> None:
    """Run ``workers.jobs.sweep_window`` every ``every_s`` seconds in a daemon thread."""

    from workers import jobs

    def loop():
        while True:
            time.sleep(every_s)
            try:
                jobs.sweep_window(every_s, games)
            except redis.RedisError as exc:  # the store down for a while: try again next time
                jobs.log.warning("sweep stopped: the store failed (%s)", type(exc).__name__)
            except Exception:
                jobs.log.exception("sweep failed")

    threading.Thread(target=loop, name="cartouche-sweep", daemon=True).start()


class Current:
    """The worker whose loop runs (:func:`run` replaces it), for the scheduler's watch
    (:func:`watch_scheduler`)."""

    def __init__(self, worker: Worker) -> None:
        self.worker = worker


def watch_scheduler(current: Current, every_s: float) -> None:
    """Start the worker's RQ scheduler again whenever its process is gone (a daemon thread
    checking every ``every_s`` seconds).

    The scheduler runs in a process of its own, which exits on a Redis connection error; RQ
    starts it again only in its maintenance tasks, every ten minutes, so after an outage the
    jobs scheduled for later (clock deadlines) waited that long. This calls what the
    maintenance calls, ``acquire_locks(auto_start=True)``: the scheduler is back as soon as
    Redis is and the dead one's locks have expired (their TTL is the scheduler's interval plus
    60 s). A worker whose scheduler stands by (another one holds the locks) just asks again.
    A worker that stopped its scheduler (it is ending) is left alone."""

    def loop():
        while True:
            time.sleep(every_s)
            worker = current.worker
            with worker.scheduler_lock:
                scheduler = worker.scheduler
                process = scheduler and scheduler._process  # RQ's maintenance reads it too
                if worker.scheduler_stopped or not scheduler or (
                        process is not None and process.is_alive()):
                    continue
                try:
                    scheduler.acquire_locks(auto_start=True)
                except redis.RedisError as exc:  # the store is still down: next time
                    log.warning("scheduler not restarted yet: %s", type(exc).__name__)

    threading.Thread(target=loop, name="cartouche-scheduler-watch", daemon=True).start()


#: the levels CARTOUCHE_RQ_LOG_LEVEL takes
RQ_LOG_LEVELS = ("DEBUG", "INFO", "WARNING", "ERROR", "CRITICAL")


@dataclass(frozen=True)
class Settings:
    """The worker's own settings (README, "Configuration")."""

    sweep_games: int
    sweep_seconds: float
    scheduler_watch_seconds: float
    metrics_port: int | None
    rq_log_level: str


def read_settings(env: Mapping[str, str], sweep_games: int = 2000) -> Settings:
    """The worker's settings from ``env``; :class:`SettingError`, naming the variable and
    what it takes, for a value out of its range."""
    port = env_count(env, "CARTOUCHE_WORKER_METRICS_PORT", 0, least=1, most=65535) or None
    level = (env.get("CARTOUCHE_RQ_LOG_LEVEL") or "WARNING").strip().upper()
    if level not in RQ_LOG_LEVELS:
        raise SettingError(f"CARTOUCHE_RQ_LOG_LEVEL must be one of {', '.join(RQ_LOG_LEVELS)}: "
                           f"{env.get('CARTOUCHE_RQ_LOG_LEVEL')!r}")
    return Settings(
        sweep_games=env_count(env, "CARTOUCHE_SWEEP_GAMES", sweep_games, least=1),
        sweep_seconds=env_seconds(env, "CARTOUCHE_SWEEP_SECONDS", 5.0),
        scheduler_watch_seconds=env_seconds(env, "CARTOUCHE_SCHEDULER_WATCH_SECONDS", 5.0),
        metrics_port=port, rq_log_level=level)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--with-scheduler", action="store_true",
                        help="also run RQ's scheduler (jobs enqueued for later)")
    parser.add_argument("--burst", action="store_true", help="stop when the queues are empty")
    parser.add_argument("--name", default=None, help="worker name (default: random)")
    parser.add_argument("--queues", default=",".join(QUEUES),
                        help="the queues this worker serves, comma separated, first served "
                             f"first (default: all, {','.join(QUEUES)}); e.g. a worker of its "
                             f"own for {WEBHOOK_QUEUE}, so that no delivery ever holds back a "
                             "bot or a clock")
    args = parser.parse_args(argv)
    queues = [q.strip() for q in args.queues.split(",") if q.strip()]
    if not queues or set(queues) - set(QUEUES):
        print(f"worker: --queues takes some of {', '.join(QUEUES)}", file=sys.stderr)
        return 2
    url = os.environ.get("QUEUE_URL") or os.environ.get("REDIS_URL")
    if not url:
        print("worker: REDIS_URL (or QUEUE_URL) is not set", file=sys.stderr)
        return 2
    from workers import jobs

    try:
        settings = read_settings(os.environ, jobs.SWEEP_GAMES)
    except SettingError as exc:
        print(f"worker: {exc}", file=sys.stderr)
        return 2
    logs.configure()
    try:
        service = jobs.service()  # reads the service's settings (Config, the webhooks')
    except SettingError as exc:
        print(f"worker: {exc}", file=sys.stderr)
        return 2
    if settings.metrics_port:
        serve_metrics(settings.metrics_port)
    from service import metrics

    service.observe(metrics.OBSERVER)  # the bots' decision times
    conn = redis.Redis.from_url(url)

    made = itertools.count()

    def make_worker() -> Worker:
        # SimpleWorker runs jobs in this process: bot turns and clock checks take
        # milliseconds, and forking a work horse per job would cost more than the job itself.
        # A worker started after another one ended (run) takes a name of its own: RQ refuses
        # a name whose worker did not record its end.
        k = next(made)
        name = f"{args.name}-{k}" if args.name is not None and k else args.name
        return Worker([Queue(q, connection=conn) for q in queues], connection=conn, name=name)

    _take_stop_signals()  # until RQ's loop has its own handlers
    _children_die_with_the_worker()
    current = Current(make_worker())
    if not args.burst:  # every worker sweeps: a killed worker must not take the backstop along
        start_sweeper(settings.sweep_seconds, settings.sweep_games)
        if args.with_scheduler:
            watch_scheduler(current, settings.scheduler_watch_seconds)
    log.info("worker %s on queues %s%s", current.worker.name, ", ".join(queues),
             " with the scheduler" if args.with_scheduler else "")
    return run(current, make_worker, conn, with_scheduler=args.with_scheduler, burst=args.burst,
               logging_level=settings.rq_log_level)


def _children_die_with_the_worker() -> None:
    """The processes this worker forks (RQ's scheduler, from the main thread or the watch's,
    which live as long as the process) are killed when it dies: after a ``kill -9`` nothing
    would stop its scheduler, which would hold the scheduler's locks, outside whatever
    supervises the worker. One forked as the worker died exits at once."""
    worker = os.getpid()

    def in_child() -> None:
        embedded.killed_with_parent()
        if os.getppid() != worker:
            os._exit(1)

    os.register_at_fork(after_in_child=in_child)


#: the longest wait (seconds) between two tries to start the work loop again
RESTART_MAX_WAIT_S = 30.0


def run(current: Current, make_worker: Callable[[], Worker], conn: redis.Redis,
        **work: Any) -> int:
    """RQ's work loop in ``current.worker``, and a new worker's whenever it ends without being
    asked to: returns once a stop is asked (SIGTERM or SIGINT) or a burst is done.

    RQ's loop survives the store going away while it waits for a job, but not elsewhere: an
    error of Redis in its maintenance (at start and every ten minutes), in the bookkeeping
    after a job or in its teardown ends the loop ("found an unhandled exception, quitting").
    Then the ended worker's scheduler is stopped (if its teardown did not get to it), this
    waits until the store answers (1 s, doubling up to :data:`RESTART_MAX_WAIT_S`), frees
    that scheduler's locks (they would keep a new scheduler out for their TTL, a minute) and
    starts a new worker."""
    wait = 1.0
    while True:
        ended = current.worker
        started = time.monotonic()
        try:
            ended.work(**work)
        except redis.RedisError as exc:  # the teardown could not reach the store
            log.error("worker %s could not register its end: %s", ended.name, exc)
            ended.unsubscribe()  # the end of the teardown the error cut short
        if work.get("burst") or ended.stop_asked:
            return 0
        log.error("worker %s stopped on an error; a new worker starts once the store answers",
                  ended.name)
        _take_stop_signals()  # the ended loop's handlers no longer apply
        if ended.scheduler is not None:
            ended.stop_scheduler()
        if time.monotonic() - started > 2 * RESTART_MAX_WAIT_S:
            wait = 1.0  # it had run well: not the same failure again and again
        if not _wait_for_store(conn, wait):
            return 0
        wait = min(wait * 2, RESTART_MAX_WAIT_S)
        if ended.scheduler is not None:
            try:
                ended.scheduler.release_locks()
            except redis.RedisError:
                pass  # they expire on their own
        fresh = current.worker = make_worker()
        log.info("worker %s starts in place of %s", fresh.name, ended.name)
        if _stop.is_set():  # a signal between the wait and the new loop's own handlers
            return 0


#: set by SIGTERM or SIGINT outside RQ's loops (each loop has RQ's own handlers)
_stop = threading.Event()


def _ask_stop(signum, frame) -> None:
    _stop.set()


def _take_stop_signals() -> None:
    """SIGTERM and SIGINT set :data:`_stop` (outside RQ's loops)."""
    for sig in (signal.SIGTERM, signal.SIGINT):
        signal.signal(sig, _ask_stop)


def _wait_for_store(conn: redis.Redis, first_wait_s: float) -> bool:
    """Wait ``first_wait_s``, then until ``conn`` answers a PING (trying again with doubling
    waits); False when SIGTERM or SIGINT came (:data:`_stop`)."""
    wait = first_wait_s
    while not _stop.wait(wait):
        try:
            conn.ping()
            return True
        except redis.RedisError:
            wait = min(wait * 2, RESTART_MAX_WAIT_S)
    return False


if __name__ == "__main__":
    sys.exit(main())
