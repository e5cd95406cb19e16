"""gunicorn settings (overridable with GUNICORN_CMD_ARGS or the WEB_* variables).

The worker class is gevent's (``service.webserver.Worker``: gunicorn's gevent worker serving
requests with gevent's HTTP server, read with gunicorn's deadline and strictness): Server-Sent
Events subscribers each hold a request open while they block in XREAD, and under gevent those
are cheap greenlets (``worker_connections`` per process) instead of threads, so hundreds of
subscribers never starve the action endpoints. The rules code is short CPU work per request;
long CPU work (bots) runs in RQ workers, not here. ``WEB_WORKER_CLASS=gevent`` is gunicorn's own
gevent worker (its request parser), ``gthread`` threads (``WEB_THREADS`` each).
"""

import logging
import os
import socket

from gunicorn.glogging import Logger

from service import logs, metricsdir, signing
from service.config import (COUNT_MAX, Config, OpsConfig, SettingError, env_count,
                            sse_keepalive_ms)


class CartoucheLogger(Logger):
    """gunicorn's logger, its lines in the service's format (``service/logs.py``,
    ``CARTOUCHE_LOG_FORMAT``, default json): its loggers pass their records to the root
    logger's one handler instead of their own. The access log is the app's
    (``cartouche.access``: request id, route, status, duration); ``WEB_ACCESS_LOG=1`` adds
    gunicorn's own access lines."""

    def setup(self, cfg):
        super().setup(cfg)  # again on every reload (SIGHUP): so is this
        logs.configure()
        for log in (self.error_log, self.access_log):
            for handler in list(log.handlers):
                log.removeHandler(handler)
            log.propagate = True


logger_class = CartoucheLogger

workers = env_count(os.environ, "WEB_CONCURRENCY", 2, least=1, most=1000)
worker_class = os.environ.get("WEB_WORKER_CLASS", "service.webserver.Worker")
worker_connections = env_count(os.environ, "WEB_WORKER_CONNECTIONS", 1000, least=1,
                               most=1_000_000)
threads = env_count(os.environ, "WEB_THREADS", 8, least=1, most=10_000)
timeout = 30
graceful_timeout = 10
keepalive = 5  # also the seconds a client has to send each request line and its headers
accesslog = "-" if os.environ.get("WEB_ACCESS_LOG") else None
limit_request_line = 8190  # gunicorn's parser (WEB_WORKER_CLASS=gevent): its largest bounded value
control_socket_disable = True  # gunicorn 27: no shared ~/.gunicorn socket; checkouts side by side


def read_gc_thresholds(raw: str) -> tuple[int, ...] | None:
    """WEB_GC_THRESHOLDS: one to three integers from 0, separated by commas (what
    ``gc.set_threshold`` takes); None for ``default``."""
    if raw.strip().lower() == "default":
        return None
    try:
        values = tuple(int(x) for x in raw.split(","))
    except ValueError:
        values = ()
    if not 1 <= len(values) <= 3 or not all(0 <= v <= COUNT_MAX for v in values):
        raise SettingError("WEB_GC_THRESHOLDS must be default or one to three integers from 0 "
                           f"to {COUNT_MAX:,} separated by commas: {raw!r}")
    return values


# Garbage collection in the workers. The per-process game cache holds up to CARTOUCHE_CACHE_SIZE
# game states (hundreds of thousands of small dicts and lists); each command replaces one, so
# states keep being promoted to the oldest generation and CPython's default thresholds
# (700, 10, 10) run full collections over all of them every few seconds: 100-290 ms pauses of
# a whole worker, measured with gc callbacks during the P5 benchmark. Once the app is loaded,
# everything imported so far is frozen (never scanned again), and collections run less often:
# ``WEB_GC_THRESHOLDS`` (default "7000,20,200"; "default" keeps CPython's). Game states are
# plain acyclic JSON data, freed by reference counting, so rarer full collections only delay
# freeing reference cycles (exceptions, framework objects), not the states.
gc_thresholds = read_gc_thresholds(os.environ.get("WEB_GC_THRESHOLDS", "7000,20,200"))

# The app's own settings are read again by each worker as it loads the app; read here first,
# in the master, a value out of range stops the start with one line naming the variable
# (gunicorn's "Error: ..."), not with a worker's traceback and "Worker failed to boot".
Config.from_env()
OpsConfig.from_env()
sse_keepalive_ms()
signing.settings(os.environ)

# Each worker writes its request and command counts to its metrics file every
# WEB_METRICS_WRITE_SECONDS (default 1; 0: at every request), not at every request: see
# post_worker_init and worker_exit. Read here so that a bad value stops the start.
metrics_write_seconds = metricsdir.write_seconds()
# Each worker holds its access log lines and writes them together every WEB_LOG_WRITE_SECONDS
# (default 1; 0: each line at once): see service.logs.StderrHandler.hold.
log_write_seconds = logs.write_seconds()
# prometheus-client's multiprocess mode: every worker's metrics in one directory, set before
# any process imports prometheus_client (service/metricsdir.py), once every setting above is
# read (a refused start leaves no directory); child_exit below.
_own_metrics_dir = not (os.environ.get(metricsdir.VARIABLE)
                        or os.environ.get("CARTOUCHE_METRICS_DIR"))
metrics_dir = metricsdir.prepare()

# Each worker listens on its own SO_REUSEPORT socket (gunicorn >= 23 binds them per worker), so
# the kernel spreads new connections evenly over the workers. With one shared socket a worker
# that wakes first takes every connection of a burst: a client pool's keep-alive connections
# then all sit on one worker while the other idles (measured with bench/p1_throughput.py: a
# worker at 0.0 s of CPU in half of the phases, the throughput one worker's). Kept off for unix
# sockets, inherited sockets (systemd, re-exec) and port 0, where it does not apply (see
# on_starting). A worker that stops drops the connections still queued on its socket.
# WEB_REUSE_PORT=0 turns it off.
reuse_port = os.environ.get("WEB_REUSE_PORT", "1") != "0"


class _ListeningAddress(logging.Filter):
    """With ``reuse_port`` each worker binds its own socket and the arbiter has none, so
    gunicorn's "Listening at: %s (%s)" names no address: put the configured ones in."""

    def __init__(self, addresses: str) -> None:
        super().__init__()
        self.addresses = addresses

    def filter(self, record: logging.LogRecord) -> bool:
        if (record.msg.startswith("Listening at:") and isinstance(record.args, tuple)
                and record.args and not record.args[0]):
            record.args = (self.addresses, *record.args[1:])
        return True


def _urls(addresses) -> str:
    return ",".join(f"http://{a[0]}:{a[1]}" if isinstance(a, tuple) else f"unix:{a}"
                    for a in addresses)


def on_starting(server):
    from service.signing import ensure_stored_key

    server.log.error_log.addFilter(_ListeningAddress(_urls(server.cfg.address)))
    _keep_reuse_port_for_tcp(server)
    ensure_stored_key()


def child_exit(server, worker):  # noqa: ARG001 - gunicorn's signature
    """A dead worker's live gauges (event streams open) no longer count."""
    from prometheus_client import multiprocess

    multiprocess.mark_process_dead(worker.pid, metrics_dir)


def worker_exit(server, worker):
    """A worker that stops writes the counts and the log lines it still holds (in its own
    process)."""
    from service import metrics

    metrics.DEFERRED.stop()
    logs.stop_holding()


def on_exit(server):  # noqa: ARG001 - gunicorn's signature
    """A metrics directory made for this run goes with it."""
    if _own_metrics_dir:
        import shutil

        shutil.rmtree(metrics_dir, ignore_errors=True)


def _keep_reuse_port_for_tcp(server):
    """With ``reuse_port``: keep it only for TCP addresses with a port, and fail as a plain bind
    would when the address is already taken (SO_REUSEPORT would otherwise let a second server
    share the port silently)."""
    if not server.cfg.reuse_port:
        return
    addresses = server.cfg.address
    if (not hasattr(socket, "SO_REUSEPORT") or os.environ.get("LISTEN_FDS")
            or os.environ.get("GUNICORN_FD")
            or not all(isinstance(a, tuple) and a[1] for a in addresses)):
        server.cfg.set("reuse_port", False)
        return
    for host, port in addresses:
        family = socket.AF_INET6 if ":" in host else socket.AF_INET
        with socket.socket(family, socket.SOCK_STREAM) as probe:
            probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            try:
                probe.bind((host, port))
            except OSError as exc:
                on_exit(server)  # not starting: nothing to keep
                raise RuntimeError(f"cannot listen on {host}:{port}: {exc.strerror}") from None


def post_worker_init(worker):
    import gc

    from service import metrics

    metrics.DEFERRED.start(metrics_write_seconds)  # under gevent's workers only
    logs.hold_access_lines(log_write_seconds)
    if gc_thresholds is None:
        return
    gc.collect()
    gc.freeze()
    gc.set_threshold(*gc_thresholds)
