"""Server-Sent Events: ``GET /v1/games/{id}/events/stream``.

One ``event: game_event`` per game event (``id:`` = version, ``data:`` the event as the caller
may see it), resumable with ``Last-Event-ID`` (or ``?after=``), a keep-alive comment at least
every 15 s, and ``event: end`` (data: the result) when the game is over. A subscriber catches up
by reading the stream itself, then follows the game's hub (``hub.py``): one ``XREAD`` per game per
process, each event redacted and encoded once per viewer class. gunicorn runs gevent workers so
that hundreds of subscribers are cheap greenlets and never starve the action endpoints (see
gunicorn_conf.py).
"""

from __future__ import annotations

import os

from flask import Response, current_app, request, stream_with_context

from . import Blueprint
from .errors import MalformedRequest
from .games import caller, load, service
from .hub import Hubs, follow

blp = Blueprint("stream", __name__, url_prefix="/v1", description="Live event streams")

#: At most this long between two writes on an idle stream (a comment keeps proxies open).
KEEPALIVE_MS = int(os.environ.get("CARTOUCHE_SSE_KEEPALIVE_MS", "15000"))


def _start_after(query_after: str | None) -> int:
    raw = request.headers.get("Last-Event-ID") or query_after or "0"
    try:
        after = int(raw)
    except ValueError:
        after = -1
    if not 0 <= after <= 2**53:
        raise MalformedRequest("invalid_last_event_id", "Last-Event-ID is a version number")
    return after


def hubs() -> Hubs:
    """This app's hubs (made on first use, in the worker process: after gevent's patching)."""
    ext = current_app.extensions
    found = ext.get("cartouche_hubs")
    if found is None:
        found = ext.setdefault("cartouche_hubs", Hubs(service(), ext["cartouche_streams"],
                                                      keepalive_ms=KEEPALIVE_MS))
    return found


@blp.route("/games/<gid:game_id>/events/stream")
@blp.doc(operationId="streamEvents", responses={"200": {
    "description": "text/event-stream: `event: game_event` (id = version) ... `event: end`",
    "content": {"text/event-stream": {"schema": {
        "type": "object", "description": "each event's data: an event (game_event) or "
                                         "{status, version, result} (end)"}}}}},
    parameters=[{"in": "header", "name": "Last-Event-ID", "required": False,
                 "schema": {"type": "string", "pattern": "^[0-9]{1,16}$"},
                 "description": "resume after this version"},
                {"in": "query", "name": "after", "required": False,
                 "schema": {"type": "integer", "minimum": 0}}])
@blp.alt_response(400, schema="Error", description="bad Last-Event-ID")
@blp.alt_response(401, schema="Error", description="bad token")
@blp.alt_response(404, schema="Error", description="unknown game")
def stream_events(game_id):
    """Follow a game live: its events as the caller may see them, then an end event."""
    table = load(game_id)
    viewer = caller(table)
    after = _start_after(request.args.get("after"))
    headers = {"Cache-Control": "no-cache", "X-Accel-Buffering": "no"}
    return Response(stream_with_context(follow(hubs(), table.id, viewer, after)),
                    mimetype="text/event-stream", headers=headers)
