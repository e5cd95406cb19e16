"""The API's performance shortcuts, all of them, each named as such.

1. The direct JSON body read (:func:`read_body`): a body with a Content-Length within the limit
   is read straight from the WSGI input (werkzeug's stream wrappers cost more than the read);
   every route's body goes through it (:func:`json_body`, webargs' parser in ``__init__``).
2. The lean action path (:func:`lean_action_view`): ``POST /v1/games/{id}/actions`` with the
   common well-formed body (``ActionRequestSchema.fast_load``) goes straight to the command,
   without the webargs/flask-smorest layers around ``games.post_action`` (they document it; its
   Response would pass through them unchanged). Any other body goes through ``post_action``
   itself, whose schema answers it word for word. :func:`install_lean_action` puts it in
   place once the blueprint is registered (the OpenAPI document is built from
   ``post_action``'s decorators).
"""

from __future__ import annotations

import orjson
from flask import Flask, request
from webargs import core

from ..schemas import ActionRequestSchema
from .errors import MalformedRequest

#: the action endpoint (``games.post_action``)
ACTION_ENDPOINT = "games.post_action"


def read_body(req) -> bytes:
    """The raw body, read once per request. A body with a Content-Length within the limit is
    read straight from the WSGI input; any other (chunked, over the limit: 413) goes through
    werkzeug."""
    env = req.environ
    data = env.get("cartouche.body")
    if data is None:
        length, limit = env.get("CONTENT_LENGTH", ""), req.max_content_length
        if (length.isdigit() and (limit is None or int(length) <= limit)
                and "HTTP_TRANSFER_ENCODING" not in env):
            data = env["wsgi.input"].read(int(length)) if int(length) else b""
        else:
            data = req.get_data(cache=True)
        env["cartouche.body"] = data
    return data


def json_body(req):
    """The body decoded by orjson (``core.missing`` when there is none): deep nesting and
    integers past 64 bits are a clean 400, like malformed JSON."""
    data = read_body(req)
    if not data:
        return core.missing
    try:
        return orjson.loads(data)
    except (orjson.JSONDecodeError, RecursionError, UnicodeDecodeError):
        raise MalformedRequest("malformed_json", "the body is not valid JSON (or nests deeper "
                               "than 1024 levels, or has an integer outside 64 bits)") from None


def lean_action_view(full_view, act):
    """The view Flask runs for the action endpoint: the common body straight to ``act(body,
    game_id)``, any other through ``full_view`` (the documented route)."""

    def post_action_lean(game_id):
        body = json_body(request)
        body = None if body is core.missing else ActionRequestSchema.fast_load(body)
        if body is None:
            return full_view(game_id=game_id)
        return act(body, game_id)

    return post_action_lean


def install_lean_action(app: Flask) -> None:
    """Run :func:`lean_action_view` for the action endpoint (after its blueprint is
    registered)."""
    from . import games  # the routes' module; it does not import this one

    app.view_functions[ACTION_ENDPOINT] = lean_action_view(games.post_action,
                                                           games.act_as_caller)
