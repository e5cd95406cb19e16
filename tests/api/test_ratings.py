"""Ratings: one OpenSkill update per finished rated game, recorded once on a ledger that
replays to the same numbers; leaderboards and profiles serve them."""

from __future__ import annotations

import hashlib
import threading

import pytest
from openskill.models import PlackettLuce

from service.app import create_app
from service.application.ratings import final_ranks, unrated, updated
from service.config import Config

from .helpers import auth, error, join, player, table

#: The in-process API's databases are ones no worker reads, so the tests that run the rating job
#: themselves (``svc.rate``) are not beaten to it by the session's RQ worker (``worker``).
pytestmark = pytest.mark.unswept


@pytest.fixture
def app(redis_url, queue_url):
    return create_app(Config(redis_url=redis_url, queue_url=queue_url, snapshot_every=10))


def play_out(client, gid, tokens, pick=lambda legal: legal[0]):
    """Every awaited seat plays ``pick`` of its legal actions until the game ends."""
    for _ in range(5000):
        view = client.get(f"/v1/games/{gid}").get_json()
        if view["status"] != "active":
            return view
        seat = view["awaiting"][0]["seat"]
        legal = client.get(f"/v1/games/{gid}/legal-actions",
                           headers=auth(tokens[seat])).get_json()["actions"]
        r = client.post(f"/v1/games/{gid}/actions", headers=auth(tokens[seat]),
                        json={"action": pick(legal)})
        assert r.status_code == 201, r.get_json()
    raise AssertionError("the game did not end")


def rated_game(client, players, type_="tides-of-time", options=None):
    """A table of ``players`` (the first creates it), joined by the others, played out."""
    host = players[0]
    gid = table(client, host, [{"player": host["id"]}] + [{"open": True}] * (len(players) - 1),
                type_=type_, options=options)["id"]
    for who in players[1:]:
        assert join(client, gid, who).status_code == 201
    return gid, play_out(client, gid, [p["token"] for p in players])


def test_the_update_is_openskill_plackett_luce_with_ties():
    model = PlackettLuce()
    before = [unrated(), unrated(), {"mu": 30.0, "sigma": 5.0, "games": 7}]
    after = updated(before, [1, 2, 2])
    want = model.rate([[model.rating()], [model.rating()], [model.rating(mu=30.0, sigma=5.0)]],
                      ranks=[1, 2, 2])
    assert [(a["mu"], a["sigma"]) for a in after] == [(t[0].mu, t[0].sigma) for t in want]
    assert [a["games"] for a in after] == [1, 1, 8]
    tied = updated([unrated()] * 3, [1, 2, 2])  # equal priors, shared rank: equal ratings
    assert tied[1] == tied[2] and tied[0]["mu"] > tied[1]["mu"]


def test_a_rated_table_is_rated_once_and_the_ledger_replays(client, svc):
    ada, bob = player(client, "Ada"), player(client, "Bob")
    gid, view = rated_game(client, [ada, bob])
    assert view["options"]["rated"] is True
    first = svc.rate(gid)
    assert first is not None and first["players"] == [ada["id"], bob["id"]]
    assert svc.rate(gid) is None  # a duplicated job changes nothing
    winner = view["result"]["winners"]
    profile = client.get(f"/v1/players/{ada['id']}").get_json()
    stats = profile["stats"]["tides-of-time"]
    assert stats["games"] == 1 and stats["wins"] == (1 if 0 in winner else 0)
    assert stats["rating"]["mu"] == first["after"][0]["mu"]
    assert stats["rating"]["ordinal"] == pytest.approx(
        first["after"][0]["mu"] - 3 * first["after"][0]["sigma"])
    board = client.get("/v1/leaderboards/tides-of-time").get_json()
    assert board["players"] == [] and board["min_games"] == 5
    assert {p["id"] for p in board["provisional"]} == {ada["id"], bob["id"]}
    rebuilt = svc.ratings.rebuild("tides-of-time")
    assert rebuilt[ada["id"]] == first["after"][0] and rebuilt[bob["id"]] == first["after"][1]
    notices = svc.player_store.notices_after(ada["id"], "0-0", 100)
    assert [n.type for n in notices][-1] == "rating"
    assert notices[-1].data["game_id"] == gid


def test_concurrent_rating_jobs_record_one_update(client, svc):
    ada, bob = player(client, "Ada"), player(client, "Bob")
    gid, _ = rated_game(client, [ada, bob])
    results = []
    threads = [threading.Thread(target=lambda: results.append(svc.rate(gid)))
               for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sum(r is not None for r in results) == 1
    assert len(svc.ratings.store.updates("tides-of-time")) == 1


def test_many_games_replay_bit_for_bit_and_leave_the_provisional_list(client, svc):
    players = [player(client, f"P{i}") for i in range(3)]
    for i in range(6):
        trio = players[i % 3:] + players[:i % 3]
        gid, _ = rated_game(client, trio[:2])
        assert svc.rate(gid) is not None
    rebuilt = svc.ratings.rebuild("tides-of-time")
    for p in players:
        served = client.get(f"/v1/players/{p['id']}").get_json()["stats"]["tides-of-time"]
        assert served["rating"]["mu"] == rebuilt[p["id"]]["mu"]
        assert served["rating"]["sigma"] == rebuilt[p["id"]]["sigma"]
    board = client.get("/v1/leaderboards/tides-of-time?limit=10").get_json()
    listed = board["players"] + board["provisional"]
    assert {p["id"] for p in listed} == {p["id"] for p in players}
    assert all(p["games"] >= 5 for p in board["players"])
    ordinals = [p["ordinal"] for p in board["players"]]
    assert ordinals == sorted(ordinals, reverse=True)
    assert [p["rank"] for p in board["players"]] == list(range(1, len(board["players"]) + 1))


def test_the_provisional_list_pages_on_its_own(client, svc):
    """``provisional_offset`` pages the provisional players as ``offset`` pages the others:
    every one of them is reachable, ranked in one order across the pages."""
    players = [player(client, f"Q{i}") for i in range(6)]
    for i in range(0, 6, 2):
        gid, _ = rated_game(client, players[i:i + 2])
        assert svc.rate(gid) is not None
    pages = [client.get(f"/v1/leaderboards/tides-of-time?limit=2&provisional_offset={at}")
             .get_json() for at in (0, 2, 4, 6)]
    rows = [row for page in pages for row in page["provisional"]]
    assert [len(page["provisional"]) for page in pages] == [2, 2, 2, 0]
    assert {r["id"] for r in rows} == {p["id"] for p in players}
    assert [r["rank"] for r in rows] == [1, 2, 3, 4, 5, 6]
    assert [(r["ordinal"], r["id"]) for r in rows] == sorted(
        ((r["ordinal"], r["id"]) for r in rows), reverse=True)
    assert all(page["provisional_total"] == 6 and page["players"] == [] for page in pages)
    r = client.get("/v1/leaderboards/tides-of-time?provisional_offset=-1")
    assert r.status_code == 400


def test_games_that_are_not_rated(client, svc):
    ada = player(client, "Ada")
    # a plain creation is unrated by default
    r = client.post("/v1/games", headers=auth(ada["token"]), json={
        "type": "tides-of-time", "players": [{"player": ada["id"]}, {"name": "Anon"}]})
    gid = r.get_json()["id"]
    play_out(client, gid, [ada["token"], r.get_json()["seats"][1]["token"]])
    assert svc.rate(gid) is None
    # rated, but a seat without a player
    gid = table(client, ada, [{"player": ada["id"]}, {"open": True}],
                type_="tides-of-time")["id"]
    token = join(client, gid, None, name="Guest").get_json()["token"]
    play_out(client, gid, [ada["token"], token])
    assert svc.rate(gid) is None
    # one player in two seats
    r = client.post("/v1/games", headers=auth(ada["token"]), json={
        "type": "tides-of-time", "options": {"rated": True},
        "players": [{"player": ada["id"]}, {"player": ada["id"]}]})
    play_out(client, r.get_json()["id"], [ada["token"]] * 2)
    assert svc.rate(r.get_json()["id"]) is None
    # solo games are never rated
    r = client.post("/v1/games", json={"type": "scarabya", "options": {"rated": True},
                                       "players": [{"name": "Solo"}]})
    assert r.status_code == 422 and error(r)["details"]["option"] == "rated"
    # a solo table (an open or a reserved seat) is not rated by default, as tables are
    for seat in ({"open": True}, {"player": ada["id"]}):
        solo = table(client, ada, [seat], type_="scarabya")
        assert client.get(f"/v1/games/{solo['id']}").get_json()["status"] in (
            "waiting", "active")  # its creator's own reserved seat starts it
        created = client.get(f"/v1/games/{solo['id']}/events").get_json()["events"][0]
        assert "rated" not in created["data"]
    assert svc.ratings.store.updates("tides-of-time") == []


def test_resigned_seats_rank_last(client, svc):
    players = [player(client, f"P{i}") for i in range(3)]
    gid = table(client, players[0], [{"player": players[0]["id"]}, {"open": True},
                                     {"open": True}], type_="diamant")["id"]
    for who in players[1:]:
        join(client, gid, who)
    r = client.post(f"/v1/games/{gid}/resign", headers=auth(players[0]["token"]))
    assert r.status_code == 200
    view = client.get(f"/v1/games/{gid}").get_json()
    # the resigned seat is played by a bot from now on: finish with the other two
    tokens = [None, players[1]["token"], players[2]["token"]]
    while view["status"] == "active":
        humans = [a["seat"] for a in view["awaiting"] if a["seat"] != 0]
        if not humans:  # only the bot is awaited: play it through the service
            svc.play_bot(gid, 0, view["version"])
        else:
            seat = humans[0]
            client.post(f"/v1/games/{gid}/actions", headers=auth(tokens[seat]),
                        json={"action": {"type": "decide", "choice": "return"}})
        view = client.get(f"/v1/games/{gid}").get_json()
    table_ = svc.load(gid)
    ranks = final_ranks(table_)
    assert ranks[0] == max(ranks) and ranks[0] > max(ranks[1:])
    assert svc.rate(gid)["ranks"] == ranks


def test_the_scarabya_duel_is_rated_apart(client, svc):
    ada, bob = player(client, "Ada"), player(client, "Bob")
    gid, _ = rated_game(client, [ada, bob], type_="scarabya",
                        options={"mode": "duel", "duel_games": 1})
    assert svc.rate(gid) is not None
    assert len(svc.ratings.store.updates("scarabya-duel")) == 1
    assert svc.ratings.store.updates("scarabya") == []
    stats = client.get(f"/v1/players/{ada['id']}").get_json()["stats"]
    assert "scarabya-duel" in stats and stats["scarabya-duel"]["rating"] is not None
    assert error(client.get("/v1/leaderboards/chess"))["code"] == "unknown_rating_type"


def test_the_worker_rates_a_finished_game(live_url, worker):
    import time

    import requests

    def post(path, body, token=None):
        return requests.post(live_url + path, json=body, headers=auth(token), timeout=10)

    ada = post("/v1/players", {"name": "Ada"}).json()
    created = post("/v1/games", {"type": "diamant", "players": [
        {"player": ada["id"]}, {"player": "bot-random"}, {"player": "bot-heuristic"}],
        "options": {"rated": True}}, ada["token"]).json()
    gid = created["id"]
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        view = requests.get(f"{live_url}/v1/games/{gid}", headers=auth(ada["token"]),
                            timeout=10).json()
        if view["status"] != "active":
            break
        if any(a["seat"] == 0 for a in view["awaiting"]):
            post(f"/v1/games/{gid}/actions", {"action": {"type": "decide", "choice": "return"}},
                 ada["token"])
        time.sleep(0.05)
    assert view["status"] == "finished"
    while time.monotonic() < deadline:
        stats = requests.get(f"{live_url}/v1/players/bot-heuristic", timeout=10).json()["stats"]
        if stats.get("diamant", {}).get("rating"):
            break
        time.sleep(0.2)
    assert stats["diamant"]["rating"]["games"] >= 1
    me = requests.get(f"{live_url}/v1/players/{ada['id']}", timeout=10).json()
    assert me["stats"]["diamant"]["rating"]["games"] == 1


def test_a_deal_somebody_fixed_is_never_rated(client, redis_url, queue_url):
    """A supplied seed or an ``options.setup`` tells its author every hidden card (and the
    bots' draws, keyed by the seed): such a game is not rated, by default, and asking for it is
    a 422; a seek cannot fix its deal at all, and a rated tournament neither."""
    ada = client.post("/v1/players", json={"name": "Ada"}).get_json()
    bob = client.post("/v1/players", json={"name": "Bob"}).get_json()
    seats = [{"player": ada["id"]}, {"player": "bot-mcts"}]
    deck = {"setup": {"deck_order": list(range(1, 19))}}
    for fixed in ({"seed": "ab" * 32}, {"options": deck}):
        body = {"type": "tides-of-time", "players": seats, **fixed}
        made = client.post("/v1/games", json=body, headers=auth(ada["token"]))
        assert made.status_code == 201, made.get_json()
        view = client.get(f"/v1/games/{made.get_json()['id']}").get_json()
        assert not view["options"].get("rated"), view["options"]
        asked = client.post("/v1/games", headers=auth(ada["token"]), json={
            **body, "options": {**body.get("options", {}), "rated": True}})
        assert asked.status_code == 422, asked.get_json()
        assert asked.get_json()["error"]["details"] == {"code": "invalid_option",
                                                        "option": "rated"}
    drawn = client.post("/v1/games", headers=auth(ada["token"]), json={
        "type": "tides-of-time", "players": seats, "options": {"rated": True}})
    assert client.get(f"/v1/games/{drawn.get_json()['id']}").get_json()["options"]["rated"]
    table = client.post("/v1/games", headers=auth(ada["token"]), json={  # rated by default
        "type": "tides-of-time", "seed": "ab" * 32, "players": [{"player": ada["id"]},
                                                               {"open": True}]})
    assert not client.get(f"/v1/games/{table.get_json()['id']}").get_json()["options"].get(
        "rated")
    seek = client.post("/v1/seeks", headers=auth(bob["token"]), json={
        "type": "tides-of-time", "seats": 2, "options": {**deck, "rated": False}})
    assert seek.status_code == 422 and seek.get_json()["error"]["details"]["option"] == "setup"
    platform = create_app(Config(redis_url=redis_url, queue_url=queue_url,
                                 platform_key_digests=(hashlib.sha256(b"pk").hexdigest(),)))
    cup = platform.test_client().post("/v1/tournaments", headers=auth("pk"), json={
        "name": "Cup", "type": "tides-of-time", "format": "round_robin", "seats_per_game": 2,
        "participants": [ada["id"], bob["id"]], "rated": True, "options": deck})
    assert cup.status_code == 422 and cup.get_json()["error"]["details"]["option"] == "rated"
    assert "platform key" not in cup.get_json()["error"]["message"]  # the deal's rule


def test_a_game_cut_short_is_never_rated(client):
    """Papyrus with a turn limit of 1 ends 0-0 after one move: rated against bot-mcts, such
    ties would climb the leaderboard. A turn limit under the default, fewer God
    cards or a map of the creator's make a game that is not rated: by default at a table, a
    422 when asked; the catalog's schema says so too."""
    ada = client.post("/v1/players", json={"name": "Ada"}).get_json()
    seats = [{"player": ada["id"]}, {"player": "bot-mcts"}]
    for short in ({"turn_limit": 1}, {"god_deck_size": 30}):
        asked = client.post("/v1/games", headers=auth(ada["token"]), json={
            "type": "papyrus", "players": seats, "options": {**short, "rated": True}})
        assert asked.status_code == 422, asked.get_json()
        assert asked.get_json()["error"]["details"]["option"] == "rated"
        table = client.post("/v1/games", headers=auth(ada["token"]), json={
            "type": "papyrus", "players": [{"player": ada["id"]}, {"open": True}],
            "options": short})
        assert table.status_code == 201, table.get_json()
        assert not client.get(f"/v1/games/{table.get_json()['id']}").get_json()[
            "options"].get("rated")
    for full in ({}, {"turn_limit": 0}, {"turn_limit": 5000}, {"first_player": 1}):
        players = seats if full.get("turn_limit") != 0 else [{"player": ada["id"]},
                                                              {"open": True}]
        made = client.post("/v1/games", headers=auth(ada["token"]), json={
            "type": "papyrus", "players": players, "options": {**full, "rated": True}})
        assert made.status_code == 201, (full, made.get_json())
    catalog = client.get("/v1/game-types").get_json()
    schema = next(g for g in catalog["game_types"] if g["id"] == "papyrus")["options"]
    from jsonschema import Draft202012Validator

    assert not Draft202012Validator(schema).is_valid({"turn_limit": 1, "rated": True})
    assert Draft202012Validator(schema).is_valid({"turn_limit": 1, "rated": False})
