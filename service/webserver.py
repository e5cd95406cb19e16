"""The gunicorn worker the API runs on (``service.webserver.Worker``, gunicorn_conf's default).

It is gunicorn's gevent worker serving each connection with gevent's own HTTP/1.1 server
(``gevent.pywsgi``, gunicorn's ``gevent_pywsgi`` worker class) instead of gunicorn's request
parser: under P1's load the worker spends 12% less CPU a request
(``docs/benchmarks.md``). gunicorn's parser also bounds how long a client may take to send a
request, reads header lines and body framing strictly, and logs malformed requests through
gunicorn's logger; gevent's server does none of that, so this worker adds it:

* a client has ``keepalive`` seconds (gunicorn's setting, 5 here) to send each whole request
  line and header block, the first on a connection as well as the ones after: an idle
  keep-alive connection, or one that sends its headers a byte at a time, is closed then, and
  its greenlet goes back to the pool of ``worker_connections``;
* a request's header block is read up to :data:`MAX_HEADER_BYTES` (64 KiB; gevent alone reads
  100 lines of 64 KiB each): a larger one is answered 431 and closed;
* header lines are read as gunicorn's parser reads them: a line that is not ``Name: value``
  (a space before the colon, no colon, a first line that continues nothing), a folded value
  and a NUL are malformed (gevent alone ends the header block at such a line and reads what
  follows as the body or the next request);
* a body is framed one way only, as gunicorn's parser insists: a request with two
  ``Content-Length`` headers, a length that is not all digits, a ``Transfer-Encoding`` other
  than a single ``chunked``, or both headers is malformed (gevent alone takes the first length,
  ``int()``'s idea of a number, and lets ``chunked`` override a length: a proxy in front that
  reads the same bytes differently could then pass a second request inside the body);
* a malformed request (a bad request line, more than 100 header fields, the two above) is
  answered 400 and closed, and logged as one line of the ``cartouche.http`` logger at INFO,
  without a traceback (a request line of 8 KiB or more: 414, as gevent answers it);
* gevent's own error lines go to the ``cartouche.http`` logger too (JSON like every other line),
  not as raw text on stderr;
* gunicorn's per-request access-log call is skipped when there is no gunicorn access log
  (``WEB_ACCESS_LOG`` unset): the app logs every request itself (``cartouche.access``).

What gevent's server does as gunicorn's does: one greenlet a connection out of
``worker_connections``, keep-alive, chunked bodies both ways, ``Expect: 100-continue``,
header names with an underscore dropped (no spoofing of a dashed one), CR/LF refused in
response headers. gunicorn's ``max_requests`` and its ``pre_request``/``post_request`` hooks do
not run on this path (none is configured).
"""

from __future__ import annotations

import logging
import socket

import gevent
from gunicorn.workers.ggevent import GeventPyWSGIWorker, PyWSGIHandler, PyWSGIServer

log = logging.getLogger("cartouche.http")


#: the most bytes a request's header block may have (its lines after the request line)
MAX_HEADER_BYTES = 64 * 1024


class RequestTimedOut(socket.timeout):
    """The client did not send a whole request line and header block in time."""


class HeadersTooLarge(ValueError):
    """The header block is over :data:`MAX_HEADER_BYTES`."""


class BadHeaders(ValueError):
    """A header line the parser could not read as one, or a body framed ambiguously."""


def check_headers(headers) -> None:
    """Refuse (:class:`BadHeaders`) a header block that a proxy in front could read otherwise
    than gevent does: a line that is no header (``Name : value``, no colon, a first line that
    continues nothing: gevent's parser would end the headers there and read what follows as the
    body or as the next request), a folded value or a NUL, and ambiguous body framing. Only the
    kinds of fault are named, never the client's text (it may carry a token)."""
    if headers.defects:
        raise BadHeaders("header lines it cannot read: "
                         + ", ".join(sorted({type(d).__name__ for d in headers.defects})))
    for name, value in headers.items():
        if "\r" in value or "\n" in value or "\0" in value:
            raise BadHeaders(f"a folded value or a NUL in {name!r}")
    lengths = headers.get_all("Content-Length") or []
    codings = headers.get_all("Transfer-Encoding") or []
    if len(lengths) > 1:
        raise BadHeaders("two Content-Length headers")
    if lengths and not (lengths[0].isdigit() and lengths[0].isascii()):
        raise BadHeaders("a Content-Length that is not all digits")
    if codings and lengths:
        raise BadHeaders("both Transfer-Encoding and Content-Length")
    if codings and (len(codings) > 1 or codings[0].strip().lower() != "chunked"):
        raise BadHeaders("a Transfer-Encoding other than one chunked")


class _HeaderBlock:
    """The connection's input as the header parser reads it (``readline`` only), refusing to
    read more than ``limit`` bytes."""

    __slots__ = ("fp", "left")

    def __init__(self, fp, limit: int) -> None:
        self.fp, self.left = fp, limit

    def readline(self, size: int = -1) -> bytes:
        if self.left <= 0:
            raise HeadersTooLarge(f"the header block is over {MAX_HEADER_BYTES} bytes")
        line = self.fp.readline(self.left if size < 0 else min(size, self.left))
        self.left -= len(line)
        if self.left <= 0 and not line.endswith(b"\n"):
            raise HeadersTooLarge(f"the header block is over {MAX_HEADER_BYTES} bytes")
        return line


class Handler(PyWSGIHandler):
    """One connection's requests, each read within :attr:`read_seconds`."""

    #: seconds to send each request's line and headers (the worker sets gunicorn's ``keepalive``)
    read_seconds: float = 5.0
    #: whether gunicorn writes an access log (the worker sets it from gunicorn's config)
    gunicorn_access_log: bool = False
    _reading: gevent.Timeout | None = None

    def handle_one_request(self):
        self._reading = gevent.Timeout.start_new(self.read_seconds, RequestTimedOut())
        try:
            return super().handle_one_request()
        finally:
            self._reading.close()

    def MessageClass(self, fp, *args):
        headers = super().MessageClass(_HeaderBlock(fp, MAX_HEADER_BYTES), *args)
        check_headers(headers)
        return headers

    def get_environ(self):
        # the request line and headers are read: the app's time is not the client's
        self._reading.close()
        return super().get_environ()

    def _handle_client_error(self, ex):
        if isinstance(ex, RequestTimedOut):
            return None  # closed without an answer, as gunicorn closes it
        if isinstance(ex, HeadersTooLarge):
            log.info("request headers too large from %s", self.client_address)
            return "431", HEADERS_TOO_LARGE
        log.info("malformed request from %s: %s", self.client_address,
                 getattr(ex, "formatted_message", None) or str(ex) or type(ex).__name__)
        return "400", BAD_REQUEST

    def log_request(self):
        if self.gunicorn_access_log:
            super().log_request()


#: the answers to a malformed request (gevent's own, which is not public) and to a header
#: block over the limit
BAD_REQUEST = b"HTTP/1.1 400 Bad Request\r\nConnection: close\r\nContent-Length: 0\r\n\r\n"
HEADERS_TOO_LARGE = (b"HTTP/1.1 431 Request Header Fields Too Large\r\nConnection: close\r\n"
                     b"Content-Length: 0\r\n\r\n")


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
            "gunicorn_access_log": bool(self.cfg.accesslog)})
        super().init_process()
