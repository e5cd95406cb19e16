"""Issue 21, finding 4, on a real gunicorn (2 gevent workers of 1,000 greenlets) and a Redis of its
own: 2,000 spectator streams on 2,000 distinct games. Each process holds streams up to its cap
(``CARTOUCHE_SSE_MAX_STREAMS``, by default four fifths of ``WEB_WORKER_CONNECTIONS``) and answers
the rest 503 ``streams_full`` with ``Retry-After``; meanwhile ``/readyz``, a GET and a POST of
another client are answered within a bounded time; and once every client has closed, Redis
``connected_clients`` is back near where it was before within seconds (the hubs' and the
catch-up reads' connections are closed, not kept idle in the pools: at most
``CARTOUCHE_REDIS_IDLE_CONNECTIONS`` per pool stay open)."""

from __future__ import annotations

import socket
import time

import redis
import requests

from .procs import db, response_head, start_gunicorn, wait_until

#: Greenlets per gunicorn process (WEB_WORKER_CONNECTIONS): each process holds four fifths of
#: them as streams (800), so 2,000 streams on two processes hold 1,600 and refuse 400.
CONNECTIONS = 1000
STREAMS = 2000
#: Other requests must be answered within this long while the streams are held.
ANSWERED_WITHIN_S = 2.0
#: Connections each pool keeps open while idle (CARTOUCHE_REDIS_IDLE_CONNECTIONS).
IDLE = 8
#: "near the baseline": two processes, each with two pools (the command path's and the hubs')
#: that may keep IDLE connections open.
NEAR = 2 * 2 * IDLE


def _games(url: str, n: int) -> list[str]:
    ids = []
    for start in range(0, n, 100):
        body = {"games": [{"type": "diamant", "players": [{"name": n} for n in "abc"]}]
                * min(100, n - start)}
        res = requests.post(url + "/v1/games/bulk", json=body, timeout=60)
        assert res.status_code == 201, res.text
        ids += [g["id"] for g in res.json()["games"]]
    return ids


def _open(port: int, paths: list[str]) -> tuple[list[socket.socket], list[bytes]]:
    """Send every request, then read every answer: the sockets of the streams held (200) and
    the heads of the refusals (their sockets closed)."""
    socks = []
    for path in paths:
        sock = socket.create_connection(("127.0.0.1", port), timeout=60)
        sock.sendall(f"GET {path} HTTP/1.1\r\nHost: t\r\n\r\n".encode())
        socks.append(sock)
    held, refused = [], []
    for sock in socks:
        head = response_head(sock)
        if head.startswith(b"HTTP/1.1 200"):
            held.append(sock)
        else:
            refused.append(head)
            sock.close()
    return held, refused


def _connected(r: redis.Redis) -> int:
    return r.info("clients")["connected_clients"]


def _settled(r: redis.Redis):
    """A predicate: the connection count once it has stopped growing (the hubs started; it
    moves by a few while hubs are between reads)."""
    seen = [-100]

    def settled():
        now = _connected(r)
        done, seen[0] = now <= seen[0] * 1.05, now
        return done and now

    return settled


def _timed(call) -> tuple[int, float]:
    started = time.monotonic()
    status = call().status_code
    return status, time.monotonic() - started


def test_two_thousand_streams_are_capped_and_give_their_connections_back(own_redis):
    server = own_redis["server"]
    # keep-alives every 2 s: a closed client is noticed at the next one or the one after
    web, url = start_gunicorn(db(server.url, 0), db(server.url, 1),
                              {"CARTOUCHE_SSE_KEEPALIVE_MS": "2000",
                               "WEB_WORKER_CONNECTIONS": str(CONNECTIONS),
                               "CARTOUCHE_REDIS_IDLE_CONNECTIONS": str(IDLE)})
    r = redis.Redis.from_url(db(server.url, 0))
    try:
        games = _games(url, STREAMS)
        requests.get(url + "/readyz", timeout=5)
        baseline = _connected(r)
        port = int(url.rsplit(":", 1)[1])

        held, refused = _open(port, [f"/v1/games/{g}/events/stream" for g in games])
        opened_at = time.monotonic()
        peak = wait_until(_settled(r), 60, "every hub to hold its connection", 1.0)
        settled_s = time.monotonic() - opened_at
        # two processes, each capped at four fifths of its greenlets
        cap = 2 * CONNECTIONS * 4 // 5
        assert cap // 2 <= len(held) <= cap, (len(held), len(refused))
        assert len(held) + len(refused) == STREAMS
        assert all(h.startswith(b"HTTP/1.1 503") and b"streams_full" in h
                   and b"Retry-After: " in h for h in refused)

        answers = {
            "readyz": _timed(lambda: requests.get(url + "/readyz", timeout=10)),
            "get": _timed(lambda: requests.get(f"{url}/v1/games/{games[0]}", timeout=10)),
            "post": _timed(lambda: requests.post(url + "/v1/games", json={
                "type": "diamant", "players": [{"name": n} for n in "xyz"]}, timeout=10)),
        }
        print(f"held {len(held)}, refused {len(refused)}; Redis clients {baseline} before, "
              f"{peak} with the streams ({settled_s:.1f} s to settle); other requests at the cap: {answers}")
        assert [status for status, _ in answers.values()] == [200, 200, 201]
        assert all(took < ANSWERED_WITHIN_S for _, took in answers.values()), answers

        closed_at = time.monotonic()
        for sock in held:
            sock.close()
        trail = []
        after = wait_until(lambda: trail.append(n := _connected(r)) or
                           (n <= baseline + NEAR and n), 30,
                           "Redis connections back near the baseline", 0.2)
        # (30 s: a closed client is noticed at its second keep-alive, 4 s, and its hub stops
        # after its current XREAD, 0.5 s; the rest is the machine's load)
        print(f"Redis clients back to {after} (baseline {baseline}) "
              f"{time.monotonic() - closed_at:.1f} s after the clients closed; every 5 s: {trail[::25]}")
    finally:
        r.close()
        web.stop()
