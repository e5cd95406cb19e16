"""One error model for every response: ``{"error": {"code", "message", "details"}}``."""

from __future__ import annotations

import logging

import redis
from flask import Flask, jsonify
from werkzeug.exceptions import HTTPException

log = logging.getLogger("cartouche.api")


class ApiError(Exception):
    def __init__(self, status: int, code: str, message: str, details: dict | None = None,
                 headers: dict | None = None) -> None:
        super().__init__(message)
        self.status = status
        self.code = code
        self.message = message
        self.details = details or {}
        self.headers = headers or {}


def error_response(status: int, code: str, message: str, details: dict | None = None,
                   headers: dict | None = None):
    resp = jsonify({"error": {"code": code, "message": message, "details": details or {}}})
    resp.status_code = status
    for k, v in (headers or {}).items():
        resp.headers[k] = v
    return resp


_HTTP_CODES = {
    400: "malformed_request",
    401: "unauthorized",
    403: "forbidden",
    404: "not_found",
    405: "method_not_allowed",
    406: "not_acceptable",
    413: "body_too_large",
    415: "unsupported_media_type",
    429: "rate_limited",
}


def handle_http_exception(exc: HTTPException):
    status = exc.code or 500
    data = getattr(exc, "data", None) or {}
    if "messages" in data:  # webargs validation (flask-smorest)
        return error_response(400, "invalid_request", "the request does not match the schema",
                              {"fields": data["messages"]})
    if status == 400:
        return error_response(400, "malformed_json", "the body is not valid JSON")
    if status >= 500:
        log.error("HTTP %s: %s", status, exc)
        return error_response(500, "internal_error", "an internal error occurred")
    headers = {k: v for k, v in exc.get_headers() if k.lower() == "allow"}
    return error_response(status, _HTTP_CODES.get(status, "http_error"), exc.name,
                          headers=headers)


def register(app: Flask) -> None:
    app.register_error_handler(HTTPException, handle_http_exception)

    @app.errorhandler(ApiError)
    def _api_error(exc: ApiError):
        return error_response(exc.status, exc.code, exc.message, exc.details, exc.headers)

    @app.errorhandler(redis.exceptions.ConnectionError)
    @app.errorhandler(redis.exceptions.TimeoutError)
    @app.errorhandler(redis.exceptions.BusyLoadingError)
    @app.errorhandler(redis.exceptions.ClusterError)
    @app.errorhandler(redis.exceptions.TryAgainError)
    def _store_down(exc):
        log.warning("store unavailable: %s", exc)
        return error_response(503, "store_unavailable", "the event store is unavailable",
                              headers={"Retry-After": "1"})

    @app.errorhandler(RecursionError)
    def _too_deep(exc):
        return error_response(400, "malformed_json", "the body is nested too deeply")

    @app.errorhandler(Exception)
    def _unexpected(exc):
        log.exception("unhandled error")
        return error_response(500, "internal_error", "an internal error occurred")


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
