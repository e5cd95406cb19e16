"""The HTTP shell: blueprints, the OpenAPI document and its readable page."""

from __future__ import annotations

import functools

import marshmallow as ma
import orjson
from apispec import BasePlugin
from flask import Response
from flask.json.provider import JSONProvider
import flask_smorest
from flask_smorest import Api
from webargs.flaskparser import FlaskParser
from werkzeug.routing import BaseConverter

from .. import schemas
from .fastpaths import json_body


class JsonParser(FlaskParser):
    """webargs' parser with orjson: deep nesting and integers past 64 bits are a clean 400.
    Bodies are read by ``fastpaths.read_body`` (straight from the WSGI input).

    A schema given as a class is instantiated once and reused (webargs builds a new instance,
    with deep copies of every field, on every request; our schemas keep no per-request state).
    """

    DEFAULT_VALIDATION_STATUS = 400

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self._instances: dict[type, ma.Schema] = {}

    def _get_schema(self, argmap, req):
        if isinstance(argmap, type) and issubclass(argmap, ma.Schema):
            schema = self._instances.get(argmap)
            if schema is None:
                schema = self._instances[argmap] = argmap()
            return schema
        return super()._get_schema(argmap, req)

    def _raw_load_json(self, req):
        return json_body(req)


class Blueprint(flask_smorest.Blueprint):
    """flask-smorest's Blueprint with our JSON parser (400 for bad bodies)."""

    ARGUMENTS_PARSER = JsonParser()


def json_response(body, status: int = 200) -> Response:
    """``body`` already in its documented wire shape, encoded once with orjson.

    For hot endpoints whose view builds exactly the fields of its response schema: flask-smorest
    passes a Response through as is, so the schema documents the body without a marshmallow
    dump on every request (tests check the two agree)."""
    return Response(orjson.dumps(body), status=status, mimetype="application/json")


def hands_out_secrets(view):
    """``view``'s answers carry a token or a secret, shown once: ``Cache-Control: no-store``, so
    no cache between the client and the server (a proxy, a browser's history) keeps a copy.
    Placed right under the route, above flask-smorest's decorators, to get their Response."""
    @functools.wraps(view)
    def not_stored(*args, **kwargs):
        answer = view(*args, **kwargs)
        answer.headers["Cache-Control"] = "no-store"
        return answer
    return not_stored


class OrjsonProvider(JSONProvider):
    def dumps(self, obj, **kwargs) -> str:
        return orjson.dumps(obj, option=orjson.OPT_NON_STR_KEYS).decode()

    def loads(self, s, **kwargs):
        return orjson.loads(s)


#: What the HTTP server (``service/webserver.py``) answers before any route sees a request:
#: documented on every operation, 408 on those that take a body.
SERVER_ANSWERS = {
    "414": "`request_line_too_long`: the request line is 8 KiB or more (the HTTP server's "
           "answer; the connection is closed)",
    "431": "`headers_too_large`: the header block is over 64 KiB (the HTTP server's answer; "
           "the connection is closed)",
}
BODY_TIMED_OUT = ("`request_timeout`: the body did not arrive within the server's deadline "
                  "(`WEB_BODY_TIMEOUT`); the connection is closed")
#: What every operation that takes a body may answer before its route reads it.
BODY_ANSWERS = {
    "408": BODY_TIMED_OUT,
    "413": "`body_too_large`: the body is over the server's limit (`CARTOUCHE_MAX_BODY_BYTES`)",
    "415": "`unsupported_media_type`: the body is not declared `application/json`",
}


class ServerAnswers(BasePlugin):
    """An apispec plugin adding :data:`SERVER_ANSWERS` (and :data:`BODY_ANSWERS` to those that
    take a body) to every operation, so that the contract names every status a client can
    get."""

    def operation_helper(self, path=None, operations=None, **kwargs) -> None:
        for operation in (operations or {}).values():
            responses = operation.setdefault("responses", {})
            for status, description in SERVER_ANSWERS.items():
                responses.setdefault(status, {
                    "description": description,
                    "content": {"application/json": {
                        "schema": {"$ref": "#/components/schemas/Error"}}}})
            for status, description in (BODY_ANSWERS if "requestBody" in operation
                                        else {}).items():
                responses.setdefault(status, {
                    "description": description,
                    "content": {"application/json": {
                        "schema": {"$ref": "#/components/schemas/Error"}}}})


class CartoucheApi(Api):
    ERROR_SCHEMA = schemas.ErrorSchema
    DEFAULT_ERROR_RESPONSE_NAME = None  # every endpoint lists its own error responses

    def _init_spec(self, *, extra_plugins=None, **options) -> None:
        super()._init_spec(extra_plugins=[*(extra_plugins or ()), ServerAnswers()], **options)


class GameIdConverter(BaseConverter):
    """Game ids are lowercase hex; anything else (``/v1/games/bulk``) is another route."""

    regex = "[0-9a-f]{1,64}"


def game_id_schema(converter) -> dict:
    return {"type": "string", "pattern": "^[0-9a-f]{1,64}$"}
