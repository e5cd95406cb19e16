"""How the store fails, for the layers above it (they never import the Redis client)."""

from __future__ import annotations

import redis

from ..engine import CodedError

#: Any failure of a store call.
StoreError = redis.RedisError

#: The failures that mean the store cannot be reached or cannot answer now (answered 503
#: ``store_unavailable``, never a 500).
UNAVAILABLE: tuple[type[Exception], ...] = (
    redis.exceptions.ConnectionError,
    redis.exceptions.TimeoutError,
    redis.exceptions.BusyLoadingError,
    redis.exceptions.ClusterError,
    redis.exceptions.TryAgainError,
)


class StoreUnavailable(CodedError):
    def __init__(self) -> None:
        super().__init__("store_unavailable", "the event store is unavailable")


#: The seconds a client refused with ``store_full`` is asked to wait (memory is freed by an
#: operator or by games and notices expiring, not within a second).
FULL_RETRY_AFTER_S = 30


def is_full(exc: BaseException) -> bool:
    """``exc`` is the store refusing a write at its memory limit (``maxmemory`` with
    ``noeviction``: an ``OOM ...`` error, from a command, a script or a transaction). Such a
    refusal changes nothing: a command is refused whole, and a Lua script is refused at its
    first write (Redis lets a script that has written finish its writes)."""
    return isinstance(exc, redis.exceptions.OutOfMemoryError) or (
        isinstance(exc, redis.exceptions.ResponseError) and str(exc).startswith("OOM"))


class StoreFull(CodedError):
    """The store refuses writes: it is at its memory limit. Reads go on."""

    def __init__(self) -> None:
        super().__init__("store_full", "the event store is full and refuses writes; retry "
                         "after the number of seconds in Retry-After",
                         {"retry_after_s": FULL_RETRY_AFTER_S})
