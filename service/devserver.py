"""``make run``: the whole service on one machine.

Starts (unless ``REDIS_URL`` is set) an embedded Valkey server with AOF under ``./var/redis``,
then gunicorn serving the API on ``HOST``:``PORT`` and one RQ worker with its scheduler. Every
child dies with this process; Ctrl-C (or SIGTERM) stops them in order.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from . import embedded


def _spawn(args: list[str], env: dict) -> subprocess.Popen:
    return subprocess.Popen(args, env=env, preexec_fn=embedded._die_with_parent)


def main() -> int:
    root = Path(os.environ.get("CARTOUCHE_HOME", Path.cwd()))
    host = os.environ.get("HOST", "127.0.0.1")
    port = os.environ.get("PORT", "8000")
    env = dict(os.environ)
    server = None
    if not env.get("REDIS_URL"):
        server = embedded.start(root / "var" / "redis")
        env["REDIS_URL"] = server.url
        print(f"cartouche: embedded Valkey on {server.url} (AOF in {server.data_dir})",
              flush=True)
    else:
        print("cartouche: using REDIS_URL from the environment", flush=True)
    bin_dir = Path(sys.executable).parent
    gunicorn = _spawn([str(bin_dir / "gunicorn"), "--config", "python:service.gunicorn_conf",
                       "--bind", f"{host}:{port}", "service.app:wsgi()"], env)
    worker = _spawn([sys.executable, "-m", "workers.main", "--with-scheduler"], env)
    children = [worker, gunicorn]
    print(f"cartouche: serving http://{host}:{port}/ (docs at /docs); Ctrl-C stops", flush=True)

    stopping = False

    def stop(signum, frame):  # noqa: ARG001
        nonlocal stopping
        stopping = True

    signal.signal(signal.SIGINT, stop)
    signal.signal(signal.SIGTERM, stop)
    code = 0
    while not stopping:
        for child in children:
            if child.poll() is not None:
                print(f"cartouche: {child.args[0]} exited with {child.returncode}; stopping",
                      file=sys.stderr, flush=True)
                stopping, code = True, 1
        time.sleep(0.2)
    for child in children:
        if child.poll() is None:
            child.send_signal(signal.SIGTERM)
    for child in children:
        try:
            child.wait(15)
        except subprocess.TimeoutExpired:
            child.kill()
    if server is not None:
        server.stop()
    print("cartouche: stopped", flush=True)
    return code


if __name__ == "__main__":
    sys.exit(main())
