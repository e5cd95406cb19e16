"""Connections to the event store: one Redis, or a Redis Cluster.

``EVENTSTORE_URL`` (default ``REDIS_URL``) is ``redis://``, ``rediss://`` or ``unix://`` for one
server, or ``redis+cluster://host:port,host:port,...`` (``rediss+cluster://`` with TLS) for a
cluster given by any of its nodes. Every key of a game carries the ``{<game_id>}`` hash tag, so the
Lua scripts and every multi-key command of a game stay in one slot.

A single server's connections come from an :class:`IdleBoundPool`: redis-py's pools keep every
connection they ever opened, so a burst (a thousand event streams catching up at once, a
thousand hubs each blocked in ``XREAD``) would otherwise hold that many Redis clients for the
life of the process. A cluster keeps redis-py's own pools per node.

The same pool is also the lean path every request's commands take (measured: redis-py 8.1's
own ``get_connection``/``release`` cost ~13 µs of CPU a command, these ~4 µs; a Lua call
through :class:`LeanScript` ~25 µs less than through redis-py's ``Script``):

* taking and releasing a connection skips redis-py's per-call instrumentation (OpenTelemetry
  connection counts, deprecated-argument checks) and its release event, whose one listener
  re-authenticates connections of a streaming credential provider (:meth:`IdleBoundPool.release`
  calls ``re_auth`` itself);
* the check for unread data a connection gets when it is taken (:func:`can_read`, where
  redis-py makes it: RESP2, or a unix socket) polls with the OS's ``poll``, not gevent's
  cooperative one, when nothing is pending;
* :class:`LeanScript` (what :func:`script` registers) packs ``EVALSHA`` once with hiredis and
  sends it on a pooled connection with the connection's own retry policy, as
  ``Redis.execute_command`` does, without its per-command wrappers. Pipelines and clusters use
  redis-py's ``Script``.
"""

from __future__ import annotations

import select
import time
from urllib.parse import urlsplit

import hiredis
import redis
from redis.backoff import ExponentialWithJitterBackoff
from redis.cluster import ClusterNode, RedisCluster
from redis.commands.core import Script
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import NoScriptError
from redis.exceptions import TimeoutError as RedisTimeoutError
from redis.retry import Retry

CLUSTER_SCHEMES = {"redis+cluster": False, "rediss+cluster": True}


def is_cluster(url: str) -> bool:
    return url.split("://", 1)[0] in CLUSTER_SCHEMES


#: Connections a pool keeps open while nobody uses them (``CARTOUCHE_REDIS_IDLE_CONNECTIONS``):
#: at least the Redis calls a busy API process has in flight at once, else a burst closes
#: connections its next burst opens again (a connect, ``HELLO`` and two ``CLIENT SETINFO``
#: each; measured in docs/benchmarks.md).
IDLE_CONNECTIONS = 32


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
        self._open_idle: set = set()  # released connections still connected (under _lock)

    def get_connection(self, command_name=None, *keys, **options):
        """A connected connection, as redis-py's pool gives it (see the module docstring)."""
        self._checkpid()
        with self._lock:
            try:
                connection = self._available_connections.pop()
            except IndexError:
                connection = self.make_connection()  # bounded by max_connections
            self._in_use_connections.add(connection)
            self._open_idle.discard(connection)
        try:
            connection.connect()
            # A connection left with unread data starts again (as redis-py checks it: not
            # with a client-side cache, nor when maintenance notifications may arrive).
            if self.cache is None and not self.maint_notifications_enabled():
                try:
                    if can_read(connection):
                        raise RedisConnectionError("Connection has data")
                except (RedisConnectionError, RedisTimeoutError, OSError):
                    connection.disconnect()
                    connection.connect()
                    if connection.can_read():
                        raise RedisConnectionError("Connection not ready")
        except BaseException:
            self.release(connection)
            raise
        return connection

    def release(self, connection) -> None:
        """Back to the pool: kept open while fewer than ``max_idle`` others are, else closed
        and put at the back (redis-py hands out the most recently released connection first,
        so the open ones are used before anything reconnects)."""
        self._checkpid()
        with self._lock:
            try:
                self._in_use_connections.remove(connection)
            except KeyError:  # not this pool's (or from before a fork)
                return
            owned = self.owns_connection(connection)
            if not owned:
                if connection.pid == self.pid:
                    self._created_connections -= 1
            else:
                if connection.should_reconnect():
                    connection.disconnect()
                if connection.is_connected and len(self._open_idle) < self.max_idle:
                    self._open_idle.add(connection)
                    self._available_connections.append(connection)
                    connection.re_auth()  # as redis-py's release event does (under its lock)
                    return
        connection.disconnect()
        if owned:
            with self._lock:
                self._available_connections.insert(0, connection)

    def execute_packed(self, packed: bytes):
        """Send one command packed by ``hiredis.pack_command`` and read its unparsed reply, on
        a pooled connection, with the connection's retry policy (a connection error or timeout:
        disconnect, back off, send again)."""
        connection = self.get_connection()
        try:
            def send():
                send_packed(connection, packed)
                return connection.read_response()
            return connection.retry.call_with_retry(send, lambda error: connection.disconnect())
        finally:
            self.release(connection)


def send_packed(connection, packed: bytes) -> None:
    """``connection.send_packed_command((packed,))``, its write tried first as one ``send`` on
    the connection's socket: under gevent a socket's ``sendall`` asks the kernel for the send
    buffer's size on every call before it sends (for PyPy's sake; measured: 7.0-7.9 µs a
    600-byte ``sendall`` against 3.4-3.8 µs a ``send``). Whatever the ``send`` leaves, a due
    health check, a socket not yet connected, and a failed write (nothing of it sent) go
    through redis-py's own method, which connects, checks and raises as it does; a write that
    timed out is reported as redis-py reports it, at once (not after a second timeout)."""
    sock = connection._sock
    if sock is None or (connection.health_check_interval
                        and time.monotonic() > connection.next_health_check):
        connection.send_packed_command((packed,))
        return
    try:
        sent = sock.send(packed)
    except TimeoutError as exc:
        if exc.errno is not None:  # the OS's ETIMEDOUT: a dead connection, redis-py's path
            sent = 0
        else:  # the socket's own timeout: the server is not reading
            connection.disconnect()
            raise RedisTimeoutError("Timeout writing to socket") from exc
    except OSError:  # the same error again from redis-py's own write, reported its way
        sent = 0
    if sent < len(packed):
        connection.send_packed_command((memoryview(packed)[sent:],))


def _os_poll():
    """``select.poll`` as the OS gives it, also in a gevent worker: gevent's monkey patch makes
    it cooperative, and even with a timeout of 0 its poll switches to the hub (measured: 25 µs
    against 0.8 µs for the OS's). A check for pending data never waits, so it needs no
    cooperation."""
    try:
        from gevent import monkey
    except ImportError:  # pragma: no cover - gevent comes with the service
        return select.poll
    return monkey.get_original("select", "poll")


_POLL = _os_poll()


def can_read(connection) -> bool:
    """``connection.can_read()``: whether the server sent what the connection has not read
    (or closed it), as redis-py answers it, answered with the OS's poll when the answer is
    no, the common case: the hiredis reader holds nothing, no TLS plaintext is buffered and
    the socket is not readable. Anything else is left to redis-py's own check."""
    reader = getattr(connection._parser, "_reader", None)
    sock = connection._sock
    if reader is None or sock is None or reader.has_data() \
            or (hasattr(sock, "pending") and sock.pending()):
        return connection.can_read()
    poller = _POLL()
    poller.register(sock, select.POLLIN)
    return bool(poller.poll(0)) and connection.can_read()


class LeanScript(Script):
    """redis-py's ``Script`` whose calls on the client it was registered with take the pool's
    lean path (:meth:`IdleBoundPool.execute_packed`); the reply is the same (``EVALSHA`` has no
    reply callback), and so is ``NOSCRIPT`` handling (load the script, call again)."""

    def __call__(self, keys=None, args=None, client=None):
        pool = self.registered_client.connection_pool
        if client is not None or not isinstance(pool, IdleBoundPool):
            return super().__call__(keys, args, client)
        try:
            return pool.execute_packed(hiredis.pack_command(evalsha(self, keys, args)))
        except NoScriptError:
            reload(self)
            return pool.execute_packed(hiredis.pack_command(evalsha(self, keys, args)))


def evalsha(script: Script, keys=None, args=None) -> tuple:
    """The ``EVALSHA`` command calling ``script`` (as a pipeline can queue it without redis-py's
    ``SCRIPT EXISTS`` check; on ``NOSCRIPT``, :func:`reload` it and call again)."""
    keys = keys or ()
    return ("EVALSHA", script.sha, len(keys), *keys, *(args or ()))


def reload(script: Script) -> None:
    """Load ``script`` on the server again (it answered ``NOSCRIPT``: restarted, or flushed)."""
    script.sha = script.registered_client.script_load(script.script)


def script(client, text: str) -> Script:
    """``client.register_script(text)``, taking the lean path on a single server's pool."""
    if isinstance(client, redis.Redis) and isinstance(client.connection_pool, IdleBoundPool):
        return LeanScript(client, text)
    return client.register_script(text)


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
