"""Prometheus metrics (``GET /metrics``), with prometheus-client.

Counted as things happen, in the process they happen in:

- ``cartouche_http_requests_total{method, route, status}`` and
  ``cartouche_http_request_duration_seconds{method, route}``: every request, by its URL rule
  (``/v1/games/<gid:game_id>``, never the raw path; ``unmatched`` for a 404 with no route; a
  method outside the standard ones is ``other``), so the label sets stay bounded;
- ``cartouche_commands_total{game_type, outcome}``: seats' commands (``POST .../actions``):
  ``ok`` or the refusal (``illegal_action``, ``not_your_turn``, ``version_conflict``,
  ``deadline_passed``, ``rate_limited``, ``refused``, ``error``);
- ``cartouche_append_conflicts_total{game_type}``: appends refused because the game moved on
  since it was read (every writer: commands, bots, clocks, joins); and
  ``cartouche_command_retries_total{game_type}``: a command decided again after such a conflict;
- ``cartouche_sse_subscribers{kind}`` (``game`` or ``player``): event streams open now;
- ``cartouche_bot_decision_seconds{game_type, level}``: a bot choosing its action (in the RQ
  worker);
- ``cartouche_jobs_total{function, outcome}``: RQ jobs run by the workers (``workers.main``);
- ``cartouche_webhook_attempts_total{outcome}`` (``delivered``, ``retry_scheduled``,
  ``abandoned``) and ``cartouche_webhook_pauses_total``: webhook deliveries (``service.webhooks``).

Read from Redis at scrape time (one pipelined round trip per scrape, nothing per request):
``cartouche_queue_jobs{queue, state}`` (``queued``: waiting in the RQ queue, ``scheduled``: for
later) and ``cartouche_games{status}`` (the game index's sets).

Several processes: under gunicorn, ``PROMETHEUS_MULTIPROC_DIR`` (``service.metricsdir``, set by
the gunicorn config and by ``make run``) holds every process's values and ``/metrics`` sums
them, whichever worker answers. ``make run`` gives its RQ worker the same directory, so the
worker's job and bot metrics are in the API's ``/metrics``; a worker on another machine can
serve its own with ``CARTOUCHE_WORKER_METRICS_PORT``. Without the variable (tests, a single
process) the values live in this process. The files are read by :class:`SizedFilesCollector`,
which skips a file its process has created but not sized yet. A gunicorn worker writes its
request and command counts to its file every ``WEB_METRICS_WRITE_SECONDS`` (1 s), not at every
request (:class:`DeferredWrites`).

The commands, conflicts and bot timings are reported by the application itself, through its
observer hook (``service/application/observer.py``; :data:`OBSERVER` here counts them), so the
application layer has no metrics code, only three explicit calls.
"""

from __future__ import annotations

import glob
import logging
import os
import sys
from bisect import bisect_left
from functools import partial
from typing import Any, Callable, Iterable

from prometheus_client import (CONTENT_TYPE_LATEST, REGISTRY, CollectorRegistry, Counter, Gauge,
                               Histogram, disable_created_metrics, generate_latest)
from prometheus_client.core import GaugeMetricFamily, Metric
from prometheus_client.multiprocess import MultiProcessCollector

from .application.errors import DeadlinePassed, IllegalAction, NotYourTurn, VersionConflict
from .application.observer import Observer
from .engine import CodedError
from .store import keys
from .store.errors import UNAVAILABLE
from .store.events import STATUSES
from .store.quota import QuotaExceeded

log = logging.getLogger("cartouche.metrics")

disable_created_metrics()  # no ``*_created`` series: half the text, nothing a query uses

HTTP_REQUESTS = Counter("cartouche_http_requests", "HTTP requests answered",
                        ["method", "route", "status"])
HTTP_SECONDS = Histogram("cartouche_http_request_duration_seconds",
                         "Time to build a response (an event stream: until it starts)",
                         ["method", "route"],
                         buckets=(.001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10))
COMMANDS = Counter("cartouche_commands", "Seats' commands, by outcome",
                   ["game_type", "outcome"])
APPEND_CONFLICTS = Counter("cartouche_append_conflicts",
                           "Appends refused because the game moved on since it was read",
                           ["game_type"])
COMMAND_RETRIES = Counter("cartouche_command_retries",
                          "Commands decided again after losing a race", ["game_type"])
SSE_SUBSCRIBERS = Gauge("cartouche_sse_subscribers", "Event streams open now", ["kind"],
                        multiprocess_mode="livesum")
#: the kinds of stream (a tournament's is counted as a game's); each is served from the start,
#: at 0, so that a dashboard or an alert finds the series before the first stream opens
STREAM_KINDS = ("game", "player")
for _kind in STREAM_KINDS:
    SSE_SUBSCRIBERS.labels(_kind)
BOT_SECONDS = Histogram("cartouche_bot_decision_seconds", "A bot choosing its action",
                        ["game_type", "level"],
                        buckets=(.001, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30))
JOBS = Counter("cartouche_jobs", "RQ jobs run, by outcome", ["function", "outcome"])
SWEEP_SECONDS = Histogram("cartouche_sweep_duration_seconds", "A worker's sweep",
                          buckets=(.01, .05, .1, .25, .5, 1, 2.5, 5, 10, 30))
SWEPT_GAMES = Counter("cartouche_swept_games", "Active games the workers' sweeps looked at")
WEBHOOK_ATTEMPTS = Counter("cartouche_webhook_attempts", "Webhook delivery attempts, by outcome",
                           ["outcome"])
WEBHOOK_PAUSES = Counter("cartouche_webhook_pauses",
                         "Webhook receivers paused after failing attempts in a row")

METHODS = frozenset({"GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"})
CONTENT_TYPE = CONTENT_TYPE_LATEST


# -- the counts taken on every request and command ----------------------------------------------
#
# prometheus-client's ``Counter.inc`` and ``Histogram.observe`` check at every call what a
# labelled child never changes (that it is observable, the amount's sign, an exemplar), and the
# histogram walks its bounds one at a time: measured with 0.26, 5 us an ``inc`` and 9.6 us an
# ``observe`` in multiprocess mode (what gunicorn runs), about half that in one process. The
# request and command counts change the children's values directly instead -- the very values
# the library's calls change, so what ``/metrics`` serves is the same
# (``tests/test_metrics_fast.py`` compares the two in both modes). A child without the
# attributes this relies on (another prometheus-client) gets the library's own calls.
#
# In multiprocess mode every change of a value is also written to its process's memory-mapped
# file (a lock, a pid check, the packing of two doubles: ~2 us a value, and a request and its
# command change four). A gunicorn worker under gevent keeps those changes in memory instead and
# writes them to the file once every ``WEB_METRICS_WRITE_SECONDS`` (:class:`DeferredWrites`).


def _counts(value: Any) -> bool:
    return callable(getattr(value, "inc", None))


class DeferredWrites:
    """Amounts added to prometheus-client values, held in memory and written to the values (the
    library's own ``inc``) every ``interval`` seconds by a background greenlet, and at once by
    :meth:`flush`: before ``/metrics`` reads the files, and when the worker exits.

    Until :meth:`start`, ``add`` is the value's own ``inc``. It is started only where
    gevent has patched ``threading``: greenlets switch only where they block and ``add`` never
    blocks, so an amount cannot be added to a dict that ``flush`` has already taken (no lock on
    the request's path). A process forked after the start holds nothing and writes at once.
    It holds one amount per labelled value (their label sets are bounded). What a worker killed
    without its exit (SIGKILL, gunicorn's timeout) holds is lost: at most
    ``interval`` seconds of its counts. The interval: ``WEB_METRICS_WRITE_SECONDS``
    (:func:`service.metricsdir.write_seconds`).
    """

    def __init__(self) -> None:
        self.interval: float | None = None
        self._pending: dict[Any, float] = {}
        self._wake: Any = None

    def add(self, value: Any, amount: float) -> None:
        if self.interval is None:
            value.inc(amount)
            return
        pending = self._pending
        pending[value] = pending.get(value, 0.0) + amount

    def flush(self) -> None:
        """Write every amount held to its value now."""
        pending, self._pending = self._pending, {}
        for value, amount in pending.items():
            value.inc(amount)

    def start(self, interval: float) -> bool:
        """Hold amounts and write them every ``interval`` seconds (0: at once, nothing held), if
        gevent has patched ``threading``; answers whether it did."""
        if interval <= 0 or not _gevent_patched():
            return False
        import threading

        self.interval = interval
        self._wake = threading.Event()
        threading.Thread(target=self._write_every_interval, name="metrics-writes",
                         daemon=True).start()
        os.register_at_fork(after_in_child=self._forked)
        return True

    def stop(self) -> None:
        """Write what is held and go back to writing at once."""
        self.interval = None
        if self._wake is not None:
            self._wake.set()
        self.flush()

    def _write_every_interval(self) -> None:
        wake = self._wake
        while self.interval is not None and not wake.wait(self.interval):
            try:
                self.flush()
            except Exception:  # a file that cannot be written loses these counts, not later ones
                log.exception("writing the metric counts failed")

    def _forked(self) -> None:
        self.interval, self._pending, self._wake = None, {}, None


def _gevent_patched() -> bool:
    monkey = sys.modules.get("gevent.monkey")
    return monkey is not None and monkey.is_module_patched("threading")


#: The request and command counts' writes (started by the gunicorn config in each worker).
DEFERRED = DeferredWrites()


def counting(child: Counter) -> Callable[[], None]:
    """``child.inc`` (a Counter with its label values) as a function of nothing: count one."""
    value = getattr(child, "_value", None)
    return partial(DEFERRED.add, value, 1.0) if _counts(value) else child.inc


def observing(child: Histogram) -> Callable[[float], None]:
    """``child.observe`` (a Histogram with its label values)."""
    bounds = getattr(child, "_upper_bounds", None)
    buckets = getattr(child, "_buckets", None)
    total = getattr(child, "_sum", None)
    if not bounds or bounds[-1] != float("inf") or not isinstance(buckets, list) \
            or len(buckets) != len(bounds) or not _counts(total) \
            or not all(_counts(b) for b in buckets):
        return child.observe
    bounds, buckets, add = tuple(bounds), tuple(buckets), DEFERRED.add

    def observe(amount: float) -> None:
        add(total, amount)
        i = bisect_left(bounds, amount)  # the first bound >= amount, as the library counts it
        if i < len(bounds) and amount <= bounds[i]:  # (never NaN: no bucket, like the library)
            add(buckets[i], 1.0)

    return observe


#: (method, route, status) -> (its request count, its latency observation): prometheus-client's
#: ``labels()`` validates and locks at every call; the label sets are bounded, so each pair is
#: looked up once.
_REQUEST_CHILDREN: dict[tuple[str, str, int], tuple[Callable[[], None],
                                                    Callable[[float], None]]] = {}


def observe_request(method: str, route: str, status: int, seconds: float) -> None:
    if method not in METHODS:
        method = "other"
    key = (method, route, status)
    children = _REQUEST_CHILDREN.get(key)
    if children is None:
        children = _REQUEST_CHILDREN.setdefault(key, (
            counting(HTTP_REQUESTS.labels(method, route, str(status))),
            observing(HTTP_SECONDS.labels(method, route))))
    children[0]()
    children[1](seconds)


def stream_opened(kind: str):
    """Count an open event stream of ``kind``; returns the function that uncounts it."""
    gauge = SSE_SUBSCRIBERS.labels(kind)
    gauge.inc()
    return gauge.dec


# -- the application's observer -----------------------------------------------------------------

_REFUSALS = ((IllegalAction, "illegal_action"), (NotYourTurn, "not_your_turn"),
             (VersionConflict, "version_conflict"), (DeadlinePassed, "deadline_passed"),
             (QuotaExceeded, "rate_limited"), (CodedError, "refused"))


def _outcome(exc: BaseException) -> str:
    for cls, name in _REFUSALS:
        if isinstance(exc, cls):
            return name
    return "error"


class MetricsObserver(Observer):
    """Counts what the application reports (``GameService.observe(OBSERVER)``): commands by
    outcome and their retries, append conflicts, bot decision times."""

    def __init__(self) -> None:
        #: (game type, outcome) -> its count (``labels()`` validates and locks at every call;
        #: the label sets are bounded)
        self._commands: dict[tuple[str, str], Callable[[], None]] = {}

    def command(self, game_type: str, exc: BaseException | None, conflicts: int) -> None:
        outcome = "ok" if exc is None else _outcome(exc)
        key = (game_type, outcome)
        counter = self._commands.get(key)
        if counter is None:
            counter = self._commands.setdefault(key, counting(COMMANDS.labels(game_type,
                                                                              outcome)))
        counter()
        # a command refused for a version conflict met its last conflict as its answer
        retries = conflicts - (outcome == "version_conflict" and conflicts > 0)
        if retries:
            COMMAND_RETRIES.labels(game_type).inc(retries)

    def append_conflict(self, game_type: str) -> None:
        APPEND_CONFLICTS.labels(game_type).inc()

    def bot_decided(self, game_type: str, level: str, seconds: float) -> None:
        BOT_SECONDS.labels(game_type, level).observe(seconds)


#: The observer the API and the RQ workers install on their GameService.
OBSERVER = MetricsObserver()


# -- scrape time ---------------------------------------------------------------------------------

class StoreCollector:
    """The gauges read from Redis when scraped: RQ's queues and the game index."""

    def __init__(self, store_client, queue_client) -> None:
        from rq import Queue

        from .jobs import QUEUES

        self.store, self.queue_client = store_client, queue_client
        self.queues = [(name, q.key, q.scheduled_job_registry.key) for name, q in
                       ((name, Queue(name, connection=queue_client)) for name in QUEUES)]

    def collect(self) -> Iterable[GaugeMetricFamily]:
        queues = GaugeMetricFamily("cartouche_queue_jobs", "RQ jobs waiting, by queue: "
                                   "queued (to run now) or scheduled (for later)",
                                   labels=["queue", "state"])
        games = GaugeMetricFamily("cartouche_games", "Games in the index, by status",
                                  labels=["status"])
        try:
            pipe = self.queue_client.pipeline(transaction=False)
            for _, key, scheduled in self.queues:
                pipe.llen(key)
                pipe.zcard(scheduled)
            depths = pipe.execute()
            pipe = self.store.pipeline(transaction=False)
            for status in STATUSES:
                pipe.zcard(keys.index_status(status))
            counts = pipe.execute()
        except UNAVAILABLE:  # the store is down: /readyz says so; the rest is still served
            return [queues, games]
        for i, (name, _, _) in enumerate(self.queues):
            queues.add_metric([name, "queued"], depths[2 * i])
            queues.add_metric([name, "scheduled"], depths[2 * i + 1])
        for status, count in zip(STATUSES, counts):
            games.add_metric([status], count)
        return [queues, games]


class SizedFilesCollector(MultiProcessCollector):
    """prometheus-client's multiprocess collector, reading only the files a process has sized.

    A process creates its values' file empty and sizes it right after, so a scrape can meet a
    0-byte file, and meets it on every scrape when the process was killed in between; the
    library's reader then fails the whole scrape (prometheus/client_python#1199). Such a file
    holds no value yet, so it is left out. A file removed between the listing and the read (a
    dead process's live gauges, ``mark_process_dead``) is a fresh listing away.
    """

    def collect(self) -> Iterable[Metric]:
        for _ in range(_LISTINGS - 1):
            try:
                return self.merge(_sized_files(self._path), accumulate=True)
            except FileNotFoundError:
                pass
        return self.merge(_sized_files(self._path), accumulate=True)


_LISTINGS = 3
_HEADER = 8  # bytes: how much of the file is used, then padding


def _sized_files(path: str) -> list[str]:
    files = []
    for name in glob.glob(os.path.join(path, "*.db")):
        try:
            if os.stat(name).st_size >= _HEADER:
                files.append(name)
        except FileNotFoundError:
            pass
    return files


def multiprocess_registry() -> CollectorRegistry:
    """A registry of every process's values in ``PROMETHEUS_MULTIPROC_DIR``."""
    registry = CollectorRegistry()
    SizedFilesCollector(registry)
    return registry


def exposition(collector: StoreCollector | None) -> bytes:
    """The text ``/metrics`` serves: this process's metrics (every process's in multiprocess
    mode) and ``collector``'s."""
    DEFERRED.flush()  # this process's held counts; other workers' are at most an interval old
    registry = multiprocess_registry() if os.environ.get("PROMETHEUS_MULTIPROC_DIR") else REGISTRY
    text = generate_latest(registry)
    if collector is not None:
        extra = CollectorRegistry(auto_describe=False)
        extra.register(collector)
        text += generate_latest(extra)
    return text
