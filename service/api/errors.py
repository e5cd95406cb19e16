"""One error model for every response: ``{"error": {"code", "message", "details"}}``.

Every error the service answers with is a :class:`service.engine.CodedError`; :data:`ANSWERS`
is the one table of what each class is on the wire, and :func:`answer` (registered once, in
:func:`register`) renders it. Routes raise; they never pick a status.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Callable

import orjson
from flask import Flask, Response
from werkzeug.exceptions import HTTPException

from ..application.errors import (CannotAbort, CannotRematch, DeadlinePassed, Forbidden,
                                  GameNotFinished, IdempotencyKeyReused, InvalidSeat,
                                  SeatUnavailable, IllegalAction, InvalidOptions,
                                  InvalidRequest, InvalidToken, NotFound, NotYourTurn,
                                  SeatNotHuman, SeekEnded, SeeksFull, TooManySeeks,
                                  TournamentsFull,
                                  VersionConflict)
from ..clock import ClockError
from ..engine import CodedError
from ..engine.text import InvalidText
from ..engine.tournament import TournamentRefused
from ..schemas import NotAnInteger
from ..store.errors import UNAVAILABLE, StoreFull, StoreUnavailable, is_full
from ..store.quota import QuotaExceeded
from ..webhooks import TooManySubscriptions
from .streamcaps import StreamsFull, TooManyStreams

log = logging.getLogger("cartouche.api")


class MalformedRequest(CodedError):
    """A request the HTTP layer cannot read: malformed JSON, a bad header value."""


class UnsupportedMediaType(CodedError):
    """A body that is not declared as JSON (``Content-Type``)."""


class VerifierBusy(CodedError):
    """This process runs as many verifications as it may at once."""

    def __init__(self) -> None:
        super().__init__("verifier_busy", "too many exports are being verified; retry in a "
                         "second", {"retry_after_s": 1})


class VerificationTooCostly(CodedError):
    """An export whose verification would take longer than the server allows."""

    def __init__(self, budget_s: float) -> None:
        super().__init__("verification_too_costly", f"verifying this export takes more than "
                         f"{budget_s:g} s of the server; verify it offline "
                         "(python -m service.replay verify)", {"budget_s": budget_s})


@dataclass(frozen=True)
class Answer:
    """How the errors of one class appear on the wire."""

    status: int
    #: None: the error's own code is the wire code. A string: the wire code for every error of
    #: the class, with the error's own code in ``details.code`` (then its details).
    code: str | None = None
    #: response headers taken from the error
    headers: Callable[[CodedError], dict[str, str]] | None = None


def _retry_after(exc: CodedError) -> dict[str, str]:
    return {"Retry-After": str(exc.details["retry_after_s"])}


#: The one table. A class not listed answers as its nearest listed base class.
ANSWERS: dict[type[CodedError], Answer] = {
    MalformedRequest: Answer(400),  # malformed_json, json_too_deep, invalid_idempotency_key, ...
    InvalidText: Answer(400),  # invalid_text: a control or format character in free text
    UnsupportedMediaType: Answer(415),  # unsupported_media_type
    VerificationTooCostly: Answer(413),  # verification_too_costly
    VerifierBusy: Answer(503, headers=_retry_after),  # verifier_busy
    InvalidToken: Answer(401),  # invalid_token
    # spectator_cannot_act, platform_key_required, fork_forbidden, not_your_seek
    Forbidden: Answer(403),
    SeatNotHuman: Answer(403),  # seat_not_human
    # game_not_found, game_type_not_found, guide_not_found, version_not_found,
    # webhook_not_found, seek_not_found
    NotFound: Answer(404),
    NotYourTurn: Answer(409),  # not_your_turn, the reason in details.code
    VersionConflict: Answer(409),  # version_conflict, details.current_version
    DeadlinePassed: Answer(409),  # deadline_passed
    CannotAbort: Answer(409),  # cannot_abort
    CannotRematch: Answer(409),  # cannot_rematch
    # seat_taken, game_full, not_invited, already_seated, not_seated, game_started,
    # game_aborted
    SeatUnavailable: Answer(409),
    InvalidSeat: Answer(422),  # invalid_seat
    GameNotFinished: Answer(409),  # game_not_finished
    SeekEnded: Answer(409),  # seek_matched (details.game_id), seek_expired
    TooManySeeks: Answer(409),  # too_many_seeks (details.max)
    TournamentRefused: Answer(409),  # round_not_finished, tournament_finished, ...
    IllegalAction: Answer(422, "illegal_action"),  # the rule's code in details.code
    InvalidOptions: Answer(422, "invalid_options"),
    ClockError: Answer(422, "invalid_options"),  # details.code: invalid_clock
    InvalidRequest: Answer(422),  # unknown_game_type, invalid_options, ...
    NotAnInteger: Answer(422),  # not_an_integer: 3.0 where an integer is expected
    IdempotencyKeyReused: Answer(422),  # idempotency_key_reused
    TooManySubscriptions: Answer(422),  # too_many_webhooks
    QuotaExceeded: Answer(429, headers=_retry_after),  # rate_limited
    TooManyStreams: Answer(429, headers=_retry_after),  # too_many_streams (details.per, max)
    StoreUnavailable: Answer(503, headers=lambda exc: {"Retry-After": "1"}),
    StoreFull: Answer(503, headers=_retry_after),  # store_full: at its memory limit
    SeeksFull: Answer(503, headers=_retry_after),  # seeks_full (details.max)
    TournamentsFull: Answer(503, headers=_retry_after),  # tournaments_full (details.max)
    StreamsFull: Answer(503, headers=_retry_after),  # streams_full (details.max)
}
#: Failures of the store itself (``service.store.errors.UNAVAILABLE``) answer as
#: StoreUnavailable, its refusals of writes at its memory limit (``is_full``) as StoreFull,
#: whatever route raised them; anything else unexpected is a 500 ``internal_error`` (and
#: logged).


def error_response(status: int, code: str, message: str, details: dict | None = None,
                   headers: dict | None = None):
    """The error answer, its body encoded with orjson as the app's JSON provider
    (``api.OrjsonProvider``) encodes; it needs no application context (the action route,
    ``fastpaths.ActionRoute``, answers its errors outside one)."""
    body = {"error": {"code": code, "message": message, "details": details or {}}}
    resp = Response(orjson.dumps(body, option=orjson.OPT_NON_STR_KEYS), status=status,
                    mimetype="application/json")
    for k, v in (headers or {}).items():
        resp.headers[k] = v
    return resp


def _find(cls: type) -> Answer | None:
    for base in cls.__mro__:
        found = ANSWERS.get(base)
        if found is not None:
            return found
    return None


def coded_response(exc: CodedError):
    """The response for ``exc`` as :data:`ANSWERS` says (a 500 for an unlisted class)."""
    found = _find(type(exc))
    if found is None:
        log.error("no answer for %s (%s)", type(exc).__name__, exc.code)
        return error_response(500, "internal_error", "an internal error occurred")
    if found.code is None:
        code, details = exc.code, exc.details
    else:
        code, details = found.code, {"code": exc.code, **exc.details}
    return error_response(found.status, code, exc.message, details,
                          found.headers(exc) if found.headers else None)


_HTTP_CODES = {
    400: "malformed_request",
    401: "unauthorized",
    403: "forbidden",
    404: "not_found",
    405: "method_not_allowed",
    406: "not_acceptable",
    413: "body_too_large",
    415: "unsupported_media_type",
    416: "range_not_satisfiable",
    429: "rate_limited",
}


#: Where webargs found what it refused: the first level of its messages, not a field's name.
_LOCATIONS = frozenset({"json", "query", "querystring", "form", "headers", "cookies", "files",
                        "view_args", "path", "json_or_form"})


#: Fields a schema refusal lists at most (``details.fields``); ``details.fields_omitted``
#: counts the others (a body of many unknown fields would be answered at twice its size).
FIELDS_LISTED = 50


def field_messages(messages: dict) -> tuple[dict[str, list[str]], int]:
    """Webargs' nested messages (``{"json": {"seats": {0: {"name": [...]}}}}``) as
    ``details.fields``: ``{"seats.0.name": [...]}``, a dotted path per field, the request's
    location left out, at most :data:`FIELDS_LISTED` of them; and how many more were left out
    (a nested group past the cap counted once)."""
    out: dict[str, list[str]] = {}
    omitted = 0

    def walk(node, path: str) -> None:
        nonlocal omitted
        if len(out) >= FIELDS_LISTED and (path or "_schema") not in out:
            omitted += 1
            return
        if isinstance(node, dict):
            for key, value in node.items():
                walk(value, f"{path}.{key}" if path else str(key))
        elif isinstance(node, (list, tuple)) and all(isinstance(m, str) for m in node):
            out.setdefault(path or "_schema", []).extend(node)
        else:  # anything else webargs might say: its text, under that path
            out.setdefault(path or "_schema", []).append(str(node))

    for location, found in messages.items():
        walk(found, "" if location in _LOCATIONS else str(location))
    return out, omitted


def _http_response(exc: HTTPException):
    """Werkzeug's own errors: unknown routes, wrong methods, bodies over the limit, and
    webargs' schema refusals."""
    status = exc.code or 500
    data = getattr(exc, "data", None) or {}
    if "messages" in data:  # webargs validation (flask-smorest)
        listed, omitted = field_messages(data["messages"])
        details = {"fields": listed, **({"fields_omitted": omitted} if omitted else {})}
        return error_response(400, "invalid_request", "the request does not match the schema",
                              details)
    if status == 400:
        return error_response(400, "malformed_json", "the body is not valid JSON")
    if status >= 500:
        log.error("HTTP %s: %s", status, exc)
        return error_response(500, "internal_error", "an internal error occurred")
    headers = {k: v for k, v in exc.get_headers() if k.lower() in ("allow", "content-range")}
    return error_response(status, _HTTP_CODES.get(status, "http_error"), exc.name,
                          headers=headers)


def precondition_failed():
    """A static file asked for with an ``If-Match`` naming none of its versions (werkzeug's
    own 412 carries the file itself)."""
    return error_response(412, "precondition_failed", "If-Match names no version of this file")


def answer(exc: Exception):
    """The error handler: every exception a request raises ends here."""
    if isinstance(exc, CodedError):
        return coded_response(exc)
    if isinstance(exc, HTTPException):
        return _http_response(exc)
    if isinstance(exc, UNAVAILABLE):
        log.warning("store unavailable: %s", exc)
        return coded_response(StoreUnavailable())
    if is_full(exc):
        log.warning("store full, write refused: %s", exc)
        return coded_response(StoreFull())
    if isinstance(exc, RecursionError):
        return error_response(400, "malformed_json", "the body is nested too deeply")
    log.exception("unhandled error")
    return error_response(500, "internal_error", "an internal error occurred")


def register(app: Flask) -> None:
    """Install :func:`answer` (after the Api: it replaces flask-smorest's HTTP handler)."""
    app.register_error_handler(HTTPException, answer)
    app.register_error_handler(Exception, answer)


#: The documented 429 and 503 of the routes that write (their ``descriptions``).
LIMITED_DOC = ("rate limited, or a budget of bytes stored spent (`details.limit`: "
               "`stored_bytes`); see Retry-After")
STORE_DOC = ("`store_unavailable`; on a write, `store_full`: the store is at its memory limit "
             "(see Retry-After)")


def alt_errors(blp, descriptions: dict[int, str], *statuses: int):
    """Document the error responses ``statuses`` of an endpoint of ``blp`` (one schema).

    Documentation only: flask-smorest's ``alt_response`` wraps the view in one more function
    per status (each call going through ``ensure_sync``); here its decorators run on a
    throwaway wrapper and only the documentation they build is kept on the view."""
    from .. import schemas

    def deco(fn):
        documented = fn
        for status in statuses:
            documented = blp.alt_response(status, schema=schemas.ErrorSchema,
                                          description=descriptions[status])(documented)
        fn._apidoc = documented._apidoc
        return fn
    return deco
