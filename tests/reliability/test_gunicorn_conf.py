"""service/gunicorn_conf.py on a real gunicorn (the session's live server, 2 workers): each
worker listens on its own SO_REUSEPORT socket, so a burst of keep-alive connections is spread
over the workers instead of piling onto whichever woke first; and a second server on a taken
port still fails to start instead of silently sharing it."""

from __future__ import annotations

import collections
import os
import socket
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

pytestmark = pytest.mark.skipif(not hasattr(socket, "SO_REUSEPORT"), reason="no SO_REUSEPORT")


def _port(url: str) -> int:
    return int(url.rsplit(":", 1)[1])


def _sockets(port: int) -> list[tuple[str, str, int]]:
    """(state, inode, remote port) of the IPv4 TCP sockets whose local port is ``port``."""
    out = []
    for line in Path("/proc/net/tcp").read_text().splitlines()[1:]:
        f = line.split()
        local, remote, state, inode = f[1], f[2], f[3], f[9]
        if int(local.split(":")[1], 16) == port:
            out.append((state, inode, int(remote.split(":")[1], 16)))
    return out


def _owners(inodes: set[str]) -> dict[str, int]:
    """inode -> pid of the process holding it."""
    found = {}
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            for fd in os.listdir(f"/proc/{pid}/fd"):
                link = os.readlink(f"/proc/{pid}/fd/{fd}")
                if link.startswith("socket:[") and link[8:-1] in inodes:
                    found[link[8:-1]] = int(pid)
        except OSError:
            continue
    return found


def test_each_worker_listens_on_its_own_socket_and_a_burst_is_spread(live_url):
    port = _port(live_url)
    listening = [inode for state, inode, _ in _sockets(port) if state == "0A"]
    owners = _owners(set(listening))
    assert len(listening) == 2 and len(set(owners.values())) == 2  # one per worker

    conns = []
    try:
        for _ in range(32):  # like a client pool opening its keep-alive connections at once
            conns.append(socket.create_connection(("127.0.0.1", port)))
        for c in conns:
            c.sendall(b"GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n")
        for c in conns:
            assert c.recv(65536).startswith(b"HTTP/1.1 200")
        mine = {c.getsockname()[1] for c in conns}
        server_side = {inode for state, inode, remote in _sockets(port)
                       if state == "01" and remote in mine}
        per_worker = collections.Counter(_owners(server_side).values())
    finally:
        for c in conns:
            c.close()
    assert sum(per_worker.values()) == 32 and len(per_worker) == 2, per_worker
    # hashed over two sockets: fewer than 6 of 32 on one worker has odds of about 1 in 10^4
    assert min(per_worker.values()) >= 6, per_worker


def test_a_second_server_on_a_taken_port_fails_to_start(live_url):
    res = subprocess.run(
        [str(Path(sys.executable).parent / "gunicorn"), "--config",
         "python:service.gunicorn_conf", "--bind", f"127.0.0.1:{_port(live_url)}",
         "service.app:wsgi()"],
        cwd=ROOT, env=dict(os.environ, REDIS_URL="redis://127.0.0.1:1/0"),
        capture_output=True, text=True, timeout=60)
    assert res.returncode != 0
    assert "Address already in use" in res.stderr
