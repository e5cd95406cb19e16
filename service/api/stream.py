"""Server-Sent Events: ``GET /v1/games/{id}/events/stream``, and what every event stream route
shares (the resume position, the response, this app's hubs).

One ``event: game_event`` per game event (``id:`` = version, ``data:`` the event as the caller
may see it), resumable with ``Last-Event-ID`` (or ``?after=``), a keep-alive comment at least
every 15 s, and ``event: end`` (data: the result) when the game is over. A subscriber catches up
by reading the stream itself, then follows the game's hub (``hub.py``): one ``XREAD`` per game per
process, each event redacted and encoded once per viewer class. gunicorn runs gevent workers so
that hundreds of subscribers are cheap greenlets and never starve the action endpoints (see
gunicorn_conf.py). The player stream (``players.py``) is served the same way.
"""

from __future__ import annotations

import re
from typing import Callable

from flask import Response, current_app, request, stream_with_context

from .. import metrics
from ..application import GameService
from ..config import sse_keepalive_ms
from ..engine import Viewer
from ..store.events import StreamFollower
from . import Blueprint
from .errors import MalformedRequest
from .games import bearer_token, caller, load, service
from .hub import Hubs, Position, Source, follow
from .sources import GameSource

blp = Blueprint("stream", __name__, url_prefix="/v1", description="Live event streams")

#: At most this long between two writes on an idle stream (a comment keeps proxies open).
KEEPALIVE_MS = sse_keepalive_ms()

#: The answers every event stream route documents for its caps (``streamcaps.py``).
CAPPED = {429: "`too_many_streams`: this token or address holds as many event streams of this "
               "server process as it may (`details.per`, `details.max`; see Retry-After)",
          503: "`streams_full`: this server process holds as many event streams as it may "
               "(`details.max`), or `store_unavailable` (see Retry-After)"}


def resume_after(parse: Callable[[str], Position], start: Position, what: str) -> Position:
    """Where a stream resumes: after ``Last-Event-ID``, else after ``?after=``, else (both
    absent or empty) after ``start``. ``parse`` raises ValueError for a bad one: a 400
    ``invalid_last_event_id`` saying ``what`` it must be."""
    raw = request.headers.get("Last-Event-ID") or request.args.get("after")
    if not raw:
        return start
    try:
        return parse(raw)
    except ValueError:
        raise MalformedRequest("invalid_last_event_id", what) from None


def resumed() -> bool:
    """Whether the request names a position to resume after (``Last-Event-ID``, ``?after=``)."""
    return bool(request.headers.get("Last-Event-ID") or request.args.get("after"))


def app_hubs(name: str, source: Callable[[GameService, StreamFollower], Source]) -> Hubs:
    """This app's hubs of one kind of stream, made on first use (in the worker process: after
    gevent's patching) with ``source(service, follower)``."""
    ext = current_app.extensions
    found = ext.get(name)
    if found is None:
        made = Hubs(source(service(), ext["cartouche_streams"]), keepalive_ms=KEEPALIVE_MS)
        found = ext.setdefault(name, made)
    return found


def event_stream(hubs: Hubs, key: str, viewer: Viewer, after: Position, *,
                 ends: bool = True) -> Response:
    """The ``text/event-stream`` response following ``key`` after ``after``, counted against
    this process's stream caps (``streamcaps.py``: a 429 or 503 past them) until it is
    closed. A stream resumed at or after its end (the end event's id: a browser's
    ``EventSource`` reconnecting once the server closed it) is a 204, which tells an
    ``EventSource`` to stop, not the end event again (``ends``: the stream has an end to
    look for; a player's never ends)."""
    if ends and resumed() and hubs.source.settle(key, after, None)[0] is not None:
        nothing_more = Response(status=204)
        del nothing_more.headers["Content-Type"]
        return nothing_more
    give_back = current_app.extensions["cartouche_stream_caps"].take(bearer_token(),
                                                                      request.remote_addr)
    headers = {"Cache-Control": "no-cache", "X-Accel-Buffering": "no"}
    response = Response(stream_with_context(follow(hubs, key, viewer, after)),
                        mimetype="text/event-stream", headers=headers)
    response.call_on_close(give_back)
    response.call_on_close(metrics.stream_opened(
        "player" if request.blueprint == "players" else "game"))
    return response


#: The answer to a stream resumed at or after its end, as the contract documents it.
ENDED = ("resumed at or after the end event's id (a browser's EventSource reconnecting after "
         "the end): nothing more; EventSource stops reconnecting on a 204")


#: The largest version a stream resumes after (the largest integer JSON carries exactly).
MAX_RESUME_VERSION = 2**53


#: A resume version as the contract spells it: ASCII digits only (``int`` would also take
#: signs, spaces, underscores and other scripts' digits).
VERSION_TEXT = re.compile(r"[0-9]{1,16}")


def _version(raw: str) -> int:
    if VERSION_TEXT.fullmatch(raw) is None:
        raise ValueError(raw)
    after = int(raw)
    if after > MAX_RESUME_VERSION:
        raise ValueError(raw)
    return after


#: The resume parameters of a stream whose positions are versions (the header's 15 digits
#: stay below :data:`MAX_RESUME_VERSION`, so every value the contract allows is accepted).
RESUME_AFTER_VERSION = [{"in": "header", "name": "Last-Event-ID", "required": False,
                         "schema": {"type": "string", "pattern": "^([0-9]{1,15})?$"},
                         "description": "resume after this version (empty: as if absent)"},
                        {"in": "query", "name": "after", "required": False,
                         "schema": {"type": "integer", "minimum": 0,
                                    "maximum": MAX_RESUME_VERSION}}]


@blp.route("/games/<gid:game_id>/events/stream")
@blp.doc(operationId="streamEvents", responses={"200": {
    "description": "text/event-stream: `event: game_event` (id = version) ... `event: end`",
    "content": {"text/event-stream": {"schema": {
        "type": "string", "description": "the stream's text, read as it comes; each "
                                         "message's data, JSON: an event (game_event) or "
                                         "{status, version, result} (end)"}}}},
    "204": {"description": ENDED}}, parameters=RESUME_AFTER_VERSION)
@blp.alt_response(400, schema="Error", description="bad Last-Event-ID")
@blp.alt_response(401, schema="Error", description="bad token")
@blp.alt_response(404, schema="Error", description="unknown game")
@blp.alt_response(429, schema="Error", description=CAPPED[429])
@blp.alt_response(503, schema="Error", description=CAPPED[503])
def stream_events(game_id):
    """Follow a game live: its events as the caller may see them, then an end event."""
    table = load(game_id)
    viewer = caller(table)
    after = resume_after(_version, 0, "Last-Event-ID is a version number")
    return event_stream(app_hubs("cartouche_hubs", GameSource), table.id, viewer, after)
