"""Liveness and readiness."""

from __future__ import annotations

from flask import current_app

from .. import schemas as s
from ..store.errors import StoreUnavailable
from . import Blueprint

blp = Blueprint("health", __name__, description="Liveness and readiness")


@blp.route("/healthz")
@blp.response(200, s.HealthSchema)
@blp.doc(operationId="healthz")
def healthz():
    """The process answers (no dependency checked)."""
    return {"status": "ok"}


@blp.route("/readyz")
@blp.response(200, s.HealthSchema)
@blp.alt_response(503, schema=s.ErrorSchema, description="the event store is unreachable")
@blp.doc(operationId="readyz")
def readyz():
    """Ready to serve: the event store answers a PING."""
    if not current_app.extensions["cartouche"].ready():
        raise StoreUnavailable()
    return {"status": "ready"}
