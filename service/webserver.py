"""The gunicorn worker the API runs on (``service.webserver.Worker``, gunicorn_conf's default).

It is gunicorn's gevent worker serving each connection with gevent's own HTTP/1.1 server
(``gevent.pywsgi``, gunicorn's ``gevent_pywsgi`` worker class) instead of gunicorn's request
parser: under P1's load, with the header reader and the single write below, the worker spends
a fifth less CPU an action (``docs/benchmarks.md``). gunicorn's parser also bounds how long a
client may take to send a request, reads header lines and body framing strictly, and logs
malformed requests through gunicorn's logger; gevent's server does none of that, so this
worker adds it:

* a client has ``keepalive`` seconds (gunicorn's setting, 5 here) to send each whole request
  line and header block, the first on a connection as well as the ones after: an idle
  keep-alive connection, or one that sends its headers a byte at a time, is closed then, and
  its greenlet goes back to the pool of ``worker_connections``;
* a body of up to :data:`EAGER_BODY_BYTES` (64 KiB, every action's) is read with its request,
  within the same deadline, before the app runs; a larger or chunked one as the app reads it,
  its reads (and the read of what the app left unread, before the connection's next request)
  taking :data:`BODY_SECONDS` (``WEB_BODY_TIMEOUT``, 30) at most together. A body that stops
  coming is answered 408 ``request_timeout``, one that ends before its ``Content-Length`` (or
  whose chunks are malformed) 400 ``malformed_request``, and the connection is closed, instead
  of a greenlet held for ever or an error the app would answer 500;
* a request's header block is read up to :data:`MAX_HEADER_BYTES` (64 KiB; gevent alone reads
  100 lines of 64 KiB each): a larger one is answered 431 ``headers_too_large`` and closed;
* header lines are read as gunicorn's parser reads them (:func:`read_headers`, in place of
  gevent's, which is the standard library's e-mail parser): a line that is not ``Name: value``
  (a name that is not a token, a space before the colon, no colon), a folded value, a NUL or a
  lone CR are malformed (gevent alone ends the header block at such a line and reads what
  follows as the body or the next request); a connection that ends inside the block is closed
  without an answer, with a debug line only, as gunicorn does;
* a body is framed one way only, as gunicorn's parser insists: a request with two
  ``Content-Length`` headers, a length that is not all digits, a ``Transfer-Encoding`` other
  than a single ``chunked``, or both headers is malformed (gevent alone takes the first length,
  ``int()``'s idea of a number, and lets ``chunked`` override a length: a proxy in front that
  reads the same bytes differently could then pass a second request inside the body);
* a malformed request (a bad request line, more than 100 header fields, the two above) is
  answered 400 ``malformed_request`` and closed, and logged as one line of the
  ``cartouche.http`` logger at INFO that names the kind of fault, never the client's text (it
  may carry a token), without a traceback (a request line of 8 KiB or more: 414
  ``request_line_too_long``, as gevent refuses it); every answer of this server's own is in
  the API's error shape;
* gevent's own error lines go to the ``cartouche.http`` logger too (JSON like every other line),
  not as raw text on stderr;
* gunicorn's per-request access-log call is skipped when there is no gunicorn access log
  (``WEB_ACCESS_LOG`` unset): the app logs every request itself (``cartouche.access``);
* an answer's status line, headers and body go out in one write when the body is at most
  :data:`ONE_WRITE_BYTES` (gevent writes the head and the body apart: two system calls and two
  packets an answer), and a write is one ``send`` (gevent's ``sendall`` first asks the kernel
  for the socket's buffer size), with ``sendall`` only for what that leaves.

Under P1's actions the e-mail parser cost the worker 13% more CPU an action than
:func:`read_headers`, and the second write about 1% (``docs/benchmarks.md``, thirteenth round).

What gevent's server does as gunicorn's does: one greenlet a connection out of
``worker_connections``, keep-alive, chunked bodies both ways, ``Expect: 100-continue``,
header names with an underscore dropped (no spoofing of a dashed one), CR/LF refused in
response headers. gunicorn's ``max_requests`` and its ``pre_request``/``post_request`` hooks do
not run on this path (none is configured).
"""

from __future__ import annotations

import io
import json
import logging
import os
import re
import socket

import gevent
from gevent.pywsgi import MAX_REQUEST_LINE, Input
from gunicorn.workers.ggevent import GeventPyWSGIWorker, PyWSGIHandler, PyWSGIServer

from .config import env_seconds

log = logging.getLogger("cartouche.http")


#: the most bytes a request's header block may have (its lines after the request line)
MAX_HEADER_BYTES = 64 * 1024
#: bodies up to this size are read with the request line and headers, within their deadline
EAGER_BODY_BYTES = 64 * 1024
#: an answer's head and first data are sent in one write when the data is at most this size
ONE_WRITE_BYTES = 64 * 1024
#: the default seconds a client has to send a larger or chunked body (``WEB_BODY_TIMEOUT``)
BODY_SECONDS = 30.0


class RequestTimedOut(socket.timeout):
    """The client did not send a whole request line and header block in time."""


class HeadersTooLarge(ValueError):
    """The header block is over :data:`MAX_HEADER_BYTES`."""


class HeadersCutOff(ValueError):
    """The connection ended inside a request's header block: the client went away (closed
    without an answer, as gunicorn ignores a premature disconnection)."""


class BadHeaders(ValueError):
    """A header line the parser could not read as one, or a body framed ambiguously."""


def _json_answer(status: str, code: str, message: str) -> tuple[str, bytes]:
    """``status`` and the whole response closing the connection, its body the API's error
    shape."""
    body = json.dumps({"error": {"code": code, "message": message, "details": {}}},
                      separators=(",", ":")).encode()
    return status, (f"HTTP/1.1 {status}\r\nConnection: close\r\n"
                    f"Content-Type: application/json\r\nContent-Length: {len(body)}\r\n\r\n"
                    ).encode() + body


class BodyFailed(BaseException):
    """The request's body could not be read. A BaseException, so that it passes through the
    app (whose handlers would answer any Exception with a 500) to :class:`Handler`, which
    answers :attr:`answer` (its :attr:`status`) and closes the connection."""

    status: str
    answer: bytes


class BodyTimedOut(BodyFailed):
    """A read of the body took more than :data:`BODY_SECONDS`."""

    status, answer = _json_answer("408 Request Timeout", "request_timeout",
                                  "the request body did not arrive in time")


class BodyEnded(BodyFailed):
    """The body ended before its ``Content-Length``, or its chunks were malformed."""

    status, answer = _json_answer("400 Bad Request", "malformed_request",
                                  "the request body ended early or was malformed")


class BodyInput(Input):
    """gevent's ``wsgi.input`` whose reads together may take ``seconds`` at most (the app's own
    time between them does not count): a read past that raises :class:`BodyTimedOut`, one that
    finds the body cut short or malformed :class:`BodyEnded`; after either, nothing more is
    read (``failed``: what the app left unread is not discarded, the connection is closed)."""

    __slots__ = ("failed", "seconds", "timer")

    def __init__(self, rfile, content_length, socket, chunked_input, seconds: float) -> None:
        super().__init__(rfile, content_length, socket=socket, chunked_input=chunked_input)
        self.seconds, self.timer, self.failed = seconds, None, False

    def read(self, length=None):
        return self._within(Input.read, length)

    def readline(self, size=None):
        return self._within(Input.readline, size)

    def _within(self, read, n):
        if self.failed:
            raise BodyEnded()
        if self.timer is None:  # made at the first read; each read resumes what is left of it
            self.timer = gevent.Timeout(self.seconds, BodyTimedOut())
        self.timer.start()
        try:
            return read(self, n)
        except BodyFailed:
            self.failed = True
            raise
        except OSError:  # the end of the stream, a reset, a malformed chunk (gevent's IOError)
            self.failed = True
            raise BodyEnded() from None
        finally:
            self.timer.cancel()

    def _discard(self):
        """Read what the app left unread (keep-alive), within what is left of the deadline,
        unless a read failed: then the connection is closed instead."""
        if not self.failed:
            try:
                super()._discard()
            except BodyFailed:
                pass

    def close(self) -> None:
        if self.timer is not None:
            self.timer.close()


#: the most header fields a request may have (what gevent's parser, ``http.client``, allows)
MAX_HEADER_FIELDS = 100
#: header lines as gunicorn's parser reads them: a token (RFC 9110 section 5.1), a colon right
#: after it, a value with no NUL and no CR but the line's end
_FIELD = rb"[!#$%&'*+\-.^_`|~0-9A-Za-z]+:[^\0\r\n]*\r?\n"
_BLOCK = re.compile(b"(?:" + _FIELD + b")*")
_LINE = re.compile(_FIELD)


class RequestHeaders:
    """A request's header fields, read by :func:`read_headers`, with what gevent's server and
    gunicorn's handler ask of its header object (``get``, ``getheader``, ``typeheader``,
    ``items``, ``headers``, ``status``, ``del``). ``fields`` are the (name, value) pairs in
    order, the name as sent, the value without the whitespace around it."""

    __slots__ = ("fields", "first")
    #: what gevent reads as a parser's complaint ("": none; a fault raises instead)
    status = ""

    def __init__(self, fields: list[tuple[str, str]], names: list[str]) -> None:
        self.fields = fields
        first: dict[str, str] = {}
        for name, (_, value) in zip(names, fields):
            if name not in first:
                first[name] = value
        self.first = first  # each lowercased name's first value

    def get(self, name: str, default=None):
        return self.first.get(name.lower(), default)

    getheader = get

    @property
    def typeheader(self):
        return self.first.get("content-type")

    def items(self) -> list[tuple[str, str]]:
        return list(self.fields)

    @property
    def headers(self):
        """The fields as ``Name: value`` lines (gevent's server builds the environ from them)."""
        return [f"{name}: {value}\r\n" for name, value in self.fields]

    def __delitem__(self, name: str) -> None:
        name = name.lower()
        self.fields = [(n, v) for n, v in self.fields if n.lower() != name]
        self.first.pop(name, None)


def read_headers(fp, limit: int = MAX_HEADER_BYTES) -> RequestHeaders:
    """The header block that follows a request line on ``fp`` (read a line at a time, up to the
    empty line), read as gunicorn's parser reads it.

    Refused with :class:`HeadersTooLarge`: a block over ``limit`` bytes. Refused with
    :class:`BadHeaders`, whatever a proxy in front could read otherwise than this server does:
    a line that is not ``Name: value`` (a name that is not a token, a space before the colon, no
    colon), a folded value (a line starting with a space or a tab), a NUL or a lone CR, more
    than :data:`MAX_HEADER_FIELDS` fields, and a body framed ambiguously (two
    ``Content-Length`` headers, a length that is not all digits, a ``Transfer-Encoding`` other
    than a single ``chunked``, or both). Only the kinds of fault are named, never the client's
    text (it may carry a token). A block the connection ends in raises :class:`HeadersCutOff`."""
    lines = []
    left = limit
    while True:
        line = fp.readline(left)
        left -= len(line)
        if line[-1:] != b"\n":
            if left <= 0:
                raise HeadersTooLarge(f"the header block is over {limit} bytes")
            raise HeadersCutOff("the connection ended inside the header block")
        if line == b"\r\n" or line == b"\n":
            break
        if len(lines) == MAX_HEADER_FIELDS:
            raise BadHeaders(f"more than {MAX_HEADER_FIELDS} header fields")
        lines.append(line)
    block = b"".join(lines)
    if _BLOCK.fullmatch(block) is None:
        raise BadHeaders(_fault(lines))
    fields = [(name, value.strip(" \t\r")) for name, _, value in
              (text.partition(":") for text in block.decode("latin-1").split("\n")[:-1])]
    names = [name.lower() for name, _ in fields]
    if "content-length" in names:
        if names.count("content-length") > 1:
            raise BadHeaders("two Content-Length headers")
        length = fields[names.index("content-length")][1]
        if not (length.isdigit() and length.isascii()):
            raise BadHeaders("a Content-Length that is not all digits")
    if "transfer-encoding" in names:
        if names.count("transfer-encoding") > 1 or \
                fields[names.index("transfer-encoding")][1].lower() != "chunked":
            raise BadHeaders("a Transfer-Encoding other than one chunked")
        if "content-length" in names:
            raise BadHeaders("both Transfer-Encoding and Content-Length")
    return RequestHeaders(fields, names)


def _fault(lines: list[bytes]) -> str:
    """What is wrong with the first header line that is not a field."""
    line = next(line for line in lines if _LINE.fullmatch(line) is None)
    if line[:1] in (b" ", b"\t"):
        return "a folded value"
    name, colon, _ = line.partition(b":")
    if colon and _LINE.fullmatch(name + b":\n") is not None:
        return "a NUL or a CR in a header value"
    return "a header line that is not Name: value"


class Handler(PyWSGIHandler):
    """One connection's requests, each line, header block and small body read within
    :attr:`read_seconds`, each larger body within :attr:`body_seconds`."""

    #: seconds to send each request's line and headers (the worker sets gunicorn's ``keepalive``)
    read_seconds: float = 5.0
    #: seconds to send a larger or chunked body (the worker sets ``WEB_BODY_TIMEOUT``)
    body_seconds: float = BODY_SECONDS
    #: whether gunicorn writes an access log (the worker sets it from gunicorn's config)
    gunicorn_access_log: bool = False
    _reading: gevent.Timeout | None = None
    #: why a small body read with the request could not be (None: it could, or there is none)
    _body_failed: BodyFailed | None = None

    def handle_one_request(self):
        self._reading = gevent.Timeout.start_new(self.read_seconds, RequestTimedOut())
        try:
            outcome = super().handle_one_request()
        finally:
            self._reading.close()
        if isinstance(outcome, tuple) and outcome[0] == "414":  # gevent's own, with no body
            log.info("request line too long from %s", self.client_address)
            return "414", REQUEST_LINE_TOO_LONG
        return outcome

    def MessageClass(self, fp, *args):
        return read_headers(fp)

    def _headers(self):
        """The environ's ``HTTP_*`` entries, from the fields as :func:`read_headers` read them
        (gevent's server drops names with an underscore, so that no one can spoof a dashed one,
        and passes ``Content-Type`` and ``Content-Length`` without the prefix)."""
        for name, value in self.headers.fields:
            if "_" not in name:
                key = name.replace("-", "_").upper()
                if key != "CONTENT_TYPE" and key != "CONTENT_LENGTH":
                    yield "HTTP_" + key, value

    def get_environ(self):
        """The request's environ, its body read too when it is small (within the request's
        deadline); once it is built, the app's time is not the client's."""
        self._body_failed = None
        try:
            env = super().get_environ()
            given = self.wsgi_input
            if env.get("wsgi.input") is given and (given.content_length or given.chunked_input):
                env["wsgi.input"] = self.wsgi_input = self._body(given)
        finally:
            self._reading.close()
        return env

    def _body(self, given: Input) -> Input:
        """The ``wsgi.input`` for a request with a body: one of up to :data:`EAGER_BODY_BYTES`
        read now, under the request's deadline (what failed is kept in ``_body_failed``, for
        :meth:`run_application` to answer); a larger or chunked one read as the app reads it,
        within :attr:`body_seconds`."""
        if given.chunked_input or given.content_length > EAGER_BODY_BYTES:
            return BodyInput(given.rfile, given.content_length, given.socket,
                             given.chunked_input, self.body_seconds)
        try:
            data = given.read(given.content_length)
        except RequestTimedOut:
            self._body_failed, data = BodyTimedOut(), b""
        except OSError:  # the end of the stream, a reset
            self._body_failed, data = BodyEnded(), b""
        return Input(io.BytesIO(data), len(data))

    def run_application(self):
        failed = self._body_failed
        if failed is None:
            try:
                return super().run_application()
            except BodyFailed as exc:
                failed = exc
        log.info("request body %s from %s", "timed out" if isinstance(failed, BodyTimedOut)
                 else "ended early or malformed", self.client_address)
        self.close_connection = True
        if not self.headers_sent:
            self.status = failed.status
            try:
                self.socket.sendall(failed.answer)
            except OSError:  # the client has gone
                pass
        return None

    def handle_one_response(self):
        super().handle_one_response()
        body = self.wsgi_input
        if isinstance(body, BodyInput):
            body.close()
            if body.failed:
                self.close_connection = True  # the rest of the body is unread: no next request

    def _write_with_headers(self, data):
        """The status line, the headers and the first data in one write when that data is at
        most :data:`ONE_WRITE_BYTES` (every answer of the API but large exports): gevent's own
        method builds the head and frames the data, and its two writes are gathered here into
        one (one system call and one packet instead of two)."""
        if len(data) > ONE_WRITE_BYTES:
            return super()._write_with_headers(data)
        parts: list = []
        self._sendall = parts.append  # gevent's writes of the head and the data, held
        try:
            super()._write_with_headers(data)
        finally:
            del self._sendall
        self._sendall(b"".join(parts))
        return None

    def _sendall(self, data):
        """gevent's ``_sendall`` (the answer's bytes, counted; a failed write marks the status
        and the code for the access log), its write tried first as one ``send``: a gevent
        socket's ``sendall`` asks the kernel for the send buffer's size on every call before it
        sends (7.0-7.9 µs a 600-byte answer against 3.4-3.8 µs a ``send``); what the ``send``
        leaves goes through ``sendall``."""
        try:
            sent = self.socket.send(data)
            if sent < len(data):
                self.socket.sendall(memoryview(data)[sent:])
        except OSError as ex:
            self.status = f"socket error: {ex}"
            if self.code > 0:
                self.code = -self.code
            raise
        self.response_length += len(data)

    def _handle_client_error(self, ex):
        if isinstance(ex, RequestTimedOut):
            return None  # closed without an answer, as gunicorn closes it
        if isinstance(ex, HeadersCutOff):
            log.debug("connection from %s ended inside a request's headers", self.client_address)
            return None
        if isinstance(ex, HeadersTooLarge):
            log.info("request headers too large from %s", self.client_address)
            return "431", HEADERS_TOO_LARGE
        # what gevent and http.client say of a request line or header they cannot parse
        # quotes it, and it may carry a token (a URL's query): only the kind of fault is logged
        fault = str(ex) if isinstance(ex, BadHeaders) else \
            f"a request line or header it cannot parse ({type(ex).__name__})"
        log.info("malformed request from %s: %s", self.client_address, fault)
        return "400", BAD_REQUEST

    def log_request(self):
        if self.gunicorn_access_log:
            super().log_request()


#: the answers to a malformed request, to a header block over the limit and to a request line
#: of gevent's ``MAX_REQUEST_LINE`` or more, in the API's error shape
_, BAD_REQUEST = _json_answer("400 Bad Request", "malformed_request",
                              "the request line or a header could not be read")
_, HEADERS_TOO_LARGE = _json_answer("431 Request Header Fields Too Large", "headers_too_large",
                                    f"the request's headers are over {MAX_HEADER_BYTES} bytes")
_, REQUEST_LINE_TOO_LONG = _json_answer("414 URI Too Long", "request_line_too_long",
                                        f"the request line is {MAX_REQUEST_LINE} bytes or more")


class Server(PyWSGIServer):
    """gevent's WSGI server with its error lines on the ``cartouche.http`` logger."""

    def __init__(self, *args, **kwargs) -> None:
        kwargs.setdefault("error_log", log)
        super().__init__(*args, **kwargs)


class Worker(GeventPyWSGIWorker):
    server_class = Server
    wsgi_handler = Handler

    def init_process(self) -> None:
        self.wsgi_handler = type("Handler", (Handler,), {
            "read_seconds": float(self.cfg.keepalive or Handler.read_seconds),
            "body_seconds": body_seconds(),
            "gunicorn_access_log": bool(self.cfg.accesslog)})
        super().init_process()


def body_seconds(env=None) -> float:
    """``WEB_BODY_TIMEOUT``: seconds, more than 0 (:data:`BODY_SECONDS` when unset)."""
    return env_seconds(os.environ if env is None else env, "WEB_BODY_TIMEOUT", BODY_SECONDS)
