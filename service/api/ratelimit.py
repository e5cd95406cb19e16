"""Rate limits on writes: per bearer token and per client IP, counted in Redis.

Every ``POST`` is counted twice, once for its bearer token (if any) and once for the client's
address, as one write -- a bulk creation as one write per game it creates (:func:`charge_writes`
charges the games after the first once its body is read); when either count is over its limit
the request is refused with ``429
rate_limited``, a ``Retry-After`` header (whole seconds) and the standard error body, and has
no effect. ``POST /v1/replays/verify``, which replays a whole game, is also counted per address
against a limit of its own (``verify:<address>``). Reads (``GET``, the event streams) are never
limited here.

The counters are sliding-window counters (the current and the previous window, the previous one
weighted by how much of it still falls inside the sliding minute: ``service/store/quota.py``),
keys ``cartouche:rl:{tok:<sha256 of the token, 32 hex>}:<window>`` and
``cartouche:rl:{ip:<address>}:<window>`` expiring after two windows. Tokens are never written to
Redis, only a prefix of their digest.

When they are counted: a POST is counted before any work is done, in one Lua call for both
identities (one call per identity on a cluster, where the two counters live in different
slots) -- except an action (``POST /v1/games/{id}/actions``) on a single server, which is
counted inside the script that appends its events: the count, the limit check and the append
are one atomic call, one round trip, and over the limit nothing is appended. An action refused
before it reaches its append (400, 401, 403, 404, 409, 422, an idempotent replay) is counted
just before its answer leaves, and answered 429 instead when over the limit. Either way every
POST counts once and an over-limit request changes nothing. The benchmark-only endpoint
``/bench/...`` (it exists only with ``CARTOUCHE_BENCH_ENDPOINTS=1``) is not counted: it is P1's
baseline, which does nothing but its read and its append. The client address is
``request.remote_addr``: behind a reverse proxy, wrap the app in
``werkzeug.middleware.proxy_fix.ProxyFix`` or every client is the proxy.

Every write is also charged to a budget of bytes stored per window, per token and per address
(``cartouche:rl:{btok:<digest>}:<window>``, ``cartouche:rl:{bip:<address>}:<window>``): by the
size of what it stores, once that is known -- a creation's envelopes, meta and seed, a
player's fields, a seek's request, a tournament's games, every round's (:func:`charge_stored`,
just before the write), an action's
envelopes (in its append's script, like its write count: on a single server the check and the
append are one atomic call). Over a budget the answer is the same 429 ``rate_limited``, with
``details.limit`` ``stored_bytes``, and nothing is stored. Derived data (the game index,
player notifications, snapshots, idempotency records) is not charged.

If the counters' store fails, the limiter fails open (the request goes on, a warning is
logged), unless the counters live on the request's own store (a single server) and it cannot be
reached or does not answer: the request is then answered 503 ``store_unavailable`` at once,
instead of meeting the same store again (a hung store would cost it one timeout per call).

Configuration (environment, read by :meth:`RateLimitConfig.from_env`; 0 disables a limit):

``CARTOUCHE_RATE_LIMIT_WRITES_PER_MINUTE``      per token, default 1200
``CARTOUCHE_RATE_LIMIT_IP_WRITES_PER_MINUTE``   per client address, default 12000
``CARTOUCHE_RATE_LIMIT_VERIFIES_PER_MINUTE``    verifications per client address, default 30
``CARTOUCHE_RATE_LIMIT_WINDOW_SECONDS``         window length, default 60
``CARTOUCHE_STORED_BYTES_PER_MINUTE``           bytes stored per token, default 8 MiB
``CARTOUCHE_IP_STORED_BYTES_PER_MINUTE``        bytes stored per client address, default 16 MiB

Wiring (in ``create_app``, after ``errors.register(app)`` and once ``client`` exists)::

    ratelimit.register(app, client, ratelimit.RateLimitConfig.from_env())
"""

from __future__ import annotations

import logging
import os
import time
from dataclasses import dataclass
from typing import Any, Mapping

from flask import Flask, current_app, g, request

from ..application.identity import token_digest
from ..config import env_count
from ..store.errors import UNAVAILABLE, StoreError
from ..store.quota import BYTES, WRITES, Charged, Counters, Quota, QuotaExceeded
from .errors import coded_response
from .fastpaths import ACTION_ENDPOINT

log = logging.getLogger("cartouche.ratelimit")

PREFIX = "cartouche:rl"
#: the longest window (a day)
WINDOW_MAX_S = 86_400
#: the most bytes a window's stored-bytes limit may be (a terabyte)
BYTES_MAX = 10**12

#: the endpoint with a per-address limit of its own (verification replays a whole game)
VERIFY_ENDPOINT = "replays.verify_replay"


@dataclass(frozen=True)
class RateLimitConfig:
    #: writes per window per bearer token (0 = unlimited)
    writes_per_minute: int = 1200
    #: writes per window per client address (0 = unlimited)
    ip_writes_per_minute: int = 12000
    #: verifications per window per client address (0 = unlimited)
    verifies_per_minute: int = 30
    window_seconds: int = 60
    #: bytes stored per window per bearer token, and per client address (0 = unlimited)
    stored_bytes_per_minute: int = 8 * 1024 * 1024
    ip_stored_bytes_per_minute: int = 16 * 1024 * 1024

    @classmethod
    def from_env(cls, environ: Mapping[str, str] | None = None) -> "RateLimitConfig":
        env = os.environ if environ is None else environ

        return cls(
            writes_per_minute=env_count(env, "CARTOUCHE_RATE_LIMIT_WRITES_PER_MINUTE",
                                        cls.writes_per_minute),
            ip_writes_per_minute=env_count(env, "CARTOUCHE_RATE_LIMIT_IP_WRITES_PER_MINUTE",
                                           cls.ip_writes_per_minute),
            verifies_per_minute=env_count(env, "CARTOUCHE_RATE_LIMIT_VERIFIES_PER_MINUTE",
                                          cls.verifies_per_minute),
            window_seconds=env_count(env, "CARTOUCHE_RATE_LIMIT_WINDOW_SECONDS",
                                     cls.window_seconds, least=1, most=WINDOW_MAX_S),
            stored_bytes_per_minute=env_count(env, "CARTOUCHE_STORED_BYTES_PER_MINUTE",
                                              cls.stored_bytes_per_minute, most=BYTES_MAX),
            ip_stored_bytes_per_minute=env_count(env, "CARTOUCHE_IP_STORED_BYTES_PER_MINUTE",
                                                 cls.ip_stored_bytes_per_minute,
                                                 most=BYTES_MAX),
        )

    @property
    def enabled(self) -> bool:
        return bool(self.writes_per_minute or self.ip_writes_per_minute
                    or self.verifies_per_minute or self.stored_bytes_per_minute
                    or self.ip_stored_bytes_per_minute)


def _coerce(config: Any) -> RateLimitConfig:
    if config is None:
        return RateLimitConfig.from_env()
    if isinstance(config, RateLimitConfig):
        return config
    if isinstance(config, Mapping):
        return RateLimitConfig(**config)
    # an application Config (or anything else): the limits come from the environment
    return RateLimitConfig.from_env()


#: How many (token, address, what is charged) the names of the current window's counters are
#: kept for (a client's requests come in runs; every request would build the same names).
NAMES_KEPT = 4096


class RateLimiter:
    def __init__(self, counters: Counters, config: RateLimitConfig, clock=time.time) -> None:
        self.counters = counters
        self.config = config
        self.clock = clock
        #: an action's counters are charged by its append (see the module's docstring)
        self.in_append = False
        #: the window (its index) the names below are of, and the names (:meth:`quota`)
        self._names_window = -1
        self._names: dict[tuple, tuple | None] = {}

    def quota(self, token: str | None, ip: str | None, cost: int = 1, *,
              writes: bool = True, stored: int | None = 0) -> Quota | None:
        """The counters ``cost`` writes by this token from this address charge, and, unless
        ``stored`` is 0, their budgets of bytes stored, charged by ``stored`` bytes (None: by
        what the append the quota is given to stores, ``EventStore.append`` sets it).
        ``writes=False``: the budgets only. None: no limit applies."""
        index, elapsed = self._window()
        if index != self._names_window or len(self._names) >= NAMES_KEPT:
            self._names, self._names_window = {}, index
        key = (token, ip, writes, stored != 0)
        try:
            names = self._names[key]
        except KeyError:
            names = self._names[key] = self._counter_names(token, ip, writes, stored != 0,
                                                           index)
        return self._made(names, elapsed, cost, stored or 0)

    def _counter_names(self, token: str | None, ip: str | None, writes: bool, stores: bool,
                       index: int) -> tuple | None:
        """:func:`_names` of :meth:`quota`'s identities in window ``index``."""
        cfg = self.config
        digest = _token_digest(token) if token else None
        identities = []
        if writes and digest and cfg.writes_per_minute:
            identities.append((f"tok:{digest}", cfg.writes_per_minute, WRITES))
        if writes and ip and cfg.ip_writes_per_minute:
            identities.append((f"ip:{ip}", cfg.ip_writes_per_minute, WRITES))
        if stores and digest and cfg.stored_bytes_per_minute:
            identities.append((f"btok:{digest}", cfg.stored_bytes_per_minute, BYTES))
        if stores and ip and cfg.ip_stored_bytes_per_minute:
            identities.append((f"bip:{ip}", cfg.ip_stored_bytes_per_minute, BYTES))
        return _names(identities, index)

    def verify_quota(self, ip: str | None) -> Quota | None:
        """The counter one verification from this address charges."""
        if not ip or not self.config.verifies_per_minute:
            return None
        index, elapsed = self._window()
        return self._made(_names([(f"verify:{ip}", self.config.verifies_per_minute, WRITES)],
                                 index), elapsed, 1, 0)

    def _window(self) -> tuple[int, float]:
        """The current window's index, and how much of it has gone, in [0, 1)."""
        window = self.config.window_seconds
        now = self.clock()
        index = int(now // window)
        return index, (now - index * window) / window

    def _made(self, names: tuple | None, elapsed: float, cost: int, stored: int) -> Quota | None:
        if names is None:
            return None
        counters, limits, kinds, owners = names
        return Quota(counters, limits, self.config.window_seconds * 1000, elapsed, cost, kinds,
                     stored, owners=owners)

    def charge(self, quota: Quota | None) -> Charged | None:
        """Count one write (unless ``quota`` was already charged): the counts, or None when
        nothing was charged."""
        if quota is None or quota.charged:
            return None
        return self.counters.charge(quota)


#: The identities' names that stand for a token (the others stand for a client address).
TOKEN_IDENTITIES = ("tok:", "btok:")


def _names(identities: list[tuple[str, int, str]], index: int) -> tuple | None:
    """(counters, limits, kinds, owners) of ``identities`` ((name, limit, kind) each) in window
    ``index``: each identity's counter of that window, then of the previous one, and whose
    limit it is (``token`` or ``address``). None when there is no identity (no limit
    applies)."""
    if not identities:
        return None
    return (tuple((f"{PREFIX}:{{{c}}}:{index}", f"{PREFIX}:{{{c}}}:{index - 1}")
                  for c, _, _ in identities),
            tuple(lim for _, lim, _ in identities), tuple(kind for _, _, kind in identities),
            tuple("token" if c.startswith(TOKEN_IDENTITIES) else "address"
                  for c, _, _ in identities))


def _token_digest(token: str) -> str:
    """The name a token's counters go by (never the token itself): a prefix of its digest."""
    return token_digest(token)[:32]


def _bearer(header: str | None) -> str | None:
    if not header:
        return None
    scheme, _, token = header.partition(" ")
    token = token.strip()
    if scheme.lower() != "bearer" or not token or len(token) > 512:
        return None  # the endpoint answers 401 itself; the address is still counted
    return token


def _refusal(limiter: RateLimiter, quota: Quota | None) -> QuotaExceeded | None:
    """Charge now: the refusal when over the limit, else None. Fails open (as the module
    says: not when the counters are on the request's own store and it does not answer)."""
    try:
        charged = limiter.charge(quota)
    except StoreError as exc:
        if limiter.in_append and isinstance(exc, UNAVAILABLE):
            raise  # the counters are on the request's own store, which is not answering
        log.warning("rate limiter unavailable, request let through: %s", type(exc).__name__)
        return None
    if charged is None or not charged.over:
        return None
    return QuotaExceeded(quota, charged)


def _charge_or_refuse(limiter: RateLimiter, quota: Quota | None):
    """Charge now: None to go on, or the 429 answer."""
    refused = _refusal(limiter, quota)
    return None if refused is None else coded_response(refused)


def action_quota(limiter: RateLimiter, authorization: str | None, ip: str | None):
    """An action's charge before its command: ``(pending, refusal)``: the quota its append
    charges (the writes too when they can be charged inside the append, else only the bytes it
    stores), and the 429 answer when the writes, charged now, are over the limit."""
    token = _bearer(authorization)
    if limiter.in_append:
        return limiter.quota(token, ip, stored=None), None
    return (limiter.quota(token, ip, writes=False, stored=None),
            _charge_or_refuse(limiter, limiter.quota(token, ip)))


def settle(limiter: RateLimiter | None, pending: Quota | None):
    """An action that never reached its append (refused, replayed) is counted after all: the
    429 answer when that puts it over the limit (it changed nothing), else None."""
    if pending is None or pending.charged or limiter is None:
        return None
    return _charge_or_refuse(limiter, pending)


def charge_writes(count: int) -> None:
    """Count ``count`` more writes of this request, by its token and its address (a bulk
    creation's games after the first: the request itself was counted as one). Raises
    ``QuotaExceeded`` (429, nothing done) when over; fails open like every charge."""
    limiter = current_app.extensions.get("cartouche_ratelimit")
    if limiter is None or count < 1:
        return
    quota = limiter.quota(_bearer(request.headers.get("Authorization")), request.remote_addr,
                          cost=count)
    if quota is not None:
        quota.before = 1  # the request itself: its retry is charged it again (Retry-After)
    refused = _refusal(limiter, quota)
    if refused is not None:
        raise refused


def charge_stored(size: int) -> None:
    """Charge ``size`` bytes about to be stored by this request to its token's and its
    address's budgets (a creation, a player, a seek: just before their write). Raises
    ``QuotaExceeded`` (429 with ``details.limit`` ``stored_bytes``, nothing stored) when
    over; fails open like every charge."""
    limiter = current_app.extensions.get("cartouche_ratelimit")
    if limiter is None or size < 1:
        return
    refused = _refusal(limiter, limiter.quota(_bearer(request.headers.get("Authorization")),
                                              request.remote_addr, writes=False, stored=size))
    if refused is not None:
        raise refused


def pending_quota() -> Quota | None:
    """The action's quota left for its append to charge (None: nothing to charge there)."""
    return g.get("cartouche_quota")


def register(app: Flask, client, config: Any = None) -> RateLimiter | None:
    """Limit writes (POST) per token and per address on ``app``, counted on the store
    ``client`` (``service.store.quota.Counters``); returns the limiter (None when both limits
    are 0)."""
    cfg = _coerce(config)
    limiter = RateLimiter(Counters(client), cfg) if cfg.enabled else None
    if limiter is not None:
        # same client (so same server), and a single server (a cluster keeps the counters in
        # other slots than the game)
        svc = app.extensions.get("cartouche")
        limiter.in_append = svc is not None and svc.store.charges_in_append(limiter.counters)
    first = "cartouche_ratelimit" not in app.extensions
    app.extensions["cartouche_ratelimit"] = limiter  # registering again replaces the limits
    if not first:
        return limiter

    @app.before_request
    def _rate_limit():
        limiter = app.extensions["cartouche_ratelimit"]
        # the request and its environ looked up once (each ``request.x`` goes through
        # werkzeug's context-local proxy); the Authorization header read from the environ,
        # where ``request.headers`` reads it too
        req = request._get_current_object()
        environ = req.environ
        if limiter is None or req.method != "POST" or req.path.startswith("/bench/"):
            return None
        authorization, ip = environ.get("HTTP_AUTHORIZATION"), req.remote_addr
        endpoint = req.endpoint
        if endpoint == ACTION_ENDPOINT:
            g.cartouche_quota, refused = action_quota(limiter, authorization, ip)  # see _settle
            return refused
        refused = _charge_or_refuse(limiter, limiter.quota(_bearer(authorization), ip))
        if refused is None and endpoint == VERIFY_ENDPOINT:
            refused = _charge_or_refuse(limiter, limiter.verify_quota(ip))
        return refused

    @app.after_request
    def _settle(response):
        """An action that never reached its append (refused, replayed) is counted here, before
        its answer leaves; over the limit the answer is the 429 (it changed nothing)."""
        return settle(app.extensions["cartouche_ratelimit"],
                      g.pop("cartouche_quota", None)) or response

    return limiter
