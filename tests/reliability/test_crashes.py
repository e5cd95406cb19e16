"""kill -9 at the three places a deployment can die, each on processes this module owns:

* the Redis server mid-game (AOF, restarted on the same data dir and port): every acknowledged
  event is there (with ``appendfsync always``: everysec can lose up to ~2 s of acknowledged
  writes to a kill during a slow fsync, docs/architecture.md "Durability"), play resumes; while it is down the API answers 503 + Retry-After and /readyz
  fails; the same gunicorn recovers by itself once the server is back;
* an RQ worker (and its work horse) while it computes a bot decision: the seat's move still
  happens exactly once;
* gunicorn workers mid-request: each client either got its 201 and the event exists, or got an
  error and its retry with the same Idempotency-Key gets one event and the same answer.

(The store-level SIGKILL test in tests/store appends directly; these go through the API.)
"""

from __future__ import annotations

import random
import threading
import time
from collections import Counter

import pytest
import redis
import requests
from rq import Worker
from rq.registry import StartedJobRegistry

from service.jobs import BOT_QUEUE

from .procs import (children, db, kill9, pid_alive, port_of, start_gunicorn, start_redis,
                    start_worker, wait_until)

pytestmark = pytest.mark.redis

H = lambda token: {"Authorization": f"Bearer {token}"}  # noqa: E731


def _post(url, gid, token, key, action, timeout=10):
    return requests.post(f"{url}/v1/games/{gid}/actions", json={"action": action},
                         headers={**H(token), "Idempotency-Key": key}, timeout=timeout)


# -- the Redis server -----------------------------------------------------------------------
@pytest.mark.appendfsync("always")
def test_redis_kill9_mid_game_then_restart(own_redis):
    server = own_redis["server"]
    port = port_of(server)
    store_url, queue_url = db(server.url, 0), db(server.url, 1)
    assert redis.Redis.from_url(store_url).config_get("appendfsync") == {"appendfsync": "always"}
    gunicorn, url = start_gunicorn(store_url, queue_url)
    try:
        r = requests.post(f"{url}/v1/games", json={
            "type": "diamant", "players": [{"name": f"p{i}"} for i in range(4)]})
        assert r.status_code == 201
        gid, tokens = r.json()["id"], [s["token"] for s in r.json()["seats"]]
        acked: dict[str, dict] = {}  # key -> 201 body
        lock = threading.Lock()
        stop = threading.Event()
        down_answers: Counter = Counter()

        def seat_client(seat):
            """Plays until told to stop; a failed request is retried with its key."""
            rnd = random.Random(seat)
            s = requests.Session()
            pending = None  # (key, action) not yet answered 201
            while not stop.is_set():
                try:
                    if pending is None:
                        legal = s.get(f"{url}/v1/games/{gid}/legal-actions", headers=H(
                            tokens[seat]), timeout=5)
                        if legal.status_code != 200:
                            down_answers[legal.status_code] += 1
                            time.sleep(0.05)
                            continue
                        body = legal.json()
                        if not body["actions"]:
                            view = s.get(f"{url}/v1/games/{gid}", timeout=5)
                            if view.status_code == 200 and view.json()["status"] != "active":
                                return
                            time.sleep(0.01)
                            continue
                        pending = (f"s{seat}-v{body['version']}", rnd.choice(body["actions"]))
                    res = _post(url, gid, tokens[seat], *pending, timeout=5)
                except requests.RequestException:
                    time.sleep(0.05)
                    continue
                if res.status_code == 201:
                    with lock:
                        acked[pending[0]] = res.json()
                    pending = None
                elif res.status_code == 503:
                    assert res.headers["Retry-After"] == "1"
                    assert res.json()["error"]["code"] == "store_unavailable"
                    down_answers[503] += 1
                    time.sleep(0.05)
                elif res.status_code == 409 and \
                        res.json()["error"]["details"].get("code") == "game_over":
                    return
                else:
                    raise AssertionError(f"{res.status_code} {res.text}")

        threads = [threading.Thread(target=seat_client, args=(i,), daemon=True)
                   for i in range(4)]
        for t in threads:
            t.start()
        wait_until(lambda: len(acked) >= 12, 30, "a dozen acknowledged commands")
        server.kill()  # SIGKILL, mid-game, with writers in flight
        with lock:
            acked_before_kill = dict(acked)
        # Down: 503 with Retry-After everywhere, readiness fails, liveness answers.
        ready = requests.get(f"{url}/readyz", timeout=10)
        assert ready.status_code == 503 and ready.headers["Retry-After"] == "1"
        for res in (requests.get(f"{url}/v1/games/{gid}", timeout=10),
                    _post(url, gid, tokens[0], "down-probe", {"type": "decide",
                                                              "choice": "continue"})):
            assert res.status_code == 503, res.text
            assert res.headers["Retry-After"] == "1"
            assert res.json()["error"]["code"] == "store_unavailable"
        assert requests.get(f"{url}/healthz", timeout=10).status_code == 200
        time.sleep(0.5)  # clients keep retrying against the dead server
        # Back on the same data dir and port; the same gunicorn recovers by itself.
        own_redis["server"] = server = start_redis(own_redis["data"], port=port,
                                                   appendfsync=own_redis["appendfsync"])
        wait_until(lambda: requests.get(f"{url}/readyz", timeout=5).status_code == 200, 20,
                   "/readyz to recover without restarting the API")
        end = time.monotonic() + 60
        for t in threads:
            t.join(max(0.1, end - time.monotonic()))
        assert not any(t.is_alive() for t in threads), "play did not resume to the end"
        stop.set()
        assert down_answers[503] >= 1

        view = requests.get(f"{url}/v1/games/{gid}", timeout=10).json()
        assert view["status"] == "finished"
        log = requests.get(f"{url}/v1/games/{gid}/events?limit=1000", timeout=10).json()
        events = log["events"]
        assert [e["version"] for e in events] == list(range(1, view["version"] + 1))
        # every command acknowledged before the kill (and after) is in the log, once
        firsts = []
        for key, body in acked.items():
            for ev in body["events"]:
                assert events[ev["version"] - 1]["type"] == ev["type"]
                assert events[ev["version"] - 1]["seat"] == ev["seat"]
            firsts.append(body["events"][0]["version"])
        assert len(firsts) == len(set(firsts))
        assert set(acked_before_kill) <= set(acked)
        commits = [e["version"] for e in events if e["type"] == "ChoiceCommitted"
                   and not e.get("forced")]
        assert sorted(firsts) == sorted(commits)
    finally:
        gunicorn.stop()


# -- an RQ worker ------------------------------------------------------------------------------
def _holder(queue_conn, job_id):
    """The registered worker whose current job is ``job_id``."""
    for w in Worker.all(connection=queue_conn):
        if w.get_current_job_id() == job_id:
            return w
    return None


def _events(url, gid):
    return requests.get(f"{url}/v1/games/{gid}/events?limit=1000", timeout=10).json()["events"]


def _bot_commits(url, gid, seat):
    return [e for e in _events(url, gid) if e["type"] == "ChoiceCommitted" and e["seat"] == seat]


def _at_most_once_per_step(events):
    """No seat commits twice in one Diamant step (between two ChoicesRevealed)."""
    seen: set = set()
    for e in events:
        if e["type"] == "ChoicesRevealed":
            seen = set()
        elif e["type"] == "ChoiceCommitted":
            assert e["seat"] not in seen, f"seat {e['seat']} committed twice at {e['version']}"
            seen.add(e["seat"])


def _held_bot_job(qconn, job_id):
    """Wait until a registered worker holds ``job_id``; returns that worker."""
    registry = StartedJobRegistry(BOT_QUEUE, connection=qconn)

    def found():
        if job_id in registry.get_job_ids():
            w = _holder(qconn, job_id)
            if w is not None and w.pid:
                return w
        return None

    return wait_until(found, 30, f"a worker to pick {job_id}")


def _table_waiting_for_its_bot(url, **clock):
    """A Diamant table whose two humans have committed: only the mcts bot is awaited, and no
    later command will come to re-schedule its job."""
    options = {"clock": clock} if clock else {}
    r = requests.post(f"{url}/v1/games", json={
        "type": "diamant", "options": options,
        "players": [{"name": "ann"}, {"name": "bob"},
                    {"name": "deep", "bot": {"level": "mcts", "budget_ms": 8000}}]})
    assert r.status_code == 201, r.text
    gid, tokens = r.json()["id"], [s["token"] for s in r.json()["seats"]]
    for seat in (0, 1):
        res = _post(url, gid, tokens[seat], f"h{seat}", {"type": "decide", "choice": "continue"})
        assert res.status_code == 201, res.text
    version = requests.get(f"{url}/v1/games/{gid}", timeout=10).json()["version"]
    return gid, f"bot-{gid}-{version}-2"


def test_worker_kill9_while_thinking_then_the_clock_plays_the_seat_once(own_redis):
    """The whole worker (main process and work horse) dies while an mcts bot thinks; the seat's
    deadline (3 s) passes; the clock job, run by another worker's scheduler, plays the seat's
    decision exactly once (flagged timeout)."""
    server = own_redis["server"]
    store_url, queue_url = db(server.url, 0), db(server.url, 1)
    qconn = redis.Redis.from_url(queue_url)
    gunicorn, url = start_gunicorn(store_url, queue_url, workers=1)
    thinker = backstop = None
    try:
        gid, job_id = _table_waiting_for_its_bot(url, per_decision_ms=3000, timeout="auto")
        thinker = start_worker(store_url, queue_url, name="thinker")  # stale jobs: no-ops
        holder = _held_bot_job(qconn, job_id)
        assert holder.name == "thinker"
        doomed = [holder.pid] + children(holder.pid)  # and its work horse, if it forks one
        for pid in doomed:
            kill9(pid)
        wait_until(lambda: not pid_alive(holder.pid), 5, "the worker to die")
        assert not _bot_commits(url, gid, 2)
        backstop = start_worker(store_url, queue_url, scheduler=True, name="backstop")
        commits = wait_until(lambda: _bot_commits(url, gid, 2), 30,
                             "the bot seat's move after its worker died")
        assert commits[0].get("timeout") is True  # the clock played it
        time.sleep(1.5)  # a duplicate would land now
        _at_most_once_per_step(_events(url, gid))
    finally:
        for p in (thinker, backstop):
            if p is not None:
                p.stop(kill_children=True)
        gunicorn.stop()


def test_worker_kill9_without_a_clock_the_bot_move_happens_once(own_redis):
    """Two workers; the one computing the bot decision is SIGKILLed (with its work horse, if
    it forks one). The game has no clock and nobody else will act, so only the job queue can
    recover the move: it must be run again (the job carries its version, so that is safe) and
    the bot must play exactly once."""
    server = own_redis["server"]
    store_url, queue_url = db(server.url, 0), db(server.url, 1)
    qconn = redis.Redis.from_url(queue_url)
    gunicorn, url = start_gunicorn(store_url, queue_url, workers=1)
    workers = []
    try:
        gid, job_id = _table_waiting_for_its_bot(url)
        workers = [start_worker(store_url, queue_url, name=f"w{i}", scheduler=(i == 0))
                   for i in range(2)]
        holder = _held_bot_job(qconn, job_id)

        doomed = [holder.pid] + children(holder.pid)
        for pid in doomed:
            kill9(pid)
        wait_until(lambda: not pid_alive(holder.pid), 5, "the worker to die")
        # the surviving worker's sweep (every CARTOUCHE_SWEEP_SECONDS, 5 s by default)
        # re-schedules the lost bot job
        wait_until(lambda: _bot_commits(url, gid, 2), 20, "the bot move to be recovered")
        time.sleep(1.0)
        _at_most_once_per_step(_events(url, gid))
    finally:
        for p in workers:
            p.stop(kill_children=True)
        gunicorn.stop()


# -- gunicorn workers --------------------------------------------------------------------------
def test_gunicorn_worker_kill9_mid_request_retries_are_safe(own_redis):
    server = own_redis["server"]
    store_url, queue_url = db(server.url, 0), db(server.url, 1)
    master, url = start_gunicorn(store_url, queue_url, workers=2)
    try:
        games = []
        for _ in range(6):  # enough play to outlast several kills
            r = requests.post(f"{url}/v1/games", json={
                "type": "diamant", "players": [{"name": f"p{i}"} for i in range(6)]})
            games.append((r.json()["id"], [s["token"] for s in r.json()["seats"]]))
        lock = threading.Lock()
        outcome: dict[tuple[str, str], list] = {}  # (game, key) -> [answers...]
        errors = Counter()

        def seat_client(gid, tokens, seat):
            rnd = random.Random(f"{gid}{seat}")
            s = requests.Session()
            deadline = time.monotonic() + 60
            pending = None
            while time.monotonic() < deadline:
                try:
                    if pending is None:
                        legal = s.get(f"{url}/v1/games/{gid}/legal-actions",
                                      headers=H(tokens[seat]), timeout=5)
                        if legal.status_code != 200:
                            errors[legal.status_code] += 1
                            continue
                        body = legal.json()
                        if not body["actions"]:
                            if s.get(f"{url}/v1/games/{gid}", timeout=5).json()["status"] \
                                    != "active":
                                return
                            time.sleep(0.01)
                            continue
                        pending = (f"s{seat}-v{body['version']}", rnd.choice(body["actions"]))
                        with lock:
                            outcome[(gid, pending[0])] = []
                    res = _post(url, gid, tokens[seat], *pending, timeout=5)
                except requests.RequestException as exc:  # the worker died under us
                    with lock:
                        errors[type(exc).__name__] += 1
                        if pending:
                            outcome[(gid, pending[0])].append("error")
                    s = requests.Session()
                    time.sleep(0.02)
                    continue
                with lock:
                    outcome[(gid, pending[0])].append((res.status_code, res.text))
                if res.status_code == 201:
                    pending = None
                elif res.status_code >= 500:
                    errors[res.status_code] += 1
                    time.sleep(0.02)
                else:
                    raise AssertionError(f"{res.status_code} {res.text}")

        threads = [threading.Thread(target=seat_client, args=(gid, tokens, seat), daemon=True)
                   for gid, tokens in games for seat in range(6)]
        for t in threads:
            t.start()
        killed = 0
        time.sleep(0.2)
        while killed < 6 and any(t.is_alive() for t in threads):
            workers = children(master.pid)
            if workers:
                kill9(random.choice(workers))
                killed += 1
            time.sleep(0.25)
        end = time.monotonic() + 90
        for t in threads:
            t.join(max(0.1, end - time.monotonic()))
        assert not any(t.is_alive() for t in threads)
        assert killed >= 3
        retried = [k for k, answers in outcome.items() if "error" in answers]
        print(f"kills {killed}, client errors {dict(errors)}, requests retried {len(retried)}")
        assert 500 not in errors
        for gid, _ in games:
            view = requests.get(f"{url}/v1/games/{gid}", timeout=10).json()
            assert view["status"] == "finished"
            events = requests.get(f"{url}/v1/games/{gid}/events?limit=1000",
                                  timeout=10).json()["events"]
            assert [e["version"] for e in events] == list(range(1, len(events) + 1))
            firsts = []
            for (g, key), answers in outcome.items():
                if g != gid:
                    continue
                ok = [a for a in answers if a != "error" and a[0] == 201]
                assert len(ok) == 1, answers  # every logical request ended in one 201
                body = requests.models.complexjson.loads(ok[0][1])
                ev = body["events"][0]
                assert events[ev["version"] - 1]["seat"] == int(key[1:].split("-")[0])
                firsts.append(ev["version"])
            commits = [e["version"] for e in events if e["type"] == "ChoiceCommitted"
                       and not e.get("forced")]
            assert sorted(firsts) == sorted(commits)  # one event per key, none unaccounted
            _at_most_once_per_step(events)
    finally:
        master.stop()
