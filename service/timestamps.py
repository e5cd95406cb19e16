"""Points in time as Cartouche writes them, on the wire and in its logs: RFC 3339 in UTC with
milliseconds and ``Z`` (``2026-12-02T09:14:03.512Z``). One function, used by every serializer
(views, lists, seeks, players, tournaments, webhooks, the player stream, stored envelopes, log
lines); served in fields named ``at`` or ``*_at`` (``schemas.Timestamp``). Durations are
integers named ``*_ms``."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

_last_second: tuple[int | None, str] = (None, "")  # the last whole second, formatted


def rfc3339(ms: int) -> str:
    """``ms`` (Unix epoch milliseconds) as ``2026-01-02T03:04:05.678Z``."""
    global _last_second
    second, milli = divmod(ms, 1000)
    cached = _last_second  # a tuple, replaced whole: safe to share between threads
    if cached[0] != second:
        cached = _last_second = (
            second, datetime.fromtimestamp(second, timezone.utc).strftime("%Y-%m-%dT%H:%M:%S"))
    return f"{cached[1]}.{milli:03d}Z"


_EPOCH = datetime(1970, 1, 1, tzinfo=timezone.utc)


def ms(text: str) -> int:
    """The Unix epoch milliseconds a point in time written by :func:`rfc3339` (or any RFC 3339
    text with an offset) names, exactly."""
    return (datetime.fromisoformat(text) - _EPOCH) // timedelta(milliseconds=1)
