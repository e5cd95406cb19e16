"""service/api/errors.ANSWERS: every error class the service raises has its one answer, and
each answer renders as the contract says (status, code, details, headers)."""

from __future__ import annotations

import pytest

import service.app  # noqa: F401  (imports every module that defines an error class)
from service.api.errors import ANSWERS, MalformedRequest, UnsupportedMediaType, coded_response
from service.application.errors import (CannotAbort, DeadlinePassed, Forbidden,
                                        GameNotFinished, IdempotencyKeyReused, IllegalAction,
                                        InvalidRequest, InvalidToken, NotFound, NotYourTurn,
                                        SeatNotHuman, SeekEnded, SeeksFull, TooManySeeks,
                                        VersionConflict)
from service.clock import ClockError
from service.engine import CodedError, InvalidOptions
from service.api.streamcaps import StreamsFull, TooManyStreams
from service.store.errors import StoreFull, StoreUnavailable
from service.store.quota import Charged, Quota, QuotaExceeded
from service.webhooks import TooManySubscriptions


def subclasses(cls: type) -> set[type]:
    """The server's subclasses of ``cls`` (not those a test defines, below)."""
    out = set()
    for sub in cls.__subclasses__():
        out |= ({sub} if not sub.__module__.startswith("tests.") else set()) | subclasses(sub)
    return out


def test_every_coded_error_class_has_an_answer():
    unanswered = [c.__qualname__ for c in subclasses(CodedError)
                  if c.__module__.startswith("service.")
                  and not any(base in ANSWERS for base in c.__mro__)]
    assert not unanswered


QUOTA = Quota((("cartouche:rl:{tok:ab}:1", "cartouche:rl:{tok:ab}:0"),), (1,), 60_000, 0.5,
              owners=("token",))

CASES = [
    (MalformedRequest("malformed_json", "m"), 400, "malformed_json", {}),
    (UnsupportedMediaType("unsupported_media_type", "m"), 415, "unsupported_media_type", {}),
    (InvalidToken("m"), 401, "invalid_token", {}),
    (Forbidden("spectator_cannot_act", "m"), 403, "spectator_cannot_act", {}),
    (SeatNotHuman(), 403, "seat_not_human", {}),
    (NotFound.game("ab"), 404, "game_not_found", {}),
    (NotFound.version(9), 404, "version_not_found", {}),
    (NotYourTurn("already_committed"), 409, "not_your_turn", {"code": "already_committed"}),
    (VersionConflict(7), 409, "version_conflict", {"current_version": 7}),
    (DeadlinePassed(), 409, "deadline_passed", {}),
    (CannotAbort("m"), 409, "cannot_abort", {}),
    (GameNotFinished(), 409, "game_not_finished", {}),
    (SeekEnded("matched", "abc"), 409, "seek_matched", {"game_id": "abc"}),
    (SeekEnded("expired", None), 409, "seek_expired", {}),
    (TooManySeeks(20), 409, "too_many_seeks", {"max": 20}),
    (IllegalAction("column_full", "m", {"column": 3}), 422, "illegal_action",
     {"code": "column_full", "column": 3}),
    (InvalidOptions("bad_deck", "m"), 422, "invalid_options", {"code": "bad_deck"}),
    (ClockError("invalid_clock", "m"), 422, "invalid_options", {"code": "invalid_clock"}),
    (InvalidRequest("unknown_game_type", "m", {"known": []}), 422, "unknown_game_type",
     {"known": []}),
    (IdempotencyKeyReused(), 422, "idempotency_key_reused", {}),
    (TooManySubscriptions(), 422, "too_many_webhooks", {}),
    # limit 1, 3 writes, half the window gone: its rest (30 s), then the 3 slide out (60 s)
    # for the retry's 1 to fit; 90 s exactly is answered 91 (service.store.quota.TIE_S)
    (QuotaExceeded(QUOTA, Charged(True, ((3, 0),))), 429, "rate_limited",
     {"retry_after_s": 91, "per": "token"}),
    (TooManyStreams("address", 200), 429, "too_many_streams",
     {"per": "address", "max": 200, "retry_after_s": 5}),
    (StoreUnavailable(), 503, "store_unavailable", {}),
    (StoreFull(), 503, "store_full", {"retry_after_s": 30}),
    (StreamsFull(800), 503, "streams_full", {"max": 800, "retry_after_s": 5}),
    (SeeksFull(10_000, 5), 503, "seeks_full", {"max": 10_000, "retry_after_s": 5}),
]


@pytest.mark.parametrize("exc,status,code,details", CASES,
                         ids=[type(c[0]).__name__ for c in CASES])
def test_each_answer(app, exc, status, code, details):
    with app.test_request_context():
        res = coded_response(exc)
    assert res.status_code == status
    assert res.get_json() == {"error": {"code": code, "message": exc.message,
                                        "details": details}}
    if status in (429, 503):
        assert int(res.headers["Retry-After"]) >= 1


def test_an_error_class_with_no_answer_is_a_logged_500(app, caplog):
    class Unlisted(CodedError):
        pass

    with app.test_request_context():
        res = coded_response(Unlisted("whatever", "m"))
    assert res.status_code == 500 and res.get_json()["error"]["code"] == "internal_error"
    assert "Unlisted" in caplog.text
