"""``make run``'s console (issue 22: 285 of 393 lines were RQ's per-job chatter, and gunicorn
said ``Listening at:  (pid)``): a devserver playing bot games prints the address it listens
at, one access line per request (request id, method, path, status, duration), its start-up
lines, and nothing per job."""

from __future__ import annotations

import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest
import requests

from service import embedded

from .procs import ROOT, wait_until
from .test_supervision import ready

pytestmark = pytest.mark.redis

ACCESS = re.compile(r"^\d{4}-\d\d-\d\dT[\d:.]+Z INFO cartouche\.access \[[0-9a-f]{24}\] "
                    r"(GET|POST) /\S* \d{3} [\d.]+ms$")


def test_the_console_is_access_lines_without_per_job_lines_and_names_its_address():
    home = Path(tempfile.mkdtemp(prefix="cartouche-console-"))
    port = embedded.free_port()
    env = dict(os.environ, CARTOUCHE_HOME=str(home), PORT=str(port), WEB_CONCURRENCY="1")
    for name in ("REDIS_URL", "QUEUE_URL", "CARTOUCHE_LOG_FORMAT", "CARTOUCHE_RQ_LOG_LEVEL",
                 "PROMETHEUS_MULTIPROC_DIR", "CARTOUCHE_ACCESS_LOG"):
        env.pop(name, None)
    log_path = home / "console.log"
    with open(log_path, "w") as log:
        proc = subprocess.Popen([sys.executable, "-m", "service.devserver"], cwd=ROOT, env=env,
                                stdout=log, stderr=subprocess.STDOUT,
                                preexec_fn=embedded._die_with_parent)
    url = f"http://127.0.0.1:{port}"
    try:
        wait_until(lambda: ready(url), 60, "make run to serve /readyz", 0.2)
        games = []
        for _ in range(2):
            r = requests.post(f"{url}/v1/games", json={"type": "diamant", "players": [
                {"name": f"bot{i}", "bot": {"level": "random"}} for i in range(3)]}, timeout=5)
            assert r.status_code == 201
            games.append(r.json()["id"])

        def jobs_run() -> int:
            found = re.search(r'cartouche_jobs_total\{function="workers.jobs.bot_turn",'
                              r'outcome="ok"\} (\d+)', requests.get(f"{url}/metrics",
                                                                   timeout=5).text)
            return int(found.group(1)) if found else 0

        wait_until(lambda: jobs_run() >= 12, 60, "a dozen bot jobs", 0.5)
        assert all(requests.get(f"{url}/v1/games/{g}", timeout=5).status_code == 200
                   for g in games)
    finally:
        proc.send_signal(signal.SIGINT)
        proc.wait(30)
    lines = log_path.read_text().splitlines()
    shutil.rmtree(home, ignore_errors=True)
    assert f"Listening at: {url} (" in "\n".join(lines)
    assert not [line for line in lines if "Job OK" in line or "bot_turn(" in line
                or " rq." in line]
    access = [line for line in lines if ACCESS.match(line)]
    others = [line for line in lines if not ACCESS.match(line)]
    assert len(access) >= 6 and len(others) <= 14, "\n".join(others)
    assert lines[-1] == "cartouche: stopped"
