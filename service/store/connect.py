"""Connections to the event store: one Redis, or a Redis Cluster.

``EVENTSTORE_URL`` (default ``REDIS_URL``) is ``redis://``, ``rediss://`` or ``unix://`` for one
server, or ``redis+cluster://host:port,host:port,...`` (``rediss+cluster://`` with TLS) for a
cluster given by any of its nodes. Every key of a game carries the ``{<game_id>}`` hash tag, so the
Lua scripts and every multi-key command of a game stay in one slot.
"""

from __future__ import annotations

from urllib.parse import urlsplit

import redis
from redis.backoff import ExponentialWithJitterBackoff
from redis.cluster import ClusterNode, RedisCluster
from redis.retry import Retry

CLUSTER_SCHEMES = {"redis+cluster": False, "rediss+cluster": True}


def is_cluster(url: str) -> bool:
    return url.split("://", 1)[0] in CLUSTER_SCHEMES


def client(url: str, *, timeout: float = 5.0, max_connections: int = 2000,
           read_timeout: float | None = None):
    """A client for ``url``: ``redis.Redis`` or ``redis.cluster.RedisCluster``."""
    read_timeout = timeout if read_timeout is None else read_timeout
    if not is_cluster(url):
        return redis.Redis.from_url(url, socket_timeout=read_timeout,
                                    socket_connect_timeout=timeout, health_check_interval=15,
                                    max_connections=max_connections)
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
