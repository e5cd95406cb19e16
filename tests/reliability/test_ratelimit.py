"""service/api/ratelimit.py on an app built by create_app: writes are limited per token and
per address with 429 + Retry-After and the standard error body; reads are not; 0 disables;
Redis errors fail open when the counters are on a store of their own; tokens never reach Redis.

Two wirings, same answers: the production one (the limiter shares the store's client, so an
action's counters are charged inside its append script) and a limiter on a client of its own
(counted before the request, as on a cluster)."""

from __future__ import annotations

import logging

import pytest
import redis

from service.api import ratelimit
from service.app import create_app
from service.config import Config

from tests.api.helpers import auth, record_commands


IN_THE_APPEND, BEFORE = "counted in the append", "counted before the request"


@pytest.fixture(params=[IN_THE_APPEND, BEFORE])
def wiring(request):
    return request.param


def _app(redis_url, queue_url, wiring=IN_THE_APPEND, **limits):
    app = create_app(Config(redis_url=redis_url, queue_url=queue_url))
    if wiring == IN_THE_APPEND:
        r = app.extensions["cartouche"].store.r  # as create_app wires it
    else:
        r = redis.Redis.from_url(redis_url)
    limiter = ratelimit.register(app, r, ratelimit.RateLimitConfig(**limits))
    return app, r, limiter


def _game(c):
    res = c.post("/v1/games", json={"type": "diamant", "players": [{"name": "a"}] * 3},
                 environ_base={"REMOTE_ADDR": "10.9.9.9"})
    assert res.status_code == 201
    return res.get_json()["id"], [s["token"] for s in res.get_json()["seats"]]


def _act(c, gid, token, ip="10.0.0.1"):
    return c.post(f"/v1/games/{gid}/actions", json={"action": {"type": "decide",
                                                               "choice": "continue"}},
                  headers=auth(token), environ_base={"REMOTE_ADDR": ip})


def _assert_429(res, per=None):
    """A 429 ``rate_limited``; ``per``: whose limit it says it is (``token``, ``address``)."""
    assert res.status_code == 429, res.get_json()
    assert int(res.headers["Retry-After"]) >= 1
    body = res.get_json()
    assert set(body) == {"error"} and body["error"]["code"] == "rate_limited"
    assert set(body["error"]) == {"code", "message", "details"}
    if per is not None:
        assert body["error"]["details"]["per"] == per


def test_per_token_limit_on_writes(redis_url, queue_url, wiring):
    app, r, _ = _app(redis_url, queue_url, wiring, writes_per_minute=3,
                      ip_writes_per_minute=0)
    c = app.test_client()
    gid, tokens = _game(c)
    answers = [_act(c, gid, tokens[0]).status_code for _ in range(3)]
    assert answers[0] == 201 and 429 not in answers
    _assert_429(_act(c, gid, tokens[0]), per="token")
    # another token, same address: its own budget
    assert _act(c, gid, tokens[1]).status_code == 201
    # reads are never limited
    for _ in range(10):
        assert c.get(f"/v1/games/{gid}", headers=auth(tokens[0])).status_code == 200
    # the token itself never reaches Redis; only a digest prefix names its counter
    keys = [k.decode() for k in r.scan_iter("cartouche:rl:*")]
    assert keys and not any(t in k for k in keys for t in tokens)


def test_per_ip_limit_on_writes(redis_url, queue_url, wiring):
    app, _, _ = _app(redis_url, queue_url, wiring, writes_per_minute=0,
                      ip_writes_per_minute=4)
    c = app.test_client()
    gid, tokens = _game(c)
    for seat in range(3):
        assert _act(c, gid, tokens[seat], ip="10.0.0.7").status_code in (201, 409)
    # the 4th write of this address, with any token or none, is refused
    c.post("/v1/games", json={"type": "diamant", "players": [{"name": "a"}] * 3},
           environ_base={"REMOTE_ADDR": "10.0.0.7"})
    _assert_429(c.post("/v1/games", json={"type": "diamant", "players": [{"name": "a"}] * 3},
                       environ_base={"REMOTE_ADDR": "10.0.0.7"}), per="address")
    # another address is unaffected
    assert c.post("/v1/games", json={"type": "diamant", "players": [{"name": "a"}] * 3},
                  environ_base={"REMOTE_ADDR": "10.0.0.8"}).status_code == 201


def test_window_slides_and_retry_after_is_honest(redis_url, queue_url, wiring):
    app, _, limiter = _app(redis_url, queue_url, wiring, writes_per_minute=2,
                           ip_writes_per_minute=0, window_seconds=60)
    now = [6000.0]  # the start of a window
    limiter.clock = lambda: now[0]
    c = app.test_client()
    gid, tokens = _game(c)
    assert _act(c, gid, tokens[0]).status_code == 201
    assert _act(c, gid, tokens[0]).status_code == 409  # already committed: counted anyway
    res = _act(c, gid, tokens[0])
    _assert_429(res)
    # not 60 (this window's end): the 3 writes still weigh 3 × (1 − e) in the next one and the
    # retry adds 1, within 2 at e = 2/3: 60 + 40 s, a whole second, which is answered the
    # next one (service.store.quota.TIE_S)
    assert int(res.headers["Retry-After"]) == 101
    now[0] += 61  # next window: the previous one still weighs ~(1 - 1/60) * 3
    _assert_429(_act(c, gid, tokens[0]))
    now[0] += 59  # two windows later: free again
    assert _act(c, gid, tokens[0]).status_code == 409


#: (setup, then the refusal): times on the limiter's clock, window 60 s, 3 writes per token
WAITS = {
    # over on this window alone: 3 writes then a 4th, 10.5 s into a fresh window; in the next
    # window the 4 still weigh 4 × (1 − e) and the retry adds 1: 49.5 s + 60 × (1 − 2/4)
    "over on this window alone": ([], 6010.5, 4, 80),
    # over by the previous window's weight: 3 writes at 6000, then one at 6075.5: 3 × 0.742
    # + 1 > 3; the retry makes 2 here, so the 3 must weigh 1: until e = 2/3, 24.5 s
    "over by the previous window": ([6000.0] * 3, 6075.5, 1, 25),
}


@pytest.mark.parametrize("case", sorted(WAITS))
def test_a_client_that_waits_retry_after_is_accepted_and_a_second_sooner_is_not(
        redis_url, queue_url, wiring, case):
    """The promise a client relies on: refused with 429, it waits exactly Retry-After, makes
    no other request meanwhile, and its retry is accepted. Not pessimistic either: one
    second sooner, it is still refused. Two seats of one game write the same at the same
    times, one retrying a second sooner (itself counted), the other on time."""
    history, at, writes, expect = WAITS[case]
    app, _, limiter = _app(redis_url, queue_url, wiring, writes_per_minute=3,
                           ip_writes_per_minute=0, window_seconds=60)
    now = [6000.0]
    limiter.clock = lambda: now[0]
    c = app.test_client()
    gid, tokens = _game(c)
    sooner, on_time = tokens[0], tokens[1]
    for when in history:
        now[0] = when
        assert _act(c, gid, sooner).status_code != 429
        assert _act(c, gid, on_time).status_code != 429
    now[0] = at
    headers = []
    for token in (sooner, on_time):
        answers = [_act(c, gid, token) for _ in range(writes)]
        assert [a.status_code == 429 for a in answers] == [False] * (writes - 1) + [True]
        _assert_429(answers[-1])
        headers.append(int(answers[-1].headers["Retry-After"]))
        assert answers[-1].get_json()["error"]["details"]["retry_after_s"] == headers[-1]
    header = headers[0]
    assert headers[1] == header
    now[0] = at + header - 1
    _assert_429(_act(c, gid, sooner))
    now[0] = at + header
    assert _act(c, gid, on_time).status_code in (201, 409)
    assert header == expect


def test_a_bulk_creation_waits_for_all_its_games(redis_url, queue_url, wiring):
    """A bulk of 5 refused with 429: its retry is 5 writes again, the first included (charged
    when the request came, before its body was read), and Retry-After counts them all."""
    app, _, limiter = _app(redis_url, queue_url, wiring, writes_per_minute=0,
                           ip_writes_per_minute=10, window_seconds=60)
    now = [6010.5]
    limiter.clock = lambda: now[0]
    c = app.test_client()
    headers = []
    for ip in ("10.0.0.7", "10.0.0.8"):  # the same writes from two addresses
        assert _bulk(c, 6, ip=ip).status_code == 201
        res = _bulk(c, 5, ip=ip)  # 7 after its first write, 11 after the other 4
        _assert_429(res)
        headers.append(int(res.headers["Retry-After"]))
    header = headers[0]
    assert headers[1] == header
    now[0] += header - 1
    _assert_429(_bulk(c, 5, ip="10.0.0.7"))
    now[0] += 1
    assert _bulk(c, 5, ip="10.0.0.8").status_code == 201
    assert header == 83  # 49.5 s, then 11 × (1 − e) + 5 <= 10: 60 × (1 − 5/11)


def test_zero_disables_and_env_config(monkeypatch, redis_url, queue_url):
    monkeypatch.setenv("CARTOUCHE_RATE_LIMIT_WRITES_PER_MINUTE", "0")
    monkeypatch.setenv("CARTOUCHE_RATE_LIMIT_IP_WRITES_PER_MINUTE", "0")
    monkeypatch.setenv("CARTOUCHE_RATE_LIMIT_VERIFIES_PER_MINUTE", "0")
    monkeypatch.setenv("CARTOUCHE_STORED_BYTES_PER_MINUTE", "0")
    assert ratelimit.RateLimitConfig.from_env().enabled  # the address's budget of bytes
    monkeypatch.setenv("CARTOUCHE_IP_STORED_BYTES_PER_MINUTE", "0")
    cfg = ratelimit.RateLimitConfig.from_env()
    assert not cfg.enabled
    app = create_app(Config(redis_url=redis_url, queue_url=queue_url))
    assert ratelimit.register(app, redis.Redis.from_url(redis_url), cfg) is None
    monkeypatch.setenv("CARTOUCHE_RATE_LIMIT_WRITES_PER_MINUTE", "7")
    monkeypatch.delenv("CARTOUCHE_RATE_LIMIT_IP_WRITES_PER_MINUTE")
    monkeypatch.delenv("CARTOUCHE_STORED_BYTES_PER_MINUTE")
    monkeypatch.setenv("CARTOUCHE_IP_STORED_BYTES_PER_MINUTE", "1000")
    cfg = ratelimit.RateLimitConfig.from_env()
    assert cfg.writes_per_minute == 7 and cfg.ip_writes_per_minute == 12000
    assert cfg.stored_bytes_per_minute == 8 * 1024 * 1024
    assert cfg.ip_stored_bytes_per_minute == 1000
    monkeypatch.setenv("CARTOUCHE_RATE_LIMIT_WRITES_PER_MINUTE", "-1")
    with pytest.raises(ValueError):
        ratelimit.RateLimitConfig.from_env()


def test_redis_errors_fail_open_with_a_log_line(redis_url, queue_url, caplog):
    from service import embedded
    app = create_app(Config(redis_url=redis_url, queue_url=queue_url))
    dead = redis.Redis.from_url(f"redis://127.0.0.1:{embedded.free_port()}/0",
                                socket_connect_timeout=0.2)
    ratelimit.register(app, dead, ratelimit.RateLimitConfig(writes_per_minute=1,
                                                            ip_writes_per_minute=1))
    c = app.test_client()
    with caplog.at_level(logging.WARNING, logger="cartouche.ratelimit"):
        gid, tokens = _game(c)
        assert _act(c, gid, tokens[0]).status_code == 201
        assert _act(c, gid, tokens[1]).status_code == 201
    lines = [r.getMessage() for r in caplog.records if r.name == "cartouche.ratelimit"]
    assert lines and all(t not in line for line in lines for t in tokens)


def test_both_identities_are_counted_in_one_call_and_the_bench_baseline_is_not(
        monkeypatch, redis_url, queue_url):
    """On its own client the limiter counts token and address in one Lua call (each with its
    own counter), and P1's baseline endpoint (benchmarks only) is not counted: it must do
    nothing but its read and its append."""
    monkeypatch.setenv("CARTOUCHE_BENCH_ENDPOINTS", "1")
    app, r, limiter = _app(redis_url, queue_url, BEFORE, writes_per_minute=2,
                           ip_writes_per_minute=3)
    c = app.test_client()
    gid, tokens = _game(c)
    calls = []
    real = limiter.counters._script

    def counting(*args, **kwargs):
        calls.append(kwargs["keys"])
        return real(*args, **kwargs)

    limiter.counters._script = counting
    assert _act(c, gid, tokens[0], ip="10.1.1.1").status_code == 201
    assert len(calls) == 1 and len(calls[0]) == 4  # token's 2 counters + address's 2
    assert _act(c, gid, tokens[1], ip="10.1.1.1").status_code == 201
    assert _act(c, gid, tokens[2], ip="10.1.1.1").status_code == 201
    _assert_429(_act(c, gid, tokens[0], ip="10.1.1.1"))  # the address's 4th write
    _assert_429(_act(c, gid, tokens[0], ip="10.2.2.2"))  # the token's 3rd write
    calls.clear()
    for _ in range(10):
        res = c.post("/bench/append/ab", environ_base={"REMOTE_ADDR": "10.1.1.1"})
        assert res.status_code == 201
    assert calls == []


def test_an_action_is_counted_in_its_append_one_round_trip(redis_url, queue_url):
    """Production wiring: an action's counting, limit check and append are one EVALSHA."""
    app, r, limiter = _app(redis_url, queue_url, IN_THE_APPEND, writes_per_minute=3,
                           ip_writes_per_minute=100)
    c = app.test_client()
    gid, tokens = _game(c)
    assert _act(c, gid, tokens[0]).status_code == 201  # warms this process's cache
    sent = record_commands(r)
    assert _act(c, gid, tokens[1]).status_code == 201
    assert sent == ["EVALSHA"]
    tok = [k for k in r.scan_iter("cartouche:rl:{tok:*") if r.get(k)]
    assert sorted(int(r.get(k)) for k in tok) == [1, 1]  # one write per token so far
    assert int(r.get(next(r.scan_iter("cartouche:rl:{ip:10.0.0.1}:*")))) == 2


def test_an_action_over_the_limit_changes_nothing(redis_url, queue_url, wiring):
    app, r, _ = _app(redis_url, queue_url, wiring, writes_per_minute=1, ip_writes_per_minute=0)
    c = app.test_client()
    gid, tokens = _game(c)
    assert _act(c, gid, tokens[0]).status_code == 201
    before = c.get(f"/v1/games/{gid}").get_json()
    _assert_429(_act(c, gid, tokens[0]))  # was this seat's turn again? the limit comes first
    after = c.get(f"/v1/games/{gid}").get_json()
    assert after["version"] == before["version"]
    assert r.xlen(f"cartouche:{{{gid}}}:events") == before["version"]


def test_refused_actions_are_counted_and_answered_429_when_over(redis_url, queue_url, wiring):
    """An action refused before its append (not your turn, illegal, unknown game, no token)
    still counts, once, and over the limit its answer is the 429."""
    app, r, _ = _app(redis_url, queue_url, wiring, writes_per_minute=0, ip_writes_per_minute=4)
    c = app.test_client()
    gid, tokens = _game(c)
    assert _act(c, gid, tokens[0], ip="10.3.3.3").status_code == 201
    version = c.get(f"/v1/games/{gid}").get_json()["version"]
    assert _act(c, gid, tokens[0], ip="10.3.3.3").status_code == 409  # not its turn now
    res = c.post(f"/v1/games/{gid}/actions", json={"action": {"type": "dance"}},
                 headers=auth(tokens[1]), environ_base={"REMOTE_ADDR": "10.3.3.3"})
    assert res.status_code in (400, 422)
    res = c.post("/v1/games/00000000000000000000/actions",
                 json={"action": {"type": "decide", "choice": "continue"}},
                 headers=auth(tokens[1]), environ_base={"REMOTE_ADDR": "10.3.3.3"})
    assert res.status_code == 404
    assert int(r.get(next(r.scan_iter("cartouche:rl:{ip:10.3.3.3}:*")))) == 4
    for token in (tokens[1], None):  # would be a 201, then a 401
        res = c.post(f"/v1/games/{gid}/actions",
                     json={"action": {"type": "decide", "choice": "continue"}},
                     headers=auth(token) if token else {},
                     environ_base={"REMOTE_ADDR": "10.3.3.3"})
        _assert_429(res)
    assert int(r.get(next(r.scan_iter("cartouche:rl:{ip:10.3.3.3}:*")))) == 6
    assert c.get(f"/v1/games/{gid}").get_json()["version"] == version  # nothing appended


def _bulk(c, n, ip="10.0.0.7"):
    game = {"type": "diamant", "players": [{"name": "a"}, {"name": "b"}, {"name": "c"}]}
    return c.post("/v1/games/bulk", json={"games": [game] * n},
                  environ_base={"REMOTE_ADDR": ip})


def test_bulk_creation_counts_each_game_as_a_write(redis_url, queue_url, wiring):
    """Issue 21, finding 3: a bulk of 100 games was one write, so the limit was worth 100x."""
    app, _, _ = _app(redis_url, queue_url, wiring, writes_per_minute=0,
                     ip_writes_per_minute=10)
    c = app.test_client()
    _assert_429(_bulk(c, 11))  # over on its own: nothing created
    assert c.get("/v1/games").get_json()["total"] == 0
    assert _bulk(c, 5, ip="10.0.0.8").status_code == 201
    _assert_429(_bulk(c, 6, ip="10.0.0.8"))  # 5 + 6 > 10
    assert c.get("/v1/games").get_json()["total"] == 5
    assert _bulk(c, 4, ip="10.0.0.9").status_code == 201
    assert _bulk(c, 6, ip="10.0.0.9").status_code == 201  # 4 + 6 = 10: within the limit
    _assert_429(c.post("/v1/games", json={"type": "diamant", "players": [{"name": "a"}] * 3},
                       environ_base={"REMOTE_ADDR": "10.0.0.9"}))
    assert c.get("/v1/games").get_json()["total"] == 15


def test_budget_of_bytes_stored_per_address_and_token(redis_url, queue_url, wiring):
    """Bytes stored per minute: charged by what a creation, a bulk, a player and an action
    store; over the budget, 429 rate_limited (details.limit stored_bytes) and nothing stored."""
    app, r, _ = _app(redis_url, queue_url, wiring, writes_per_minute=0,
                      ip_writes_per_minute=0, ip_stored_bytes_per_minute=20_000,
                      stored_bytes_per_minute=6_000)
    c = app.test_client()

    def post(path, body, ip, token=None):
        return c.post(path, json=body, environ_base={"REMOTE_ADDR": ip},
                      headers=auth(token) if token else {})

    game = {"type": "diamant", "players": [{"name": "a"}] * 3}
    # a diamant creation stores ~1.5 KB: a bulk of 20 is over 20 KB on its own
    res = post("/v1/games/bulk", {"games": [game] * 20}, "10.1.0.1")
    _assert_429(res)
    assert res.get_json()["error"]["details"]["limit"] == "stored_bytes"
    assert r.zcard("cartouche:index:all") == 0
    created = 0
    while (res := post("/v1/games", game, "10.1.0.2")).status_code == 201:
        created += 1
    _assert_429(res)
    assert 3 <= created <= 20 and r.zcard("cartouche:index:all") == created
    assert post("/v1/players", {"name": "x" * 40, "kind": "human"}, "10.1.0.2").status_code \
        == 429
    player = post("/v1/players", {"name": "ada", "kind": "human"}, "10.1.0.3").get_json()
    _assert_429(post("/v1/seeks", {"type": "diamant", "seats": 3}, "10.1.0.2", player["token"]))
    assert c.get("/v1/seeks").get_json()["total"] == 0  # nothing stored
    # per token: actions are charged by the envelopes they append (every seat decides in
    # turn, each from a fresh address)
    gid, tokens = _game(c)
    answers = []
    for i in range(60):
        res = _act(c, gid, tokens[i % 3], ip=f"10.2.0.{i}")
        answers.append(res.status_code)
        if res.status_code == 429:
            break
    assert answers[0] == 201 and answers[-1] == 429, answers
    assert res.get_json()["error"]["details"]["limit"] == "stored_bytes"
    refused = tokens[(len(answers) - 1) % 3]
    version = c.get(f"/v1/games/{gid}").get_json()["version"]
    _assert_429(_act(c, gid, refused, ip="10.3.0.1"))
    assert c.get(f"/v1/games/{gid}").get_json()["version"] == version  # nothing appended


def test_a_fork_is_charged_by_the_events_it_copies(redis_url, queue_url):
    from tests.api.test_replays import play_to_end

    app, r, _ = _app(redis_url, queue_url, IN_THE_APPEND, writes_per_minute=0,
                      ip_writes_per_minute=0, stored_bytes_per_minute=0,
                      ip_stored_bytes_per_minute=0)
    c = app.test_client()
    gid, _ = play_to_end(c, "tides-of-time", 2)
    version = c.get(f"/v1/games/{gid}").get_json()["version"]
    ratelimit.register(app, r, ratelimit.RateLimitConfig(
        writes_per_minute=0, ip_writes_per_minute=0, ip_stored_bytes_per_minute=100 * version))
    games = r.zcard("cartouche:index:all")
    res = c.post(f"/v1/games/{gid}/fork", json={"version": version},
                 environ_base={"REMOTE_ADDR": "10.4.0.1"})
    _assert_429(res)  # every event is well over 100 bytes
    assert res.get_json()["error"]["details"]["limit"] == "stored_bytes"
    assert r.zcard("cartouche:index:all") == games
    ratelimit.register(app, r, ratelimit.RateLimitConfig(
        writes_per_minute=0, ip_writes_per_minute=0, ip_stored_bytes_per_minute=10_000_000))
    assert c.post(f"/v1/games/{gid}/fork", json={"version": version},
                  environ_base={"REMOTE_ADDR": "10.4.0.2"}).status_code == 201


def test_the_counters_names_are_the_windows_and_kept_for_a_bounded_number_of_clients():
    now = [6005.0]  # 5 s into window 100
    limiter = ratelimit.RateLimiter(None, ratelimit.RateLimitConfig(), clock=lambda: now[0])
    digest = ratelimit._token_digest("tok")
    action = limiter.quota("tok", "10.0.0.1", stored=None)
    assert action.counters == tuple(
        (f"cartouche:rl:{{{who}}}:100", f"cartouche:rl:{{{who}}}:99")
        for who in (f"tok:{digest}", "ip:10.0.0.1", f"btok:{digest}", "bip:10.0.0.1"))
    assert action.kinds == ("writes", "writes", "bytes", "bytes")
    assert action.elapsed == 5 / 60 and action.cost == 1 and not action.charged
    assert limiter.quota("tok", "10.0.0.1", writes=False, stored=9).counters \
        == action.counters[2:]
    assert limiter.quota(None, None) is None
    now[0] += 60  # the next window: its own names, the same limits
    later = limiter.quota("tok", "10.0.0.1", stored=None)
    assert [c for c, _ in later.counters] == [p.replace(":100", ":101")
                                             for p, _ in action.counters]
    assert later.elapsed == 5 / 60
    for i in range(ratelimit.NAMES_KEPT + 100):
        limiter.quota(f"token-{i}", f"10.0.{i // 256}.{i % 256}")
    assert len(limiter._names) <= ratelimit.NAMES_KEPT


def test_a_tournament_is_charged_at_its_creation_for_every_game_it_will_play(redis_url,
                                                                             queue_url):
    """Its creation stores its first round, and its workers every later round: the creator's
    budget of bytes stored is charged for all of them before anything is written."""
    app, r, _ = _app(redis_url, queue_url, IN_THE_APPEND, writes_per_minute=0,
                     ip_writes_per_minute=0, stored_bytes_per_minute=0,
                     ip_stored_bytes_per_minute=0)
    c = app.test_client()
    players = [c.post("/v1/players", json={"name": f"p{i}", "kind": "human"}).get_json()["id"]
               for i in range(6)]
    body = {"name": "Cup", "type": "diamant", "format": "swiss", "rounds": 3,
            "seats_per_game": 3, "participants": players}  # 2 games a round: 6 games

    def create(ip, budget):
        ratelimit.register(app, r, ratelimit.RateLimitConfig(
            writes_per_minute=0, ip_writes_per_minute=0, ip_stored_bytes_per_minute=budget))
        return c.post("/v1/tournaments", json=body, environ_base={"REMOTE_ADDR": ip})

    assert create("10.6.0.1", 10_000_000).status_code == 201
    charged = int(r.get(next(r.scan_iter("cartouche:rl:{bip:10.6.0.1}:*"))))
    first_round = sum(len(r.xrange(f"cartouche:{{{g.decode()}}}:events")[0][1][b"e"])
                      for g in r.zrange("cartouche:index:all", 0, -1, desc=True)[:2])
    assert charged >= 3 * first_round > 0  # every round's games, not the first's alone
    games, tournaments = r.zcard("cartouche:index:all"), \
        c.get("/v1/tournaments").get_json()["total"]
    res = create("10.6.0.2", charged // 2)  # more than its first round stores, not all
    _assert_429(res)
    assert res.get_json()["error"]["details"]["limit"] == "stored_bytes"
    assert r.zcard("cartouche:index:all") == games  # nothing stored
    assert c.get("/v1/tournaments").get_json()["total"] == tournaments
    assert create("10.6.0.3", charged + 1000).status_code == 201  # (its sizes vary a little)
