"""``/metrics`` in multiprocess mode reads every process's file, including a directory where a
process has created its file but not sized it yet (or was killed in between)."""

from __future__ import annotations

import os
import subprocess
import sys

from service import metrics

#: A process counting one job, as an RQ worker does, into the shared directory.
COUNT_A_JOB = "from service import metrics; metrics.JOBS.labels('workers.jobs.bot_turn', 'ok').inc()"
LINE = 'cartouche_jobs_total{function="workers.jobs.bot_turn",outcome="ok"}'


def _count_jobs(directory, times: int) -> None:
    env = {**os.environ, "PROMETHEUS_MULTIPROC_DIR": str(directory), "PYTHONPATH": os.getcwd()}
    for _ in range(times):
        subprocess.run([sys.executable, "-c", COUNT_A_JOB], env=env, check=True)


def test_a_file_created_but_not_yet_sized_is_read_as_holding_nothing(tmp_path, monkeypatch):
    _count_jobs(tmp_path, 2)
    (tmp_path / "counter_4194000.db").touch()  # a process between creating and sizing its file
    (tmp_path / "gauge_livesum_4194000.db").touch()
    monkeypatch.setenv("PROMETHEUS_MULTIPROC_DIR", str(tmp_path))
    text = metrics.exposition(None).decode()
    assert f"{LINE} 2.0" in text.splitlines()


def test_a_file_removed_between_the_listing_and_the_read_is_listed_again(tmp_path, monkeypatch):
    _count_jobs(tmp_path, 3)
    gone = tmp_path / "gauge_livesum_4194001.db"
    gone.write_bytes((tmp_path / next(p.name for p in tmp_path.iterdir())).read_bytes())
    listed = metrics._sized_files

    def listing_then_removal(path):
        files = listed(path)
        if gone.exists():
            gone.unlink()  # a dead process's live gauges, removed by mark_process_dead
        return files

    monkeypatch.setattr(metrics, "_sized_files", listing_then_removal)
    monkeypatch.setenv("PROMETHEUS_MULTIPROC_DIR", str(tmp_path))
    assert f"{LINE} 3.0" in metrics.exposition(None).decode().splitlines()
