"""gunicorn settings (overridable with GUNICORN_CMD_ARGS or the WEB_* variables)."""

import os

workers = int(os.environ.get("WEB_CONCURRENCY", "2"))
worker_class = "gthread"
threads = int(os.environ.get("WEB_THREADS", "8"))
timeout = 30
graceful_timeout = 10
keepalive = 5
accesslog = "-" if os.environ.get("WEB_ACCESS_LOG") else None
limit_request_line = 8190  # the largest bounded value gunicorn allows
control_socket_disable = True  # gunicorn 27: no shared ~/.gunicorn socket, so checkouts can run side by side
