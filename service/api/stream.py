"""Server-Sent Events: ``GET /v1/games/{id}/events/stream``.

One ``event: game_event`` per game event (``id:`` = version, ``data:`` the event as the caller
may see it), resumable with ``Last-Event-ID`` (or ``?after=``), a keep-alive comment at least
every 15 s, and ``event: end`` (data: the result) when the game is over. Each subscriber blocks
in ``XREAD`` on the game's stream; gunicorn runs gevent workers so that hundreds of subscribers
are cheap greenlets and never starve the action endpoints (see gunicorn_conf.py).
"""

from __future__ import annotations

import orjson
from flask import Response, current_app, request, stream_with_context

from ..store import keys
from . import Blueprint
from .errors import ApiError
from .games import caller, load, service

blp = Blueprint("stream", __name__, url_prefix="/v1", description="Live event streams")

import os

#: At most this long between two writes on an idle stream (a comment keeps proxies open).
KEEPALIVE_MS = int(os.environ.get("CARTOUCHE_SSE_KEEPALIVE_MS", "15000"))
BATCH = 200


def _start_after(query_after: str | None) -> int:
    raw = request.headers.get("Last-Event-ID") or query_after or "0"
    try:
        after = int(raw)
    except ValueError:
        raise ApiError(400, "invalid_last_event_id", "Last-Event-ID is a version number") \
            from None
    if not 0 <= after <= 2**53:
        raise ApiError(400, "invalid_last_event_id", "Last-Event-ID is a version number")
    return after


def sse(event: str, data, event_id: int | None = None) -> bytes:
    head = f"id: {event_id}\n" if event_id is not None else ""
    return f"{head}event: {event}\n".encode() + b"data: " + orjson.dumps(data) + b"\n\n"


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
    svc = service()
    blocking = current_app.extensions["cartouche_streams"]
    stream_key = keys.events(game_id)

    def generate():
        nonlocal after
        yield b"retry: 2000\n\n"
        stored = svc.store.read(game_id, after, count=BATCH)  # catching up
        while True:
            if stored:
                # the game as of this batch or later: redaction as of now
                current = svc.load_recent(game_id, stored[-1].version)
                served = svc.served_events(current, [s.envelope for s in stored],
                                           stored[0].version, viewer)
                for ev in served:
                    yield sse("game_event", ev, ev["version"])
                after = stored[-1].version
                if len(stored) == BATCH:  # maybe more behind it
                    stored = svc.store.read(game_id, after, count=BATCH)
                    continue
            else:
                current = svc.load(game_id)
            if current.over and after >= current.version:
                yield sse("end", {"status": current.status, "version": current.version,
                                  "result": current.result()}, current.version)
                return
            # XREAD hands back the new entries themselves: no second read to fetch them
            found = blocking.xread({stream_key: f"{after}-0"}, count=BATCH, block=KEEPALIVE_MS)
            stored = svc.store.entries(found[0][1]) if found else []
            if not found:
                yield b": keep-alive\n\n"

    headers = {"Cache-Control": "no-cache", "X-Accel-Buffering": "no"}
    return Response(stream_with_context(generate()), mimetype="text/event-stream",
                    headers=headers)
