"""The API's gunicorn worker (``service.webserver.Worker``) on a real gunicorn with a 1 s
keep-alive and a 1 s body deadline: a client that sends no request, or sends its headers too
slowly, or idles on a kept-alive connection, has its connection closed after that second, so it
cannot hold one of the worker's greenlets for ever; so does one whose body stops coming (a 408),
whether the app reads it or not; a body cut short or badly chunked gets a 400, never a 500; a
client that keeps sending requests keeps its connection; a malformed request (a header line or a
body framing a proxy could read otherwise included) gets a 400 and one JSON log line, no
traceback; a header block over 64 KiB a 431; a chunked body, an expected continue and a body
sent in pieces within the deadline are served."""

from __future__ import annotations

import json
import select
import socket
import time

import pytest

from service import webserver

from .procs import db, response_head, start_gunicorn

pytestmark = pytest.mark.redis

READY = b"GET /readyz HTTP/1.1\r\nHost: cartouche\r\n\r\n"


@pytest.fixture(scope="module")
def server(redis_server):
    proc, url = start_gunicorn(db(redis_server.url, 0), db(redis_server.url, 1),
                               {"GUNICORN_CMD_ARGS": "--keep-alive 1", "WEB_BODY_TIMEOUT": "1"},
                               workers=1)
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
        assert _error(response_head(sock)) == (b"HTTP/1.1 400 Bad Request", "malformed_request")
        assert sock.recv(4096) == b""  # and the connection is closed
    new = _new_http_lines(proc, logged)
    assert [line["level"] for line in new] == ["INFO"]
    assert "malformed request" in new[-1]["message"]
    assert "Traceback" not in proc.log()
    # the worker goes on serving
    with _connect(port) as sock:
        sock.sendall(READY)
        assert response_head(sock).startswith(b"HTTP/1.1 200")


def test_a_malformed_request_line_is_logged_without_its_text(server):
    """The line may carry a token in its query: the log names the kind of fault only."""
    proc, port = server
    logged = len(_http_lines(proc))
    with _connect(port) as sock:
        sock.sendall(b"GET /v1/games?token=s3cr3t-t0k3n HTTP/9.9\r\nHost: x\r\n\r\n")
        assert response_head(sock).startswith(b"HTTP/1.1 400")
    assert len(_new_http_lines(proc, logged)) == 1
    assert "s3cr3t" not in proc.log()


def _http_lines(proc) -> list[dict]:
    """The server's ``cartouche.http`` log lines so far."""
    return [line for line in (json.loads(text) for text in proc.log().splitlines()
                              if text.startswith("{")) if line["logger"] == "cartouche.http"]


def _new_http_lines(proc, logged: int) -> list[dict]:
    """The ``cartouche.http`` lines after the first ``logged``, once there is one (2 s at most:
    the log is written as the server goes)."""
    deadline = time.monotonic() + 2
    while len(_http_lines(proc)) == logged and time.monotonic() < deadline:
        time.sleep(0.05)
    return _http_lines(proc)[logged:]


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
            answer = response_head(sock)
            assert answer.startswith(b"HTTP/1.1 " + status)
    assert _error(answer) == (b"HTTP/1.1 431 Request Header Fields Too Large",
                              "headers_too_large")  # the API's error shape


def test_a_request_line_of_8_kib_gets_a_414_in_the_api_s_error_shape(server):
    _, port = server
    with _connect(port) as sock:
        sock.sendall(b"GET /readyz?" + b"a" * 8192 + b" HTTP/1.1\r\nHost: x\r\n\r\n")
        assert _error(response_head(sock)) == (b"HTTP/1.1 414 URI Too Long",
                                               "request_line_too_long")
        assert sock.recv(4096) == b""  # and the connection is closed


BODY = b'{"type": "diamant", "players": [{"name": "a"}, {"name": "b"}, {"name": "c"}]}'
#: a Flask route, and the action route in front of Flask (``fastpaths.ActionRoute``)
BODY_PATHS = [b"/v1/games", b"/v1/games/0123abcd/actions"]


def _post_head(path: bytes, length: int) -> bytes:
    return (b"POST %s HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
            b"Authorization: Bearer nobody\r\nContent-Length: %d\r\n\r\n" % (path, length))


def _error(response: bytes) -> tuple[bytes, str]:
    head, _, body = response.partition(b"\r\n\r\n")
    return head.split(b"\r\n", 1)[0], json.loads(body)["error"]["code"]


def _one_new_http_line(proc, logged: int, words: str) -> None:
    new = _new_http_lines(proc, logged)
    assert [line["level"] for line in new] == ["INFO"] and words in new[0]["message"]
    assert "Traceback" not in proc.log()


@pytest.mark.parametrize(("path", "length"), [
    (BODY_PATHS[0], len(BODY)), (BODY_PATHS[1], len(BODY)), (BODY_PATHS[0], 100_000)],
    ids=["flask route", "action route", "over 64 KiB: read by the app"])
def test_a_body_that_stops_coming_gets_a_408_and_the_connection_is_closed(server, path, length):
    """A small body is read with its request, within the keep-alive's second; one over 64 KiB
    as the app reads it, within ``WEB_BODY_TIMEOUT`` (here also a second)."""
    proc, port = server
    logged = len(_http_lines(proc))
    with _connect(port) as sock:
        sock.sendall(_post_head(path, length) + BODY[:20])
        sent = time.monotonic()
        response = response_head(sock)
        waited = time.monotonic() - sent
        assert _error(response) == (b"HTTP/1.1 408 Request Timeout", "request_timeout")
        assert sock.recv(4096) == b""
    assert 0.8 <= waited <= 3
    _one_new_http_line(proc, logged, "request body timed out")


@pytest.mark.parametrize("path", BODY_PATHS, ids=["flask route", "action route"])
@pytest.mark.parametrize("request_bytes", [
    None,  # a body cut short: the client stops sending (half-close) before its length
    b"Transfer-Encoding: chunked\r\n\r\nzz\r\n{}\r\n0\r\n\r\n",
], ids=["cut short", "a chunk size that is no number"])
def test_a_body_cut_short_or_badly_chunked_gets_a_400_not_a_500(server, path, request_bytes):
    proc, port = server
    logged = len(_http_lines(proc))
    with _connect(port) as sock:
        if request_bytes is None:
            sock.sendall(_post_head(path, len(BODY)) + BODY[:20])
            sock.shutdown(socket.SHUT_WR)
        else:
            sock.sendall(b"POST %s HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                         % path + request_bytes)
        response = response_head(sock)
        assert _error(response) == (b"HTTP/1.1 400 Bad Request", "malformed_request")
        assert sock.recv(4096) == b""
    _one_new_http_line(proc, logged, "request body ended early or malformed")


def test_a_body_the_app_leaves_unread_and_that_stalls_closes_the_connection(server):
    """The app answers a request to an unknown path without reading its body (over 64 KiB:
    not read with the request); what it left unread is read before the connection's next
    request, within the body's deadline."""
    proc, port = server
    with _connect(port) as sock:
        sock.sendall(_post_head(b"/v1/no-such-thing", 100_000) + BODY[:20])
        assert response_head(sock).startswith(b"HTTP/1.1 404")
        answered = time.monotonic()
        assert 0.5 <= _closed_after(sock, answered) <= 3
    assert "Traceback" not in proc.log()


def test_a_body_sent_in_pieces_within_the_deadline_is_served(server):
    _, port = server
    with _connect(port) as sock:
        sock.sendall(_post_head(b"/v1/games", len(BODY)))
        for i in range(0, len(BODY), 30):  # three pieces 0.15 s apart: 0.3 s of the 1 s
            sock.sendall(BODY[i:i + 30])
            time.sleep(0.15)
        assert response_head(sock).startswith(b"HTTP/1.1 201")
        sock.sendall(READY)  # and the connection is kept alive
        assert response_head(sock).startswith(b"HTTP/1.1 200")


def test_the_body_deadline_is_read_from_web_body_timeout_and_checked():
    assert webserver.body_seconds({}) == webserver.BODY_SECONDS == 30
    assert webserver.body_seconds({"WEB_BODY_TIMEOUT": " 2.5 "}) == 2.5
    for bad in ("0", "-1", "soon", "inf", "nan"):
        with pytest.raises(ValueError, match="WEB_BODY_TIMEOUT"):
            webserver.body_seconds({"WEB_BODY_TIMEOUT": bad})
