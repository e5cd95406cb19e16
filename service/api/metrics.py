"""``GET /metrics``: Prometheus's text format (``service.metrics`` says what is measured)."""

from __future__ import annotations

from flask import Response, current_app

from .. import metrics
from . import Blueprint

blp = Blueprint("metrics", __name__, description="Prometheus metrics")


@blp.route("/metrics")
@blp.doc(operationId="metrics", responses={"200": {
    "description": "the metrics in Prometheus's text exposition format",
    "content": {"text/plain": {"schema": {"type": "string"}}}}})
def scrape():
    """Prometheus metrics.

    Counters, gauges and histograms of every process of this service (requests, commands,
    conflicts, event streams, jobs, bot decisions), and the queue depths and game counts read
    from the store at each scrape. Each API worker writes its request and command counts every
    ``WEB_METRICS_WRITE_SECONDS`` (1 s): a scrape has the answering worker's up to now and the
    others' as of at most that long ago."""
    body = metrics.exposition(current_app.extensions.get("cartouche_metrics"))
    return Response(body, mimetype=None, content_type=metrics.CONTENT_TYPE)
