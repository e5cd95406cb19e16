"""A tournament run to its end by a real RQ worker: each game's end enqueues the job that
records it and pairs the next round; players who leave are played by the clock's automatic
move, the bots by their jobs."""

import time

import redis
from rq.job import Job

from service.store.tournaments import TournamentStore

from tests.api.helpers import player


def test_a_small_swiss_of_bots_runs_to_its_end(client, svc, worker, queue_url):
    people = [player(client, n)["id"] for n in ("Ada", "Bob")]
    r = client.post("/v1/tournaments", json={
        "name": "Cup", "type": "diamant", "format": "swiss", "rounds": 2, "seats_per_game": 3,
        "participants": ["bot-random", "bot-heuristic", *people]})
    assert r.status_code == 201, r.get_json()
    tid = r.get_json()["id"]
    left: set[str] = set()
    deadline = time.monotonic() + 30
    while True:
        shown = client.get(f"/v1/tournaments/{tid}").get_json()
        if shown["status"] == "finished":
            break
        assert time.monotonic() < deadline, shown
        for g in shown["rounds"][-1]["games"]:
            if g["id"] not in left:  # the people leave at once: their seats play on
                left.add(g["id"])
                for seat, p in enumerate(g["seats"]):
                    if p in people:
                        svc.resign(g["id"], seat)
        time.sleep(0.1)
    assert [len(rnd["games"]) for rnd in shown["rounds"]] == [1, 1]
    assert all(g["status"] == "finished" for rnd in shown["rounds"] for g in rnd["games"])
    # byes went to two different participants, and the standings add up: 3 points per game
    # (2 + 1 + 0, or shared) and 2 per bye
    assert len({p for rnd in shown["rounds"] for p in rnd["byes"]}) == 2
    assert sum(s["points"] for s in shown["standings"]) == 2 * 3 + 2 * 2
    # each game's end enqueued its job (the sweep is only the backstop)
    queue = redis.Redis.from_url(queue_url)
    assert all(Job.exists(f"tournament-{tid}-{g['id']}", connection=queue)
               for rnd in shown["rounds"] for g in rnd["games"])
    events = TournamentStore(svc.store.r).events(tid)
    assert [e["type"] for e in events] == ["TournamentCreated", "RoundPaired", "GameRecorded",
                                           "RoundPaired", "GameRecorded",
                                           "TournamentFinished"]


def test_the_sweep_pairs_a_round_whose_job_was_lost(redis_url, queue_url, monkeypatch):
    from service.app import create_app
    from service.application import NullScheduler
    from service.config import Config
    from tests.api.test_tournaments import create, end_round
    from workers import jobs

    app = create_app(Config(redis_url=redis_url, queue_url=queue_url),
                     scheduler=NullScheduler())  # no job is ever enqueued
    client, svc = app.test_client(), app.extensions["cartouche"]
    t = create(client, [player(client, n)["id"] for n in ("Ada", "Bob", "Cy")])
    end_round(svc, t)
    assert len(client.get(f"/v1/tournaments/{t['id']}").get_json()["rounds"]) == 1
    monkeypatch.setenv("REDIS_URL", redis_url)
    monkeypatch.setenv("QUEUE_URL", queue_url)
    monkeypatch.setattr(jobs, "_service", None)  # the sweep's own service, from the env
    jobs.sweep()
    shown = client.get(f"/v1/tournaments/{t['id']}").get_json()
    assert len(shown["rounds"]) == 2 and shown["rounds"][0]["games"][0]["status"] == "finished"
