"""Connections to the event store: one Redis, or a Redis Cluster.

``EVENTSTORE_URL`` (default ``REDIS_URL``) is ``redis://``, ``rediss://`` or ``unix://`` for one
server, or ``redis+cluster://host:port,host:port,...`` (``rediss+cluster://`` with TLS) for a
cluster given by any of its nodes. Every key of a game carries the ``{<game_id>}`` hash tag, so the
Lua scripts and every multi-key command of a game stay in one slot.

A single server's connections come from an :class:`IdleBoundPool`: redis-py's pools keep every
connection they ever opened, so a burst (a thousand event streams catching up at once, a
thousand hubs each blocked in ``XREAD``) would otherwise hold that many Redis clients for the
life of the process. A cluster keeps redis-py's own pools per node.
"""

from __future__ import annotations

from urllib.parse import urlsplit

import threading

import redis
from redis.backoff import ExponentialWithJitterBackoff
from redis.cluster import ClusterNode, RedisCluster
from redis.retry import Retry

CLUSTER_SCHEMES = {"redis+cluster": False, "rediss+cluster": True}


def is_cluster(url: str) -> bool:
    return url.split("://", 1)[0] in CLUSTER_SCHEMES


#: Connections a pool keeps open while nobody uses them (``CARTOUCHE_REDIS_IDLE_CONNECTIONS``).
IDLE_CONNECTIONS = 16


class IdleBoundPool(redis.ConnectionPool):
    """A connection pool that keeps at most ``max_idle`` connections open while they are idle.

    A connection released while ``max_idle`` others wait open is disconnected: it stays in the
    pool without its socket (no Redis client any more) and connects again when it is next
    taken. ``max_connections`` still bounds the connections in use at once."""

    def __init__(self, *, max_idle: int = IDLE_CONNECTIONS, **kwargs) -> None:
        self.max_idle = max_idle
        super().__init__(**kwargs)

    def reset(self) -> None:
        """(Also after a fork.) Nothing is idle yet."""
        super().reset()
        self._idle_lock = threading.Lock()
        self._open_idle: set = set()  # released connections still connected

    def get_connection(self, *args, **kwargs):
        connection = super().get_connection(*args, **kwargs)
        with self._idle_lock:
            self._open_idle.discard(connection)
        return connection

    def release(self, connection) -> None:
        with self._idle_lock:
            keep = connection.is_connected and len(self._open_idle) < self.max_idle
            if keep:
                self._open_idle.add(connection)
        if not keep:
            connection.disconnect()
        super().release(connection)
        if not keep:
            # redis-py hands out the most recently released connection first: a closed one
            # goes to the back, so the open ones are used before anything reconnects.
            with self._lock:
                available = self._available_connections
                if available and available[-1] is connection:
                    available.insert(0, available.pop())


def client(url: str, *, timeout: float = 5.0, max_connections: int = 2000,
           read_timeout: float | None = None, max_idle: int = IDLE_CONNECTIONS):
    """A client for ``url``: ``redis.Redis`` (its pool keeps at most ``max_idle`` idle
    connections open) or ``redis.cluster.RedisCluster``."""
    read_timeout = timeout if read_timeout is None else read_timeout
    if not is_cluster(url):
        pool = IdleBoundPool.from_url(url, max_idle=max_idle, socket_timeout=read_timeout,
                                      socket_connect_timeout=timeout,
                                      health_check_interval=15,
                                      max_connections=max_connections)
        made = redis.Redis(connection_pool=pool)
        made.auto_close_connection_pool = True  # as Redis.from_url: close() closes the pool
        return made
    scheme, rest = url.split("://", 1)
    parts = urlsplit(f"redis://{rest.split(',')[0]}")
    nodes = []
    for item in rest.split("/")[0].split("@")[-1].split(","):
        host, _, port = item.rpartition(":")
        nodes.append(ClusterNode(host or "127.0.0.1", int(port or 6379)))
    return RedisCluster(startup_nodes=nodes, ssl=CLUSTER_SCHEMES[scheme],
                        username=parts.username, password=parts.password,
                        socket_timeout=read_timeout, socket_connect_timeout=timeout,
                        max_connections=max_connections,
                        # a moved slot or a failed-over master: three tries, 10 ms to 1 s apart
                        retry=Retry(ExponentialWithJitterBackoff(base=0.01, cap=1), 3))


def queue_client(url: str, *, timeout: float | None = None) -> redis.Redis:
    """RQ's server (always a plain Redis: RQ does not support a cluster)."""
    return redis.Redis.from_url(url, socket_timeout=timeout)
