"""The access log's direct line (``logs.log_fields``): where only the service's own stderr
handler would see the record, the line is written without a ``LogRecord``, and it is the very
text that handler's formatter writes for the record; anything else on the way gets the record."""

import contextlib
import io
import logging
import os

import pytest

from service import logs

FIELDS = {"method": "POST", "path": "/v1/games/0abc/actions", "route": "/v1/games/<gid>",
          "status": 201, "duration_ms": 1.3, "remote": "127.0.0.1"}
NOW = 1_764_000_000.123456


@contextlib.contextmanager
def only_our_handler(fmt: str = "json"):
    """The root logger with nothing but a StderrHandler writing to a buffer (pytest adds its
    own capture handlers to the root logger while a test runs: they are set aside here)."""
    root = logging.getLogger()
    saved, level = root.handlers[:], root.level
    out = io.StringIO()
    handler = logs.StderrHandler(out)
    handler.setFormatter(logs.formatter(fmt))
    root.handlers[:] = [handler]
    root.setLevel(logging.INFO)
    logs.install_record_factory()
    try:
        yield handler, out
    finally:
        root.handlers[:] = saved
        root.setLevel(level)


def _record_line(handler, logger, message, rid):
    """What the handler's formatter writes for the record ``logger.info`` would make."""
    token = logs.REQUEST_ID.set(rid)
    try:
        record = logger.makeRecord(logger.name, logging.INFO, __file__, 0, message, None, None,
                                   extra=dict(FIELDS))
    finally:
        logs.REQUEST_ID.reset(token)
    record.created = NOW
    return handler.format(record)


@pytest.mark.parametrize("fmt", ["json", "text"])
@pytest.mark.parametrize("rid", ["trace-7", None])
def test_the_direct_line_is_what_the_formatter_writes(monkeypatch, fmt, rid):
    logger = logging.getLogger("cartouche.access")
    made = []
    monkeypatch.setattr(logs.time, "time", lambda: NOW)
    monkeypatch.setattr(logger, "makeRecord", lambda *a, **k: made.append(a))  # never called
    token = logs.REQUEST_ID.set(rid)
    with only_our_handler(fmt) as (handler, out):
        try:
            logs.log_fields(logger, logging.INFO, "POST /v1/games/0abc/actions 201 1.3ms",
                            FIELDS)
        finally:
            logs.REQUEST_ID.reset(token)
    monkeypatch.undo()
    assert made == []
    expected = _record_line(handler, logger, "POST /v1/games/0abc/actions 201 1.3ms", rid)
    assert out.getvalue() == expected + "\n"


def test_a_filter_or_another_handler_gets_the_record():
    logger = logging.getLogger("cartouche.access")
    seen = []

    def keep(record):
        seen.append(record)
        return True

    other = io.StringIO()
    extra = logging.StreamHandler(other)
    with only_our_handler() as (handler, out):
        logger.addFilter(keep)
        try:
            logs.log_fields(logger, logging.INFO, "GET / 200 0.1ms", FIELDS)
        finally:
            logger.removeFilter(keep)
        logging.getLogger("cartouche").addHandler(extra)
        try:
            logs.log_fields(logger, logging.INFO, "GET / 200 0.2ms", FIELDS)
        finally:
            logging.getLogger("cartouche").removeHandler(extra)
    assert len(seen) == 1 and seen[0].route == FIELDS["route"]
    lines = out.getvalue().splitlines()
    assert len(lines) == 2 and all('"route":"/v1/games/<gid>"' in line for line in lines)
    assert other.getvalue() == "GET / 200 0.2ms\n"


def test_a_handler_above_info_writes_nothing():
    with only_our_handler() as (handler, out):
        handler.setLevel(logging.WARNING)
        logs.log_fields(logging.getLogger("cartouche.access"), logging.INFO, "GET / 200 0.1ms",
                        FIELDS)
    assert out.getvalue() == ""


@pytest.mark.parametrize("fmt", ["json", "text"])
@pytest.mark.parametrize("encoding", ["utf-8", "latin-1"])
def test_a_line_on_a_file_is_the_formatters_text_after_what_the_stream_held(
        tmp_path, monkeypatch, fmt, encoding):
    """On stderr-like streams (a text stream over a file descriptor) the line is written as
    bytes to the descriptor when the stream is UTF-8, through the stream otherwise: either
    way the file gets the formatter's text, after anything the stream still held, and every
    line whole."""
    logger = logging.getLogger("cartouche.access")
    path = tmp_path / "stderr.log"
    message = "POST /v1/games/0abc/actions 201 1.3ms \u00e9"
    monkeypatch.setattr(logs.time, "time", lambda: NOW)
    with open(path, "w", encoding=encoding) as stream, only_our_handler(fmt) as (handler, _):
        handler.setStream(stream)
        stream.write("held, ")  # not yet flushed: it must come first
        for _ in range(3):
            logs.log_fields(logger, logging.INFO, message, FIELDS)
        direct = handler.__dict__.get("_descriptor")
        monkeypatch.undo()
        expected = _record_line(handler, logger, message, None)
    assert direct is not None and (direct[1] is not None) == (encoding == "utf-8")
    assert path.read_text(encoding=encoding) == "held, " + (expected + "\n") * 3


def test_a_failed_write_is_reported_as_the_handler_reports_it():
    logger = logging.getLogger("cartouche.access")
    reported = []
    read_end, write_end = os.pipe()
    os.close(read_end)  # nobody reads: a write fails (broken pipe)
    with open(write_end, "w", encoding="utf-8") as stream, \
            only_our_handler() as (handler, _):
        handler.setStream(stream)
        handler.handleError = reported.append
        logs.log_fields(logger, logging.INFO, "GET / 200 0.1ms", FIELDS)
    assert handler.__dict__["_descriptor"] == (stream, write_end)
    assert [r.getMessage() for r in reported] == ["GET / 200 0.1ms"]
    assert reported[0].route == FIELDS["route"]


def test_a_python_warning_is_a_json_line_too():
    """A warning (gevent warns as a gunicorn worker patches the standard library) is written
    in the log's format, not as Python's raw two lines on stderr."""
    import json
    import subprocess
    import sys

    code = ("from service import logs; logs.configure('json'); import warnings; "
            "warnings.warn('patched late', RuntimeWarning)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         timeout=60)
    lines = [json.loads(line) for line in out.stderr.splitlines()]
    assert len(lines) == 1 and lines[0]["logger"] == "py.warnings", out.stderr
    assert "patched late" in lines[0]["message"] and lines[0]["level"] == "WARNING"


def _access(handler_logger, n: int, start: int = 0) -> None:
    for i in range(start, start + n):
        logs.log_fields(handler_logger, logging.INFO, f"GET /{i} 200 0.1ms", FIELDS, hold=True)


def _messages(path) -> list[str]:
    import json

    return [json.loads(line)["message"] for line in path.read_text().splitlines()]


def test_held_access_lines_are_written_together_in_order_with_every_other_line(tmp_path):
    """A worker holds its access lines (``WEB_LOG_WRITE_SECONDS``): they reach the file at the
    interval, before any other line logged after them, all at once at ``HELD_MAX`` lines,
    and when it stops holding; from then on each line is written at once again."""
    import time

    access, other = logging.getLogger("cartouche.access"), logging.getLogger("cartouche.test")
    path = tmp_path / "stderr.log"
    with open(path, "w", encoding="utf-8") as stream, only_our_handler() as (handler, _):
        handler.setStream(stream)
        assert handler.hold(0.3) is True and handler.hold(0.3) is False  # once
        try:
            _access(access, 3)
            assert path.read_text() == ""  # held
            other.warning("an error line")  # written after the lines held before it
            assert _messages(path) == ["GET /0 200 0.1ms", "GET /1 200 0.1ms",
                                       "GET /2 200 0.1ms", "an error line"]
            _access(access, 2, start=3)
            assert len(_messages(path)) == 4
            deadline = time.monotonic() + 5
            while len(_messages(path)) < 6 and time.monotonic() < deadline:
                time.sleep(0.02)
            assert _messages(path)[4:] == ["GET /3 200 0.1ms", "GET /4 200 0.1ms"]
            # bounded: the line that makes HELD_MAX lines held is written with them at once
            handler.HELD_MAX = 5
            _access(access, 4, start=100)
            assert len(_messages(path)) == 6
            _access(access, 1, start=104)
            assert _messages(path)[6:] == [f"GET /{i} 200 0.1ms" for i in range(100, 105)]
            _access(access, 1, start=200)
        finally:
            handler.stop_holding()
        assert _messages(path)[-1] == "GET /200 200 0.1ms"  # written as it stops holding
        _access(access, 1, start=201)  # and at once from then on
        assert _messages(path)[-1] == "GET /201 200 0.1ms"
    assert handler.hold(0) is False


@contextlib.contextmanager
def holding(path, seconds: float = 10):
    """Our handler over the file ``path``, holding its access lines, which it writes as it
    stops holding at the end."""
    with open(path, "w", encoding="utf-8") as stream, only_our_handler() as (handler, _):
        handler.setStream(stream)
        assert handler.hold(seconds)
        try:
            yield handler
        finally:
            handler.stop_holding()


def test_a_forked_child_writes_nothing_its_parent_held(tmp_path):
    access = logging.getLogger("cartouche.access")
    path = tmp_path / "stderr.log"
    with holding(path) as handler:
        _access(access, 1)
        pid = os.fork()
        if pid == 0:  # the child: its own line is written at once, then it exits
            try:
                _access(access, 1, start=1)
                handler.stop_holding()
            finally:
                os._exit(0)
        assert os.waitpid(pid, 0)[1] == 0
        assert _messages(path) == ["GET /1 200 0.1ms"]
    assert _messages(path) == ["GET /1 200 0.1ms", "GET /0 200 0.1ms"]


def test_logging_shutdown_writes_the_held_lines(tmp_path):
    path = tmp_path / "stderr.log"
    with holding(path) as handler:
        _access(logging.getLogger("cartouche.access"), 2)
        assert path.read_text() == ""
        handler.flush()  # what logging.shutdown does at exit
        assert _messages(path) == ["GET /0 200 0.1ms", "GET /1 200 0.1ms"]


def test_lines_are_held_only_over_a_file_descriptor():
    with only_our_handler() as (handler, out):  # a StringIO
        assert handler.hold(1) is False
        _access(logging.getLogger("cartouche.access"), 1)
        assert "GET /0 200 0.1ms" in out.getvalue()


def test_the_write_interval_setting():
    assert logs.write_seconds({}) == 1.0
    assert logs.write_seconds({"WEB_LOG_WRITE_SECONDS": " 0 "}) == 0.0
    assert logs.write_seconds({"WEB_LOG_WRITE_SECONDS": "2.5"}) == 2.5
    for bad in ("soon", "-1", "11", "nan"):
        with pytest.raises(ValueError, match="WEB_LOG_WRITE_SECONDS must be a number of "
                                             "seconds from 0 to 10"):
            logs.write_seconds({"WEB_LOG_WRITE_SECONDS": bad})


@pytest.mark.parametrize("fmt", ["json", "text"])
def test_a_held_line_is_written_as_the_formatter_writes_it(tmp_path, monkeypatch, fmt):
    logger = logging.getLogger("cartouche.access")
    path = tmp_path / "stderr.log"
    message = "POST /v1/games/0abc/actions 201 1.3ms \u00e9"
    monkeypatch.setattr(logs.time, "time", lambda: NOW)
    with open(path, "w", encoding="utf-8") as stream, only_our_handler(fmt) as (handler, _):
        handler.setStream(stream)
        assert handler.hold(10)
        token = logs.REQUEST_ID.set("rid-1")
        try:
            logs.log_fields(logger, logging.INFO, message, dict(FIELDS), hold=True)
        finally:
            logs.REQUEST_ID.reset(token)
        monkeypatch.undo()  # the line is made when written: with the time it was logged at
        assert path.read_text() == ""
        handler.stop_holding()
        expected = _record_line(handler, logger, message, "rid-1")
    assert path.read_text(encoding="utf-8") == expected + "\n"


def test_a_held_line_that_cannot_be_made_is_reported_and_the_others_written(tmp_path):
    logger = logging.getLogger("cartouche.access")
    path = tmp_path / "stderr.log"
    reported = []
    with holding(path) as handler:
        handler.handleError = reported.append
        for message in ("GET /a 200 0.1ms", "GET /\ud800 200 0.1ms", "GET /b 200 0.1ms"):
            logs.log_fields(logger, logging.INFO, message, FIELDS, hold=True)
    assert _messages(path) == ["GET /a 200 0.1ms", "GET /b 200 0.1ms"]
    assert [r.getMessage() for r in reported] == ["GET /\ud800 200 0.1ms"]
