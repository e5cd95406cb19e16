"""Seeks over HTTP, in one process: opening, reading, listing, cancelling, every refusal, and
matching — compatible seeks into one active game with its players seated, incompatible ones
never, rating ranges respected, the player stream told, limits and expiry (an injected clock)."""

from __future__ import annotations

import pytest

from service.app import create_app
from service.application import NullScheduler
from service.config import Config
from tests.conftest import InjectedClock

from .helpers import auth
from .test_tables import error, player


def seek(client, who, type_="tides-of-time", seats=2, status=201, **body):
    r = client.post("/v1/seeks", json={"type": type_, "seats": seats, **body},
                    headers=auth(who["token"]))
    assert r.status_code == status, r.get_json()
    return r.get_json()


def kinds(svc, who) -> list[tuple[str, dict]]:
    return [(n.type, n.data) for n in svc.player_store.notices_after(who["id"], "0-0", 100)]


def test_open_read_list_and_cancel(client):
    ada, bob = player(client, "Ada"), player(client, "Bob")
    opened = seek(client, ada, options={"clock": {"per_decision_ms": 60_000}})
    assert opened["status"] == "waiting" and opened["game_id"] is None
    assert opened["seats"] == [2, 2] and opened["player"] == ada["id"]
    assert opened["options"] == {"rated": True, "clock": {"per_decision_ms": 60_000}}
    sid = opened["id"]
    assert client.get(f"/v1/seeks/{sid}").get_json() == opened
    other = seek(client, bob, type_="diamant", seats=[3, 5])
    listed = client.get("/v1/seeks").get_json()
    assert {s["id"] for s in listed["seeks"]} == {other["id"], sid} and listed["total"] == 2
    assert [s["id"] for s in client.get("/v1/seeks?type=diamant").get_json()["seeks"]] == \
        [other["id"]]
    me = client.get("/v1/players/me", headers=auth(ada["token"])).get_json()
    assert [s["id"] for s in me["seeks"]] == [sid]

    r = client.delete(f"/v1/seeks/{sid}", headers=auth(bob["token"]))
    assert r.status_code == 403 and error(r)["code"] == "not_your_seek"
    assert client.delete(f"/v1/seeks/{sid}").status_code == 401
    r = client.delete(f"/v1/seeks/{sid}", headers=auth(ada["token"]))
    assert r.status_code == 200 and r.get_json()["status"] == "cancelled"
    again = client.delete(f"/v1/seeks/{sid}", headers=auth(ada["token"]))
    assert again.status_code == 200 and again.get_json() == r.get_json()
    assert client.get(f"/v1/seeks/{sid}").get_json()["status"] == "cancelled"
    assert [s["id"] for s in client.get("/v1/seeks").get_json()["seeks"]] == [other["id"]]
    assert client.get("/v1/players/me", headers=auth(ada["token"])).get_json()["seeks"] == []
    for unknown in ("s-0000000000000000", "nonsense"):
        r = client.get(f"/v1/seeks/{unknown}")
        assert r.status_code == 404 and error(r)["code"] == "seek_not_found"


@pytest.mark.parametrize("body,status,code", [
    ({"type": "chess", "seats": 2}, 422, "unknown_game_type"),
    ({"type": "diamant", "seats": 2}, 422, "invalid_player_count"),
    ({"type": "diamant", "seats": [3, 9]}, 422, "invalid_player_count"),
    ({"type": "diamant", "seats": [5, 4]}, 422, "invalid_player_count"),
    ({"type": "papyrus", "seats": 1}, 422, "invalid_player_count"),  # a seek needs company
    ({"type": "tides-of-time", "seats": [2, 3]}, 422, "invalid_player_count"),
    # every count of the range must suit the options: no first player 3 in a 2-seat game
    ({"type": "papyrus", "seats": [2, 4], "options": {"first_player": 3}}, 422,
     "invalid_options"),
    ({"type": "scarabya", "seats": 3, "options": {"mode": "duel"}}, 422, "invalid_options"),
    ({"type": "diamant", "seats": 3, "options": {"colour": "red"}}, 422, "invalid_options"),
    ({"type": "diamant", "seats": 3, "options": {"clock": {"per_decision_ms": 5}}}, 422,
     "invalid_options"),
    ({"type": "diamant", "seats": 3, "options": {"rated": "yes"}}, 422, "invalid_options"),
    ({"type": "diamant", "seats": 3, "options": {"on_decline": "abort"}}, 422,
     "invalid_options"),
    ({"type": "diamant", "seats": 3, "rating_range": [5, -5]}, 422, "invalid_rating_range"),
    ({"type": "diamant", "seats": 3, "fill_with_bots": {"after_s": 600, "level": "random"}},
     422, "invalid_fill_with_bots"),
    # bots may fill it: Papyrus' turn_limit 0 (no cap) is for human tables only
    ({"type": "papyrus", "seats": 2, "options": {"turn_limit": 0},
      "fill_with_bots": {"after_s": 5, "level": "random"}}, 422, "invalid_options"),
    ({"type": "diamant", "seats": [3, 4, 5]}, 400, "invalid_request"),
    ({"type": "diamant", "seats": "3"}, 400, "invalid_request"),
    # a shape or a value the contract declares out of range: the README table's 422 and code
    ({"type": "diamant", "seats": 3, "rating_range": [1]}, 422, "invalid_rating_range"),
    ({"type": "diamant", "seats": 3, "fill_with_bots": {"after_s": 5, "level": "god"}}, 422,
     "bot_level_unavailable"),
    ({"type": "diamant", "seats": 3, "fill_with_bots": {"after_s": -1, "level": "random"}},
     422, "invalid_fill_with_bots"),
])
def test_every_refusal_at_opening(client, body, status, code):
    ada = player(client)
    r = client.post("/v1/seeks", json=body, headers=auth(ada["token"]))
    assert r.status_code == status and error(r)["code"] == code, r.get_json()
    assert client.get("/v1/seeks").get_json()["total"] == 0


def test_a_seek_needs_a_player_token(client):
    r = client.post("/v1/seeks", json={"type": "diamant", "seats": 3})
    assert r.status_code == 401 and error(r)["code"] == "invalid_token"
    created = client.post("/v1/games", json={"type": "diamant",
                                             "players": [{"name": "a"}] * 3}).get_json()
    r = client.post("/v1/seeks", json={"type": "diamant", "seats": 3},
                    headers=auth(created["seats"][0]["token"]))
    assert r.status_code == 401


def test_two_seeks_make_one_rated_active_game_and_the_streams_say_so(client, svc):
    ada, bob = player(client, "Ada"), player(client, "Bob")
    first = seek(client, ada)
    second = seek(client, bob)
    assert second["status"] == "matched" and second["game_id"]
    gid = second["game_id"]
    first = client.get(f"/v1/seeks/{first['id']}").get_json()
    assert first["status"] == "matched" and first["game_id"] == gid
    assert {first["seat"], second["seat"]} == {0, 1}
    view = client.get(f"/v1/games/{gid}", headers=auth(ada["token"])).get_json()
    assert view["status"] == "active" and view["options"]["rated"] is True
    assert view["you"] == first["seat"]
    holders = [p["player"] for p in view["players"]]
    assert holders[first["seat"]] == ada["id"] and holders[second["seat"]] == bob["id"]
    created = client.get(f"/v1/games/{gid}/events").get_json()["events"][0]
    seeks_by_seat = [None, None]
    seeks_by_seat[first["seat"]], seeks_by_seat[second["seat"]] = first["id"], second["id"]
    assert created["data"]["seeks"] == seeks_by_seat
    for who, mine in ((ada, first), (bob, second)):
        told = kinds(svc, who)
        assert told[0] == ("seek_matched", {"seek_id": mine["id"], "game_id": gid})
        assert ("game_start", {"game_id": gid, "seat": mine["seat"],
                               "type": "tides-of-time"}) in told
        me = client.get("/v1/players/me", headers=auth(who["token"])).get_json()
        assert me["seeks"] == [] and [g["id"] for g in me["games"]] == [gid]
    r = client.delete(f"/v1/seeks/{first['id']}", headers=auth(ada["token"]))
    assert r.status_code == 409 and error(r)["code"] == "seek_matched"
    assert error(r)["details"] == {"game_id": gid}
    # a seek of a player already matched is a new seek: it waits
    assert seek(client, ada)["status"] == "waiting"


def test_a_claim_that_finds_a_seek_cancelled_deletes_its_game(client, svc, monkeypatch):
    """Ada cancels between Bob's request creating their game and claiming the two seeks: the
    claim changes nothing, the game (never announced, never listed) is deleted and Bob's seek
    waits."""
    ada, bob = player(client, "Ada"), player(client, "Bob")
    hers = seek(client, ada)
    create = svc.seeks.games.create
    listed = []

    def create_then_cancel(*record):
        create(*record)
        listed.append(client.get("/v1/games?status=active").get_json()["total"])
        if svc.seeks.get(hers["id"]).status == "waiting":
            assert svc.seeks.cancel(hers["id"], ada["id"])["status"] == "cancelled"

    monkeypatch.setattr(svc.seeks.games, "create", create_then_cancel)
    assert seek(client, bob)["status"] == "waiting"
    assert listed == [0]  # not listed while its claim could still lose
    assert client.get(f"/v1/seeks/{hers['id']}").get_json()["status"] == "cancelled"
    assert client.get("/v1/games").get_json()["total"] == 0
    assert svc.store.r.keys("cartouche:{*}:meta") == []
    assert [n.type for n in svc.player_store.notices_after(bob["id"], "0-0", 10)] == []


def test_incompatible_seeks_are_never_matched(client):
    ada, bob = player(client, "Ada"), player(client, "Bob")
    seek(client, ada, type_="scarabya", seats=2)
    variants = [
        {"type_": "tides-of-time", "seats": 2},  # another game type
        {"type_": "scarabya", "seats": 2, "options": {"mode": "duel"}},
        {"type_": "scarabya", "seats": 2, "options": {"rated": False}},
        {"type_": "scarabya", "seats": 2, "options": {"clock": {"per_decision_ms": 30_000}}},
        {"type_": "scarabya", "seats": [3, 4]},  # no common seat count
    ]
    for body in variants:
        assert seek(client, bob, **body)["status"] == "waiting"
    assert seek(client, ada, type_="scarabya", seats=2)["status"] == "waiting"  # Ada again
    assert client.get("/v1/seeks").get_json()["total"] == 7
    # the same options written otherwise are the same options: Scarabya's 2-seat default
    # mode is "standard"
    matched = seek(client, bob, type_="scarabya", seats=2,
                   options={"mode": "standard", "rated": True})
    assert matched["status"] == "matched"


def test_seat_ranges_meet_at_the_largest_common_count(client):
    ada, bob, cy, dan = (player(client, n) for n in ("Ada", "Bob", "Cy", "Dan"))
    assert seek(client, ada, type_="pharaohs-wall", seats=[3, 4])["status"] == "waiting"
    assert seek(client, bob, type_="pharaohs-wall", seats=[2, 4])["status"] == "waiting"
    third = seek(client, cy, type_="pharaohs-wall", seats=[2, 3])
    assert third["status"] == "matched"
    view = client.get(f"/v1/games/{third['game_id']}").get_json()
    assert sorted(p["player"] for p in view["players"]) == sorted(
        [ada["id"], bob["id"], cy["id"]])
    assert seek(client, dan, type_="pharaohs-wall", seats=[2, 4])["status"] == "waiting"


def rate(svc, rating_type, who, mu, sigma):
    """Give a player a rating, as a rated game would: one ledger entry recorded by the store."""
    after = {"mu": mu, "sigma": sigma, "games": 1}
    update = {"game_id": f"g-{who['id']}", "players": [who["id"]], "ranks": [1],
              "before": [None], "after": [after]}
    svc.ratings.store.record(rating_type, update["game_id"], update, [None], [after])


def test_rating_ranges_are_respected_both_ways(client, svc):
    ada, bob, cy = player(client, "Ada"), player(client, "Bob"), player(client, "Cy")
    rate(svc, "tides-of-time", ada, 40.0, 3.0)  # ordinal 31; Bob and Cy: unrated, 0
    assert svc.ratings.ordinals("tides-of-time", [ada["id"], bob["id"]]) == [31.0, 0.0]
    strong = seek(client, ada, rating_range=[20, 50])  # Ada wants a strong opponent
    assert seek(client, bob)["status"] == "waiting"  # Ada's range refuses Bob
    assert seek(client, cy, rating_range=[35, 50])["status"] == "waiting"  # Cy's refuses Ada
    client.delete(f"/v1/seeks/{strong['id']}", headers=auth(ada["token"]))
    fine = seek(client, ada, rating_range=[-5, 5])
    assert fine["status"] == "matched"  # Bob (0) fits Ada's range, and Bob accepts anybody
    game = client.get(f"/v1/games/{fine['game_id']}").get_json()
    assert sorted(p["player"] for p in game["players"]) == sorted([ada["id"], bob["id"]])
    # the rating type is the game's: Ada's Scarabya rating is not her rating in the duel
    rate(svc, "scarabya", ada, 40.0, 3.0)
    seek(client, ada, type_="scarabya", options={"mode": "duel"})
    assert seek(client, bob, type_="scarabya", options={"mode": "duel"},
                rating_range=[-1, 1])["status"] == "matched"


def test_a_pool_clogged_with_older_seeks_nobody_accepts_still_matches(client, monkeypatch):
    """The pool is read a page at a time until a group fills: seven older seeks whose ranges
    nobody meets, pages of three, and the two seeks behind them still find each other."""
    from service.application import seeks as seeks_module

    monkeypatch.setattr(seeks_module, "CANDIDATES", 3)
    for i in range(7):
        assert seek(client, player(client, f"P{i}"), rating_range=[100, 200])["status"] == \
            "waiting"
    ada, bob = player(client, "Ada"), player(client, "Bob")
    assert seek(client, ada)["status"] == "waiting"
    matched = seek(client, bob)
    assert matched["status"] == "matched"
    game = client.get(f"/v1/games/{matched['game_id']}").get_json()
    assert sorted(p["player"] for p in game["players"]) == sorted([ada["id"], bob["id"]])


@pytest.fixture
def fake(redis_url):
    clock = InjectedClock()
    app = create_app(Config(redis_url=redis_url, seek_ttl_s=60, seeks_per_player=3,
                            seeks_max=5), scheduler=NullScheduler(), now_ms=clock)
    return app.test_client(), app.extensions["cartouche"], clock


def test_listings_are_newest_first_even_across_a_change_of_time_to_live(fake, redis_url):
    """The listings order seeks by when they opened: a server restarted with a shorter time
    to live makes a newer seek expire before an older one, and the listing of every type
    still shows the newer first; seeks of one millisecond come by id, descending."""
    client, _, clock = fake
    ada, bob, cy, dan = (player(client, n) for n in ("Ada", "Bob", "Cy", "Dan"))
    older = seek(client, ada, type_="diamant", seats=3)        # ttl 60 s
    clock.t += 1_000
    restarted = create_app(Config(redis_url=redis_url, seek_ttl_s=5, seeks_per_player=3,
                                  seeks_max=5), scheduler=NullScheduler(), now_ms=clock)
    again = restarted.test_client()
    newer = seek(again, bob, type_="diamant", seats=4)          # ttl 5 s: expires first
    assert newer["expires_at"] < older["expires_at"]
    clock.t += 1_000
    papyrus = seek(again, cy, type_="papyrus", seats=2)
    diamant = seek(again, dan, type_="diamant", seats=5)        # the same millisecond
    assert papyrus["created_at"] == diamant["created_at"]
    tied = sorted([papyrus["id"], diamant["id"]], reverse=True)

    def listed(c, query=""):
        return [x["id"] for x in c.get(f"/v1/seeks{query}").get_json()["seeks"]]

    everything = [*tied, newer["id"], older["id"]]
    for c in (client, again):
        assert listed(c) == everything
        assert listed(c, "?type=diamant") == [x for x in everything if x != papyrus["id"]]
        assert listed(c, "?offset=1&limit=2") == everything[1:3]
    for s_, who in ((newer, bob), (older, ada)):
        assert again.delete(f"/v1/seeks/{s_['id']}", headers=auth(who["token"])).status_code \
            == 200
    assert listed(client) == tied and client.get("/v1/seeks").get_json()["total"] == 2


def test_limits_per_player_and_in_all(fake):
    client, _, _ = fake
    ada, bob = player(client, "Ada"), player(client, "Bob")
    for _ in range(3):
        seek(client, ada, type_="diamant", seats=3)
    r = client.post("/v1/seeks", json={"type": "diamant", "seats": 3},
                    headers=auth(ada["token"]))
    assert r.status_code == 409 and error(r) == {
        "code": "too_many_seeks", "message": error(r)["message"], "details": {"max": 3}}
    seek(client, bob, type_="papyrus", seats=2)
    assert seek(client, bob, type_="papyrus", seats=3)["status"] == "waiting"
    r = client.post("/v1/seeks", json={"type": "papyrus", "seats": 4},
                    headers=auth(bob["token"]))
    assert r.status_code == 503 and error(r)["code"] == "seeks_full"
    assert int(r.headers["Retry-After"]) >= 1
    assert client.get("/v1/seeks").get_json()["total"] == 5


def test_expiry_ends_a_seek_and_an_expired_seek_is_never_matched(fake):
    client, svc, clock = fake
    ada, bob = player(client, "Ada"), player(client, "Bob")
    old = seek(client, ada)
    assert old["expires_at"] > old["created_at"]
    clock.t += 59_999
    assert not svc.seeks.expire(old["id"]) and svc.seeks.expiring(10) == []
    assert svc.seeks.untried(10) == []  # its request tried to match it
    clock.t += 1
    assert svc.seeks.expiring(10) == [old["id"]]
    assert seek(client, bob)["status"] == "waiting"  # Ada's seek is past its time
    assert svc.seeks.expire(old["id"]) and not svc.seeks.expire(old["id"])
    assert client.get(f"/v1/seeks/{old['id']}").get_json()["status"] == "expired"
    r = client.delete(f"/v1/seeks/{old['id']}", headers=auth(ada["token"]))
    assert r.status_code == 409 and error(r)["code"] == "seek_expired"
    assert client.get("/v1/seeks").get_json()["total"] == 1
    assert seek(client, ada)["status"] == "matched"  # with Bob's, still waiting


def test_a_seek_past_its_time_reads_expired_and_counts_no_more(fake):
    """Before its job or the sweep has run: a read answers it expired, and a new seek of its
    player, or on a full server, is not refused for it."""
    client, _, clock = fake
    ada, bob, cy, dan = (player(client, n) for n in ("Ada", "Bob", "Cy", "Dan"))
    ids = [seek(client, ada, type_="diamant", seats=3)["id"] for _ in range(3)]
    bobs = [seek(client, bob, type_="papyrus", seats=n)["id"] for n in (2, 3)]  # 5: full
    clock.t += 60_000
    # Ada holds 3 (her most), all past their time
    assert seek(client, ada, type_="diamant", seats=3)["status"] == "waiting"  # not 409
    seek(client, cy, type_="diamant", seats=4)
    seek(client, cy, type_="diamant", seats=5)  # 5 again, Bob's 2 past their time
    assert seek(client, dan, type_="papyrus", seats=4)["status"] == "waiting"  # not 503
    assert client.get(f"/v1/seeks/{bobs[0]}").get_json()["status"] == "expired"
    r = client.delete(f"/v1/seeks/{ids[1]}", headers=auth(ada["token"]))
    assert r.status_code == 409 and error(r)["code"] == "seek_expired"


def test_listings_leave_out_the_seeks_past_their_time(fake):
    """Before their job or the sweep has run, the listings of a type and of a player show
    none of the seeks past their time, and count none; the seeks read expired."""
    client, _, clock = fake
    ada, bob = player(client, "Ada"), player(client, "Bob")
    old = [seek(client, ada, type_="diamant", seats=3)["id"] for _ in range(2)]
    clock.t += 30_000
    new = seek(client, bob, type_="diamant", seats=4)["id"]
    clock.t += 30_000  # Ada's two are past their time, Bob's is not
    listed = client.get("/v1/seeks?type=diamant").get_json()
    assert [s["id"] for s in listed["seeks"]] == [new] and listed["total"] == 1
    assert client.get("/v1/players/me", headers=auth(ada["token"])).get_json()["seeks"] == []
    assert [s["id"] for s in client.get("/v1/players/me", headers=auth(bob["token"]))
            .get_json()["seeks"]] == [new]
    assert [client.get(f"/v1/seeks/{i}").get_json()["status"] for i in old] == ["expired"] * 2


def test_the_sweep_matches_what_a_dead_request_left(fake, monkeypatch):
    """Two requests die between writing their seeks and matching them: the seeks stay
    untried; the sweep leaves them to their requests for a while, then matches them."""
    from service.application.seeks import UNTRIED_GRACE_MS, Seeks
    from workers import jobs

    client, svc, clock = fake
    ada, bob = player(client, "Ada"), player(client, "Bob")

    def dies(self, seek_id):
        raise RuntimeError("the request died here")

    with monkeypatch.context() as patched:
        patched.setattr(Seeks, "_first_match", dies)
        for who in (ada, bob):
            r = client.post("/v1/seeks", json={"type": "tides-of-time", "seats": 2},
                            headers=auth(who["token"]))
            assert r.status_code == 500
    waiting = client.get("/v1/seeks").get_json()["seeks"]
    assert [s["status"] for s in waiting] == ["waiting", "waiting"]
    assert svc.seeks.untried(10) == []
    clock.t += UNTRIED_GRACE_MS
    assert len(svc.seeks.untried(10)) == 2
    jobs._service = svc
    try:
        jobs.sweep()
    finally:
        jobs._service = None
    after = [client.get(f"/v1/seeks/{s['id']}").get_json() for s in waiting]
    assert {s["status"] for s in after} == {"matched"}
    assert after[0]["game_id"] == after[1]["game_id"]
    assert svc.seeks.untried(10) == []
