"""The API's performance shortcuts, all of them, each named as such.

1. The direct JSON body read (:func:`read_body`): a body with a Content-Length within the limit
   is read straight from the WSGI input (werkzeug's stream wrappers cost more than the read);
   every route's body goes through it (:func:`json_body`, webargs' parser in ``__init__``),
   which also holds the checks every body meets: a JSON Content-Type (else 415), and no
   nesting deeper than :data:`MAX_DEPTH` (else 400), so that whatever is accepted can be
   stored, hashed and validated without reaching a recursion limit.
2. The lean action path (:func:`lean_action_view`): ``POST /v1/games/{id}/actions`` with the
   common well-formed body (``ActionRequestSchema.fast_load``) goes straight to the command,
   without the webargs/flask-smorest layers around ``games.post_action`` (they document it; its
   Response would pass through them unchanged). Any other body goes through ``post_action``
   itself, whose schema answers it word for word. :func:`install_lean_action` puts it in
   place once the blueprint is registered (the OpenAPI document is built from
   ``post_action``'s decorators).
3. The lean Flask application class (:class:`LeanFlask`), for what Flask does on every request
   that this API never needs:

   * ``ensure_sync``: Flask passes every hook and view through it on every request (7 calls
     an action), and it asks ``inspect.iscoroutinefunction`` each time. A plain function whose
     code is not a coroutine's is returned as it is (what Flask returns for it too); anything
     else (a coroutine function, a partial, a bound method, a callable object) still goes
     through Flask's own ``ensure_sync``.
   * sessions: the API has none (no secret key, no cookie is ever read or set), so Flask's
     cookie session interface only makes a fresh empty ``NullSession`` per request. One shared
     ``NullSession`` is handed out instead (it refuses every write, so sharing it is safe; no
     cookie is read or written either way).

4. The action route in front of Flask (:class:`ActionRoute`): ``POST /v1/games/{id}/actions``
   with a JSON body of the common shape (as in 2) is answered by a WSGI callable that wraps the
   Flask app, outside any Flask context: no application or request context, URL matching,
   request object or hook dispatch (nothing it calls needs one: the application layer knows no
   Flask, and error bodies are made without ``jsonify``, ``errors.error_response``). It does
   what the app's hooks do for every request (``service.api.observe``: request id, metrics,
   access log; ``ratelimit.action_quota`` and ``ratelimit.settle``), calls ``games.acted``, the
   work of the ``games.act_as`` the Flask view calls, and answers errors through the same
   ``errors.answer``. A stored action's 201 is answered from its body (``games.acted``) straight
   to the WSGI server (:class:`JsonCreated`: the status line and the headers ``json_response``
   gives, without making a werkzeug Response; measured ~10 µs an answer). Any other request, and
   any action body it does not take as is, goes to Flask. :func:`install_action_route` puts it
   in place only when the app's hooks are exactly the ones it stands in for
   (:data:`ROUTE_STANDS_IN_FOR`): a hook added later (CORS, say) sends every request through
   Flask again until the route learns it.

Every other per-request cost cut lives where the code it shortens is, each with its note:
``service/app.py`` (the request-id, metrics and access-log hooks), ``service/logs.py``
(``rfc3339``: a second's text made once; ``StderrHandler.hold``: a worker's access lines made
and written together), ``service/api/ratelimit.py`` (the limiter's hooks; a client's counter
names made once a window), ``service/metrics.py`` (the request and command counts:
``counting``, ``observing``), ``service/application/identity.py`` (token digests kept),
``service/memo.py`` (reads without a lock).
"""

from __future__ import annotations

from types import FunctionType

import re

import orjson
from flask import Flask, request
from flask.sessions import NullSession, SecureCookieSessionInterface
from webargs import core
from werkzeug.exceptions import ClientDisconnected, RequestEntityTooLarge
from werkzeug.http import HTTP_STATUS_CODES

from ..schemas import ActionRequestSchema
from .errors import MalformedRequest, UnsupportedMediaType

#: the action endpoint (``games.post_action``)
ACTION_ENDPOINT = "games.post_action"
#: The deepest nesting of arrays and objects a body may have (the top level is 1). orjson
#: parses up to 1024 levels but serializes only 254, and validators recurse: a body deeper
#: than this is refused before anything else sees it.
MAX_DEPTH = 64


def read_body(req) -> bytes:
    """The raw body, read once per request: straight from the WSGI input when it can be
    (:func:`direct_body`); any other (chunked; over the limit: 413) goes through werkzeug."""
    data = direct_body(req.environ, req.max_content_length)
    if data is None:
        limit = req.max_content_length
        try:
            data = req.environ["cartouche.body"] = req.get_data(cache=True)
            # werkzeug stops a body without a length (chunked) at the limit without a word:
            # one more byte of the input says whether it went on
            if limit is not None and len(data) >= limit and req.content_length is None \
                    and req.environ["wsgi.input"].read(1):
                raise RequestEntityTooLarge()
        except (OSError, ClientDisconnected):  # (werkzeug's name for the OSError of its reads)
            raise body_cut_short(req.environ) from None
    return data


def direct_body(env: dict, limit: int | None) -> bytes | None:
    """The raw body when it has a Content-Length within ``limit`` and no Transfer-Encoding,
    read straight from the WSGI input once (kept in ``env["cartouche.body"]``); None when
    werkzeug has to read it."""
    data = env.get("cartouche.body")
    if data is None:
        if env.get("cartouche.body_cut_short"):
            raise body_cut_short(env)
        length = env.get("CONTENT_LENGTH", "")
        if (not length.isdigit() or (limit is not None and int(length) > limit)
                or "HTTP_TRANSFER_ENCODING" in env):
            return None
        try:
            data = env["wsgi.input"].read(int(length)) if int(length) else b""
        except OSError:
            raise body_cut_short(env) from None
        env["cartouche.body"] = data
    return data


def body_cut_short(env: dict) -> MalformedRequest:
    """The answer to a body the server could not read to its end (the client went away, or
    sent less than its length): a 400, never a 500. The default HTTP server answers these
    itself (``service.webserver``); another worker class's server raises an OSError from the
    WSGI input. Remembered in ``env``: a second read would not find the body either."""
    env["cartouche.body_cut_short"] = True
    return MalformedRequest("malformed_request", "the request body ended early or was malformed")


def is_json(content_type: str | None) -> bool:
    """``application/json`` or ``application/<anything>+json``, parameters allowed."""
    mimetype = (content_type or "").partition(";")[0].strip().lower()
    return mimetype == "application/json" or (mimetype.startswith("application/")
                                              and mimetype.endswith("+json"))


def too_deep(value: dict | list, limit: int = MAX_DEPTH) -> bool:
    """Whether the array or object ``value`` (level 1) nests arrays and objects more than
    ``limit`` levels deep (level by level, without recursion)."""
    level, depth = [value], 0
    while level:
        depth += 1
        if depth > limit:
            return True
        below = []
        for item in level:
            children = item.values() if type(item) is dict else item
            below.extend(c for c in children if type(c) is dict or type(c) is list)
        level = below
    return False


def json_body(req):
    """The body decoded by orjson (``core.missing`` when there is none). A body of another
    Content-Type is a 415; malformed JSON, integers past 64 bits and nesting deeper than
    :data:`MAX_DEPTH` are a clean 400."""
    data = read_body(req)
    if not data:
        return core.missing
    if not is_json(req.environ.get("CONTENT_TYPE")):
        raise UnsupportedMediaType("unsupported_media_type",
                                   "send the body as 'Content-Type: application/json'")
    return decode_json(data)


def decode_json(data: bytes):
    """``data`` decoded by orjson; malformed JSON, integers past 64 bits and nesting deeper
    than :data:`MAX_DEPTH` raise ``MalformedRequest`` (a clean 400)."""
    try:
        body = orjson.loads(data)
    except (orjson.JSONDecodeError, RecursionError, UnicodeDecodeError) as exc:
        if str(exc).startswith("depth limit exceeded"):  # orjson's own limit, past 1024
            raise _too_deep() from None
        raise MalformedRequest("malformed_json", "the body is not valid JSON (or has an "
                               "integer outside 64 bits)") from None
    if (type(body) is dict or type(body) is list) and too_deep(body):
        raise _too_deep()
    return body


def _too_deep() -> MalformedRequest:
    return MalformedRequest("json_too_deep", f"the body nests arrays and objects deeper than "
                            f"{MAX_DEPTH} levels", {"max_depth": MAX_DEPTH})


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


_CO_COROUTINE = 0x80  # inspect.CO_COROUTINE


class _NoSessions(SecureCookieSessionInterface):
    """No session cookie is ever read or written (the API has no secret key, so Flask's own
    interface reads none either): every request gets the one shared, read-only NullSession."""

    def open_session(self, app, request):  # noqa: ARG002 - Flask's signature
        return None  # Flask then asks make_null_session

    def make_null_session(self, app):  # noqa: ARG002 - Flask's signature
        return _NULL_SESSION


_NULL_SESSION = NullSession()


class LeanFlask(Flask):
    """Flask without the per-request work this API never needs (see the module docstring)."""

    session_interface = _NoSessions()

    def ensure_sync(self, func):
        if type(func) is FunctionType and not func.__code__.co_flags & _CO_COROUTINE:
            return func
        return super().ensure_sync(func)


#: The app's hooks the action route does the work of, by name: before the request, after it
#: (Flask runs these in reverse), at its teardown. ``_bigger_bodies_for_exports`` concerns
#: only ``/v1/replays/verify``.
ROUTE_STANDS_IN_FOR = {
    "before": ("_start", "_bigger_bodies_for_exports", "_rate_limit"),
    "after": ("_finish", "_settle"),
    "teardown": ("_forget",),
}


def _hook_names(funcs: dict) -> dict:
    return {bp: tuple(f.__name__ for f in fs) for bp, fs in funcs.items() if fs}


def _path_pattern(app: Flask, rule: str) -> re.Pattern:
    """The URL rule ``rule`` as a regex of whole paths: each ``<converter:name>`` is its
    converter's regex, in a group of its own."""
    parts, at = [], 0
    for var in re.finditer(r"<(?:(\w+):)?\w+>", rule):
        converter = app.url_map.converters[var.group(1) or "default"]
        parts += [re.escape(rule[at:var.start()]), f"({converter.regex})"]
        at = var.end()
    return re.compile("".join([*parts, re.escape(rule[at:])]))


class ActionRoute:
    """``POST /v1/games/{id}/actions`` in front of the Flask app ``app`` (see the module
    docstring, 4); every other request goes to ``wsgi_app``, Flask's own."""

    def __init__(self, app: Flask, wsgi_app, log_access: bool) -> None:
        from . import errors, games, observe, ratelimit

        self.app, self.wsgi_app, self.log_access = app, wsgi_app, log_access
        (rule,) = app.url_map.iter_rules(ACTION_ENDPOINT)
        self.route = rule.rule  # what the metrics and the access log name the route
        self.path = _path_pattern(app, rule.rule)
        self.games, self.ratelimit, self.observe, self.answer = games, ratelimit, observe, \
            errors.answer

    def __call__(self, environ, start_response):
        if environ.get("REQUEST_METHOD") != "POST":
            return self.wsgi_app(environ, start_response)
        found = self.path.fullmatch(environ.get("PATH_INFO", ""))
        body = found and self._body(environ)
        if body is None:
            return self.wsgi_app(environ, start_response)
        observe = self.observe
        observe.begin(environ)
        try:
            try:
                response = self._respond(environ, found.group(1), body)
            except Exception as exc:  # as Flask's error handler would answer it
                response = self.answer(exc)
            observe.end(environ, response, "POST", environ["PATH_INFO"], self.route,
                        self.log_access)
        finally:
            observe.forget()
        return _send(response, environ, start_response)

    def _respond(self, environ, game_id: str, body: dict):
        """What the app's rate-limit hooks and the action view do, in their order."""
        limiter = self.app.extensions.get("cartouche_ratelimit")
        pending = response = None
        if limiter is not None:
            pending, response = self.ratelimit.action_quota(
                limiter, environ.get("HTTP_AUTHORIZATION"), environ.get("REMOTE_ADDR"))
        if response is None:
            try:
                response = JsonCreated(orjson.dumps(self.games.acted(
                    self.app.extensions["cartouche"], game_id, body,
                    environ.get("HTTP_AUTHORIZATION"), environ.get("HTTP_IDEMPOTENCY_KEY"),
                    pending)))
            except Exception as exc:
                response = self.answer(exc)
        return self.ratelimit.settle(limiter, pending) or response

    def _body(self, environ) -> dict | None:
        """The action body when it is JSON of the common shape within the size limit, else
        None (Flask then answers it, reading the body :func:`direct_body` kept, or refusing the
        one it found cut short)."""
        if not is_json(environ.get("CONTENT_TYPE")):
            return None
        try:
            data = direct_body(environ, self.app.config["MAX_CONTENT_LENGTH"])
            if not data:
                return None
            return ActionRequestSchema.fast_load(decode_json(data))
        except MalformedRequest:
            return None


class JsonCreated:
    """A 201 whose body is JSON (``body``, bytes), as the route answers a stored action: what
    ``json_response(body, 201)`` answers -- the same status line, ``Content-Type``,
    ``Content-Length`` -- plus ``headers`` (the request id), without a werkzeug Response."""

    __slots__ = ("body", "headers")
    status_code = 201
    status = f"201 {HTTP_STATUS_CODES[201].upper()}"

    def __init__(self, body: bytes) -> None:
        self.body = body
        self.headers: dict[str, str] = {}


def _send(response, environ, start_response):
    """``response(environ, start_response)``, for the route's answers without werkzeug's
    per-response copy of the headers: an answer made with bytes (as ``json_response`` and the
    error handlers make them) already carries its Content-Length, and one without a
    ``Location``/``Content-Location``, of a status that has a body and with nothing to run on
    close, is sent with those headers and that body unchanged (what ``get_wsgi_response``
    would send); anything else is werkzeug's. A :class:`JsonCreated` is sent as it is."""
    if type(response) is JsonCreated:
        start_response(response.status, [
            ("Content-Type", "application/json"), ("Content-Length", str(len(response.body))),
            *response.headers.items()])
        return [response.body]
    status = response.status_code
    if response.is_sequence and not response._on_close and 200 <= status \
            and status not in (204, 304):
        headers = response.headers.to_wsgi_list()
        names = {name.lower() for name, _ in headers}
        if "content-length" in names and not names & _FIXED_BY_WERKZEUG:
            start_response(response.status, headers)
            return response.response
    return response(environ, start_response)


_FIXED_BY_WERKZEUG = {"location", "content-location"}


def install_action_route(app: Flask, log_access: bool) -> bool:
    """Put :class:`ActionRoute` in front of ``app`` when its hooks are exactly the ones the
    route stands in for; whether it did."""
    expected = {None: ROUTE_STANDS_IN_FOR}
    found = {None: {"before": (), "after": (), "teardown": ()}}
    for kind, funcs in (("before", app.before_request_funcs), ("after", app.after_request_funcs),
                        ("teardown", app.teardown_request_funcs)):
        for bp, names in _hook_names(funcs).items():
            found.setdefault(bp, {"before": (), "after": (), "teardown": ()})[kind] = names
    if (found != expected or any(app.url_value_preprocessors.values())
            or any(app.url_default_functions.values())):
        return False
    app.wsgi_app = ActionRoute(app, app.wsgi_app, log_access)
    return True
