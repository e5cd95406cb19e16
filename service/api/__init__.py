"""The HTTP shell: blueprints, the OpenAPI document and its readable page."""

from __future__ import annotations

import orjson
from flask.json.provider import JSONProvider
from flask_smorest import Api
from webargs.flaskparser import FlaskParser

from .. import schemas


class JsonParser(FlaskParser):
    """webargs' parser with orjson: deep nesting and integers past 64 bits are a clean 400."""

    DEFAULT_VALIDATION_STATUS = 400

    def _raw_load_json(self, req):
        data = req.get_data(cache=True)
        if not data:
            from webargs import core
            return core.missing
        try:
            return orjson.loads(data)
        except (orjson.JSONDecodeError, RecursionError, UnicodeDecodeError) as exc:
            return self._handle_invalid_json_error(exc, req)


class OrjsonProvider(JSONProvider):
    def dumps(self, obj, **kwargs) -> str:
        return orjson.dumps(obj).decode()

    def loads(self, s, **kwargs):
        return orjson.loads(s)


class CartoucheApi(Api):
    ERROR_SCHEMA = schemas.ErrorSchema
    DEFAULT_ERROR_RESPONSE_NAME = None  # every endpoint lists its own error responses


def install_parser() -> None:
    from flask_smorest.arguments import ArgumentsMixin

    ArgumentsMixin.ARGUMENTS_PARSER = JsonParser()
