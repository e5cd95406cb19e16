"""Every game ends: the event cap each game records (``CARTOUCHE_MAX_EVENTS_PER_GAME``) aborts a
game instead of growing it past the cap, and the worker's sweep aborts an active game without a
clock in which nothing happened for ``CARTOUCHE_IDLE_ABORT_S``. Both are the server's aborts
(``GameAborted {"by": "server", "reason"}``, status ``aborted``, unrated), told to the players
like any abort, and verification accepts them only where the limits required them.

In process on real Redis with an injected clock; the sweep is called directly, on a database no
worker reads (another worker's sweep would play the bots' turns, or abort the games by its own
clock)."""

from __future__ import annotations

import copy

import pytest
import redis

from service.app import create_app
from service.application import GameService
from service.application.commands import body_digest
from service.application.errors import CannotAbort, GameNotFinished, InvalidRequest
from service.application import seats as seats_module
from service.application.players import PLATFORM
from service.config import Config
from service.engine import NotYourTurn
from service.replay import verify
from service.store import keys
from workers import jobs

from tests.api.helpers import act, create, error
from tests.conftest import InjectedClock

TIDES = "tides-of-time"
CAP = 40


@pytest.fixture(name="clock")
def injected_clock() -> InjectedClock:
    return InjectedClock()


pytestmark = pytest.mark.unswept


def service(redis_url: str, clock: InjectedClock, **limits) -> GameService:
    return GameService.configured(Config(redis_url=redis_url, **limits),
                                  redis.Redis.from_url(redis_url), now_ms=clock)


def humans(svc: GameService, options: dict | None = None) -> tuple[str, list[dict]]:
    """A Tides of Time game of two human players (their streams hear of it)."""
    players = [svc.players.create(name, "human") for name in ("Ada", "Bob")]
    gid = svc.create(TIDES, [{"player": p["id"]} for p in players], options or {}, None,
                     creator=PLATFORM)["id"]
    return gid, players


def play_one(svc: GameService, gid: str):
    """The first awaited seat plays its first legal action."""
    table = svc.load(gid)
    seat = table.awaiting()[0]
    action = table.game.legal_actions(table.state, seat)[0]
    return svc.act(gid, seat, action, None, None, body_digest(action))


def types(svc: GameService, gid: str) -> list[str]:
    return [s.envelope["type"] for s in svc.store.read(gid, 0)]


def last(svc: GameService, gid: str) -> dict:
    return svc.store.read(gid, 0)[-1].envelope


def finishes(svc: GameService, gid: str) -> list[dict]:
    """The ``game_finish`` notices the game's players got."""
    table = svc.load(gid)
    return [n.data for p in table.players
            for n in svc.player_store.notices_after(p["player"], "0-0", 100)
            if n.type == "game_finish"]


# ------------------------------------------------------------------------------ the event cap

def test_a_command_that_would_pass_the_cap_aborts_the_game_instead(redis_url, clock):
    svc = service(redis_url, clock, max_events_per_game=CAP)
    gid, _ = humans(svc, {"rated": True})
    assert svc.load(gid).created["data"]["max_events"] == CAP
    with pytest.raises(NotYourTurn) as refused:
        for _ in range(CAP):
            before = svc.load(gid).version
            play_one(svc, gid)
            assert svc.load(gid).version <= CAP - 1  # every command leaves room for the abort
    assert refused.value.details == {"code": "game_over", "reason": "event_limit",
                                     "max_events": CAP}
    table = svc.load(gid)
    assert table.status == "aborted" and table.version == before + 1 <= CAP
    assert table.awaiting() == []  # no bot or clock job is scheduled for it any more
    stored = last(svc, gid)
    assert stored["type"] == "GameAborted" and \
        stored["data"] == {"by": "server", "reason": "event_limit"}
    assert stored["cmd"]["shell"] == "event_limit" and "action" in stored["cmd"]["refused"]
    assert finishes(svc, gid) == [{"game_id": gid, "status": "aborted", "result": None}] * 2
    again = stored["cmd"]["refused"]
    with pytest.raises(NotYourTurn):  # the game stays over
        svc.act(gid, again["seat"], again["action"], None, None, body_digest(again["action"]))
    assert svc.load(gid).version == table.version
    assert svc.rate(gid) is None  # aborted games are never rated
    assert verify(svc.export(gid))["valid"]


def test_over_http_the_command_at_the_cap_is_a_409_naming_the_limit(redis_url, queue_url):
    client = create_app(Config(redis_url=redis_url, queue_url=queue_url,
                               max_events_per_game=CAP)).test_client()
    gid, tokens, _ = create(client, n=3, seed="ab" * 32)
    answers = [act(client, gid, token) for _ in range(CAP) for token in tokens]
    refused = [r for r in answers if r.status_code != 201]
    assert refused and refused[0].status_code == 409
    assert error(refused[0])["code"] == "not_your_turn" and error(refused[0])["details"] == {
        "code": "game_over", "reason": "event_limit", "max_events": CAP}
    assert all(r.status_code == 409 for r in refused)  # after it: over, never a 500
    view = client.get(f"/v1/games/{gid}").get_json()
    assert view["status"] == "aborted" and view["version"] <= CAP and view["result"] is None


def test_verification_rejects_an_event_limit_abort_the_cap_did_not_require(redis_url, clock):
    svc = service(redis_url, clock, max_events_per_game=CAP)
    gid, _ = humans(svc)
    with pytest.raises(NotYourTurn):
        for _ in range(CAP):
            play_one(svc, gid)
    doc = svc.export(gid)
    doc.pop("signature", None)
    assert verify(doc)["valid"]

    # the same abort with a higher recorded cap: the refused command fitted
    raised = copy.deepcopy(doc)
    raised["events"][0]["data"]["max_events"] = CAP + 20
    outcome = verify(raised)
    assert outcome["reason"] == "event_limit_not_reached" and \
        outcome["version"] == len(doc["events"])

    # the abort moved earlier: the log cut after an earlier command, the abort appended there
    abort = doc["events"][-1]
    starts = [e["version"] for e in doc["events"] if "cmd" in e]
    cut = starts[-4]
    earlier = copy.deepcopy(doc)
    refused = doc["events"][cut - 1]["cmd"]
    earlier["events"] = earlier["events"][:cut - 1] + [
        {**abort, "version": cut, "cmd": {"shell": "event_limit", "refused": refused}}]
    outcome = verify(earlier)
    assert outcome["reason"] == "event_limit_not_reached" and outcome["version"] == cut

    # a command kept past the cap: the recorded cap lowered under the log's length
    lowered = copy.deepcopy(doc)
    lowered["events"][0]["data"]["max_events"] = cut
    assert verify(lowered)["reason"] == "event_limit_exceeded"

    # an export from before the cap was recorded verifies as before (without the abort)
    old = copy.deepcopy(doc)
    del old["events"][0]["data"]["max_events"], old["events"][0]["data"]["idle_abort_s"]
    old["events"] = old["events"][:-1]
    old["status"] = "active"
    assert verify(old)["valid"]
    old["events"].append(doc["events"][-1])
    old["status"] = "aborted"
    assert verify(old)["reason"] == "event_limit_not_reached"


def test_a_fork_past_this_servers_cap_is_refused_and_one_within_it_verifies(redis_url, clock):
    """A fork records this server's cap, not its parent's: one at a version past ``cap - 1``
    would be born over its cap, and aborted by its first command, so it is refused instead."""
    svc = service(redis_url, clock, max_events_per_game=10 * CAP)
    gid, _ = humans(svc)
    while svc.load(gid).version < CAP + 5:
        play_one(svc, gid)
    ends = [s.version - 1 for s in svc.store.read(gid, 0) if "cmd" in s.envelope]  # boundaries
    small = service(redis_url, clock, max_events_per_game=CAP)
    past = min(v for v in ends if v > CAP - 1)
    with pytest.raises(InvalidRequest) as refused:
        small.fork(gid, past)
    assert refused.value.code == "fork_too_long" and \
        refused.value.details == {"version": past, "max_events": CAP}
    within = max(v for v in ends if v <= CAP - 1)
    fork = small.fork(gid, within)
    assert svc.load(fork["id"]).created["data"]["max_events"] == CAP
    with pytest.raises(NotYourTurn):  # played on to its own cap, and aborted there
        for _ in range(CAP):
            play_one(small, fork["id"])
    assert small.load(fork["id"]).status == "aborted"
    with pytest.raises(GameNotFinished):  # withheld while its parent runs (its secrets)
        small.export(fork["id"])
    while not svc.load(gid).over:
        play_one(svc, gid)
    assert verify(small.export(fork["id"]))["valid"]


def test_bots_stop_at_the_cap(redis_url, clock):
    svc = service(redis_url, clock, max_events_per_game=CAP)
    gid = svc.create("papyrus", [{"name": f"r{i}", "bot": {"level": "random"}}
                                 for i in range(3)], {}, None)["id"]
    for _ in range(CAP):
        table = svc.load(gid)
        if table.over:
            break
        try:
            svc.play_bot(gid, table.awaiting()[0], table.version)
        except NotYourTurn as exc:
            assert exc.details["reason"] == "event_limit"
    table = svc.load(gid)
    assert table.status == "aborted" and table.version <= CAP and table.awaiting() == []
    assert last(svc, gid)["data"] == {"by": "server", "reason": "event_limit"}
    assert verify(svc.export(gid))["valid"]


def test_a_table_that_only_churns_seats_is_capped_too(redis_url, clock):
    svc = service(redis_url, clock, max_events_per_game=8)
    ada = svc.players.create("Ada", "human")
    gid = svc.create("diamant", [{"player": ada["id"]}, {"open": True}, {"open": True}], {},
                     None, creator=ada["id"])["id"]
    with pytest.raises(NotYourTurn) as refused:
        for _ in range(10):
            svc.join(gid, 1, None, "Cyd")
            svc.leave(gid, 1)
    assert refused.value.details["reason"] == "event_limit"
    table = svc.load(gid)
    assert table.status == "aborted" and table.version <= 8
    doc = svc.export(gid)
    assert verify(doc)["valid"]
    doc.pop("signature", None)
    doc["events"][0]["data"]["max_events"] = 9  # the refused join would have fitted
    assert verify(doc)["reason"] == "event_limit_not_reached"


# ------------------------------------------------------------------------------- idle aborts

IDLE_S = 60


def idle(svc) -> list[str]:
    """The active games the sweep finds idle (all in one page of its rotation)."""
    page = svc.store.sweep_page(100)
    return svc.idle_games(svc.latest([game_id for game_id, _ in page]), dict(page))


def test_the_sweep_aborts_a_game_without_a_clock_idle_for_its_limit(redis_url, clock,
                                                                     monkeypatch):
    svc = service(redis_url, clock, idle_abort_s=IDLE_S)
    gid, _ = humans(svc, {"rated": False})
    monkeypatch.setattr(jobs, "_service", svc)
    clock.t += 30_000
    play_one(svc, gid)  # a command restarts the wait
    clock.t += IDLE_S * 1000 - 1
    assert idle(svc) == [] and svc.settle_idle(gid) is False
    jobs.sweep()
    assert svc.load(gid).status == "active"
    clock.t += 1
    assert idle(svc) == [gid]
    jobs.sweep()
    table = svc.load(gid)
    assert table.status == "aborted" and table.awaiting() == []
    assert last(svc, gid)["type"] == "GameAborted" and \
        last(svc, gid)["data"] == {"by": "server", "reason": "idle"}
    assert svc.settle_idle(gid) is False  # idempotent: the sweeps of every worker may come
    assert types(svc, gid).count("GameAborted") == 1
    assert svc.list_games(None, "aborted", 1, 10)["games"][0]["id"] == gid
    assert finishes(svc, gid) == [{"game_id": gid, "status": "aborted", "result": None}] * 2
    assert svc.rate(gid) is None
    assert verify(svc.export(gid))["valid"]


def play_out(svc: GameService, gid: str) -> None:
    """Every awaited seat plays until the game is over: a human its first legal action, a bot
    its own decision (the bot job, run here)."""
    while not (table := svc.load(gid)).over:
        seat = table.awaiting()[0]
        if table.shell.controllers[seat].human:
            play_one(svc, gid)
        else:
            assert svc.play_bot(gid, seat, table.version)


def test_in_a_rated_game_the_seat_it_waits_on_resigns_when_idle(redis_url, clock,
                                                                 monkeypatch):
    """A player who stops moving in a rated game without a clock loses it: after the idle
    limit its seat resigns (a bot plays on) and the game ends rated with that seat last,
    where before it was aborted unrated and nobody won."""
    svc = service(redis_url, clock, idle_abort_s=IDLE_S)
    gid, players = humans(svc, {"rated": True})
    monkeypatch.setattr(jobs, "_service", svc)
    play_one(svc, gid)  # seat 0 picks; the simultaneous pick now waits on seat 1 alone
    assert svc.load(gid).awaiting() == [1]
    clock.t += IDLE_S * 1000 - 1
    jobs.sweep()
    assert svc.load(gid).shell.controllers[1].human
    clock.t += 1
    jobs.sweep()
    table = svc.load(gid)
    assert table.status == "active" and not table.shell.controllers[1].human
    resigned = last(svc, gid)
    assert (resigned["type"], resigned["seat"], resigned["data"], resigned["cmd"]) == (
        "SeatResigned", 1, {"replaced_by": "bot:heuristic", "reason": "idle"}, {"shell": "idle"})
    assert svc.settle_idle(gid) is False  # the bot's turn now: not idle
    play_out(svc, gid)
    table = svc.load(gid)
    assert table.status == "finished"
    update = svc.rate(gid)
    assert update["players"] == [p["id"] for p in players] and update["ranks"] == [1, 2]
    # the profiles count the win for Ada, whatever the bot that played Bob's seat scored
    assert [svc.player_store.stats(p["id"]).get(f"{TIDES}:wins", 0) for p in players] == [1, 0]
    doc = svc.export(gid)
    assert verify(doc)["valid"]
    resigned = next(i for i, e in enumerate(doc["events"]) if e["type"] == "SeatResigned")
    early = copy.deepcopy(doc)
    early.pop("signature", None)
    early["events"][resigned]["at"] = early["events"][resigned - 1]["at"]
    assert verify(early)["reason"] == "idle_abort_not_allowed"
    other = copy.deepcopy(doc)
    other.pop("signature", None)
    other["events"][resigned]["seat"] = 0
    assert verify(other)["reason"] == "event_differs"


def test_a_tournament_game_counts_as_a_rated_one_for_aborts_and_idle_seats(redis_url, clock):
    """An unrated tournament's game counts in its standings: its seats cannot abort it once
    dealt (an abort scores nothing for anybody: a loser's way out), and its idle seat
    resigns."""
    svc = service(redis_url, clock, idle_abort_s=IDLE_S)
    players = [svc.players.create(name, "human")["id"] for name in ("Ada", "Bob")]
    cup = svc.tournaments.create({"name": "Cup", "type": TIDES, "format": "round_robin",
                                  "seats_per_game": 2, "participants": players})
    gid = cup["rounds"][0]["games"][0]["id"]
    assert not svc.load(gid).created["data"].get("rated")
    with pytest.raises(CannotAbort, match="once it is dealt"):
        svc.abort(gid, 0)
    play_one(svc, gid)
    clock.t += IDLE_S * 1000
    assert svc.settle_idle(gid) is True
    assert last(svc, gid)["type"] == "SeatResigned" and svc.load(gid).status == "active"


def test_a_resignation_stands_when_the_last_player_in_stops_moving(redis_url, clock):
    """Ada resigns (a bot plays her seat) and Bob, having won, stops moving: his seat resigns
    too, the bots play the game out, and it is rated with Bob first, since Ada left first.
    (Aborted, the game would take Ada's resignation with it.)"""
    svc = service(redis_url, clock, idle_abort_s=IDLE_S)
    gid, players = humans(svc, {"rated": True})
    svc.resign(gid, 0)
    clock.t += IDLE_S * 1000
    assert svc.settle_idle(gid) is True
    resigned = [e for e in svc.store.read(gid, 0) if e.envelope["type"] == "SeatResigned"]
    assert [(e.envelope["seat"], e.envelope["data"].get("reason")) for e in resigned] == \
        [(0, None), (1, "idle")]
    play_out(svc, gid)
    assert svc.load(gid).status == "finished"
    assert svc.rate(gid)["ranks"] == [2, 1]
    assert [svc.player_store.stats(p["id"]).get(f"{TIDES}:wins", 0) for p in players] == [0, 1]
    assert verify(svc.export(gid))["valid"]


def test_a_rated_game_is_aborted_when_idle_with_nobody_waiting_on_the_idle(redis_url, clock):
    """Nobody to rank: every seat an idle human (nobody moved in a simultaneous pick); and a
    game whose result counts for nothing."""
    svc = service(redis_url, clock, idle_abort_s=IDLE_S)
    untouched, _ = humans(svc, {"rated": True})
    unrated, _ = humans(svc, {"rated": False})
    play_one(svc, unrated)
    clock.t += IDLE_S * 1000
    for gid in (untouched, unrated):
        assert svc.settle_idle(gid) is True
        assert svc.load(gid).status == "aborted" and last(svc, gid)["type"] == "GameAborted"
        assert svc.rate(gid) is None
        assert verify(svc.export(gid))["valid"]


def test_verification_accepts_the_idle_abort_of_a_rated_game_recorded_before(
        redis_url, clock, monkeypatch):
    """A server before the rule aborted a rated game whose idle seat now resigns: its export
    still verifies."""
    svc = service(redis_url, clock, idle_abort_s=IDLE_S)
    gid, _ = humans(svc, {"rated": True})
    play_one(svc, gid)
    clock.t += IDLE_S * 1000
    monkeypatch.setattr(seats_module, "idle_resigners", lambda *args: [])
    assert svc.settle_idle(gid) is True
    assert svc.load(gid).status == "aborted"
    assert verify(svc.export(gid))["valid"]


def test_the_sweep_keeps_the_idle_limit_each_game_was_created_with(redis_url, clock,
                                                                  monkeypatch):
    """The limit is recorded in each game: a worker configured otherwise (longer, or never)
    aborts a game at its own limit, and a game created with a longer one not before it."""
    short, _ = humans(service(redis_url, clock, idle_abort_s=IDLE_S))
    long, _ = humans(service(redis_url, clock, idle_abort_s=10 * IDLE_S))
    for worker_limit in (100 * IDLE_S, 0):
        svc = service(redis_url, clock, idle_abort_s=worker_limit)
        monkeypatch.setattr(jobs, "_service", svc)
        clock.t += IDLE_S * 1000 - 1 if worker_limit else 1
        jobs.sweep()
        assert svc.load(short).status == ("active" if worker_limit else "aborted")
    assert svc.load(long).status == "active"
    clock.t += 9 * IDLE_S * 1000 - 1
    jobs.sweep()
    assert svc.load(long).status == "active"
    clock.t += 1
    jobs.sweep()
    assert svc.load(long).status == "aborted"
    assert verify(svc.export(long))["valid"] and verify(svc.export(short))["valid"]


def test_a_game_that_keeps_playing_or_has_a_clock_is_never_idle(redis_url, clock):
    svc = service(redis_url, clock, idle_abort_s=IDLE_S)
    playing, _ = humans(svc)
    timed, _ = humans(svc, {"clock": {"initial_ms": 10 * IDLE_S * 1000,
                                      "timeout": "forfeit"}})
    for _ in range(5):
        clock.t += IDLE_S * 1000 - 1
        play_one(svc, playing)
        assert svc.settle_idle(playing) is False
    clock.t += 2 * IDLE_S * 1000
    assert svc.load(timed).status == "active"
    assert svc.settle_idle(timed) is False  # its clock ends it instead
    assert "GameAborted" not in types(svc, timed)


def test_verification_rejects_an_idle_abort_before_the_limit(redis_url, clock):
    svc = service(redis_url, clock, idle_abort_s=IDLE_S)
    gid, _ = humans(svc)
    play_one(svc, gid)
    clock.t += IDLE_S * 1000
    assert svc.settle_idle(gid) is True
    doc = svc.export(gid)
    doc.pop("signature", None)
    assert verify(doc)["valid"]
    early = copy.deepcopy(doc)
    early["events"][-1]["at"] = early["events"][-2]["at"]
    outcome = verify(early)
    assert outcome["reason"] == "idle_abort_not_allowed" and \
        outcome["version"] == len(doc["events"])
    # without a recorded limit (a game from before): any time after the event before it
    old = copy.deepcopy(early)
    del old["events"][0]["data"]["idle_abort_s"]
    assert verify(old)["valid"]
    before = copy.deepcopy(old)
    before["events"][-1]["at"] = "2000-01-01T00:00:00.000Z"
    assert verify(before)["reason"] == "idle_abort_not_allowed"


def test_a_game_last_written_before_appends_kept_their_time_goes_by_its_last_event(
        redis_url, clock):
    svc = service(redis_url, clock, idle_abort_s=IDLE_S)
    gid, _ = humans(svc)
    clock.t += 30_000
    play_one(svc, gid)
    svc.store.r.hdel(keys.meta(gid), "last_ms")  # as written before this change
    assert svc.store.meta_field(gid, "last_ms") is None
    clock.t += IDLE_S * 1000 - 1  # past its creation's limit, not its last command's
    assert idle(svc) == [] and svc.settle_idle(gid) is False
    clock.t += 1
    assert idle(svc) == [gid] and svc.settle_idle(gid) is True


@pytest.mark.parametrize("per_decision_ms,kept", [(3_600_000, False), (5_000, True)])
def test_a_command_cancels_the_clock_jobs_of_the_version_it_left(redis_url, clock,
                                                                   per_decision_ms, kept):
    """They would find the game moved on and do nothing, but wait in RQ's schedule until
    their deadline (days, for a long clock); one due within seconds may be running: kept."""
    from service.jobs import RqScheduler

    client = redis.Redis.from_url(redis_url)
    svc = GameService.configured(Config(redis_url=redis_url), client, now_ms=clock,
                                 scheduler=RqScheduler(client, now_ms=clock))
    gid, _ = humans(svc, {"clock": {"per_decision_ms": per_decision_ms}})

    def scheduled() -> list[str]:
        return sorted(j.decode() for j in client.zrange("rq:scheduled:cartouche-high", 0, -1)
                      if gid in j.decode())

    before = svc.load(gid).version
    left = [f"clock-{gid}-{before}-{seat}" for seat in (0, 1)]  # Tides: both seats pick
    assert scheduled() == left
    play_one(svc, gid)
    now = svc.load(gid).version
    assert scheduled() == sorted((left if kept else []) + [f"clock-{gid}-{now}-1"])
    assert all(client.exists(f"rq:job:{job_id}") == kept for job_id in left)


def test_the_sweep_settles_an_overdue_clock_whose_job_was_lost(redis_url, clock, monkeypatch):
    """No clock job (this service schedules none, as if it was lost): once the seat's time has
    run out, the sweep applies its timeout; before, it does nothing. A game whose clock is
    not due is left alone, whether this process holds it or not."""
    svc = service(redis_url, clock)
    monkeypatch.setattr(jobs, "_service", svc)
    due, _ = humans(svc, {"clock": {"initial_ms": 60_000, "timeout": "forfeit"}})
    later, _ = humans(svc, {"clock": {"initial_ms": 600_000, "timeout": "forfeit"}})
    clock.t += 60_000 - 1
    jobs.sweep()
    assert types(svc, due) == ["GameCreated", "CardsDealt"]
    svc.drop_caches()  # held or not, the same answer
    clock.t += 1
    jobs.sweep()
    # both seats' banks ran out at that instant: they forfeit together
    assert types(svc, due) == ["GameCreated", "CardsDealt", "SeatForfeited", "SeatForfeited"]
    assert svc.load(due).status == "finished"
    assert types(svc, later) == ["GameCreated", "CardsDealt"]
