"""The API's gunicorn worker (``service.webserver.Worker``) on a real gunicorn with a 1 s
keep-alive: a client that sends no request, or sends its headers too slowly, or idles on a
kept-alive connection, has its connection closed after that second, so it cannot hold one of
the worker's greenlets for ever; a client that keeps sending requests keeps its connection; a
malformed request (a header line or a body framing a proxy could read otherwise included)
gets a 400 and one JSON log line, no traceback; a header block over 64 KiB a 431; a chunked body
and an expected continue are served."""

from __future__ import annotations

import json
import select
import socket
import time

import pytest

from .procs import db, response_head, start_gunicorn

pytestmark = pytest.mark.redis

READY = b"GET /readyz HTTP/1.1\r\nHost: cartouche\r\n\r\n"


@pytest.fixture(scope="module")
def server(redis_server):
    proc, url = start_gunicorn(db(redis_server.url, 0), db(redis_server.url, 1),
                               {"GUNICORN_CMD_ARGS": "--keep-alive 1"}, workers=1)
    yield proc, int(url.rsplit(":", 1)[1])
    proc.stop()


def _connect(port: int) -> socket.socket:
    return socket.create_connection(("127.0.0.1", port), timeout=10)


def _closed_after(sock: socket.socket, since: float) -> float:
    """Seconds from ``since`` until the server closes ``sock`` (it sends nothing before)."""
    assert sock.recv(4096) == b""
    return time.monotonic() - since


def test_the_api_runs_on_cartouches_worker(server):
    proc, _ = server
    assert "Using worker: service.webserver.Worker" in proc.log()


def test_a_connection_that_sends_nothing_is_closed_after_the_keepalive(server):
    _, port = server
    with _connect(port) as sock:
        assert 0.8 <= _closed_after(sock, time.monotonic()) <= 3


def test_a_kept_alive_connection_serves_requests_until_it_idles(server):
    _, port = server
    with _connect(port) as sock:
        for _ in range(4):  # 4 requests 0.6 s apart: 2.4 s on one connection, past the 1 s
            sock.sendall(READY)
            assert response_head(sock).startswith(b"HTTP/1.1 200")
            answered = time.monotonic()
            time.sleep(0.6)
        assert 0.8 <= _closed_after(sock, answered) <= 3


def test_headers_sent_too_slowly_are_cut_off(server):
    _, port = server
    with _connect(port) as sock:
        started = time.monotonic()
        sock.sendall(b"GET /readyz HTTP/1.1\r\n")
        closed = None
        while time.monotonic() - started < 5:  # one more header line every 0.2 s
            readable, _, _ = select.select([sock], [], [], 0.2)
            if readable:
                closed = _closed_after(sock, started)
                break
            try:
                sock.sendall(b"X-Slow: 1\r\n")
            except OSError:  # the server has closed it
                closed = time.monotonic() - started
                break
        assert closed is not None and 0.8 <= closed <= 3


@pytest.mark.parametrize("request_bytes", [
    b"NONSENSE\r\n\r\n",
    READY.replace(b"\r\n\r\n", b"\r\n" + b"".join(b"X-%d: 1\r\n" % i for i in range(101))
                  + b"\r\n"),
    b"POST /v1/games HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\nContent-Length: 40\r\n\r\n{}",
    b"POST /v1/games HTTP/1.1\r\nHost: x\r\nContent-Length: +2\r\n\r\n{}",
    (b"POST /v1/games HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\n"
     b"Transfer-Encoding: chunked\r\n\r\n2\r\n{}\r\n0\r\n\r\n"),
    b"POST /v1/games HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: gzip, chunked\r\n\r\n",
    b"POST /v1/games HTTP/1.1\r\nHost: x\r\nContent-Length : 2\r\n\r\n{}",
    b"POST /v1/games HTTP/1.1\r\nHost: x\r\nTransfer-Encoding:\r\n chunked\r\n\r\n",
    b"GET /readyz HTTP/1.1\r\nHost: x\r\nNo colon here\r\n\r\n",
    b"GET /readyz HTTP/1.1\r\nHost: x\r\nX-Nul: a\x00b\r\n\r\n",
], ids=["bad request line", "101 header fields", "two lengths", "a signed length",
        "a length and chunked", "chunked not alone", "a space before the colon",
        "a folded value", "a line without a colon", "a NUL"])
def test_a_malformed_request_gets_a_400_and_one_log_line(server, request_bytes):
    proc, port = server
    logged = len(_http_lines(proc))
    with _connect(port) as sock:
        sock.sendall(request_bytes)
        assert response_head(sock).startswith(b"HTTP/1.1 400")
        assert sock.recv(4096) == b""  # and the connection is closed
    deadline = time.monotonic() + 2
    while len(_http_lines(proc)) == logged and time.monotonic() < deadline:
        time.sleep(0.05)
    assert [line["level"] for line in _http_lines(proc)[logged:]] == ["INFO"]
    assert "malformed request" in _http_lines(proc)[-1]["message"]
    assert "Traceback" not in proc.log()
    # the worker goes on serving
    with _connect(port) as sock:
        sock.sendall(READY)
        assert response_head(sock).startswith(b"HTTP/1.1 200")


def _http_lines(proc) -> list[dict]:
    """The server's ``cartouche.http`` log lines so far."""
    return [line for line in (json.loads(text) for text in proc.log().splitlines()
                              if text.startswith("{")) if line["logger"] == "cartouche.http"]


def test_a_chunked_body_and_an_expected_continue_are_served(server):
    _, port = server
    body = b'{"type": "diamant", "players": [{"name": "a"}, {"name": "b"}, {"name": "c"}]}'
    chunked = b"".join(b"%x\r\n%s\r\n" % (len(body[i:i + 20]), body[i:i + 20])
                       for i in range(0, len(body), 20)) + b"0\r\n\r\n"
    head = b"POST /v1/games HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
    with _connect(port) as sock:
        sock.sendall(head + b"Transfer-Encoding: chunked\r\n\r\n" + chunked)
        assert response_head(sock).startswith(b"HTTP/1.1 201")
    with _connect(port) as sock:
        sock.sendall(head + b"Expect: 100-continue\r\nContent-Length: %d\r\n\r\n" % len(body))
        assert sock.recv(4096) == b"HTTP/1.1 100 Continue\r\n\r\n"
        sock.sendall(body)
        assert response_head(sock).startswith(b"HTTP/1.1 201")


def test_a_header_block_over_64_kib_gets_a_431_and_one_under_it_is_served(server):
    _, port = server
    line = b"X-Big-%d: " + b"a" * 7000 + b"\r\n"
    for headers, status in ((4, b"200"), (10, b"431")):  # 28 KiB, then 70 KiB
        block = b"".join(line % i for i in range(headers))
        with _connect(port) as sock:
            sock.sendall(READY.replace(b"\r\n\r\n", b"\r\n" + block + b"\r\n"))
            assert response_head(sock).startswith(b"HTTP/1.1 " + status)
