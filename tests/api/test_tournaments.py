"""Tournaments over HTTP in one process: creation and its refusals, round 1 paired at once,
the next round paired by ``advance`` once the round's games end (random moves here), exactly
once when advanced twice or raced, duplicate deals sharing a seed over rotated seats."""

from __future__ import annotations

import hashlib

import pytest

from service.engine.tournament import Tournament
from service.store import keys
from service.store.tournaments import TournamentStore

from .helpers import auth, error, player
from .test_stream import parse

#: These tests play and advance everything in this process, in databases no worker's sweep
#: advances their tournaments or plays their bots in.
pytestmark = pytest.mark.unswept


@pytest.fixture
def app(redis_url, queue_url):
    """The app without jobs."""
    from service.app import create_app
    from service.application import NullScheduler
    from service.config import Config

    return create_app(Config(redis_url=redis_url, queue_url=queue_url, snapshot_every=10),
                      scheduler=NullScheduler())


def create(client, participants, status=201, headers=None, **body):
    r = client.post("/v1/tournaments", headers=headers, json={
        "name": "Cup", "type": "diamant", "format": "swiss", "rounds": 2, "seats_per_game": 3,
        "participants": participants, **body})
    assert r.status_code == status, r.get_json()
    return r.get_json()


def finish(svc, game_id):
    """Play a game to its end in this process: a human seat plays random legal actions (drawn
    from the game's id), a bot's seat as its job would; the game's ranks."""
    import random

    from service.application import body_digest

    rnd = random.Random(game_id)
    while not (table := svc.load(game_id)).over:
        for seat in table.awaiting():
            if table.shell.controllers[seat].human:
                action = rnd.choice(table.game.legal_actions(table.state, seat))
                svc.act(game_id, seat, action, None, None, body_digest({"action": action}))
            else:
                svc.play_bot(game_id, seat, table.version)
            if (table := svc.load(game_id)).over:
                break
    return table.result()["ranks"]


def end_round(svc, shown):
    """Every game of the last round played to its end; each game's ranks."""
    return {g["id"]: finish(svc, g["id"]) for g in shown["rounds"][-1]["games"]}


def independent_points(rounds, ranks):
    """Points by hand: n seats, places worth n-1 .. 0, tied seats share; a bye a win."""
    points = {}
    for rnd in rounds:
        for p in rnd["byes"]:
            points[p] = points.get(p, 0) + 2
        for g in rnd["games"]:
            n = len(g["seats"])
            for seat, p in enumerate(g["seats"]):
                mine = ranks[g["id"]][seat]
                tied = ranks[g["id"]].count(mine)
                share = sum(n - place for place in range(mine, mine + tied)) / tied
                points[p] = points.get(p, 0) + share
    return points


def test_swiss_round_one_paired_at_creation_then_advanced_once(client, svc):
    ids = [player(client, n)["id"] for n in ("Ada", "Bob", "Cy", "Di", "Ed", "Flo")] + \
        ["bot-random"]
    t = create(client, ids)
    assert t["status"] == "running" and t["rounds_total"] == 2
    [first] = t["rounds"]
    assert len(first["games"]) == 2 and len(first["byes"]) == 1
    table = svc.load(first["games"][0]["id"])
    assert table.created["data"]["tournament"] == t["id"]
    assert [p["player"] for p in table.players] == first["games"][0]["seats"]
    assert client.get(f"/v1/tournaments/{t['id']}").get_json() == t
    r = client.get(f"/v1/tournaments/{t['id']}/export")
    assert r.status_code == 409 and error(r)["code"] == "game_not_finished"

    assert svc.tournaments.advance(t["id"]) == "playing"  # nothing over yet
    ranks = end_round(svc, t)
    assert svc.tournaments.advance(t["id"]) == "paired"
    assert svc.tournaments.advance(t["id"]) == "playing"  # the job again: nothing more
    shown = client.get(f"/v1/tournaments/{t['id']}").get_json()
    assert len(shown["rounds"]) == 2
    assert all(g["status"] == "finished" and g["result"] == ranks[g["id"]]
               for g in shown["rounds"][0]["games"])
    # nobody sits out twice, and the first round's bye is not the second's
    assert shown["rounds"][0]["byes"] != shown["rounds"][1]["byes"]
    ranks.update(end_round(svc, shown))
    assert svc.tournaments.advance(t["id"]) == "finished"
    done = client.get(f"/v1/tournaments/{t['id']}").get_json()
    assert done["status"] == "finished" and len(done["rounds"]) == 2
    expected = independent_points(done["rounds"], ranks)
    assert {s["player"]: s["points"] for s in done["standings"]} == pytest.approx(expected)
    assert [s["points"] for s in done["standings"]] == sorted(expected.values(), reverse=True)
    events = TournamentStore(svc.store.r).events(t["id"])
    assert [e["type"] for e in events].count("RoundPaired") == 2
    assert events[-1]["type"] == "TournamentFinished"
    assert events[-1]["data"]["standings"] == done["standings"]


def test_a_raced_pairing_pairs_once_and_deletes_the_losers_games(client, svc):
    ids = [player(client, n)["id"] for n in ("Ada", "Bob", "Cy", "Di")]
    t = create(client, ids, type="tides-of-time", seats_per_game=2, format="round_robin")
    end_round(svc, t)
    tournaments = svc.tournaments
    tournaments.advance(t["id"])  # records the round and pairs round 2
    store = TournamentStore(svc.store.r)
    events = store.events(t["id"])
    # a second worker that read the stream before round 2 was paired loses its append
    stale = [e for e in events if e["type"] != "RoundPaired" or e["data"]["number"] == 1]
    before = svc.store.list_ids(None, None, 0, 100)[1]
    assert tournaments._pair(t["id"], stale, Tournament.of(stale)) is False
    assert store.events(t["id"]) == events
    assert svc.store.list_ids(None, None, 0, 100)[1] == before  # its games are gone


def test_duplicate_deals_share_a_seed_over_rotated_seats(client, svc):
    ids = [player(client, n)["id"] for n in ("Ada", "Bob", "Cy")]
    t = create(client, ids, duplicate=True, rounds=1)
    games = t["rounds"][0]["games"]
    assert len(games) == 3 and {g["deal"] for g in games} == {0}
    first = games[0]["seats"]
    assert [g["seats"] for g in games] == [first, first[1:] + first[:1],
                                           first[2:] + first[:2]]
    assert [[p["player"] for p in svc.load(g["id"]).players] for g in games] == \
        [g["seats"] for g in games]
    seeds = {svc.store.r.get(keys.seed(g["id"])) for g in games}
    assert len(seeds) == 1 and None not in seeds
    # a second deal draws another seed
    other = create(client, ids, duplicate=True, rounds=1)["rounds"][0]["games"][0]
    assert svc.store.r.get(keys.seed(other["id"])) not in seeds


def platform_client(redis_url, queue_url):
    """A client of the app where the platform key ``pk`` is configured (same databases)."""
    from service.app import create_app
    from service.application import NullScheduler
    from service.config import Config

    return create_app(Config(redis_url=redis_url, queue_url=queue_url,
                             platform_key_digests=(hashlib.sha256(b"pk").hexdigest(),)),
                      scheduler=NullScheduler()).test_client()


def test_only_a_platform_key_creates_a_rated_tournament(client, redis_url, queue_url):
    """A tournament seats the players it names without asking them: rated, a griefer's
    tournament would cost a player rating for games it never agreed to play (a 100 ms forfeit
    clock loses them in seconds). Where no platform key is configured nobody may create a
    rated one; an unrated one anybody may."""
    ids = [player(client, n)["id"] for n in ("Ada", "Bob", "Cy")]
    refused = create(client, ids, status=422, rated=True)
    assert refused["error"]["details"] == {"code": "invalid_option", "option": "rated"}
    assert "platform key" in refused["error"]["message"]
    assert create(client, ids, rated=False)["rated"] is False
    shown = create(platform_client(redis_url, queue_url), ids, rated=True,
                   headers={"Authorization": "Bearer pk"})
    assert shown["rated"] is True


def test_a_finished_rotation_gives_nothing_away_while_its_deal_is_played(client, svc, redis_url,
                                                                         queue_url, monkeypatch):
    """The rotations of a deal share its seed: the first to end keeps its secrets (seed,
    unredacted log, final state, result, its players' counts and ratings) until the last one
    ends."""
    import redis
    from rq.job import Job
    from service.jobs import RqScheduler

    rating_jobs: list[str] = []
    monkeypatch.setattr(svc.scheduler, "enqueue_rating", rating_jobs.append)

    def counts():
        return [client.get(f"/v1/players/{p}").get_json()["stats"].get("diamant")
                for p in ids]

    people = [player(client, n) for n in ("Ada", "Bob", "Cy")]
    ids = [p["id"] for p in people]
    platform = platform_client(redis_url, queue_url)
    tid = (shown := create(platform, ids, duplicate=True, rounds=1, rated=True,
                           options={"clock": {"initial_ms": 3_600_000}},
                           headers={"Authorization": "Bearer pk"}))["id"]
    games = shown["rounds"][0]["games"]
    done, running = games[0]["id"], [g["id"] for g in games[1:]]
    playing = svc.load(done)
    while_running = client.get(f"/v1/games/{done}/events?limit=1000").get_json()["events"]
    viewed = client.get(f"/v1/games/{done}").get_json()
    tokens = {p["id"]: p["token"] for p in people}
    while not (table := svc.load(done)).over:  # played by its players, the last action too
        token = tokens[table.players[table.awaiting()[0]]["player"]]
        act = client.get(f"/v1/games/{done}/legal-actions", headers=auth(token)).get_json()
        answer = client.post(f"/v1/games/{done}/actions", headers=auth(token),
                             json={"action": act["actions"][0]})
        assert answer.status_code == 201, answer.get_json()
    final = svc.load(done)
    assert final.over and not svc.load(running[0]).over
    # a past state is served as it was (it held the deal's secrets, as a final state would);
    # nothing from the command that ended the game on (its GameEnded names the scores)
    def timeless(view):  # (its clock runs on)
        return {k: v for k, v in view.items() if k != "clock"}

    assert timeless(client.get(f"/v1/games/{done}/states/{playing.version}").get_json()) == \
        timeless(viewed)
    ended_at = max(v for v in range(1, final.version + 1)
                   if "cmd" in svc.store.read(done, v - 1, v)[0].envelope)
    assert client.get(f"/v1/games/{done}/states/{ended_at - 1}").status_code == 200
    for version in (ended_at, final.version, final.version + 1):  # (where the log ends: untold)
        r = client.get(f"/v1/games/{done}/states/{version}")
        assert r.status_code == 409 and error(r)["code"] == "game_not_finished"
    # nor is its version: how many events the ending appended depends on what it revealed
    assert final.version > ended_at
    assert answer.get_json() == {"version": ended_at - 1, "events": []}
    assert client.get(f"/v1/games/{done}").get_json()["version"] == ended_at - 1
    # nor how long its last decisions took (its banks after them)
    assert client.get(f"/v1/games/{done}").get_json()["clock"]["remaining_ms"] is None
    assert {g["id"]: g["version"] for g in client.get("/v1/games?per_page=100").get_json()[
        "games"]}[done] == ended_at - 1
    for token in (None, tokens[ids[0]]):
        assert client.get(f"/v1/games/{done}/legal-actions",
                          headers=auth(token)).get_json()["version"] == ended_at - 1
        assert client.get(f"/v1/games/{done}/events",
                          headers=auth(token)).get_json()["version"] == ended_at - 1
    streamed = client.get(f"/v1/games/{done}/events/stream", buffered=True).get_data(as_text=True)
    messages = [m for m in parse(streamed.split("\n")) if m[0] != "comment"]
    assert messages[-1][0] == "end" and messages[-1][2]["result"] is None
    assert messages[-1][1] == messages[-1][2]["version"] == ended_at - 1  # resumed there
    page = client.get(f"/v1/games/{done}/events?limit=1000").get_json()
    assert page["next_after"] == ended_at - 1  # paging on finds that command once public
    for log in (page["events"], [m[2] for m in messages[:-1]]):
        assert log and max(e["version"] for e in log) < ended_at
        assert "GameEnded" not in {e["type"] for e in log}
    # a platform key reads everything, as the webhooks deliver it
    log = platform.get(f"/v1/games/{done}/events?limit=1000",
                       headers={"Authorization": "Bearer pk"}).get_json()["events"]
    assert log[-1]["version"] == final.version and log[-1]["type"] == "GameEnded"
    # its players are told nothing of it yet (its result holds the deal)
    finishes = [n.data for pid in ids
                for n in svc.player_store.notices_after(pid, "0-0", 1000)
                if n.type == "game_finish"]
    assert finishes == []
    # nor their profiles' counts and ratings (a win there would say who won it), which the
    # game's end leaves to the tournament's record of the whole deal
    assert counts() == [None] * 3
    queue = redis.Redis.from_url(queue_url)
    RqScheduler(queue).changed(final)
    assert not Job.exists(f"rate-{done}", connection=queue) and rating_jobs == []
    # nor does the tournament record its ranks (they would say how the deal went)
    assert svc.tournaments.advance(tid) == "playing"
    listed = client.get(f"/v1/tournaments/{tid}").get_json()
    assert [(g["status"], g["result"]) for g in listed["rounds"][0]["games"]] == \
        [("finished", None), ("active", None), ("active", None)]
    assert all(row["points"] == 0 for row in listed["standings"])
    finish(svc, running[0])
    assert svc.tournaments.advance(tid) == "playing"

    r = client.get(f"/v1/games/{done}/export")
    assert r.status_code == 409 and error(r)["code"] == "game_not_finished"
    r = client.post(f"/v1/games/{done}/fork", json={"version": playing.version})
    assert r.status_code == 409 and error(r)["code"] == "game_not_finished"
    view = client.get(f"/v1/games/{done}").get_json()
    assert view["status"] == "finished" and view["state"] is None and view["result"] is None
    served = client.get(f"/v1/games/{done}/events?limit=1000").get_json()["events"]
    assert served[:len(while_running)] == while_running  # redacted as while it ran
    assert svc.withheld(svc.load(done))

    finish(svc, running[1])
    assert client.get(f"/v1/games/{done}/export").status_code == 200
    assert counts() == [None] * 3 and rating_jobs == []
    assert svc.tournaments.advance(tid) == "finished"  # the deal's three results at once
    assert sorted(rating_jobs) == sorted(g["id"] for g in games)
    assert [c["games"] for c in counts()] == [3, 3, 3]
    assert sum(c["wins"] for c in counts()) == sum(
        len(svc.load(g["id"]).result()["winners"]) for g in games)
    listed = client.get(f"/v1/tournaments/{tid}").get_json()
    assert all(g["result"] is not None for g in listed["rounds"][0]["games"])
    assert client.get(f"/v1/games/{done}/states/{playing.version}").get_json()["state"] != \
        viewed["state"]  # every secret of it public now
    finishes = [n.data for pid in ids
                for n in svc.player_store.notices_after(pid, "0-0", 1000)
                if n.type == "game_finish"]  # each rotation's, with its result, once
    assert sorted((f["game_id"], f["status"]) for f in finishes) == sorted(
        (g["id"], "finished") for g in games for _ in ids)
    assert all(f["result"] == svc.load(f["game_id"]).result() for f in finishes)
    view = client.get(f"/v1/games/{done}").get_json()
    assert view["state"] is not None and view["result"] is not None
    assert view["version"] == final.version and len(view["clock"]["remaining_ms"]) == 3
    assert {g["id"]: g["version"] for g in client.get("/v1/games?per_page=100").get_json()[
        "games"]}[done] == final.version
    public = client.get(f"/v1/games/{done}/events?limit=1000").get_json()["events"]
    resumed = client.get(f"/v1/games/{done}/events/stream", buffered=True,
                         headers={"Last-Event-ID": str(ended_at - 1)}).get_data(as_text=True)
    resumed = [m for m in parse(resumed.split("\n")) if m[0] != "comment"]
    assert [m[2] for m in resumed[:-1]] == [e for e in public if e["version"] >= ended_at]
    assert resumed[-1][:2] == ("end", final.version) and resumed[-1][2]["result"] is not None
    assert public[:len(while_running)] != while_running  # now everything is public
    assert public[-1]["version"] == final.version and "GameEnded" in {e["type"] for e in public}
    assert client.get(f"/v1/games/{done}/states/{final.version}").get_json()["result"] == \
        final.result()
    # a fork of it is a game of nobody's tournament
    assert public[0]["data"]["tournament"] == tid
    fork = client.post(f"/v1/games/{done}/fork", json={"version": playing.version}).get_json()
    created = client.get(f"/v1/games/{fork['id']}/events?limit=1").get_json()["events"][0]
    assert "tournament" not in created["data"] and "round" not in created["data"]


@pytest.mark.parametrize("body,status,code", [
    ({"type": "chess"}, 400, "invalid_request"),
    ({"seats_per_game": 9}, 422, "invalid_player_count"),
    ({"rounds": 0}, 422, "invalid_rounds"),
    ({"format": "swiss", "rounds": None}, 400, "invalid_request"),
    ({"format": "knockout"}, 422, "invalid_format"),
    ({"participants": ["bot-random"]}, 422, "invalid_participant_count"),
    ({"duplicate": "yes"}, 400, "invalid_request"),  # true or false, as every flag
    ({"rated": 1}, 400, "invalid_request"),
    ({"options": {"colour": "red"}}, 422, "invalid_options"),
    ({"participants": ["bot-random", "bot-random", "bot-heuristic"]}, 422,
     "duplicate_participant"),
    ({"participants": ["bot-random", "bot-heuristic"]}, 422, "invalid_participant_count"),
    ({"participants": ["bot-random", "bot-heuristic", "p-0000000000000000"]}, 422,
     "player_not_found"),
    ({"participants": ["bot-random", "bot-heuristic", "bot-nonsense"]}, 422,
     "player_not_found"),
])
def test_refusals(client, body, status, code):
    r = client.post("/v1/tournaments", json={
        "name": "Cup", "type": "diamant", "format": "swiss", "rounds": 2, "seats_per_game": 3,
        "participants": ["bot-random", "bot-heuristic", "bot-mcts"], **body})
    assert r.status_code == status, r.get_json()
    assert error(r)["code"] == code


def test_unknown_tournament(client):
    for tid in ("t-0000000000000000", "nonsense"):
        r = client.get(f"/v1/tournaments/{tid}")
        assert r.status_code == 404 and error(r)["code"] == "tournament_not_found"


def test_limits_refuse_what_they_bound(redis_url, queue_url):
    from service.app import create_app
    from service.application import NullScheduler
    from service.config import Config

    app = create_app(Config(redis_url=redis_url, queue_url=queue_url, tournaments_max=1,
                            tournament_players_max=4, tournament_games_max=6,
                            tournament_rounds_max=3), scheduler=NullScheduler())
    client, svc = app.test_client(), app.extensions["cartouche"]
    bots = [player(client, n)["id"] for n in ("Ada", "Bob", "Cy")]
    r = client.post("/v1/tournaments", json={
        "name": "Cup", "type": "diamant", "format": "swiss", "rounds": 4, "seats_per_game": 3,
        "participants": bots})
    assert r.status_code == 422 and error(r)["details"] == {"min": 1, "max": 3}
    r = client.post("/v1/tournaments", json={
        "name": "Cup", "type": "diamant", "format": "swiss", "rounds": 3, "seats_per_game": 3,
        "participants": bots, "duplicate": True})  # 3 rounds of 3 rotations: 9 games
    assert r.status_code == 422 and error(r)["code"] == "too_many_games"
    r = client.post("/v1/tournaments", json={
        "name": "Cup", "type": "diamant", "format": "swiss", "rounds": 1, "seats_per_game": 3,
        "participants": [*bots, "bot-random", "bot-heuristic"]})
    assert r.status_code == 422 and error(r)["code"] == "invalid_participant_count"
    t = create(client, bots, rounds=1)
    r = client.post("/v1/tournaments", json={
        "name": "Cup", "type": "diamant", "format": "swiss", "rounds": 1, "seats_per_game": 3,
        "participants": bots})
    assert r.status_code == 503 and error(r)["code"] == "tournaments_full"
    assert r.headers["Retry-After"] == "60"
    end_round(svc, t)
    assert svc.tournaments.advance(t["id"]) == "finished"  # no longer running: room again
    create(client, bots, rounds=1)


def test_a_finished_tournament_exports_and_verifies_and_a_tampered_one_does_not(
        client, svc, tmp_path, monkeypatch):
    import copy
    import json

    from service.signing import canonical
    from tests.cli.terminal import run

    ids = [player(client, n)["id"] for n in ("Ada", "Bob", "Cy", "Di")]
    # ratings as the ledger may hold them: recorded with 4 decimals, so that every JSON
    # serializer writes them in plain decimal (1.2e-05 is "1.2e-05" in Python, "0.000012" in
    # orjson, "0.000012" in JavaScript)
    monkeypatch.setattr(svc.tournaments.ratings, "ordinals",
                        lambda rating_type, players: [1.2e-05, 3.14159265, -0.00004, 0.0])
    t = create(client, ids, rounds=1, duplicate=True)  # one deal of 3 rotations, one bye
    end_round(svc, t)
    assert svc.tournaments.advance(t["id"]) == "finished"
    r = client.get(f"/v1/tournaments/{t['id']}/export")
    assert r.status_code == 200
    doc = r.get_json()
    recorded = doc["events"][0]["data"]["participants"]
    assert [p["rating"] for p in recorded] == [0.0, 3.1416, -0.0, 0.0]
    # the signed form is the standard library's sorted, compact JSON, as docs/randomness.md says
    assert canonical(doc) == json.dumps({k: v for k, v in doc.items() if k != "signature"},
                                        sort_keys=True, separators=(",", ":"),
                                        ensure_ascii=False).encode()
    assert len(doc["games"]) == 3 and doc["events"][-1]["type"] == "TournamentFinished"
    assert doc["standings"] == client.get(f"/v1/tournaments/{t['id']}").get_json()["standings"]
    verdict = client.post("/v1/replays/verify", json=doc).get_json()
    assert verdict["valid"] is True, verdict
    assert verdict["details"]["signature"] == "valid" and verdict["details"]["games"] == 3
    # the contract's body of POST /v1/replays/verify takes it (a generated client sends it),
    # and a game's export, and not a tournament's with another format
    from jsonschema import Draft202012Validator

    spec = client.application.extensions["cartouche_api"].spec.to_dict()
    body = spec["paths"]["/v1/replays/verify"]["post"]["requestBody"]["content"]
    contract = Draft202012Validator({**body["application/json"]["schema"],
                                     "components": spec["components"]})
    assert contract.is_valid(doc) and contract.is_valid(doc["games"][0])
    assert not contract.is_valid({**doc, "format": "cartouche-export/1"})

    def tampered(change, signed=True):
        """The verdict on ``doc`` changed, signed again by the server's key unless
        ``signed`` is False: what re-deriving it finds, or what its signature says."""
        bad = copy.deepcopy(doc)
        change(bad)
        if signed and "signature" in bad:
            bad = svc.signer.sign(bad)
        return client.post("/v1/replays/verify", json=bad).get_json()

    recorded = next(i for i, e in enumerate(doc["events"]) if e["type"] == "GameRecorded")

    def other_ranks(d):
        d["events"][recorded]["data"]["ranks"] = [9, 9, 9]

    def bye_to_another(d):
        paired = d["events"][1]["data"]
        seated = paired["games"][0]["seats"]
        paired["byes"], seated[0] = [seated[0]], paired["byes"][0]

    def records_swapped(d):  # the same results, recorded in another order
        d["events"][recorded], d["events"][recorded + 1] = \
            d["events"][recorded + 1], d["events"][recorded]

    assert doc["events"][recorded + 1]["type"] == "GameRecorded"
    assert doc["signature"]["alg"] == "Ed25519"
    for change, reason in [  # what only the signature proves
        (records_swapped, "signature_invalid"),
        (lambda d: d["events"][0]["data"].update(name="another"), "signature_invalid"),
        (lambda d: d.pop("signature"), "not_signed"),
    ]:
        verdict = tampered(change, signed=False)
        assert verdict["valid"] is False and verdict["reason"] == reason, verdict
    assert tampered(records_swapped)["valid"] is True  # re-deriving cannot tell
    for change, reason in [
        (other_ranks, "result_differs"),
        (lambda d: d["standings"].reverse(), "standings_differ"),
        (lambda d: d["events"][-1]["data"]["standings"].reverse(), "standings_differ"),
        (bye_to_another, "pairing_differs"),
        (lambda d: d["games"].pop(), "game_missing"),
        (lambda d: d["games"][0]["events"][0]["data"].update(round=2), "game_invalid"),
        (lambda d: d["events"].pop(), "not_finished"),
        # the games played on other options, or another clock, than the tournament's
        (lambda d: d["events"][0]["data"]["options"].update(
            clock={"per_decision_ms": 1000, "timeout": "forfeit"}), "game_differs"),
        (lambda d: d["events"][0]["data"]["options"].update(rated=True), "game_differs"),
    ]:
        verdict = tampered(change)
        assert verdict["valid"] is False and verdict["reason"] == reason, verdict

    good, bad = tmp_path / "t.json", tmp_path / "bad.json"
    good.write_text(json.dumps(doc))
    broken = copy.deepcopy(doc)
    broken["standings"].reverse()
    bad.write_text(json.dumps(svc.signer.sign(broken)))
    out = run("verify", str(good))
    assert out.returncode == 0
    assert f"of tournament {doc['id']} ({len(doc['games'])} games, every pairing" in out.stdout
    out = run("verify", str(bad))
    assert out.returncode == 1 and "standings_differ" in out.stdout


def test_a_seat_that_resigned_scores_as_last_whatever_its_bot_did(client, svc):
    """A participant who resigns a game is placed below everyone who played on, however the
    bot that took the seat over finished (ratings count it so too); the export verifies, and
    one recording the rules' ranks instead is refused."""
    import copy

    from service.engine.tournament import quitters_last

    ids = [player(client, n)["id"] for n in ("Ada", "Bob", "Cy", "Di", "Ed", "Flo")]
    t = create(client, ids, rounds=1)
    assert svc.tournaments.events(t["id"])[0]["data"]["quitters"] == "last"
    rules = {}
    for g in t["rounds"][0]["games"]:
        svc.resign(g["id"], 0)  # the bot plays seat 0 from now on
        rules[g["id"]] = finish(svc, g["id"])
    assert svc.tournaments.advance(t["id"]) == "finished"
    recorded = {e["data"]["id"]: e["data"]["ranks"] for e in svc.tournaments.events(t["id"])
                if e["type"] == "GameRecorded"}
    assert recorded == {gid: quitters_last(ranks, [0]) for gid, ranks in rules.items()}
    assert all(r[0] > max(r[1:]) for r in recorded.values())
    for g in t["rounds"][0]["games"]:  # nor does its profile count the bot's win
        stats = client.get(f"/v1/players/{g['seats'][0]}").get_json()["stats"]["diamant"]
        assert stats["games"] == 1 and stats["wins"] == 0
    doc = client.get(f"/v1/tournaments/{t['id']}/export").get_json()
    assert client.post("/v1/replays/verify", json=doc).get_json()["valid"] is True
    # the heuristic bot beat a random player (the rules' ranks differ) in 12 of 12 games
    # measured: one game of the two is all this needs
    assert any(ranks != recorded[gid] for gid, ranks in rules.items())
    bad = copy.deepcopy(doc)
    for e in bad["events"]:
        if e["type"] == "GameRecorded":
            e["data"]["ranks"] = rules[e["data"]["id"]]
    verdict = client.post("/v1/replays/verify", json=svc.signer.sign(bad)).get_json()
    assert verdict["reason"] == "result_differs", verdict


def test_a_game_gone_from_the_store_scores_nothing_and_the_tournament_goes_on(client, svc):
    ids = [player(client, n)["id"] for n in ("Ada", "Bob", "Cy")]
    t = create(client, ids, rounds=1)
    [game] = t["rounds"][0]["games"]
    svc.store.delete_game(game["id"])
    svc.drop_caches()
    assert svc.tournaments.advance(t["id"]) == "finished"
    done = client.get(f"/v1/tournaments/{t['id']}").get_json()
    assert done["rounds"][0]["games"][0]["status"] == "aborted"
    assert {s["points"] for s in done["standings"]} == {0}


def sse_messages(client, url, headers=None):
    """Every SSE message of a stream until it closes: (event, id, data)."""
    import json

    r = client.get(url, headers=headers or {}, buffered=False)
    assert r.status_code == 200 and r.mimetype == "text/event-stream"
    text = b"".join(r.response).decode()
    out = []
    for block in text.split("\n\n"):
        fields = dict(line.split(": ", 1) for line in block.splitlines()
                      if line and not line.startswith(":"))
        if "event" in fields:
            out.append((fields["event"], fields.get("id"), json.loads(fields["data"])))
    return out


def test_the_live_stream_follows_the_tournament_to_its_end(client, svc):
    import threading

    ids = [player(client, n)["id"] for n in ("Ada", "Bob", "Cy")]
    t = create(client, ids, rounds=1)
    got = []
    reader = threading.Thread(target=lambda: got.extend(
        sse_messages(client, f"/v1/tournaments/{t['id']}/events/stream")))
    reader.start()
    end_round(svc, t)
    svc.tournaments.advance(t["id"])
    reader.join(10)
    assert not reader.is_alive()
    done = client.get(f"/v1/tournaments/{t['id']}").get_json()
    assert [(e, i) for e, i, _ in got] == [
        ("tournament_event", "1"), ("tournament_event", "2"), ("tournament_event", "3"),
        ("tournament_event", "4"), ("end", "4")]
    assert [d["type"] for _, _, d in got[:4]] == ["TournamentCreated", "RoundPaired",
                                                  "GameRecorded", "TournamentFinished"]
    assert got[2][2]["standings"] == got[-1][2]["standings"] == done["standings"]
    # resumed after version 2: the rest only
    again = sse_messages(client, f"/v1/tournaments/{t['id']}/events/stream",
                         {"Last-Event-ID": "2"})
    assert [(e, i) for e, i, _ in again] == [("tournament_event", "3"),
                                             ("tournament_event", "4"), ("end", "4")]
    # resumed at the end event's id (a browser reconnecting after it): nothing more, a 204
    for resume in ({"headers": {"Last-Event-ID": "4"}}, {"query_string": {"after": 9}}):
        r = client.get(f"/v1/tournaments/{t['id']}/events/stream", **resume)
        assert r.status_code == 204 and r.data == b"" and "Content-Type" not in r.headers
    r = client.get("/v1/tournaments/t-0000000000000000/events/stream")
    assert r.status_code == 404 and error(r)["code"] == "tournament_not_found"
    r = client.get(f"/v1/tournaments/{t['id']}/events/stream", headers={"Last-Event-ID": "x"})
    assert r.status_code == 400 and error(r)["code"] == "invalid_last_event_id"


def test_listings_page_the_running_and_the_finished_newest_first(redis_url):
    """``GET /v1/tournaments``' store: every status, running or finished, newest first, a page
    at a time, with the total of the status."""
    import redis

    store = TournamentStore(redis.Redis.from_url(redis_url))
    ids = [f"t-{i:016x}" for i in range(7)]
    for i, tid in enumerate(ids):
        created = {"type": "TournamentCreated", "data": {"n": i}}
        assert store.append(tid, 0, [created], max_events=5, max_running=100,
                            now_ms=1_000 + i, status="running") == "ok"
    for tid in ids[1], ids[3], ids[4]:
        assert store.append(tid, 1, [{"type": "TournamentFinished", "data": {}}],
                            max_events=5, status="finished", keep_s=60) == "ok"
    newest = ids[::-1]

    def page(status, offset, limit):
        found, total = store.listed(status, offset, limit)
        assert all(st == (status or st) for _, _, _, st in found)
        return [tid for tid, _, _, _ in found], total

    assert page(None, 0, 10) == (newest, 7)
    assert page(None, 2, 3) == (newest[2:5], 7)
    finished = [ids[4], ids[3], ids[1]]
    assert page("finished", 0, 2) == (finished[:2], 3)
    assert page("finished", 2, 2) == (finished[2:], 3)
    assert page("running", 0, 10) == ([ids[6], ids[5], ids[2], ids[0]], 4)
    assert page("running", 3, 10) == ([ids[0]], 4)
    created_ms = {tid: ms for tid, ms, _, _ in store.listed(None, 0, 10)[0]}
    assert created_ms == {tid: 1_000 + i for i, tid in enumerate(ids)}


def test_a_running_entry_without_a_tournament_leaves_the_index_after_a_minute(svc):
    """What a creation that died between its admission to the running index and its append
    leaves (on a cluster the two are separate steps): the sweep's ``advance`` removes it once
    it is a minute old, and leaves a younger one (a creation still on its way) alone."""
    from service.application.errors import NotFound
    from service.store.tournaments import RUNNING_KEY

    tournaments = svc.tournaments
    now = tournaments.now_ms()
    old, young = "t-00000000000000aa", "t-00000000000000bb"
    svc.store.r.zadd(RUNNING_KEY, {old: now - 61_000, young: now - 1_000})
    assert tournaments.advance(old) == "gone"
    with pytest.raises(NotFound):
        tournaments.advance(young)
    assert tournaments.running(10) == [young]
