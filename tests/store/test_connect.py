"""The single-server connection pool against a real server: a burst of connections is not kept
after it (at most ``max_idle`` stay open), and the open ones are used before anything connects
again."""

import time

import pytest
import redis

from service.store import connect


def _clients(admin: redis.Redis, name: str, settle: int | None = None) -> list[dict]:
    """The server's clients named ``name``. With ``settle``: asked again for up to 2 s until
    there are that many, since the server notices a closed socket on its own event loop, maybe
    after it has answered a CLIENT LIST sent later on another connection."""
    deadline = time.monotonic() + 2.0
    while True:
        found = [c for c in admin.client_list() if c.get("name") == name]
        if settle is None or len(found) == settle or time.monotonic() > deadline:
            return found
        time.sleep(0.01)


def test_a_burst_leaves_at_most_max_idle_connections_open(redis_url):
    admin = redis.Redis.from_url(redis_url)
    pooled = connect.client(redis_url, max_idle=3)
    pool = pooled.connection_pool
    pool.connection_kwargs["client_name"] = "burst"  # to find them in CLIENT LIST
    try:
        held = [pool.get_connection() for _ in range(20)]
        assert len(_clients(admin, "burst")) == 20
        for conn in held:
            pool.release(conn)
        assert len(_clients(admin, "burst", settle=3)) == 3  # the rest closed when released

        open_ids = {c["id"] for c in _clients(admin, "burst")}
        again = [pool.get_connection() for _ in range(3)]
        assert {c["id"] for c in _clients(admin, "burst")} == open_ids  # none reconnected
        for conn in again:
            pool.release(conn)
        assert pooled.ping() and len(_clients(admin, "burst", settle=3)) == 3
    finally:
        pooled.close()
        admin.close()


NESTED = "return {1, 'two', {ARGV[1], 3}, KEYS[1], false}"


def test_a_lean_script_answers_what_redis_py_script_answers(redis_url):
    pooled = connect.client(redis_url)
    plain = redis.Redis.from_url(redis_url)
    try:
        lean = connect.script(pooled, NESTED)
        assert isinstance(lean, connect.LeanScript)
        for args in (["x"], [b"\xff\x00"], [7], ["é" * 3]):
            assert lean(keys=["k"], args=args) == plain.register_script(NESTED)(
                keys=["k"], args=args)
        assert lean(keys=["k"], args=["x"]) == [1, b"two", [b"x", 3], b"k", None]
        # on a pipeline it is redis-py's own call
        pipe = pooled.pipeline()
        lean(keys=["k"], args=["p"], client=pipe)
        assert pipe.execute() == [[1, b"two", [b"p", 3], b"k", None]]
    finally:
        pooled.close()
        plain.close()


def test_a_lean_script_loads_itself_again_when_the_server_forgot_it(redis_url):
    pooled = connect.client(redis_url)
    admin = redis.Redis.from_url(redis_url)
    try:
        lean = connect.script(pooled, "return ARGV[1]")
        assert lean(keys=[], args=["a"]) == b"a"
        admin.script_flush()
        assert lean(keys=[], args=["b"]) == b"b"
    finally:
        pooled.close()
        admin.close()


def test_a_connection_the_server_closed_fails_one_call_as_redis_py_does_then_reconnects(
        redis_url):
    """The connections' retry policy is redis-py's (no retries here): the call that finds its
    connection closed raises ConnectionError, as redis-py's ``Script`` does on the same pool;
    the connection goes back to the pool disconnected and the next call connects again."""
    admin = redis.Redis.from_url(redis_url)
    for make in (connect.script, lambda client, text: client.register_script(text)):
        pooled = connect.client(redis_url)
        pooled.connection_pool.connection_kwargs["client_name"] = "lean"
        try:
            script = make(pooled, "return ARGV[1]")
            assert script(keys=[], args=["before"]) == b"before"
            (victim,) = _clients(admin, "lean")
            admin.execute_command("CLIENT", "KILL", "ID", victim["id"])
            with pytest.raises(redis.ConnectionError):
                script(keys=[], args=["lost"])
            assert not pooled.connection_pool._in_use_connections  # released, not leaked
            assert script(keys=[], args=["after"]) == b"after"
            (again,) = _clients(admin, "lean")
            assert again["id"] != victim["id"]
        finally:
            pooled.close()
    admin.close()


def test_a_lean_call_is_one_send_and_leaves_the_rest_to_redis_py(redis_url):
    """A command goes out in one ``send`` on the connection's socket; what that ``send`` leaves
    (a command larger than the socket's buffer), and a command due a health check, go through
    redis-py's own ``send_packed_command``, and the answers are whole."""
    pooled = connect.client(redis_url)
    admin = redis.Redis.from_url(redis_url)
    try:
        length = connect.script(pooled, "return string.len(ARGV[1])")
        assert length(keys=[], args=["warm"]) == 4
        conn = pooled.connection_pool.get_connection()
        pooled.connection_pool.release(conn)  # handed out first by the next call
        through_redis_py = []
        original = conn.send_packed_command

        def recorded(command, check_health=True):
            through_redis_py.append([bytes(part) for part in command])
            return original(command, check_health)

        conn.send_packed_command = recorded
        assert length(keys=[], args=["small"]) == 5
        assert through_redis_py == []  # one send took it all
        big = "x" * 16_000_000  # more than a socket takes in one send (TCP: its buffer, ≤ 4 MB)
        assert length(keys=[], args=[big]) == 16_000_000
        (rest,) = through_redis_py
        assert 0 < len(rest[0]) < 16_000_000 and rest[0].endswith(b"x" * 1000 + b"\r\n")
        pings = admin.info("commandstats").get("cmdstat_ping", {}).get("calls", 0)
        conn.next_health_check = 0  # due: redis-py's path, its PING first
        assert length(keys=[], args=["checked"]) == 7
        assert admin.info("commandstats")["cmdstat_ping"]["calls"] == pings + 1
        # the command through redis-py's method, which sent the PING before it
        assert through_redis_py[1][0].endswith(b"checked\r\n")
        assert through_redis_py[2:] == [[b"*1\r\n$4\r\nPING\r\n"]]
    finally:
        pooled.close()
        admin.close()


def test_the_pending_data_check_answers_what_redis_py_answers(redis_url):
    """``connect.can_read`` (the check a connection gets when taken from the pool, with the
    OS's poll) agrees with redis-py's ``can_read``: nothing pending on an idle connection; a
    reply nobody read; a connection the server closed (redis-py raises or says readable, and
    so does the check), which the pool then replaces. (RESP2: over TCP with RESP3, redis-py
    and the pool leave the check out, since maintenance notifications may arrive unasked.)"""
    admin = redis.Redis.from_url(redis_url)
    pooled = connect.client(redis_url + "?protocol=2")
    pool = pooled.connection_pool
    pool.connection_kwargs["client_name"] = "pending"
    try:
        conn = pool.get_connection()
        assert connect.can_read(conn) is False and conn.can_read() is False

        conn.send_command("PING")  # its reply left unread
        assert admin.ping()  # a round trip later the reply has surely arrived
        assert connect.can_read(conn) is True and conn.can_read() is True
        pool.release(conn)
        again = pool.get_connection()  # the pool's check sees the reply: a fresh connection
        assert again is conn and connect.can_read(again) is False
        again.send_command("ECHO", "fresh")
        assert again.read_response() == b"fresh"

        (victim,) = _clients(admin, "pending")
        admin.execute_command("CLIENT", "KILL", "ID", victim["id"])
        assert admin.ping()

        def answer(check):
            try:
                return check()
            except redis.ConnectionError:
                return "closed"
        ours, theirs = answer(lambda: connect.can_read(again)), answer(again.can_read)
        assert ours == theirs and ours in (True, "closed")
        pool.release(again)
        assert pooled.ping()
    finally:
        pooled.close()
        admin.close()
