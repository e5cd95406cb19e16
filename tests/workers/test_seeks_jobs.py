"""Seeks' jobs on a real RQ worker with its scheduler: bots fill a seek once its delay is over
(once: a duplicated job changes nothing, and a seek matched first gets no bots), and a seek
nobody matches expires."""

from __future__ import annotations

from service.app import create_app
from service.config import Config

from tests.api.helpers import auth
from tests.api.test_seeks import seek
from tests.api.test_tables import player
from tests.reliability.procs import wait_until


def settled(client, seek_id) -> dict:
    """The seek once it is no longer waiting."""
    def ended():
        found = client.get(f"/v1/seeks/{seek_id}").get_json()
        return found if found["status"] != "waiting" else None

    return wait_until(ended, 60, f"seek {seek_id} to end", 0.2)


def finished(queue_url, job_id):
    """The result of an RQ job once it has run."""
    import redis
    from rq.job import Job

    job = Job.fetch(job_id, connection=redis.Redis.from_url(queue_url))
    wait_until(lambda: job.get_status(refresh=True) == "finished", 60, f"job {job_id}", 0.2)
    return job.return_value()


def test_bots_fill_a_seek_once_after_its_delay(client, svc, queue_url, worker):
    from workers import jobs

    ada, bob, cy = player(client, "Ada"), player(client, "Bob"), player(client, "Cy")
    duel = seek(client, ada, fill_with_bots={"after_s": 1, "level": "random"})
    crowd = seek(client, bob, type_="diamant", seats=[3, 5],
                 fill_with_bots={"after_s": 1, "level": "heuristic"})
    early = seek(client, cy, type_="scarabya", fill_with_bots={"after_s": 1, "level": "random"})
    assert seek(client, ada, type_="scarabya")["status"] == "matched"  # before Cy's bots
    assert duel["status"] == crowd["status"] == "waiting"

    duel, crowd = settled(client, duel["id"]), settled(client, crowd["id"])
    assert duel["status"] == crowd["status"] == "matched"
    game = client.get(f"/v1/games/{duel['game_id']}", headers=auth(ada["token"])).get_json()
    assert game["you"] == duel["seat"] and game["options"]["rated"] is True
    assert sorted(p["player"] for p in game["players"]) == sorted([ada["id"], "bot-random"])
    # the least seat count the seek takes; one bot player in two seats: not rated
    game = client.get(f"/v1/games/{crowd['game_id']}").get_json()
    assert [p["player"] for p in game["players"]].count("bot-heuristic") == 2
    assert game["players"][crowd["seat"]]["player"] == bob["id"]
    assert "rated" not in game["options"]
    # the seek is settled before its game is announced: the notices follow it shortly
    def told_bob():
        told = [n.type for n in svc.player_store.notices_after(bob["id"], "0-0", 10)]
        return told if len(told) >= 2 else None

    told = wait_until(told_bob, 30, "Bob's notices", 0.1)
    assert told[:2] == ["seek_matched", "game_start"]

    # Cy's job ran at its time and found her seek matched: nothing more to do
    assert finished(queue_url, f"seek-fill-{early['id']}") == "matched"
    early = client.get(f"/v1/seeks/{early['id']}").get_json()
    game = client.get(f"/v1/games/{early['game_id']}").get_json()
    assert {p["player"] for p in game["players"]} == {ada["id"], cy["id"]}
    assert client.get("/v1/games?type=scarabya").get_json()["total"] == 1

    jobs._service = svc  # the fill jobs once more: a duplicate changes nothing
    try:
        assert jobs.seek_fill(duel["id"], 0) == jobs.seek_fill(crowd["id"], 0) == "matched"
    finally:
        jobs._service = None
    assert client.get("/v1/games").get_json()["total"] == 3


def test_a_seek_nobody_matches_expires(redis_url, queue_url, worker):
    app = create_app(Config(redis_url=redis_url, queue_url=queue_url, seek_ttl_s=2))
    client = app.test_client()
    ada = player(client)
    opened = seek(client, ada, type_="papyrus", seats=[2, 5])
    expired = settled(client, opened["id"])
    assert expired["status"] == "expired" and expired["game_id"] is None
    assert client.get("/v1/seeks").get_json()["total"] == 0
    assert client.get("/v1/players/me", headers=auth(ada["token"])).get_json()["seeks"] == []
    r = client.delete(f"/v1/seeks/{opened['id']}", headers=auth(ada["token"]))
    assert r.status_code == 409 and r.get_json()["error"]["code"] == "seek_expired"
