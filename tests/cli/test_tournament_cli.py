"""``cartouche tournament create|show|watch`` against a real gunicorn and a worker: a round
robin of two bots created, watched to its end, shown with its standings."""

from __future__ import annotations

import re

from .terminal import run


def test_create_watch_and_show_a_tournament_of_bots(live_url, worker):
    out = run("--url", live_url, "--no-color", "tournament", "create", "Cup",
              "--type", "tides-of-time", "--format", "round_robin", "--seats", "2",
              "--participant", "bot-random", "--participant", "bot-heuristic")
    assert out.returncode == 0, out.stderr
    tid = re.search(r"tournament (t-[0-9a-f]{16}): 1 round\b", out.stdout)[1]
    watched = run("--url", live_url, "--no-color", "tournament", "watch", tid, timeout=60)
    assert watched.returncode == 0, watched.stderr
    assert "ranks" in watched.stdout and "Standings" in watched.stdout
    shown = run("--url", live_url, "--no-color", "tournament", "show", tid)
    assert shown.returncode == 0 and "finished" in shown.stdout
    assert "Random bot" in shown.stdout and "Heuristic bot" in shown.stdout
