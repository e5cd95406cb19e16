"""gunicorn settings (overridable with GUNICORN_CMD_ARGS or the WEB_* variables).

The worker class is gevent: Server-Sent Events subscribers each hold a request open while they
block in XREAD, and under gevent those are cheap greenlets (``worker_connections`` per process)
instead of threads, so hundreds of subscribers never starve the action endpoints. The rules code
is short CPU work per request; long CPU work (bots) runs in RQ workers, not here.
``WEB_WORKER_CLASS=gthread`` switches back to threads (``WEB_THREADS`` each).
"""

import os

workers = int(os.environ.get("WEB_CONCURRENCY", "2"))
worker_class = os.environ.get("WEB_WORKER_CLASS", "gevent")
worker_connections = int(os.environ.get("WEB_WORKER_CONNECTIONS", "1000"))
threads = int(os.environ.get("WEB_THREADS", "8"))
timeout = 30
graceful_timeout = 10
keepalive = 5
accesslog = "-" if os.environ.get("WEB_ACCESS_LOG") else None
limit_request_line = 8190  # the largest bounded value gunicorn allows
control_socket_disable = True  # gunicorn 27: no shared ~/.gunicorn socket; checkouts side by side

# Garbage collection in the workers. The per-process game cache holds up to CARTOUCHE_CACHE_SIZE
# game states (hundreds of thousands of small dicts and lists); each command replaces one, so
# states keep being promoted to the oldest generation and CPython's default thresholds
# (700, 10, 10) run full collections over all of them every few seconds: 100-290 ms pauses of
# a whole worker, measured with gc callbacks during the P5 benchmark. Once the app is loaded,
# everything imported so far is frozen (never scanned again), and collections run less often:
# ``WEB_GC_THRESHOLDS`` (default "7000,20,200"; "default" keeps CPython's). Game states are
# plain acyclic JSON data, freed by reference counting, so rarer full collections only delay
# freeing reference cycles (exceptions, framework objects), not the states.
gc_thresholds = os.environ.get("WEB_GC_THRESHOLDS", "7000,20,200")


def post_worker_init(worker):
    import gc

    if gc_thresholds.strip().lower() == "default":
        return
    gc.collect()
    gc.freeze()
    gc.set_threshold(*(int(x) for x in gc_thresholds.split(",")))
