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
