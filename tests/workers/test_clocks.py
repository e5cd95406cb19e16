"""Clocks: bookkeeping with an injected clock (exact), and a real RQ worker applying timeouts
when nobody plays (about one second per decision)."""

import time

import pytest

from service.app import create_app
from service.config import Config
from service.application import NullScheduler

from tests.api.helpers import act, auth
from tests.conftest import InjectedClock



@pytest.fixture
def fake(redis_url):
    clock = InjectedClock()
    app = create_app(Config(redis_url=redis_url), scheduler=NullScheduler(), now_ms=clock)
    return app.test_client(), clock


def new_game(client, clock_opts, n=3, type_="diamant"):
    r = client.post("/v1/games", json={"type": type_, "players": [{"name": f"p{i}"}
                                                                  for i in range(n)],
                                       "options": {"clock": clock_opts}})
    assert r.status_code == 201, r.get_json()
    return r.get_json()["id"], [s["token"] for s in r.get_json()["seats"]]


@pytest.mark.parametrize("bad", [
    {}, {"per_decision_ms": 5}, {"per_decision_ms": 1000, "timeout": "sleep"},
    {"initial_ms": "60000"}, {"per_decision_ms": 1000, "colour": 1}, [], 7,
])
def test_bad_clock_options(fake, bad):
    client, _ = fake
    r = client.post("/v1/games", json={"type": "diamant", "players": [{"name": "a"}] * 3,
                                       "options": {"clock": bad}})
    assert r.status_code == 422 and r.get_json()["error"]["details"]["code"] == "invalid_clock"


def test_views_show_remaining_time_and_deadlines(fake):
    client, clock = fake
    gid, tokens = new_game(client, {"initial_ms": 60_000, "increment_ms": 2_000,
                                    "per_decision_ms": 10_000})
    view = client.get(f"/v1/games/{gid}").get_json()
    assert view["clock"]["remaining_ms"] == [60_000] * 3
    assert all(a["deadline_at"] is not None for a in view["awaiting"])
    clock.t += 4_000
    assert client.get(f"/v1/games/{gid}").get_json()["clock"]["remaining_ms"] == [56_000] * 3
    assert act(client, gid, tokens[0]).status_code == 201
    clock.t += 1_000
    view = client.get(f"/v1/games/{gid}").get_json()
    # seat 0 paid 4 s and earned the 2 s increment; the others' clocks keep running
    assert view["clock"]["remaining_ms"] == [58_000, 55_000, 55_000]
    assert [a["seat"] for a in view["awaiting"]] == [1, 2]


def test_a_past_version_shows_the_clocks_as_they_were_when_it_was_written(fake):
    client, clock = fake
    gid, tokens = new_game(client, {"initial_ms": 60_000, "increment_ms": 2_000,
                                    "per_decision_ms": 10_000})
    start = client.get(f"/v1/games/{gid}").get_json()["version"]
    clock.t += 4_000
    first = act(client, gid, tokens[0]).get_json()["version"]
    clock.t += 1_000
    last = act(client, gid, tokens[1]).get_json()["version"]
    for _ in range(2):  # the same answers however late they are asked
        assert client.get(f"/v1/games/{gid}/states/{start}").get_json()[
            "clock"]["remaining_ms"] == [60_000] * 3
        # when seat 0 acted: it paid 4 s and earned 2 s; the others had spent 4 s
        then = client.get(f"/v1/games/{gid}/states/{first}").get_json()
        assert then["clock"]["remaining_ms"] == [58_000, 56_000, 56_000]
        clock.t += 10_000
    # the game's current version runs on: seat 2 has been thinking for 25 s
    assert client.get(f"/v1/games/{gid}/states/{last}").get_json()[
        "clock"]["remaining_ms"] == [58_000, 57_000, 35_000]


def test_a_late_action_is_409_and_the_timeout_is_applied_first(fake):
    client, clock = fake
    gid, tokens = new_game(client, {"per_decision_ms": 1_000, "timeout": "auto"})
    v0 = client.get(f"/v1/games/{gid}").get_json()["version"]
    clock.t += 1_001
    r = act(client, gid, tokens[0], "continue")
    assert r.status_code == 409 and r.get_json()["error"]["code"] == "deadline_passed"
    log = client.get(f"/v1/games/{gid}/events?after={v0}", headers=auth(tokens[0])).get_json()
    timed = [e for e in log["events"] if e.get("timeout")]
    # every overdue seat got Diamant's timeout action (return), seat 0 included
    assert {e["seat"] for e in timed if e["type"] == "ChoiceCommitted"} == {0, 1, 2}
    assert [e["data"]["choice"] for e in timed if e["seat"] == 0
            and e["type"] == "ChoiceCommitted"] == ["return"]


def test_forfeit_ends_a_game_that_cannot_go_on_with_that_seat_last(fake):
    client, clock = fake
    gid, tokens = new_game(client, {"per_decision_ms": 1_000, "timeout": "forfeit"})
    assert act(client, gid, tokens[0]).status_code == 201
    assert act(client, gid, tokens[1]).status_code == 201
    clock.t += 1_500
    view = client.get(f"/v1/games/{gid}").get_json()
    assert view["status"] == "active"  # nothing happens until a command or the job
    r = act(client, gid, tokens[0])
    assert r.status_code == 409
    view = client.get(f"/v1/games/{gid}").get_json()
    assert view["status"] == "finished"
    assert view["result"]["ranks"] == [1, 1, 3] and view["result"]["winners"] == [0, 1]
    assert view["players"][2]["controller"] == "left"


@pytest.mark.parametrize("type_,n,on_time,ranks", [
    ("tides-of-time", 2, [], [2, 2]),     # both late: neither wins
    ("diamant", 3, [0], [1, 3, 3]),       # seat 0 decided in time: it alone wins
    ("diamant", 3, [], [3, 3, 3]),
])
def test_seats_late_at_one_instant_forfeit_together(fake, type_, n, on_time, ranks):
    """One at a time, the first late seat would end the game and the others, as late, win."""
    from service.replay import verify

    client, clock = fake
    gid, tokens = new_game(client, {"per_decision_ms": 1_000, "timeout": "forfeit"}, n=n,
                           type_=type_)
    for seat in on_time:
        assert act(client, gid, tokens[seat]).status_code == 201
    before = client.get(f"/v1/games/{gid}").get_json()["version"]
    clock.t += 1_500
    late = [s for s in range(n) if s not in on_time]
    r = client.post(f"/v1/games/{gid}/actions", headers=auth(tokens[late[-1]]), json={
        "action": client.get(f"/v1/games/{gid}/legal-actions",
                             headers=auth(tokens[late[-1]])).get_json()["actions"][0]})
    assert r.status_code == 409 and r.get_json()["error"]["code"] == "deadline_passed"
    view = client.get(f"/v1/games/{gid}").get_json()
    assert view["status"] == "finished"
    assert view["result"]["ranks"] == ranks
    assert view["result"]["winners"] == on_time
    assert view["result"]["details"] == {"ended_by": "forfeit_timeout", "forfeited": late}
    assert [p["controller"] for p in view["players"]] == [
        "human" if s in on_time else "left" for s in range(n)]
    log = client.get(f"/v1/games/{gid}/events?after={before}").get_json()["events"]
    assert [(e["type"], e["seat"]) for e in log] == [("SeatForfeited", s) for s in late]
    assert {e["version"] for e in log} == set(range(before + 1, before + 1 + len(late)))
    doc = client.get(f"/v1/games/{gid}/export").get_json()
    assert verify(doc)["valid"]
    # the record names the seats that left together; a log that says otherwise is caught
    first = next(e for e in doc["events"] if e["version"] == before + 1)
    assert first["cmd"] == ({"shell": "forfeit", "seats": late} if len(late) > 1 else
                            {"shell": "forfeit", "seat": late[0]})
    for cmd, reason in (({"shell": "forfeit", "seats": late[::-1]}, "unknown_shell_command"),
                        ({"shell": "forfeit", "seats": late + late}, "unknown_shell_command"),
                        ({"shell": "forfeit", "seat": late[0]}, "event_count_differs")):
        first["cmd"] = cmd
        assert verify(doc)["reason"] == reason
    first["cmd"] = {"shell": "forfeit", "seats": late}
    for e in doc["events"][before:]:
        e["data"]["reason"] = "resigned"  # a resignation is one seat's
    assert verify(doc)["reason"] == "forfeit_not_allowed"
    fork = client.post(f"/v1/games/{gid}/fork", json={"version": view["version"]}).get_json()
    forked = client.get(f"/v1/games/{fork['id']}").get_json()
    assert (forked["status"], forked["result"]) == ("finished", view["result"])
    assert verify(client.get(f"/v1/games/{fork['id']}/export").get_json())["valid"]


def test_resign_hands_the_seat_to_a_bot(fake):
    client, _ = fake
    gid, tokens = new_game(client, {"per_decision_ms": 60_000, "timeout": "bot"})
    r = client.post(f"/v1/games/{gid}/resign", headers=auth(tokens[1]))
    assert r.status_code == 200 and r.get_json()["players"][1]["controller"] == "bot"
    r = act(client, gid, tokens[1])
    assert r.status_code == 403 and r.get_json()["error"]["code"] == "seat_not_human"
    r = client.post(f"/v1/games/{gid}/resign", headers=auth(tokens[1]))  # the seat has left
    assert r.status_code == 403 and r.get_json()["error"]["code"] == "seat_not_human"


def test_abort_only_before_the_first_move(fake):
    client, _ = fake
    gid, tokens = new_game(client, {"per_decision_ms": 60_000})
    assert client.post(f"/v1/games/{gid}/abort").status_code == 403
    r = client.post(f"/v1/games/{gid}/abort", headers=auth(tokens[2]))
    assert r.status_code == 200 and r.get_json()["status"] == "aborted"
    assert act(client, gid, tokens[0]).status_code == 409
    gid, tokens = new_game(client, {"per_decision_ms": 60_000})
    act(client, gid, tokens[0])
    r = client.post(f"/v1/games/{gid}/abort", headers=auth(tokens[2]))
    assert r.status_code == 409 and r.get_json()["error"]["code"] == "cannot_abort"


def wait_finished(client, gid, seconds):
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        view = client.get(f"/v1/games/{gid}").get_json()
        if view["status"] != "active":
            return view
        time.sleep(0.2)
    raise AssertionError(f"game not finished after {seconds}s: {view['version']}")


def test_nobody_plays_and_timeouts_alone_finish_the_game(client, worker):
    gid, _ = new_game(client, {"per_decision_ms": 1_000, "timeout": "auto"}, n=3)
    view = wait_finished(client, gid, 60)
    assert view["status"] == "finished"
    log = client.get(f"/v1/games/{gid}/events?limit=1000").get_json()["events"]
    commits = [e for e in log if e["type"] == "ChoiceCommitted"]
    assert commits and all(e.get("timeout") for e in commits)
    # each seat timed out exactly once per decision: no duplicated timeout
    per_round = {}
    for e in log:
        if e["type"] == "RoundStarted":
            per_round = {}
        if e["type"] == "ChoiceCommitted":
            assert e["seat"] not in per_round
            per_round[e["seat"]] = True
        if e["type"] == "ChoicesRevealed":
            per_round = {}


def test_stale_clock_jobs_do_nothing(svc, redis_url):
    from workers import jobs
    r = svc.create("diamant", [{"name": "a"}] * 3, {"clock": {"per_decision_ms": 100_000}}, None)
    table = svc.load(r["id"])
    jobs._service = svc
    try:
        assert jobs.clock_due(r["id"], table.version - 1, 0) == []
        assert jobs.clock_due(r["id"], table.version, 0) == []  # not due yet
        assert svc.load(r["id"]).version == table.version
    finally:
        jobs._service = None


def test_forfeit_in_a_game_that_goes_on_applies_the_rules_of_leaving(fake):
    """Papyrus has rules for leaving (12.4): the game goes on without the seat, which ranks
    last, and the export still verifies (the resign events are re-derived)."""
    from service.replay import verify

    client, clock = fake
    gid, tokens = new_game(client, {"per_decision_ms": 1_000, "timeout": "forfeit"}, n=3,
                           type_="papyrus")
    first = client.get(f"/v1/games/{gid}").get_json()["awaiting"][0]["seat"]
    clock.t += 1_500
    others = [s for s in range(3) if s != first]
    r = client.post(f"/v1/games/{gid}/resign", headers=auth(tokens[others[0]]))
    assert r.status_code == 200, r.get_json()  # settling the overdue seat happened first
    view = client.get(f"/v1/games/{gid}").get_json()
    assert view["status"] == "finished"  # two left; the last one standing wins
    assert view["result"]["winners"] == [others[1]]
    assert view["result"]["ranks"][others[1]] == 1
    log = client.get(f"/v1/games/{gid}/events?limit=1000").get_json()["events"]
    assert [e["type"] for e in log].count("SeatForfeited") == 2
    assert any(e["type"] == "PlayerResigned" for e in log)
    assert verify(client.get(f"/v1/games/{gid}/export").get_json())["valid"]


def test_a_null_increment_is_no_increment():
    from service import clock

    c = clock.normalize({"initial_ms": 1000, "increment_ms": None})
    assert c["increment_ms"] == 0
    state = clock.advance(c, clock.initial(c, 2), 0, [], [0], [])
    assert clock.advance(c, state, 10, [0], [1], [0])["bank"] == [990, 1000]
