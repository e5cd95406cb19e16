"""The directory prometheus-client's multiprocess mode shares between processes.

Under gunicorn each worker is a process with its own counters; prometheus-client's multiprocess
mode keeps every process's values in memory-mapped files in ``PROMETHEUS_MULTIPROC_DIR``, and
``/metrics`` (whichever worker answers) sums them. The variable must be set before
``prometheus_client`` is imported, so this module imports nothing of it: the gunicorn config
and ``make run`` call :func:`prepare` first thing.

The directory is ``PROMETHEUS_MULTIPROC_DIR`` when set, else ``CARTOUCHE_METRICS_DIR``, else a
new temporary directory. :func:`prepare` removes the files of processes that are gone (a
previous run's), so counters start from zero at each start and nothing accumulates; the files
of live processes (a worker already writing into a directory ``make run`` shares) are kept.
"""

from __future__ import annotations

import os
import re
import tempfile
from typing import MutableMapping

from .config import env_seconds

VARIABLE = "PROMETHEUS_MULTIPROC_DIR"
_FILE = re.compile(r"^[a-z_]+_(\d+)\.db$")


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def clean(path: str) -> int:
    """Remove the metric files of processes that no longer run; returns how many."""
    removed = 0
    for name in os.listdir(path):
        match = _FILE.match(name)
        if match and not _alive(int(match.group(1))):
            try:
                os.remove(os.path.join(path, name))
                removed += 1
            except FileNotFoundError:
                pass
    return removed


def prepare(env: MutableMapping[str, str] | None = None) -> str:
    """Choose, create and clean the directory, and set ``PROMETHEUS_MULTIPROC_DIR`` in ``env``
    (``os.environ`` by default) so that this process and its children share it."""
    env = os.environ if env is None else env
    path = env.get(VARIABLE) or env.get("CARTOUCHE_METRICS_DIR") or \
        tempfile.mkdtemp(prefix="cartouche-metrics-")
    os.makedirs(path, exist_ok=True)
    clean(path)
    env[VARIABLE] = path
    return path


#: The longest ``WEB_METRICS_WRITE_SECONDS``: a scrape every 15 s still sees each worker's counts
#: of a few seconds before.
MAX_WRITE_SECONDS = 10.0


def write_seconds(env: MutableMapping[str, str] | None = None) -> float:
    """``WEB_METRICS_WRITE_SECONDS``: how often a gunicorn worker writes its request and command
    counts to its file here (``service.metrics.DeferredWrites``), from 0 (at every change) to
    :data:`MAX_WRITE_SECONDS`; 1 when unset."""
    return env_seconds(os.environ if env is None else env, "WEB_METRICS_WRITE_SECONDS", 1.0,
                       most=MAX_WRITE_SECONDS, zero=True)
