"""The API worker's HTTP reading and writing (``service.webserver``) without gunicorn: a header
block read as gunicorn's parser reads it (what is refused and why, what the app's environ then
holds, pipelined requests each read to their own end), and an answer's head and body sent in
one write when the body is small. The same worker
under a real gunicorn: ``tests/reliability/test_webserver.py``."""

from __future__ import annotations

import io
from typing import ClassVar

import gevent
import pytest
from gevent import socket as gsocket
from gevent.pywsgi import WSGIServer

from service import webserver
from service.webserver import BadHeaders, HeadersCutOff, HeadersTooLarge, read_headers


def _read(block: bytes, limit: int = webserver.MAX_HEADER_BYTES):
    return read_headers(io.BufferedReader(io.BytesIO(block + b"GET /next HTTP/1.1\r\n")), limit)


def test_a_header_block_is_read_up_to_its_empty_line_names_as_sent_values_trimmed():
    fp = io.BufferedReader(io.BytesIO(
        b"Host: x\r\nContent-Type:application/json \r\nX-Twice: one\r\nx-twice:  two, three\t\r\n"
        b"Authorization: Bearer a b\r\nX-Latin: caf\xe9\r\n\r\n{}"))
    headers = read_headers(fp)
    assert headers.fields == [("Host", "x"), ("Content-Type", "application/json"),
                              ("X-Twice", "one"), ("x-twice", "two, three"),
                              ("Authorization", "Bearer a b"), ("X-Latin", "café")]
    assert fp.read() == b"{}"  # nothing past the block is read
    assert headers.get("content-type") == headers.typeheader == "application/json"
    assert headers.get("X-TWICE") == headers.getheader("x-twice") == "one"  # the first
    assert headers.get("content-length") is None and headers.get("x", 7) == 7
    assert headers.status == ""
    assert headers.items() == headers.fields
    assert headers.headers[1] == "Content-Type: application/json\r\n"
    del headers["X-Twice"]
    assert headers.get("x-twice") is None and len(headers.fields) == 4


def test_lines_ending_in_a_bare_newline_are_read_too():
    assert _read(b"Host: x\nContent-Length: 2\n\n").fields == [("Host", "x"),
                                                               ("Content-Length", "2")]


def test_an_empty_block_and_a_block_of_exactly_the_limit_are_read():
    assert _read(b"\r\n").fields == []
    block = b"X-A: " + b"a" * 40 + b"\r\n\r\n"
    assert _read(block, limit=len(block)).fields == [("X-A", "a" * 40)]
    with pytest.raises(HeadersTooLarge):
        _read(block, limit=len(block) - 1)


@pytest.mark.parametrize(("block", "fault"), [
    (b"Content-Length : 2\r\n\r\n", "not Name: value"),
    (b"No colon here\r\n\r\n", "not Name: value"),
    (b": no name\r\n\r\n", "not Name: value"),
    (b"X(Y): 1\r\n\r\n", "not Name: value"),
    (b"Host: x\r\nX-A: 1\r\n folded\r\n\r\n", "a folded value"),
    (b"\tX-A: 1\r\n\r\n", "a folded value"),
    (b"X-Nul: a\x00b\r\n\r\n", "a NUL or a CR"),
    (b"X-Cr: a\rb\r\n\r\n", "a NUL or a CR"),
    (b"X-Cr: a\r\r\n\r\n", "a NUL or a CR"),
    (b"".join(b"X-%d: 1\r\n" % i for i in range(101)) + b"\r\n", "more than 100"),
    (b"Content-Length: 2\r\ncontent-length: 2\r\n\r\n", "two Content-Length"),
    (b"Content-Length: +2\r\n\r\n", "not all digits"),
    (b"Content-Length: 2 2\r\n\r\n", "not all digits"),
    (b"Content-Length: \xb2\r\n\r\n", "not all digits"),
    (b"Transfer-Encoding: gzip, chunked\r\n\r\n", "other than one chunked"),
    (b"Transfer-Encoding: chunked\r\nTransfer-Encoding: chunked\r\n\r\n",
     "other than one chunked"),
    (b"Transfer-Encoding:\r\n\r\n", "other than one chunked"),
    (b"Transfer-Encoding: chunked\r\nContent-Length: 2\r\n\r\n", "both"),
], ids=["space before colon", "no colon", "no name", "name not a token", "folded",
        "first line continues nothing", "NUL", "CR inside", "CR before CRLF", "101 fields",
        "two lengths", "signed length", "two numbers", "non-ASCII digit", "gzip",
        "chunked twice", "empty coding", "length and chunked"])
def test_a_block_a_proxy_could_read_otherwise_is_refused_naming_only_the_fault(block, fault):
    with pytest.raises(BadHeaders) as refused:
        _read(block)
    assert fault in str(refused.value)


@pytest.mark.parametrize("line", [b"Authorization: Bearer s3cr3t\x00", b"X-s3cr3t : 1",
                                  b" s3cr3t", b"Content-Length: s3cr3t"])
def test_a_refusal_never_quotes_the_clients_text(line):
    with pytest.raises(BadHeaders) as refused:
        _read(b"Host: x\r\n" + line + b"\r\n\r\n")
    assert "s3cr3t" not in str(refused.value)


def test_a_block_over_the_limit_is_refused_and_one_the_connection_ends_in_is_cut_off():
    with pytest.raises(HeadersTooLarge):
        _read(b"X-A: " + b"a" * 100 + b"\r\n\r\n", limit=64)
    with pytest.raises(HeadersTooLarge):
        _read(b"X-A: 1\r\n" * 20 + b"\r\n", limit=64)
    with pytest.raises(HeadersCutOff):
        read_headers(io.BufferedReader(io.BytesIO(b"Host: x\r\nX-A: 1")))
    with pytest.raises(HeadersCutOff):
        read_headers(io.BufferedReader(io.BytesIO(b"Host: x\r\n")))


class _Recording(webserver.Handler):
    """The worker's handler, each write it makes kept in ``writes``."""

    writes: ClassVar[list[bytes]] = []

    def _sendall(self, data):
        self.writes.append(bytes(data))
        super()._sendall(data)


def _serve(app):
    _Recording.writes = []
    server = WSGIServer(("127.0.0.1", 0), app, handler_class=_Recording, log=None)
    server.start()
    return server


def _exchange(server, request: bytes) -> bytes:
    """``request`` sent on one connection, the whole answer read until the server closes."""
    with gsocket.create_connection(("127.0.0.1", server.server_port), timeout=5) as sock:
        sock.sendall(request)
        data = b""
        with gevent.Timeout(5):
            while chunk := sock.recv(65536):
                data += chunk
    return data


def test_the_environ_holds_the_headers_as_read():
    seen = {}

    def app(environ, start_response):
        seen.update(environ, body=environ["wsgi.input"].read())
        start_response("204 No Content", [])
        return []

    server = _serve(app)
    try:
        answer = _exchange(server, (
            b"POST /x?a=1 HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
            b"Content-Length: 2\r\nX-Twice: one\r\nX-Twice: two\r\nCookie: a=1\r\nCookie: b=2\r\n"
            b"X_Spoofed: 1\r\nConnection: close\r\n\r\n{}"))
    finally:
        server.stop()
    assert answer.startswith(b"HTTP/1.1 204")
    assert (seen["REQUEST_METHOD"], seen["PATH_INFO"], seen["QUERY_STRING"]) == \
        ("POST", "/x", "a=1")
    assert (seen["CONTENT_TYPE"], seen["CONTENT_LENGTH"]) == ("application/json", "2")
    assert "HTTP_CONTENT_TYPE" not in seen and "HTTP_CONTENT_LENGTH" not in seen
    assert seen["HTTP_X_TWICE"] == "one,two" and seen["HTTP_COOKIE"] == "a=1; b=2"
    assert seen["HTTP_HOST"] == "x" and "HTTP_X_SPOOFED" not in seen  # no underscore names
    assert seen["body"] == b"{}"


def test_a_small_answer_is_one_write_a_large_one_two():
    def app(environ, start_response):
        body = b"x" * int(environ["QUERY_STRING"])
        start_response("200 OK", [("Content-Type", "text/plain"),
                                  ("Content-Length", str(len(body)))])
        return [body]

    server = _serve(app)
    try:
        # 16 MB: more than a socket takes in one ``send``; the rest goes through ``sendall``
        for size in (0, 10, webserver.ONE_WRITE_BYTES, webserver.ONE_WRITE_BYTES + 1, 16_000_000):
            _Recording.writes = []
            answer = _exchange(server, b"GET /?%d HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"
                               % size)
            head, _, body = answer.partition(b"\r\n\r\n")
            assert head.startswith(b"HTTP/1.1 200 OK\r\n")
            assert b"\r\nContent-Length: %d" % size in head and body == b"x" * size
            assert b"".join(_Recording.writes) == answer
            assert len(_Recording.writes) == (1 if size <= webserver.ONE_WRITE_BYTES else 2)
    finally:
        server.stop()


def test_a_streamed_answer_starts_with_its_first_chunk_and_is_framed_right():
    def app(environ, start_response):
        start_response("200 OK", [("Content-Type", "text/event-stream")])
        return iter([b"first", b"", b"second"])

    server = _serve(app)
    try:
        answer = _exchange(server, b"GET / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
    finally:
        server.stop()
    head, _, body = answer.partition(b"\r\n\r\n")
    assert b"Transfer-Encoding: chunked" in head
    assert body == b"5\r\nfirst\r\n6\r\nsecond\r\n0\r\n\r\n"
    assert _Recording.writes[0] == head + b"\r\n\r\n5\r\nfirst\r\n"


def test_a_connection_that_ends_inside_the_headers_is_closed_without_an_answer():
    def app(environ, start_response):  # pragma: no cover - never called
        raise AssertionError("the app ran")

    server = _serve(app)
    try:
        with gsocket.create_connection(("127.0.0.1", server.server_port), timeout=5) as sock:
            sock.sendall(b"GET / HTTP/1.1\r\nHost: x\r\nX-A: 1")
            sock.shutdown(gsocket.SHUT_WR)
            with gevent.Timeout(5):
                assert sock.recv(4096) == b""
    finally:
        server.stop()
    assert _Recording.writes == []


def test_pipelined_requests_are_each_read_to_their_own_end():
    def app(environ, start_response):
        body = environ["wsgi.input"].read()
        answer = environ["PATH_INFO"].encode() + b"=" + body
        start_response("200 OK", [("Content-Type", "text/plain"),
                                  ("Content-Length", str(len(answer)))])
        return [answer]

    server = _serve(app)
    try:
        answer = _exchange(server, (
            b"POST /a HTTP/1.1\r\nHost: x\r\nContent-Length: 3\r\n\r\nabc"
            b"POST /b HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\n\r\nxy"
            b"GET /c HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"))
    finally:
        server.stop()
    bodies = [part.split(b"HTTP/1.1", 1)[0] for part in answer.split(b"\r\n\r\n")[1:]]
    assert answer.count(b"HTTP/1.1 200 OK") == 3 and bodies == [b"/a=abc", b"/b=xy", b"/c="]
