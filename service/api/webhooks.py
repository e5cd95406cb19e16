"""/v1/webhooks: subscriptions to signed deliveries of game events (platform key only).

``register(app, api, service, queue_connection)`` adds the routes and the listener that queues
deliveries after every append (``service.webhooks``).
"""

from __future__ import annotations

from flask import Flask, current_app
from marshmallow import fields, validate

from .. import schemas as s
from .. import webhooks as wh
from ..application.errors import Forbidden, NotFound
from ..store import connect
from . import Blueprint, hands_out_secrets
from .errors import LIMITED_DOC, STORE_DOC, alt_errors
from .games import bearer_token

blp = Blueprint("webhooks", __name__, url_prefix="/v1",
                description="Webhooks: signed deliveries of game events (platform key)")

ERRORS = {400: "invalid request", 401: "bad token", 403: "a platform key is required",
          404: "unknown webhook", 413: "body too large", 422: "too many webhooks",
          429: LIMITED_DOC, 503: STORE_DOC}
GAME_ID = s.FullMatch(r"^[0-9a-f]{1,64}$")
_LABEL = r"[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?"
_PORT = r"(?:6553[0-5]|655[0-2][0-9]|65[0-4][0-9]{2}|6[0-4][0-9]{3}|[1-5][0-9]{4}|[1-9][0-9]{0,3})"
#: http(s)://host[:port][/path?query#fragment], printable ASCII; the OpenAPI ``pattern`` too.
#: (No IPv6 literals: give such a receiver a host name.)
URL_PATTERN = rf"^https?://{_LABEL}(?:\.{_LABEL})*(?::{_PORT})?(?:[/?#][!-~]*)?$"


def _alts(*statuses: int):
    return alt_errors(blp, ERRORS, *statuses)


class WebhookCreateSchema(s.Strict):
    url = fields.String(required=True, validate=[validate.Length(1, 2048),
                                                 s.FullMatch(URL_PATTERN)],
        metadata={"description": "where deliveries are POSTed (http or https; any host: the "
                                 "server will call whatever you name)",
                  "example": "http://127.0.0.1:9000/cartouche-hook"})
    game_types = s.List(fields.String(validate=validate.OneOf(s.GAME_TYPES)),
                             validate=validate.Length(1, 16), allow_none=True,
                             metadata={"description": "only games of these types (with "
                                                      "game_ids: either matches)"})
    game_ids = s.List(fields.String(validate=GAME_ID), validate=validate.Length(1, 1000),
                           allow_none=True, metadata={"description": "only these games"})
    description = s.Text(validate=validate.Length(0, 200), allow_none=True)


class WebhookSchema(s.Strict):
    id = fields.String(required=True)
    url = fields.String(required=True)
    game_types = s.List(fields.String(), required=True, allow_none=True)
    game_ids = s.List(fields.String(), required=True, allow_none=True)
    description = fields.String(required=True, allow_none=True)
    created_at = s.Timestamp(required=True)


class CreatedWebhookSchema(WebhookSchema):
    secret = fields.String(required=True, metadata={
        "description": "the signing key, returned once (see Cartouche-Signature)"})


class WebhookDeliverySchema(s.Strict):
    at = s.Timestamp(required=True)
    delivery_id = fields.String(required=True, metadata={
        "description": "the Cartouche-Delivery header; the same for every attempt"})
    game_id = fields.String(required=True)
    versions = fields.String(required=True, metadata={"description": "first-last version"})
    attempt = fields.Integer(required=True)
    status_code = fields.Integer(required=True, allow_none=True)
    error = fields.String(required=True, allow_none=True)
    outcome = fields.String(required=True, validate=validate.OneOf(
        ["delivered", "retry_scheduled", "abandoned"]))
    next_attempt_in_s = fields.Float()


class WebhookDetailSchema(WebhookSchema):
    deliveries = s.List(fields.Nested(WebhookDeliverySchema), required=True, metadata={
        "description": f"the last {wh.LOG_SIZE} attempts, newest first"})
    consecutive_failures = fields.Integer(required=True, metadata={
        "description": "failed attempts in a row to this receiver, any game (0 after a "
                       "success)"})
    pause_ends_at = s.Timestamp(required=True, allow_none=True, metadata={
        "description": f"null while deliveries go as they come; after "
                       f"{wh.PAUSE_AFTER} failures in a row (CARTOUCHE_WEBHOOK_PAUSE_AFTER) "
                       "the receiver is paused: no attempt until this time, then one, whose "
                       "success resumes every game's deliveries and whose failure doubles the "
                       "pause (docs/webhooks.md)"})


class WebhookListSchema(s.Strict):
    webhooks = s.List(fields.Nested(WebhookSchema), required=True)


def store() -> wh.WebhookStore:
    return current_app.extensions["cartouche_webhooks"]


def require_platform_key() -> None:
    svc = current_app.extensions["cartouche"]
    token = bearer_token()  # 401 for a malformed Authorization header
    if not svc.platform_key_digests or token is None or not svc.is_platform_key(token):
        raise Forbidden("platform_key_required", "webhooks need a platform key")


@blp.route("/webhooks", methods=["POST"])
@hands_out_secrets
@blp.arguments(WebhookCreateSchema, error_status_code=400)
@blp.response(201, CreatedWebhookSchema)
@_alts(400, 401, 403, 413, 422, 429, 503)
@blp.doc(operationId="createWebhook")
def create_webhook(body):
    """Subscribe a URL to the events of all games, or of some types or games. The signing
    secret is returned once."""
    require_platform_key()
    svc = current_app.extensions["cartouche"]
    return store().create(body["url"], body.get("game_types"), body.get("game_ids"),
                          body.get("description"), svc.now_ms())


@blp.route("/webhooks", methods=["GET"])
@blp.response(200, WebhookListSchema)
@_alts(401, 403, 503)
@blp.doc(operationId="listWebhooks")
def list_webhooks():
    """Every subscription (without secrets)."""
    require_platform_key()
    return {"webhooks": [wh.public(sub) for sub in store().all()]}


def _get(webhook_id: str) -> dict:
    sub = store().get(webhook_id) if len(webhook_id) <= 64 else None
    if sub is None:
        raise NotFound("webhook_not_found", f"no webhook {webhook_id!r}")
    return sub


@blp.route("/webhooks/<webhook_id>", methods=["GET"])
@blp.response(200, WebhookDetailSchema)
@_alts(401, 403, 404, 503)
@blp.doc(operationId="getWebhook")
def get_webhook(webhook_id):
    """One subscription and its delivery log (the last attempts, newest first)."""
    require_platform_key()
    sub = _get(webhook_id)
    return {**wh.public(sub), "deliveries": store().deliveries(webhook_id),
            **store().health(webhook_id)}


@blp.route("/webhooks/<webhook_id>", methods=["DELETE"])
@blp.response(204)
@_alts(401, 403, 404, 503)
@blp.doc(operationId="deleteWebhook")
def delete_webhook(webhook_id):
    """Unsubscribe; pending deliveries are dropped."""
    require_platform_key()
    _get(webhook_id)
    store().delete(webhook_id)
    gone = current_app.response_class(status=204)
    del gone.headers["Content-Type"]  # no content, so no type of it
    return gone


def register(app: Flask, api, service, queue_connection=None, **options) -> wh.Listener:
    """Routes on ``api`` and the delivery listener on ``service``.

    ``queue_connection``: RQ's server (default: the config's QUEUE_URL or REDIS_URL).
    ``options``: ``retry_base_s``, ``max_attempts``, ``timeout_s`` (see ``service.webhooks``).
    """
    if queue_connection is None:
        config = app.config["CARTOUCHE"]
        queue_connection = connect.queue_client(config.queue_url or config.redis_url,
                                                timeout=config.redis_timeout_s)
    listener = wh.attach(service, queue_connection, **options)
    app.extensions["cartouche_webhooks"] = listener.store
    api.register_blueprint(blp)
    return listener


__all__ = ["register", "blp"]
