"""Caps on the event streams one process holds open: per client, and in all.

An event stream (``GET /v1/games/{id}/events/stream``, ``GET /v1/players/me/events/stream``)
holds one of its gunicorn worker's connections (``WEB_WORKER_CONNECTIONS`` greenlets under
gevent, ``WEB_THREADS`` threads under gthread) for as long as its client keeps it open, and the
first stream of a game or player in a process starts that key's hub, which holds a Redis
connection. Without a bound, a client opening streams by the thousand takes every connection of
the workers (``/readyz``, reads and writes of everybody else then wait in the listen queue) and
as many Redis connections. So each process counts the streams it serves and refuses one more:

- with the same bearer token past ``per_token``, or from the same client address past
  ``per_address`` (a token-less spectator is counted by its address only; a stream with a
  token counts for both): 429 ``too_many_streams`` (``details.per``: ``token`` or ``address``,
  ``details.max``), checked first;
- past ``per_process`` in all: 503 ``streams_full`` (``details.max``).

Both carry ``Retry-After`` (:data:`RETRY_AFTER_S`). A stream counts from when it is accepted
(after its token and its game or player are checked) until its response is closed: when its
game ends, or when its client has left and the server notices it at its next write (a
keep-alive comment at the latest, ``CARTOUCHE_SSE_KEEPALIVE_MS``).

The counts live in the process, not in Redis: what runs out is the process's own (its
connections, its hubs), and a count kept in Redis would outlive a process killed with streams
open. The kernel spreads a client's connections over the workers (``SO_REUSEPORT``), so a
client may hold up to ``WEB_CONCURRENCY`` times its cap on one server, and the server up to
``WEB_CONCURRENCY`` times ``per_process``.

Configuration (environment, read by :meth:`StreamCapsConfig.from_env`; 0 disables a cap):

``CARTOUCHE_SSE_MAX_STREAMS``              per process; default four fifths of the requests a
                                           worker serves at once (800 of gevent's 1000)
``CARTOUCHE_SSE_MAX_STREAMS_PER_TOKEN``    per bearer token per process, default 50
``CARTOUCHE_SSE_MAX_STREAMS_PER_ADDRESS``  per client address per process, default 200
"""

from __future__ import annotations

import logging
import os
import threading
from collections import Counter
from dataclasses import dataclass
from typing import Callable, Mapping

from ..config import SettingError, env_count
from ..engine import CodedError

log = logging.getLogger("cartouche.streams")

#: What a refused client is told to wait: a held stream is released within a keep-alive
#: period of its client leaving.
RETRY_AFTER_S = 5


class TooManyStreams(CodedError):
    """The caller holds as many streams of this process as one client may."""

    def __init__(self, per: str, limit: int) -> None:
        super().__init__("too_many_streams", f"this {per} holds {limit} event streams of this "
                         "server process already; close one first",
                         {"per": per, "max": limit, "retry_after_s": RETRY_AFTER_S})


class StreamsFull(CodedError):
    """This process holds as many streams as it may."""

    def __init__(self, limit: int) -> None:
        super().__init__("streams_full", "this server process holds as many event streams as "
                         "it may; retry later", {"max": limit, "retry_after_s": RETRY_AFTER_S})


def _requests_at_once(env: Mapping[str, str]) -> int:
    """How many requests one gunicorn worker serves at once (see gunicorn_conf.py)."""
    if env.get("WEB_WORKER_CLASS", "gevent") == "gthread":
        return int(env.get("WEB_THREADS") or 8)
    return int(env.get("WEB_WORKER_CONNECTIONS") or 1000)


@dataclass(frozen=True)
class StreamCapsConfig:
    #: streams in all, per process (0 = no cap)
    per_process: int = 800
    #: streams per bearer token, per process (0 = no cap)
    per_token: int = 50
    #: streams per client address, per process (0 = no cap)
    per_address: int = 200

    @classmethod
    def from_env(cls, environ: Mapping[str, str] | None = None) -> "StreamCapsConfig":
        env = os.environ if environ is None else environ

        return cls(
            per_process=env_count(env, "CARTOUCHE_SSE_MAX_STREAMS",
                                  max(1, _requests_at_once(env) * 4 // 5)),
            per_token=env_count(env, "CARTOUCHE_SSE_MAX_STREAMS_PER_TOKEN", cls.per_token),
            per_address=env_count(env, "CARTOUCHE_SSE_MAX_STREAMS_PER_ADDRESS", cls.per_address),
        )


class StreamCaps:
    """The streams this process holds, in all and by client."""

    def __init__(self, config: StreamCapsConfig) -> None:
        self.config = config
        self.lock = threading.Lock()
        self.total = 0
        self.held: Counter[tuple[str, str]] = Counter()  # by ("token" | "address", who)

    def take(self, token: str | None, address: str | None) -> Callable[[], None]:
        """Count one more stream for ``token`` (None: a spectator) from ``address``; returns
        the function that gives it back (calling it again does nothing). Raises
        :class:`TooManyStreams` or :class:`StreamsFull` (nothing counted) past a cap."""
        config = self.config
        clients = [(per, who, limit) for per, who, limit in
                   (("token", token, config.per_token), ("address", address, config.per_address))
                   if who and limit]
        with self.lock:
            for per, who, limit in clients:
                if self.held[per, who] >= limit:
                    raise TooManyStreams(per, limit)
            if config.per_process and self.total >= config.per_process:
                raise StreamsFull(config.per_process)
            self.total += 1
            for per, who, _ in clients:
                self.held[per, who] += 1
        given_back = False

        def give_back() -> None:
            nonlocal given_back
            with self.lock:
                if given_back:
                    return
                given_back = True
                self.total -= 1
                for per, who, _ in clients:
                    self.held[per, who] -= 1
                    if not self.held[per, who]:
                        del self.held[per, who]

        return give_back


def check_pool(config: StreamCapsConfig, redis_connections: int) -> None:
    """Each game or player a process follows holds one of its hubs' Redis connections
    (``CARTOUCHE_REDIS_MAX_CONNECTIONS``): a cap on streams the pool cannot serve is refused
    at start (a stream past the pool would be answered, then end with a logged error). With
    no cap (0) the operator bounds the streams some other way: it is only said."""
    if config.per_process >= redis_connections:
        raise SettingError(f"CARTOUCHE_SSE_MAX_STREAMS ({config.per_process}) must be below "
                           f"CARTOUCHE_REDIS_MAX_CONNECTIONS ({redis_connections})")
    if not config.per_process:
        log.warning("no cap on event streams (CARTOUCHE_SSE_MAX_STREAMS=0): past %d followed "
                    "games or players a stream fails", redis_connections)


def register(app, config: StreamCapsConfig | None = None,
             redis_connections: int | None = None) -> StreamCaps:
    """Cap the event streams of ``app`` (``config``: from the environment when None), checked
    against the Redis connections its hubs may hold (:func:`check_pool`); registering again
    replaces the caps (for streams opened from then on)."""
    config = config or StreamCapsConfig.from_env()
    if redis_connections is not None:
        check_pool(config, redis_connections)
    caps = StreamCaps(config)
    app.extensions["cartouche_stream_caps"] = caps
    return caps
