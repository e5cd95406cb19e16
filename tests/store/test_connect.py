"""The single-server connection pool against a real server: a burst of connections is not kept
after it (at most ``max_idle`` stay open), and the open ones are used before anything connects
again."""

import redis

from service.store import connect


def _clients(admin: redis.Redis, name: str) -> list[dict]:
    return [c for c in admin.client_list() if c.get("name") == name]


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
        assert len(_clients(admin, "burst")) == 3  # the rest were closed when released

        open_ids = {c["id"] for c in _clients(admin, "burst")}
        again = [pool.get_connection() for _ in range(3)]
        assert {c["id"] for c in _clients(admin, "burst")} == open_ids  # none reconnected
        for conn in again:
            pool.release(conn)
        assert pooled.ping() and len(_clients(admin, "burst")) == 3
    finally:
        pooled.close()
        admin.close()
