"""Rate limits on writes: per bearer token and per client IP, counted in Redis.

Every ``POST`` is counted twice, once for its bearer token (if any) and once for the client's
address; when either count is over its limit the request is refused with ``429
rate_limited``, a ``Retry-After`` header (whole seconds) and the standard error body, before
any work is done. Reads (``GET``, the event streams) are never limited here.

The counters are sliding-window counters (the current and the previous window, the previous one
weighted by how much of it still falls inside the sliding minute), counted for both identities
in one Lua call on a single server (one call per identity on a cluster, where the two counters
live in different slots), keys ``cartouche:rl:{tok:<sha256 of the token, 32 hex>}:<window>`` and
``cartouche:rl:{ip:<address>}:<window>`` expiring after two windows. Tokens are never written to
Redis, only a prefix of their digest. The benchmark-only endpoint ``/bench/...`` (it exists only
with ``CARTOUCHE_BENCH_ENDPOINTS=1``) is not counted: it is P1's baseline, which does nothing but
its read and its append. The client address is ``request.remote_addr``: behind a
reverse proxy, wrap the app in ``werkzeug.middleware.proxy_fix.ProxyFix`` or every client is the
proxy.

If Redis fails, the limiter fails open (the request goes on, a warning is logged): the request
then meets the same unavailable store and gets its 503 there.

Configuration (environment, read by :meth:`RateLimitConfig.from_env`; 0 disables a limit):

``CARTOUCHE_RATE_LIMIT_WRITES_PER_MINUTE``      per token, default 1200
``CARTOUCHE_RATE_LIMIT_IP_WRITES_PER_MINUTE``   per client address, default 12000
``CARTOUCHE_RATE_LIMIT_WINDOW_SECONDS``         window length, default 60

Wiring (in ``create_app``, after ``errors.register(app)`` and once ``client`` exists)::

    ratelimit.register(app, client, ratelimit.RateLimitConfig.from_env())
"""

from __future__ import annotations

import hashlib
import logging
import math
import os
import time
from dataclasses import dataclass
from typing import Any, Mapping

import redis
from flask import Flask, request

from .errors import error_response

log = logging.getLogger("cartouche.ratelimit")

PREFIX = "cartouche:rl"

# For each identity i (1-based): KEYS[2i-1] its current window's counter, KEYS[2i] its previous
# window's counter. ARGV[1] window length (ms).
# Returns {current count after this request, previous count} per identity, flattened.
_SCRIPT = """
local out = {}
for i = 1, #KEYS, 2 do
  local n = redis.call('INCR', KEYS[i])
  if n == 1 then
    redis.call('PEXPIRE', KEYS[i], 2 * tonumber(ARGV[1]))
  end
  out[#out + 1] = n
  out[#out + 1] = tonumber(redis.call('GET', KEYS[i + 1]) or '0')
end
return out
"""


@dataclass(frozen=True)
class RateLimitConfig:
    #: writes per window per bearer token (0 = unlimited)
    writes_per_minute: int = 1200
    #: writes per window per client address (0 = unlimited)
    ip_writes_per_minute: int = 12000
    window_seconds: int = 60

    @classmethod
    def from_env(cls, environ: Mapping[str, str] | None = None) -> "RateLimitConfig":
        env = os.environ if environ is None else environ

        def num(name: str, default: int) -> int:
            raw = env.get(name)
            if raw in (None, ""):
                return default
            value = int(raw)
            if value < 0:
                raise ValueError(f"{name} must be >= 0")
            return value

        return cls(
            writes_per_minute=num("CARTOUCHE_RATE_LIMIT_WRITES_PER_MINUTE",
                                  cls.writes_per_minute),
            ip_writes_per_minute=num("CARTOUCHE_RATE_LIMIT_IP_WRITES_PER_MINUTE",
                                     cls.ip_writes_per_minute),
            window_seconds=max(1, num("CARTOUCHE_RATE_LIMIT_WINDOW_SECONDS",
                                      cls.window_seconds)),
        )

    @property
    def enabled(self) -> bool:
        return bool(self.writes_per_minute or self.ip_writes_per_minute)


def _coerce(config: Any) -> RateLimitConfig:
    if config is None:
        return RateLimitConfig.from_env()
    if isinstance(config, RateLimitConfig):
        return config
    if isinstance(config, Mapping):
        return RateLimitConfig(**config)
    # an application Config (or anything else): the limits come from the environment
    return RateLimitConfig.from_env()


class RateLimiter:
    def __init__(self, client: redis.Redis, config: RateLimitConfig,
                 clock=time.time) -> None:
        self.r = client
        self.config = config
        self.clock = clock
        self._script = client.register_script(_SCRIPT)
        #: the counters of different identities live in different cluster slots
        self._one_call = not isinstance(client, redis.RedisCluster)

    def _wait(self, current: int, previous: int, limit: int, now: float, index: int,
              elapsed: float) -> float | None:
        """Seconds to wait when over ``limit``, else None."""
        window = self.config.window_seconds
        estimate = previous * (1.0 - elapsed) + current
        if estimate <= limit:
            return None
        if current > limit:  # over on this window alone: wait for the next one
            return (index + 1) * window - now
        # over because of the previous window's weight: wait until enough of it has slid out
        need = (estimate - limit) / previous  # fraction of a window
        return max(need * window, 0.001)

    def check(self, token: str | None, ip: str | None) -> float | None:
        """Count one write for the token and the address; seconds to wait when either is over
        its limit, else None."""
        hits = []  # (identity, limit)
        if token and self.config.writes_per_minute:
            digest = hashlib.sha256(token.encode()).hexdigest()[:32]
            hits.append((f"tok:{digest}", self.config.writes_per_minute))
        if ip and self.config.ip_writes_per_minute:
            hits.append((f"ip:{ip}", self.config.ip_writes_per_minute))
        if not hits:
            return None
        window = self.config.window_seconds
        now = self.clock()
        index = int(now // window)
        elapsed = (now - index * window) / window
        keys = []
        for identity, _ in hits:
            base = f"{PREFIX}:{{{identity}}}"
            keys += [f"{base}:{index}", f"{base}:{index - 1}"]
        args = [window * 1000]
        if self._one_call:
            counts = self._script(keys=keys, args=args)
        else:
            counts = []
            for i in range(0, len(keys), 2):
                counts += self._script(keys=keys[i:i + 2], args=args)
        waits = [self._wait(int(counts[2 * i]), int(counts[2 * i + 1]), limit, now, index,
                            elapsed) for i, (_, limit) in enumerate(hits)]
        waits = [w for w in waits if w is not None]
        return max(waits) if waits else None


def _bearer(header: str | None) -> str | None:
    if not header:
        return None
    scheme, _, token = header.partition(" ")
    token = token.strip()
    if scheme.lower() != "bearer" or not token or len(token) > 512:
        return None  # the endpoint answers 401 itself; the address is still counted
    return token


def register(app: Flask, redis_client: redis.Redis, config: Any = None) -> RateLimiter | None:
    """Limit writes (POST) per token and per address on ``app``; returns the limiter (None when
    both limits are 0)."""
    cfg = _coerce(config)
    limiter = RateLimiter(redis_client, cfg) if cfg.enabled else None
    first = "cartouche_ratelimit" not in app.extensions
    app.extensions["cartouche_ratelimit"] = limiter  # registering again replaces the limits
    if not first:
        return limiter

    @app.before_request
    def _rate_limit():
        limiter = app.extensions["cartouche_ratelimit"]
        if limiter is None or request.method != "POST" or request.path.startswith("/bench/"):
            return None
        try:
            wait = limiter.check(_bearer(request.headers.get("Authorization")),
                                 request.remote_addr)
        except redis.RedisError as exc:
            log.warning("rate limiter unavailable, request let through: %s",
                        type(exc).__name__)
            return None
        if wait is None:
            return None
        retry_after = max(1, math.ceil(wait))
        return error_response(429, "rate_limited",
                              "too many writes; retry after the number of seconds in "
                              "Retry-After", {"retry_after_s": retry_after},
                              headers={"Retry-After": str(retry_after)})

    return limiter
