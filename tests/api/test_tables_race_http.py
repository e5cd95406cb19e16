"""Tables under concurrent clients, through the real gunicorn (two processes): every racing
request is sent from its own thread and connection, released together by a barrier.

Whatever the races, a table starts exactly once with exactly its seats filled, and is never
half-started: its log has ``GameStarted`` if and only if its status is active or finished, and
every seat a join was granted is held by that joiner. (tests/api/test_tables.py covers the same
commands one at a time.)
"""

from __future__ import annotations

import threading
from collections import Counter

import pytest

from .helpers import Live, auth, error, event_types, join, player, table

ROUNDS = 20


@pytest.fixture(scope="module")
def live(live_url):
    return Live(live_url)


@pytest.fixture(scope="module")
def crowd(live):
    """32 players, and Ada who creates the tables."""
    return player(live, "Ada"), [player(live, f"P{i}") for i in range(32)]


def together(live: Live, *calls):
    """``call(client)`` for each call, each in its own thread on its own connection, all
    released at once; their answers, in order."""
    clients = [Live(live.url) for _ in calls]
    barrier = threading.Barrier(len(calls))
    answers: list = [None] * len(calls)

    def run(i):
        barrier.wait()
        answers[i] = calls[i](clients[i])

    threads = [threading.Thread(target=run, args=(i,)) for i in range(len(calls))]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    assert all(a is not None for a in answers), "a racing request did not come back"
    return answers


def joining(gid, who, **body):
    return lambda client: join(client, gid, who, **body)


def codes(answers) -> Counter:
    return Counter(a.status_code if a.status_code != 409 else error(a)["code"]
                   for a in answers)


def assert_whole(live: Live, gid: str, granted: list[tuple[dict, dict]]) -> dict:
    """The table is never half-started; every granted join ``(player, answer)`` holds its seat.
    Returns the view."""
    view = live.get(f"/v1/games/{gid}").get_json()
    kinds = event_types(live, gid)
    started = kinds.count("GameStarted")
    assert started <= 1, kinds
    assert (started == 1) == (view["status"] in ("active", "finished")), (view["status"], kinds)
    assert view["state"] is None if not started else view["state"] is not None
    if started:
        held = [p.get("player") or p["name"] for p in view["players"]]
        assert "open" not in [p["controller"] for p in view["players"]]
        assert len(set(held)) == len(held), held
        assert kinds[kinds.index("GameStarted") - 1] == "SeatJoined"  # the last join's event
    for who, answer in granted:
        assert view["players"][answer.get_json()["seat"]].get("player") == who["id"]
    return view


@pytest.mark.parametrize("seat_asked", [False, True], ids=["any-seat", "a-given-seat"])
@pytest.mark.parametrize("layout", ["creator-and-3-open", "4-open"])
def test_32_players_join_a_4_seat_table_at_once(live, crowd, layout, seat_asked):
    ada, players = crowd
    if layout == "4-open":  # no creator sits: created without any token
        seats, free = [{"open": True}] * 4, [0, 1, 2, 3]
        gid = table(live, None, seats)["id"]
    else:
        seats, free = [{"player": ada["id"]}] + [{"open": True}] * 3, [1, 2, 3]
        gid = table(live, ada, seats)["id"]
    calls = [joining(gid, p, **({"seat": free[k % len(free)]} if seat_asked else {}))
             for k, p in enumerate(players)]
    answers = together(live, *calls)
    granted = [(p, a) for p, a in zip(players, answers) if a.status_code == 201]
    tally = codes(answers)
    assert tally[201] == len(free), tally
    assert set(tally) <= {201, "game_full", "seat_taken"}, tally
    if not seat_asked:
        assert tally["game_full"] == 32 - len(free), tally
    assert sorted(a.get_json()["seat"] for _, a in granted) == free
    assert [a.get_json()["status"] for _, a in granted].count("active") == 1
    view = assert_whole(live, gid, granted)
    assert view["status"] == "active"
    kinds = event_types(live, gid)
    assert kinds.count("SeatJoined") == len(free) and kinds.count("GameStarted") == 1


def test_one_player_joining_twice_at_once_gets_one_seat(live, crowd):
    ada, players = crowd
    bob = players[0]
    gid = table(live, ada, [{"player": ada["id"]}, {"open": True}, {"open": True}])["id"]
    answers = together(live, *[joining(gid, bob)] * 8)
    assert codes(answers) == Counter({201: 1, "already_seated": 7})
    view = assert_whole(live, gid, [(bob, a) for a in answers if a.status_code == 201])
    assert view["status"] == "waiting" and view["players"][2]["controller"] == "open"


def test_a_reserved_seat_is_only_for_its_player(live, crowd):
    ada, (bob, *strangers) = crowd
    gid = table(live, ada, [{"player": ada["id"]}, {"player": bob["id"]}, {"open": True}])["id"]
    r = join(live, gid, strangers[0], seat=1)
    assert r.status_code == 409 and error(r)["code"] == "not_invited"
    answers = together(live, joining(gid, bob),
                       *[joining(gid, s, seat=1) for s in strangers[:8]])
    assert answers[0].status_code == 201 and answers[0].get_json()["seat"] == 1
    # before Bob's join lands a stranger is not invited, after it the seat is taken
    assert set(codes(answers[1:])) <= {"not_invited", "seat_taken"}, codes(answers[1:])
    assert_whole(live, gid, [(bob, answers[0])])


def test_acting_in_a_waiting_game_is_not_your_turn_yet(live, crowd):
    ada, _ = crowd
    created = table(live, ada, [{"player": ada["id"]}, {"open": True}], type_="tides-of-time")
    gid = created["id"]
    for token in (ada["token"], created["seats"][0]["token"]):  # player token, seat token
        r = live.post(f"/v1/games/{gid}/actions", headers=auth(token),
                      json={"action": {"type": "pick", "card": 1}})
        assert r.status_code == 409 and error(r)["code"] == "not_your_turn"
        assert error(r)["details"]["code"] == "game_not_started"


def _finished_duel(live, ada, bob) -> str:
    """A Tides of Time table Ada and Bob fill, ended at once by Ada's resignation (a forfeit
    ends a two-player game)."""
    gid = table(live, ada, [{"player": ada["id"]}, {"open": True}], type_="tides-of-time",
                options={"clock": {"per_decision_ms": 600_000, "timeout": "forfeit"}})["id"]
    assert join(live, gid, bob).status_code == 201
    assert live.post(f"/v1/games/{gid}/resign",
                     headers=auth(ada["token"])).get_json()["status"] == "finished"
    return gid


def test_a_rematch_asked_by_both_seats_at_once_is_one_game(live, crowd):
    ada, (bob, *_) = crowd

    def rematch(who):
        return lambda client: client.post(f"/v1/games/{gid}/rematch", headers=auth(who["token"]))

    for _ in range(ROUNDS):
        gid = _finished_duel(live, ada, bob)
        lobby = live.get("/v1/games?status=waiting").get_json()["total"]
        answers = together(live, rematch(ada), rematch(bob))
        assert sorted(a.status_code for a in answers) == [200, 201], [a.text for a in answers]
        ids = {a.get_json()["id"] for a in answers}
        assert len(ids) == 1, ids
        (new,) = ids
        assert live.get(f"/v1/games/{gid}").get_json()["rematch"] == new
        shown = live.get(f"/v1/games/{new}").get_json()
        assert shown["rematch_of"] == gid and shown["status"] == "waiting"
        waiting = live.get("/v1/games?status=waiting").get_json()
        assert waiting["total"] == lobby + 1 and waiting["games"][0]["id"] == new


def test_leave_racing_the_last_join_never_half_starts(live, crowd):
    ada, (bob, *others) = crowd
    outcomes: Counter = Counter()
    for cy in others[:ROUNDS]:
        gid = table(live, ada, [{"player": ada["id"]}, {"open": True}, {"open": True}])["id"]
        assert join(live, gid, bob).status_code == 201
        left, joined = together(
            live, lambda client: client.post(f"/v1/games/{gid}/leave",
                                             headers=auth(bob["token"])),
            joining(gid, cy))
        assert joined.status_code == 201
        view = assert_whole(live, gid, [(cy, joined)])
        if left.status_code == 200:  # Bob left first: Cy sits, one seat is open again
            assert view["status"] == "waiting"
            assert bob["id"] not in [p.get("player") for p in view["players"]]
        else:  # Cy's join started the game: too late to leave
            assert error(left)["code"] == "game_started" and view["status"] == "active"
        outcomes[view["status"]] += 1
    print(f"leave vs last join: {dict(outcomes)}")


@pytest.mark.parametrize("on_decline", ["open", "abort"])
def test_decline_racing_joins_never_half_starts(live, crowd, on_decline):
    """Bob, invited to the last seat, declines while he and a stranger both ask to join."""
    ada, (bob, *others) = crowd
    outcomes: Counter = Counter()
    for dan in others[:ROUNDS]:
        gid = table(live, ada, [{"player": ada["id"]}, {"player": bob["id"]}, {"name": "Cy"}],
                    options={"on_decline": on_decline})["id"]
        declined, bob_join, dan_join = together(
            live, lambda client: client.post(f"/v1/games/{gid}/decline",
                                             headers=auth(bob["token"])),
            joining(gid, bob), joining(gid, dan))
        granted = [(w, a) for w, a in ((bob, bob_join), (dan, dan_join)) if a.status_code == 201]
        view = assert_whole(live, gid, granted)
        assert len(granted) == (1 if view["status"] == "active" else 0), codes(
            [declined, bob_join, dan_join])
        if view["status"] == "aborted":
            assert on_decline == "abort" and declined.status_code == 200
            assert "GameStarted" not in event_types(live, gid)
        outcomes[(view["status"], granted[0][0]["name"] if granted else None)] += 1
    print(f"decline ({on_decline}) vs joins: {dict(outcomes)}")
