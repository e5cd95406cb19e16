"""Logs: one line per record, JSON (the default) or text, with the request id of the request
that logged it; request ids themselves; the access log.

The standard library's ``logging`` throughout (no structlog): :func:`configure` installs one
stderr handler on the root logger with :class:`JsonFormatter` or :class:`TextFormatter`
(``CARTOUCHE_LOG_FORMAT=json|text``); gunicorn's own lines go through it too
(``gunicorn_conf.CartoucheLogger``), and the RQ worker's (``workers.main``).

A JSON line is one object: ``time`` (RFC 3339, UTC, milliseconds), ``level``, ``logger``,
``message``, ``request_id`` (inside a request), then the record's extra fields (``extra=``),
and ``exception`` (the traceback) when there is one.

Request ids: :func:`request_id_from` keeps a client's ``X-Request-ID`` when it is 1 to
:data:`REQUEST_ID_MAX` characters of ``[A-Za-z0-9._:-]``, and makes one up otherwise.
:data:`REQUEST_ID` holds the current one (a context variable: per thread, per greenlet); every
log record gets it as ``record.request_id`` (:func:`install_record_factory`), whatever handler
formats it.
"""

from __future__ import annotations

import codecs
import io
import logging
import os
import re
import sys
import threading
import time
from contextvars import ContextVar
from typing import Mapping

import orjson

from . import timestamps
from .config import env_seconds

#: The longest ``X-Request-ID`` kept from a client (a longer one is replaced).
REQUEST_ID_MAX = 128
_SAFE_ID = re.compile(r"[A-Za-z0-9._:\-]{1,%d}" % REQUEST_ID_MAX)

#: The request id of the request being served (None outside requests).
REQUEST_ID: ContextVar[str | None] = ContextVar("cartouche_request_id", default=None)

FORMATS = ("json", "text")

#: LogRecord attributes that are not "extra" fields.
_STANDARD = set(vars(logging.LogRecord("", 0, "", 0, "", (), None))) | {
    "message", "asctime", "request_id", "taskName"}


def request_id_from(header: str | None) -> str:
    """The client's id if it is safe to log and echo, else a new random one (24 hex)."""
    if header and _SAFE_ID.fullmatch(header):
        return header
    return os.urandom(12).hex()


def log_format(env: Mapping[str, str] | None = None, default: str = "json") -> str:
    """``CARTOUCHE_LOG_FORMAT`` (``json`` or ``text``; ``default`` when unset)."""
    env = os.environ if env is None else env
    value = (env.get("CARTOUCHE_LOG_FORMAT") or default).strip().lower()
    if value not in FORMATS:
        raise ValueError(f"CARTOUCHE_LOG_FORMAT must be one of {', '.join(FORMATS)}: {value!r}")
    return value


def rfc3339(created: float) -> str:
    """A record's time (``record.created``, seconds) as every timestamp is written."""
    return timestamps.rfc3339(int(created * 1000))


def _head(created: float, level: str, name: str, message: str, rid: str | None) -> dict:
    out = {"time": rfc3339(created), "level": level, "logger": name, "message": message}
    if rid is not None:
        out["request_id"] = rid
    return out


class JsonFormatter(logging.Formatter):
    """One JSON object per record (see the module docstring)."""

    def format(self, record: logging.LogRecord) -> str:
        out = _head(record.created, record.levelname, record.name, record.getMessage(),
                    getattr(record, "request_id", None))
        for key, value in vars(record).items():
            if key not in _STANDARD and key not in out:
                out[key] = value
        if record.exc_info:
            out["exception"] = self.formatException(record.exc_info)
        elif record.exc_text:
            out["exception"] = record.exc_text
        if record.stack_info:
            out["stack"] = record.stack_info
        return orjson.dumps(out, default=str).decode()


class TextFormatter(logging.Formatter):
    """``time level logger [request id] message`` for people reading a console."""

    def __init__(self) -> None:
        super().__init__("%(asctime)s %(levelname)s %(name)s%(rid)s %(message)s")

    def formatMessage(self, record: logging.LogRecord) -> str:  # noqa: N802 - logging's name
        rid = getattr(record, "request_id", None)
        record.rid = f" [{rid}]" if rid else ""
        return super().formatMessage(record)

    def formatTime(self, record, datefmt=None):  # noqa: N802 - logging's name
        return rfc3339(record.created)


class StderrHandler(logging.StreamHandler):
    """The handler :func:`configure` installs on the root logger.

    It can hold the access log's lines and write them together (:meth:`hold`, a performance
    shortcut: a gunicorn worker does, ``WEB_LOG_WRITE_SECONDS``): kept unformatted, then made
    and written in one ``os.write`` an interval, instead of a line made and a system call
    each request. Held lines are written every interval, as soon as :data:`HELD_MAX` are
    held, before any other line (so a process's lines keep their order), on :meth:`flush`
    (logging's shutdown at exit) and on :meth:`stop_holding` (a worker's exit). A process
    killed outright loses what it held: at most an interval of access lines. Lines are only
    held over a file descriptor (stderr, a file, a pipe)."""

    #: (stream, its file descriptor or None) as :meth:`_descriptor` last found them
    _descriptor: tuple | None = None
    #: the lines held, as :func:`log_fields` got them (None: every line is written at once)
    _held: list[tuple] | None = None
    #: wakes the thread that writes the held lines every interval (None: no such thread)
    _wake: threading.Event | None = None
    #: the most lines held: the one that reaches it is written at once, with those before it
    HELD_MAX = 128

    def write_line(self, line: str | bytes) -> None:
        """Write one formatted line (``bytes``: its UTF-8 text) and the terminator, then flush,
        as ``emit`` writes a record's text, after the lines held. On a UTF-8 text stream over
        a file descriptor (stderr) it is one ``os.write`` of the bytes, after whatever text
        the stream still held; on any other stream, through the stream."""
        with self.lock:
            encoded = line if isinstance(line, bytes) else \
                line.encode("utf-8", self.stream.errors or "strict")
            self._write(self._take_held() + encoded + self.terminator.encode())

    def hold_line(self, line: tuple) -> bool:
        """Keep ``line`` (:func:`log_fields`'s ``(time, level, logger name, message, request
        id, fields)``) to be made and written later, if lines are held (:meth:`hold`);
        answers whether it was kept."""
        with self.lock:
            held = self._held
            if held is None:
                return False
            held.append(line)
            if len(held) >= self.HELD_MAX:
                self._write_held()
            return True

    def emit(self, record: logging.LogRecord) -> None:
        if self._held:  # (logging holds the lock while it emits)
            self._write_held()
        super().emit(record)

    def flush(self) -> None:
        with self.lock:
            self._write_held()
            super().flush()

    def hold(self, seconds: float) -> bool:
        """From now on hold the lines :func:`log_fields` is told to hold and write them
        together every ``seconds`` (a daemon thread: a greenlet where gevent has patched
        ``threading``), or sooner as the class docstring says. Answers whether it holds: not
        for 0 seconds, not over a stream without a file descriptor, not twice. A process
        forked later holds nothing of its parent's."""
        with self.lock:
            if seconds <= 0 or self._held is not None \
                    or self._stream_descriptor(self.stream) is None:
                return False
            self._held = []
            self._wake = wake = threading.Event()
        threading.Thread(target=self._write_every, args=(wake, seconds), name="log-writes",
                         daemon=True).start()
        os.register_at_fork(after_in_child=self._forked)
        return True

    def stop_holding(self) -> None:
        """Write the lines held and hold no more."""
        with self.lock:
            if self._wake is not None:
                self._wake.set()
            self._write_held()
            self._held, self._wake = None, None

    def _write_every(self, wake: threading.Event, seconds: float) -> None:
        while not wake.wait(seconds):
            with self.lock:
                try:
                    self._write_held()
                except Exception:  # noqa: BLE001 - a failed write loses these lines, as emit's
                    self.handleError(logging.makeLogRecord({"msg": "held log lines"}))

    def _take_held(self) -> bytes:
        """The lines held, made (each with the terminator), and none held any more (the lock is
        held)."""
        held = self._held
        if not held:
            return b""
        lines = held[:]
        held.clear()
        formatter, end = self.formatter, self.terminator.encode()
        out = []
        for line in lines:
            try:
                out.append(_encoded(_line(formatter, *line)) + end)
            except Exception:  # noqa: BLE001 - that line is reported, the others written
                self.handleError(logging.makeLogRecord({"name": line[2], "levelno": line[1],
                                                        "msg": line[3]}))
        return b"".join(out)

    def _write_held(self) -> None:
        """Write the lines held now (the lock is held)."""
        data = self._take_held()
        if data:
            self._write(data)

    def _write(self, data: bytes) -> None:
        """Write ``data`` (UTF-8 text) and flush (the lock is held): one ``os.write`` on the
        stream's file descriptor after whatever text the stream still held, or through the
        stream when :meth:`_stream_descriptor` finds none."""
        stream = self.stream
        fd = self._stream_descriptor(stream)
        stream.flush()  # whatever text the stream still holds goes first
        if fd is None:
            stream.write(data.decode())
            stream.flush()
            return
        while data:
            data = data[os.write(fd, data):]

    def _forked(self) -> None:
        """In a child process: what the parent held is the parent's to write."""
        self._held, self._wake = None, None

    def _stream_descriptor(self, stream) -> int | None:
        """The file descriptor under ``stream`` when writing UTF-8 bytes there writes what the
        stream would (a UTF-8 ``io.TextIOWrapper`` over a descriptor), else None; found once
        per stream."""
        known = self._descriptor
        if known is not None and known[0] is stream:
            return known[1]
        fd = None
        if type(stream) is io.TextIOWrapper and os.linesep == "\n":
            try:
                if codecs.lookup(stream.encoding).name == "utf-8":
                    fd = stream.fileno()
            except (OSError, ValueError, LookupError):
                fd = None
        self._descriptor = (stream, fd)
        return fd


def _sole_handler(logger: logging.Logger, level: int) -> StderrHandler | None:
    """The :class:`StderrHandler` with one of our formatters that a record of ``logger`` at
    ``level`` reaches, and nothing else sees (no filter, no other handler on the way), else
    None."""
    while True:
        if logger.filters:
            return None
        if logger.parent is None or not logger.propagate:
            break
        if logger.handlers:
            return None
        logger = logger.parent
    if len(logger.handlers) != 1:
        return None
    handler = logger.handlers[0]
    if (type(handler) is not StderrHandler or handler.filters or level < handler.level
            or type(handler.formatter) not in (JsonFormatter, TextFormatter)):
        return None
    return handler


def _record(logger: logging.Logger, level: int, message: str, fields: dict) -> logging.LogRecord:
    return logger.makeRecord(logger.name, level, __file__, 0, message, None, None, extra=fields)


def log_fields(logger: logging.Logger, level: int, message: str, fields: dict,
               hold: bool = False) -> None:
    """``logger.log(level, message, extra=fields)`` (``message`` already formatted), for a line
    logged on every request: where the record would only reach :func:`configure`'s handler,
    the line is written without making a ``LogRecord`` -- the same text its formatter would
    write for that record (``tests/test_logs.py`` compares them) -- and, on a stream of a file
    descriptor, as bytes straight to that descriptor (:meth:`StderrHandler.write_line`). With
    ``hold``, where that handler holds lines, the line is made and written later
    (:meth:`StderrHandler.hold_line`): ``fields`` must not change after the call."""
    handler = _sole_handler(logger, level)
    if handler is None:
        logger.handle(_record(logger, level, message, fields))
        return
    line = (time.time(), level, logger.name, message, REQUEST_ID.get(), fields)
    try:
        if not (hold and handler.hold_line(line)):
            handler.write_line(_line(handler.formatter, *line))
    except Exception:  # as StreamHandler.emit reports a failed write
        handler.handleError(_record(logger, level, message, fields))


def _line(formatter: logging.Formatter | None, created: float, level: int, name: str,
          message: str, rid: str | None, fields: dict) -> str | bytes:
    """The text ``formatter`` (a :class:`JsonFormatter`: bytes; else as :class:`TextFormatter`
    writes it) makes of the record :func:`log_fields` stands for."""
    level_name = logging.getLevelName(level)
    if type(formatter) is JsonFormatter:
        out = _head(created, level_name, name, message, rid)
        for key, value in fields.items():
            if key not in out:
                out[key] = value
        return orjson.dumps(out, default=str)
    return f"{rfc3339(created)} {level_name} {name}{f' [{rid}]' if rid else ''} {message}"


def _encoded(line: str | bytes) -> bytes:
    return line if isinstance(line, bytes) else line.encode("utf-8", "backslashreplace")


def formatter(fmt: str) -> logging.Formatter:
    return JsonFormatter() if fmt == "json" else TextFormatter()


def install_record_factory() -> None:
    """Every LogRecord made from now on carries ``request_id`` (None outside requests).
    Installing it twice is harmless."""
    current = logging.getLogRecordFactory()
    if getattr(current, "cartouche", False):
        return

    def factory(*args, **kwargs):
        record = current(*args, **kwargs)
        record.request_id = REQUEST_ID.get()
        return record

    factory.cartouche = True
    logging.setLogRecordFactory(factory)


def configure(fmt: str | None = None, level: int = logging.INFO) -> None:
    """Log to stderr in ``fmt`` (``CARTOUCHE_LOG_FORMAT`` when None) with request ids, Python's
    warnings included (``py.warnings``: gevent's when a gunicorn worker patches, for one), so
    that every line is in that format. Does nothing more when the root logger already has a
    handler in one of our formats."""
    install_record_factory()
    logging.captureWarnings(True)
    # No format of ours prints a record's thread or process (a JSON line's ``request_id`` says
    # which request it came from): LogRecord skips looking them up on every record.
    logging.logThreads = logging.logProcesses = logging.logMultiprocessing = False
    root = logging.getLogger()
    if any(isinstance(h.formatter, (JsonFormatter, TextFormatter)) for h in root.handlers):
        return
    handler = StderrHandler(sys.stderr)
    handler.setFormatter(formatter(fmt or log_format()))
    root.addHandler(handler)
    root.setLevel(level)


def write_seconds(env: Mapping[str, str] | None = None) -> float:
    """``WEB_LOG_WRITE_SECONDS``: how often a gunicorn worker writes the access log's lines it
    holds (:meth:`StderrHandler.hold`), from 0 (each line at once) to 10; 1 when unset."""
    return env_seconds(os.environ if env is None else env, "WEB_LOG_WRITE_SECONDS", 1.0,
                       most=10.0, zero=True)


def hold_access_lines(seconds: float) -> bool:
    """Hold the access log's lines (:meth:`StderrHandler.hold`) on the root logger's handler
    that :func:`configure` installed; answers whether it does (no such handler: False)."""
    handler = next((h for h in logging.getLogger().handlers if type(h) is StderrHandler), None)
    return handler is not None and handler.hold(seconds)


def stop_holding() -> None:
    """Write the lines the root logger's handler holds, and hold no more (a worker's exit)."""
    for handler in logging.getLogger().handlers:
        if type(handler) is StderrHandler:
            handler.stop_holding()
