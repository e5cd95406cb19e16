"""What every request gets, whichever path serves it (Flask's hooks in ``service.app``, or the
action route in front of Flask, ``service.api.fastpaths``): a request id (the client's
``X-Request-ID`` when it is safe, else a new one: ``logs.request_id_from``) in every log line it
causes and echoed on its response, a count in the HTTP metrics, and one ``cartouche.access``
log line (unless the access log is off). A path segment as long as a token (a client that
put its token in the URL) is written masked in that line: ``logged_path``."""

from __future__ import annotations

import logging
import re
import time

from .. import logs, metrics

access_log = logging.getLogger("cartouche.access")

#: A path segment of 32 characters or more: no id the API serves is that long (games, players,
#: seeks and tournaments have 16 hex digits after a short prefix); every token is (43 or more).
TOKEN_LIKE = re.compile(r"[^/]{32,}")
#: The longest path written as it is: the API's own paths with their ids are shorter.
SHORT_PATH = 48


def logged_path(path: str) -> str:
    """``path`` as the access line shows it: each segment of :data:`TOKEN_LIKE`'s length
    replaced by ``<N chars>``, so that a token sent in a URL by mistake is not logged."""
    if len(path) <= SHORT_PATH:
        return path
    return TOKEN_LIKE.sub(lambda m: f"<{len(m.group())} chars>", path)


def begin(environ: dict) -> None:
    """A request starts: its clock and its id."""
    environ["cartouche.started"] = time.perf_counter()
    rid = environ["cartouche.request_id"] = logs.request_id_from(
        environ.get("HTTP_X_REQUEST_ID"))
    logs.REQUEST_ID.set(rid)


def end(environ: dict, response, method: str, path: str, route: str,
        log_access: bool) -> None:
    """A request's ``response`` is ready: its id on it, the metrics and the access log line.
    ``route``: the URL rule that matched (``"unmatched"`` when none did)."""
    rid = environ.get("cartouche.request_id")
    if rid is None:  # a response made before ``begin``
        return
    response.headers["X-Request-ID"] = rid
    seconds = time.perf_counter() - environ["cartouche.started"]
    status = response.status_code
    metrics.observe_request(method, route, status, seconds)
    if log_access and access_log.isEnabledFor(logging.INFO):
        path = logged_path(path)
        ms = round(seconds * 1000, 1)
        logs.log_fields(access_log, logging.INFO, f"{method} {path} {status} {ms:.1f}ms",
                        {"method": method, "path": path, "route": route, "status": status,
                         "duration_ms": ms, "remote": environ.get("REMOTE_ADDR")}, hold=True)


def forget() -> None:
    """A request is over: later log lines are not its."""
    logs.REQUEST_ID.set(None)
