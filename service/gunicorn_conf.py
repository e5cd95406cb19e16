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
