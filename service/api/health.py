"""Liveness and readiness."""

from __future__ import annotations

from flask import current_app

from .. import schemas as s
from ..store.errors import StoreFull, StoreUnavailable
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
@blp.alt_response(503, schema=s.ErrorSchema, description="the event store is unreachable "
                  "(store_unavailable) or full (store_full: it refuses writes; reads go on)")
@blp.doc(operationId="readyz")
def readyz():
    """Ready to serve: the event store answers, below its memory limit."""
    state = current_app.extensions["cartouche"].readiness()
    if state == "unreachable":
        raise StoreUnavailable()
    if state == "full":
        raise StoreFull()
    return {"status": "ready"}
