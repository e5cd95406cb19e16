"""No seat token, token digest or seed in any log line: a whole game (humans, a bot played by
an RQ worker, errors, an event stream, the export) through a gunicorn with access logging on,
then both processes' logs are searched."""

from __future__ import annotations

import hashlib

import pytest
import redis
import requests

from .procs import db, start_gunicorn, start_worker, wait_until

pytestmark = pytest.mark.redis


def test_no_token_or_seed_in_any_log_line(own_redis):
    server = own_redis["server"]
    store_url, queue_url = db(server.url, 0), db(server.url, 1)
    gunicorn, url = start_gunicorn(store_url, queue_url, {"WEB_ACCESS_LOG": "1"})
    # RQ's per-job lines (off by default) carry each job's arguments: on, to be searched too
    worker = start_worker(store_url, queue_url, scheduler=True,
                          extra_env={"CARTOUCHE_RQ_LOG_LEVEL": "INFO"})
    try:
        r = requests.post(f"{url}/v1/games", json={
            "type": "diamant", "players": [{"name": "ann"}, {"name": "bob"},
                                           {"name": "bot", "bot": {"level": "heuristic"}}]})
        assert r.status_code == 201
        gid, tokens = r.json()["id"], [s["token"] for s in r.json()["seats"]]
        seed = redis.Redis.from_url(store_url).get(f"cartouche:{{{gid}}}:seed").decode()
        h = [{"Authorization": f"Bearer {t}"} for t in tokens]
        # errors that carry a token: a wrong token, a bot seat's token acting, bad bodies
        requests.get(f"{url}/v1/games/{gid}", headers={"Authorization": f"Bearer {tokens[0]}x"})
        requests.post(f"{url}/v1/games/{gid}/actions", headers=h[2],
                      json={"action": {"type": "decide", "choice": "continue"}})
        requests.post(f"{url}/v1/games/{gid}/actions", headers=h[0], data=b"{nope")
        requests.post(f"{url}/v1/games/{gid}/actions", headers=h[0],
                      json={"action": {"type": "decide", "choice": tokens[1]}})
        with requests.get(f"{url}/v1/games/{gid}/events/stream", headers=h[1], stream=True,
                          timeout=10) as s:
            next(s.iter_lines())
        for _ in range(400):
            view = requests.get(f"{url}/v1/games/{gid}", headers=h[0]).json()
            if view["status"] != "active":
                break
            for seat in (0, 1):
                legal = requests.get(f"{url}/v1/games/{gid}/legal-actions",
                                     headers=h[seat]).json()["actions"]
                if legal:
                    requests.post(f"{url}/v1/games/{gid}/actions", headers=h[seat],
                                  json={"action": legal[-1]},
                                  params={"token": "never-in-urls"})
            wait_until(lambda: requests.get(f"{url}/v1/games/{gid}").json()["version"]
                       >= view["version"], 5, "progress")
        assert view["status"] == "finished"
        export = requests.get(f"{url}/v1/games/{gid}/export")
        assert export.status_code == 200 and export.json()["seed"] == seed
    finally:
        worker.stop()
        gunicorn.stop()
    logs = gunicorn.log() + worker.log()
    assert f"/v1/games/{gid}" in logs  # access logging was on
    assert "bot_turn" in logs  # the worker ran jobs
    secrets = {"seed": seed, **{f"token {i}": t for i, t in enumerate(tokens)},
               **{f"digest {i}": hashlib.sha256(t.encode()).hexdigest()
                  for i, t in enumerate(tokens)}}
    for line in logs.splitlines():
        for name, secret in secrets.items():
            assert secret not in line, f"{name} in a log line: {line[:200]}"


def test_a_worker_writes_its_access_lines_within_the_interval_and_as_it_stops(own_redis):
    """Each worker holds its access lines for one write every ``WEB_LOG_WRITE_SECONDS``: a
    request's line is in the log within that time, not at once, and the lines a worker still
    holds are written as it stops (gracefully)."""
    import json
    import time

    server = own_redis["server"]
    gunicorn, url = start_gunicorn(db(server.url, 0), db(server.url, 1),
                                   {"WEB_LOG_WRITE_SECONDS": "1.5"}, workers=1)

    def access_lines() -> list[dict]:
        lines = [json.loads(line) for line in gunicorn.log().splitlines()
                 if line.startswith("{")]
        return [line for line in lines if line["logger"] == "cartouche.access"]

    try:
        before = len(access_lines())
        with requests.Session() as s:
            t0 = time.monotonic()
            assert s.get(f"{url}/v1/games/0abc", headers={"X-Request-ID": "held-1"}
                         ).status_code == 404
            assert not any(line["request_id"] == "held-1" for line in access_lines())
            line = wait_until(lambda: next((x for x in access_lines()
                                            if x["request_id"] == "held-1"), None),
                              5, "the held access line")
            assert time.monotonic() - t0 <= 3.5 and line["status"] == 404
            assert len(access_lines()) > before
            s.get(f"{url}/v1/games/0abc", headers={"X-Request-ID": "held-2"})
    finally:
        gunicorn.stop()
    assert [x["status"] for x in access_lines() if x["request_id"] == "held-2"] == [404]
