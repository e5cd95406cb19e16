"""The HTTP shell: blueprints, the OpenAPI document and its readable page."""

from __future__ import annotations

import marshmallow as ma
import orjson
from flask import Response
from flask.json.provider import JSONProvider
import flask_smorest
from flask_smorest import Api
from webargs import core
from webargs.flaskparser import FlaskParser
from werkzeug.routing import BaseConverter

from .. import schemas


class JsonParser(FlaskParser):
    """webargs' parser with orjson: deep nesting and integers past 64 bits are a clean 400.

    A schema given as a class is instantiated once and reused (webargs builds a new instance,
    with deep copies of every field, on every request; our schemas keep no per-request state).
    """

    DEFAULT_VALIDATION_STATUS = 400

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self._instances: dict[type, ma.Schema] = {}

    def parse(self, argmap, req=None, *, location=None, **kwargs):
        """A JSON body schema with a ``fast_load(body)`` (see ActionRequestSchema) is tried
        first: it accepts the common well-formed body, or answers None and the schema itself
        parses it (so every refusal is the schema's, word for word)."""
        if getattr(argmap, "fast_load", None) is not None and location == "json":
            loaded = self.fast_body(req if req is not None else self.get_default_request(),
                                    argmap)
            if loaded is not None:
                return loaded
        return super().parse(argmap, req, location=location, **kwargs)

    def fast_body(self, req, schema: type[ma.Schema]):
        """The JSON body as ``schema.fast_load`` loads it; None when there is no body or it
        is not of the common shape (the schema must then parse it). Malformed JSON is a 400."""
        body = self._raw_load_json(req)
        return None if body is core.missing else schema.fast_load(body)

    def _get_schema(self, argmap, req):
        if isinstance(argmap, type) and issubclass(argmap, ma.Schema):
            schema = self._instances.get(argmap)
            if schema is None:
                schema = self._instances[argmap] = argmap()
            return schema
        return super()._get_schema(argmap, req)

    @staticmethod
    def _body(req) -> bytes:
        """The raw body, read once per request. A body with a Content-Length within the limit
        is read straight from the WSGI input (werkzeug's stream wrappers cost more than the
        read); any other (chunked, over the limit: 413) goes through werkzeug."""
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

    def _raw_load_json(self, req):
        from .errors import MalformedRequest

        data = self._body(req)
        if not data:
            return core.missing
        try:
            return orjson.loads(data)
        except (orjson.JSONDecodeError, RecursionError, UnicodeDecodeError):
            raise MalformedRequest("malformed_json", "the body is not valid JSON (or nests "
                                   "deeper than 1024 levels, or has an integer outside 64 "
                                   "bits)") from None


class Blueprint(flask_smorest.Blueprint):
    """flask-smorest's Blueprint with our JSON parser (400 for bad bodies)."""

    ARGUMENTS_PARSER = JsonParser()


def json_response(body, status: int = 200) -> Response:
    """``body`` already in its documented wire shape, encoded once with orjson.

    For hot endpoints whose view builds exactly the fields of its response schema: flask-smorest
    passes a Response through as is, so the schema documents the body without a marshmallow
    dump on every request (tests check the two agree)."""
    return Response(orjson.dumps(body), status=status, mimetype="application/json")


class OrjsonProvider(JSONProvider):
    def dumps(self, obj, **kwargs) -> str:
        return orjson.dumps(obj, option=orjson.OPT_NON_STR_KEYS).decode()

    def loads(self, s, **kwargs):
        return orjson.loads(s)


class CartoucheApi(Api):
    ERROR_SCHEMA = schemas.ErrorSchema
    DEFAULT_ERROR_RESPONSE_NAME = None  # every endpoint lists its own error responses


class GameIdConverter(BaseConverter):
    """Game ids are lowercase hex; anything else (``/v1/games/bulk``) is another route."""

    regex = "[0-9a-f]{1,64}"


def game_id_schema(converter) -> dict:
    return {"type": "string", "pattern": "^[0-9a-f]{1,64}$"}
