"""The suite's temporary files (servers' logs and data, keys, clusters) go under pytest's base
directory, which pytest prunes to the last three runs, never loose in the system's."""

from __future__ import annotations

import subprocess
import sys
import tempfile
from pathlib import Path


def test_temporary_files_of_the_tests_and_of_the_processes_they_start_go_under_pytests_base(
        tmp_path_factory):
    base = tmp_path_factory.getbasetemp().resolve()
    made = Path(tempfile.mkdtemp(prefix="cartouche-test-")).resolve()
    assert made.is_relative_to(base)
    child = subprocess.run([sys.executable, "-c",
                            "import tempfile; print(tempfile.mkdtemp(prefix='cartouche-child-'))"],
                           capture_output=True, text=True, check=True)
    assert Path(child.stdout.strip()).resolve().is_relative_to(base)
