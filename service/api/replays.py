"""/v1/replays: verification of exported games, and the keys exports are signed with.

Verifying replays a whole game through the rules: the most expensive thing a caller can ask.
So it is bounded four ways: its own body limit (``CARTOUCHE_MAX_EXPORT_BYTES``, sized for the
longest game the event cap allows), a per-address rate limit (``service.api.ratelimit``), at
most ``CARTOUCHE_VERIFY_CONCURRENCY`` verifications at once per process (503 ``verifier_busy``
past them), and a time budget (``CARTOUCHE_VERIFY_SECONDS``; 413 ``verification_too_costly``
past it), during which the worker's other requests run between two commands of the replay.
A verification holds its slot from before its body is read (a body has ``WEB_BODY_TIMEOUT`` to
arrive), so a process holds at most that many export bodies in memory, however many clients
send one at once.
"""

from __future__ import annotations

import functools
import threading
import time

from flask import current_app, request

from .. import schemas as s
from ..config import Config
from ..replay import verify
from ..signing import describe
from . import Blueprint
from .errors import VerificationTooCostly, VerifierBusy, alt_errors
from .fastpaths import json_body
from .games import service

replays = Blueprint("replays", __name__, url_prefix="/v1/replays",
                    description="Verification of exported games, and the keys that sign them")

ERRORS = {400: "invalid request", 413: "body too large (`body_too_large`), or the export "
                                      "takes longer to verify than the server allows "
                                      "(`verification_too_costly`)",
          422: "`not_an_integer`: `3.0` where the export has an integer (`details.fields`)",
          429: "rate limited (see Retry-After)",
          503: "`verifier_busy`: too many verifications at once (see Retry-After)"}


class Verifier:
    """This process's verifications: how many may run at once, and for how long."""

    def __init__(self, config: Config) -> None:
        self.slots = threading.BoundedSemaphore(config.verify_concurrency)
        self.budget_s = config.verify_seconds

    def run(self, doc: dict, keys) -> dict:
        deadline = time.monotonic() + self.budget_s

        def tick() -> None:
            time.sleep(0)  # under gevent: the worker's other requests run meanwhile
            if time.monotonic() > deadline:
                raise VerificationTooCostly(self.budget_s)

        return verify(doc, keys, tick)


def in_a_verifier_slot(view):
    """``view`` run holding one of the process's verifier slots, taken before anything reads
    the request's body (503 ``verifier_busy`` when none is free)."""
    @functools.wraps(view)
    def in_a_slot(*args, **kwargs):
        slots = current_app.extensions["cartouche_verifier"].slots
        if not slots.acquire(blocking=False):
            raise VerifierBusy()
        try:
            return view(*args, **kwargs)
        finally:
            slots.release()
    return in_a_slot


@replays.route("/verify", methods=["POST"])
@in_a_verifier_slot  # outside the body's parsing: a busy verifier reads no body
@replays.arguments(s.VerifiableSchema, error_status_code=400)
@replays.response(200, s.VerifyResultSchema)
@alt_errors(replays, ERRORS, 400, 413, 422, 429, 503)
@replays.doc(operationId="verifyReplay")
def verify_replay(body):
    """Check an export: its signature by one of this server's keys (`GET /v1/replays/keys`),
    then every random draw re-derived from its revealed seed, every command replayed through
    the rules, and its own fields (players, options, status, result) against its events.
    A tournament's export (`GET /v1/tournaments/{id}/export`) is verified game by game, then
    its pairings, results and standings. `valid: true` means every value is what this server
    recorded; otherwise the reason, and the first version that diverges."""
    verifier: Verifier = current_app.extensions["cartouche_verifier"]
    # the document as sent (the schema checked its shape): the signature covers those bytes
    return verifier.run(json_body(request), service().signer.public_keys())


@replays.route("/keys")
@replays.response(200, s.SigningKeysSchema)
@alt_errors(replays, {503: "event store unavailable"}, 503)
@replays.doc(operationId="listSigningKeys")
def signing_keys():
    """The Ed25519 public keys exports are signed with: the current key, then retired keys
    still accepted. An export's `signature.key_id` names its key; the signature covers the
    export without `signature`, as JSON with sorted keys and no whitespace."""
    signer = service().signer
    return {"keys": [describe(key, i == 0) for i, key in enumerate(signer.public_keys())]}


def register(app, api) -> None:
    app.extensions["cartouche_verifier"] = Verifier(app.config["CARTOUCHE"])
    api.register_blueprint(replays)
