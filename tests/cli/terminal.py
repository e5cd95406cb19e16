"""Driving the terminal client as a user would: a pseudo-terminal, keys typed, output read
(:class:`Terminal`), or one command's output at once (:func:`run`).

The CLI runs as ``python -m service.cli`` (the same entry as the ``cartouche`` script).
"""

from __future__ import annotations

import os
import pty
import re
import select
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
CLI = [sys.executable, "-m", "service.cli"]
ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")
ENV = dict(os.environ, NO_COLOR="1", COLUMNS="160", LINES="50", TERM="xterm",
           PYTHONIOENCODING="utf-8", LANG="C.UTF-8", LC_ALL="C.UTF-8")


#: Runs a command with interrupt (Ctrl-C), quit and hang-up delivered as in a user's terminal.
#: A test process started in the background by a non-interactive shell (``pytest ... &``,
#: ``nohup``) ignores SIGINT, SIGQUIT and SIGHUP, every child inherits that, and Python installs
#: no KeyboardInterrupt handler for an ignored SIGINT: a Ctrl-C test would wait for nothing.
AS_TYPED = [sys.executable, "-c",
            "import os, signal, sys\n"
            "for s in (signal.SIGINT, signal.SIGQUIT, signal.SIGHUP):\n"
            "    signal.signal(s, signal.SIG_DFL)\n"
            "os.execv(sys.argv[1], sys.argv[1:])"]


def signal_state(pid: int) -> str:
    """The process's state and signal masks (``/proc/<pid>/status``), for failure messages."""
    try:
        lines = Path(f"/proc/{pid}/status").read_text().splitlines()
    except OSError:
        return "(gone)"
    return " ".join(line.replace("\t", " ") for line in lines
                    if line.split(":")[0] in ("State", "SigPnd", "ShdPnd", "SigBlk", "SigIgn",
                                              "SigCgt"))


class Terminal:
    """A process on a pseudo-terminal, with pexpect-like ``expect`` and ``send``."""

    def __init__(self, args: list[str], env: dict | None = None) -> None:
        master, slave = pty.openpty()
        self.proc = subprocess.Popen([*AS_TYPED, *args], stdin=slave, stdout=slave,
                                     stderr=slave, cwd=ROOT,
                                     env={**ENV, **(env or {})}, close_fds=True,
                                     start_new_session=True)
        os.close(slave)
        self.fd = master
        self.buffer = ""
        self.seen = ""       # everything read, for failure messages

    def _read(self, timeout: float) -> bool:
        ready, _, _ = select.select([self.fd], [], [], timeout)
        if not ready:
            return False
        try:
            chunk = os.read(self.fd, 65536).decode("utf-8", "replace")
        except OSError:          # EIO: the child closed the terminal
            raise EOFError from None
        if not chunk:
            raise EOFError
        self.buffer = ANSI.sub("", self.buffer + chunk)   # styles (bold) are not text
        self.seen += chunk
        return True

    def expect(self, patterns: list[str], timeout: float = 30.0) -> tuple[int, re.Match]:
        """Wait for the first of ``patterns`` (regexes); consume the output up to its end."""
        found = self.poll(patterns, timeout)
        if found is None:
            raise AssertionError(f"timeout waiting for {patterns}; process "
                                 f"{signal_state(self.proc.pid)}; output:\n"
                                 f"{self.seen[-3000:]}")
        return found

    def poll(self, patterns: list[str], timeout: float) -> tuple[int, re.Match] | None:
        """:meth:`expect`, but None when none of ``patterns`` came within ``timeout``."""
        compiled = [re.compile(p) for p in patterns]
        deadline = time.monotonic() + timeout
        while True:
            hits = [(m.start(), i, m) for i, c in enumerate(compiled)
                    if (m := c.search(self.buffer))]
            if hits:
                _, i, m = min(hits, key=lambda h: (h[0], h[1]))
                self.buffer = self.buffer[m.end():]
                return i, m
            left = deadline - time.monotonic()
            if left <= 0:
                return None
            try:
                self._read(min(left, 0.5))
            except EOFError:
                raise AssertionError(f"EOF waiting for {patterns}; output:\n"
                                     f"{self.seen[-3000:]}") from None

    def send(self, line: str) -> None:
        os.write(self.fd, (line + "\n").encode())

    def wait(self, timeout: float = 30.0) -> int:
        deadline = time.monotonic() + timeout
        while self.proc.poll() is None and time.monotonic() < deadline:
            try:
                self._read(0.2)
            except EOFError:
                break
        try:
            return self.proc.wait(max(0.1, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            raise AssertionError(f"still running after {timeout} s: "
                                 f"{signal_state(self.proc.pid)}; output:\n"
                                 f"{self.seen[-3000:]}") from None

    def close(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait(5)
        os.close(self.fd)


def run(*args: str, timeout: float = 60, env: dict | None = None) -> subprocess.CompletedProcess:
    """One CLI command to its end (``env``: variables added to the environment)."""
    return subprocess.run([*CLI, *args], cwd=ROOT, env={**ENV, **(env or {})},
                          capture_output=True, text=True, timeout=timeout)
