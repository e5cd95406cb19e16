"""Players and tables over HTTP: open and reserved seats, join / leave / decline, the lobby,
starting exactly once, rematches, and exports of tables that verify."""

from __future__ import annotations

import pytest

from service.replay import verify

from .helpers import auth, draw_prefixed_tokens_first, error, join, player, table


def test_player_create_show_me(client):
    ada = player(client)
    assert ada["id"].startswith("p-") and ada["token"].startswith("cp_")
    shown = client.get(f"/v1/players/{ada['id']}").get_json()
    assert shown["name"] == "Ada" and shown["kind"] == "human" and "token" not in shown
    me = client.get("/v1/players/me", headers=auth(ada["token"])).get_json()
    assert me["id"] == ada["id"] and me["games"] == [] and me["seeks"] == []
    assert client.get("/v1/players/me").status_code == 401
    assert client.get("/v1/players/me", headers=auth("cp_nobody")).status_code == 401
    assert error(client.get("/v1/players/p-0000000000000000"))["code"] == "player_not_found"
    bot = client.get("/v1/players/bot-mcts").get_json()
    assert bot["kind"] == "bot"


def test_player_tokens_are_stored_hashed(client, svc):
    ada = player(client)
    stored = b"".join(k + b"".join(svc.store.r.dump(k) or b"" for _ in [0])
                      for k in svc.store.r.keys("*"))
    assert ada["token"].encode() not in stored
    assert ada["token"][3:].encode() not in stored


def test_open_table_fills_and_starts_once(client):
    ada, bob, cy = player(client, "Ada"), player(client, "Bob"), player(client, "Cy")
    created = table(client, ada, [{"player": ada["id"]}, {"open": True}, {"open": True}])
    gid = created["id"]
    assert created["seats"][0]["token"] and created["seats"][1]["token"] is None
    view = client.get(f"/v1/games/{gid}").get_json()
    assert view["status"] == "waiting" and view["state"] is None and view["awaiting"] == []
    assert [p["controller"] for p in view["players"]] == ["human", "open", "open"]
    lobby = client.get("/v1/games?status=waiting").get_json()["games"]
    assert [g["id"] for g in lobby] == [gid] and lobby[0]["open_seats"] == 2
    assert lobby[0]["options"] == {"rated": True}  # Diamant has no options of its own

    # a joiner browsing the lobby sees a table's clock and whether it is rated (a 100 ms
    # forfeit clock is a trap for whoever joins without seeing it)
    trap = table(client, ada, [{"open": True}, {"player": ada["id"]}], type_="pharaohs-wall",
                 options={"clock": {"per_decision_ms": 100, "timeout": "forfeit"}})
    shown = next(g for g in client.get("/v1/games?status=waiting").get_json()["games"]
                 if g["id"] == trap["id"])["options"]
    assert shown["rated"] is True and shown["clock"]["per_decision_ms"] == 100
    assert shown["clock"] == client.get(f"/v1/games/{trap['id']}").get_json()["options"]["clock"]
    client.post(f"/v1/games/{trap['id']}/leave", headers=auth(ada["token"]))

    # acting before the start: not_your_turn / game_not_started
    r = client.post(f"/v1/games/{gid}/actions", headers=auth(ada["token"]),
                    json={"action": {"type": "decide", "choice": "continue"}})
    assert r.status_code == 409 and error(r)["details"]["code"] == "game_not_started"

    r = join(client, gid, bob)
    assert r.status_code == 201 and r.get_json()["seat"] == 1
    assert r.get_json()["status"] == "waiting"
    r = join(client, gid, bob)
    assert r.status_code == 409 and error(r)["code"] == "already_seated"
    r = join(client, gid, cy, seat=1)
    assert r.status_code == 409 and error(r)["code"] == "seat_taken"
    r = join(client, gid, cy)
    assert r.status_code == 201 and r.get_json()["status"] == "active"
    r = join(client, gid, None, name="Late")
    assert r.status_code == 409 and error(r)["code"] == "game_full"

    view = client.get(f"/v1/games/{gid}", headers=auth(cy["token"])).get_json()
    assert view["status"] == "active" and view["you"] == 2
    assert [p["name"] for p in view["players"]] == ["Ada", "Bob", "Cy"]
    assert [p.get("player") for p in view["players"]] == [ada["id"], bob["id"], cy["id"]]
    events = client.get(f"/v1/games/{gid}/events").get_json()["events"]
    kinds = [e["type"] for e in events]
    assert kinds.count("GameStarted") == 1 and kinds[:4] == [
        "GameCreated", "SeatJoined", "SeatJoined", "GameStarted"]
    assert client.get("/v1/games?status=waiting").get_json()["games"] == []


@pytest.mark.unswept  # a resigned seat's bot stays unplayed: no worker takes its job
def test_player_token_plays_every_seat_it_holds(client):
    ada, bob = player(client, "Ada"), player(client, "Bob")
    gid = table(client, ada, [{"player": ada["id"]}, {"player": ada["id"]},
                              {"open": True}])["id"]
    assert join(client, gid, bob).status_code == 201
    acted = []
    for who in (ada, ada, bob):  # Diamant: everybody decides; Ada's token decides twice
        r = client.post(f"/v1/games/{gid}/actions", headers=auth(who["token"]),
                        json={"action": {"type": "decide", "choice": "continue"}})
        assert r.status_code == 201, r.get_json()
        acted.append(r.get_json()["events"][0]["seat"])
    assert acted[:2] == [0, 1]
    # Ada resigns the seat awaited first; her token then acts for the seat she still plays
    assert client.post(f"/v1/games/{gid}/resign", headers=auth(ada["token"])).status_code == 200
    view = client.get(f"/v1/games/{gid}", headers=auth(ada["token"])).get_json()
    assert [p["controller"] for p in view["players"]] == ["bot", "human", "human"]
    assert [a["seat"] for a in view["awaiting"]] == [0, 1, 2] and view["you"] == 1
    listed = client.get(f"/v1/games/{gid}/legal-actions", headers=auth(ada["token"])).get_json()
    assert listed["seat"] == 1 and listed["actions"]
    r = client.post(f"/v1/games/{gid}/actions", headers=auth(ada["token"]),
                    json={"action": listed["actions"][0]})
    assert r.status_code == 201 and r.get_json()["events"][0]["seat"] == 1
    # a player holding no seat is a spectator: may look, may not act
    cy = player(client, "Cy")
    assert client.get(f"/v1/games/{gid}", headers=auth(cy["token"])).get_json()["you"] is None
    r = client.post(f"/v1/games/{gid}/actions", headers=auth(cy["token"]),
                    json={"action": {"type": "decide", "choice": "continue"}})
    assert r.status_code == 403


def test_invitations_reserved_seats_and_decline(client):
    ada, bob, cy = player(client, "Ada"), player(client, "Bob"), player(client, "Cy")
    gid = table(client, ada, [{"player": ada["id"]}, {"player": bob["id"]},
                              {"name": "Host"}])["id"]
    view = client.get(f"/v1/games/{gid}").get_json()
    assert view["players"][1]["invited"] == bob["id"]
    r = join(client, gid, cy)
    assert r.status_code == 409 and error(r)["code"] == "not_invited"
    r = join(client, gid, None, name="Anon", seat=1)
    assert r.status_code == 409 and error(r)["code"] == "not_invited"
    r = client.post(f"/v1/games/{gid}/decline", headers=auth(cy["token"]))
    assert r.status_code == 409 and error(r)["code"] == "not_invited"
    r = client.post(f"/v1/games/{gid}/decline", headers=auth(bob["token"]))
    assert r.status_code == 200 and r.get_json()["players"][1]["controller"] == "open"
    r = join(client, gid, cy)
    assert r.status_code == 201 and r.get_json()["status"] == "active"


def test_a_declined_seat_stays_open_when_its_next_holder_leaves(client):
    """Bob declines his seat; Cy takes it and leaves: the seat is open for anyone (Dan), not
    reserved for Bob again. A seat its invited player leaves is reserved for it again."""
    ada, bob, cy, dan = (player(client, n) for n in ("Ada", "Bob", "Cy", "Dan"))
    gid = table(client, ada, [{"player": ada["id"]}, {"player": bob["id"]},
                              {"player": cy["id"]}, {"open": True}])["id"]
    assert join(client, gid, cy).status_code == 201
    r = client.post(f"/v1/games/{gid}/leave", headers=auth(cy["token"]))
    assert r.get_json()["players"][2].get("invited") == cy["id"]  # Cy's own: reserved again
    assert client.post(f"/v1/games/{gid}/decline", headers=auth(bob["token"])).status_code == 200
    assert join(client, gid, dan, seat=1).status_code == 201
    r = client.post(f"/v1/games/{gid}/leave", headers=auth(dan["token"]))
    seat = r.get_json()["players"][1]
    assert seat["controller"] == "open" and "invited" not in seat
    r = join(client, gid, None, name="Anon", seat=1)
    assert r.status_code == 201
    for token in (r.get_json()["token"], ada["token"]):  # the table empties: aborted
        r = client.post(f"/v1/games/{gid}/leave", headers=auth(token))
    assert r.get_json()["status"] == "aborted"
    assert verify(client.get(f"/v1/games/{gid}/export").get_json())["valid"]


def test_decline_can_abort_the_table(client):
    ada, bob = player(client, "Ada"), player(client, "Bob")
    gid = table(client, ada, [{"player": ada["id"]}, {"player": bob["id"]},
                              {"name": "Host"}], options={"on_decline": "abort"})["id"]
    r = client.post(f"/v1/games/{gid}/decline", headers=auth(bob["token"]))
    assert r.get_json()["status"] == "aborted"
    assert error(join(client, gid, bob))["code"] == "game_aborted"
    exported = client.get(f"/v1/games/{gid}/export").get_json()
    assert verify(exported)["valid"]


def test_leave_frees_the_seat_and_an_empty_table_ends(client):
    ada, bob = player(client, "Ada"), player(client, "Bob")
    gid = table(client, ada, [{"player": ada["id"]}, {"open": True}, {"open": True}])["id"]
    assert join(client, gid, bob).status_code == 201
    r = client.post(f"/v1/games/{gid}/leave", headers=auth(bob["token"]))
    assert r.status_code == 200 and r.get_json()["players"][1]["controller"] == "open"
    r = client.post(f"/v1/games/{gid}/leave", headers=auth(bob["token"]))
    assert r.status_code == 409 and error(r)["code"] == "not_seated"
    r = client.post(f"/v1/games/{gid}/leave", headers=auth(ada["token"]))
    assert r.get_json()["status"] == "aborted"
    assert verify(client.get(f"/v1/games/{gid}/export").get_json())["valid"]


def test_leave_after_start_is_refused(client):
    ada, bob = player(client, "Ada"), player(client, "Bob")
    gid = table(client, ada, [{"player": ada["id"]}, {"name": "Host"}, {"open": True}])["id"]
    join(client, gid, bob)
    r = client.post(f"/v1/games/{gid}/leave", headers=auth(bob["token"]))
    assert r.status_code == 409 and error(r)["code"] == "game_started"


def test_anonymous_join_gets_a_seat_token(client):
    gid = table(client, None, [{"name": "Host"}, {"name": "Two"}, {"open": True}])["id"]
    r = join(client, gid, None, name="Guest")
    assert r.status_code == 201
    token = r.get_json()["token"]
    view = client.get(f"/v1/games/{gid}", headers=auth(token)).get_json()
    assert view["you"] == 2 and view["players"][2]["name"] == "Guest"
    r = join(client, gid, None)  # no token, no name
    assert r.status_code == 422 and error(r)["code"] == "name_required"


def test_a_joiners_seat_token_never_reads_as_a_player_token(client, monkeypatch):
    # as a created game's (tests/api/test_games_api.py): one random token in 64**3 would start
    # with the player tokens' prefix
    gid = table(client, None, [{"name": "Host"}, {"name": "Two"}, {"open": True}])["id"]
    draw_prefixed_tokens_first(monkeypatch, 1)
    token = join(client, gid, None, name="Guest").get_json()["token"]
    r = client.get(f"/v1/games/{gid}", headers=auth(token))
    assert r.status_code == 200 and r.get_json()["you"] == 2, r.get_json()


def test_bot_players_fill_seats_at_creation(client):
    ada = player(client)
    created = table(client, ada, [{"player": ada["id"]}, {"player": "bot-random"},
                                  {"player": "bot-random"}])
    view = client.get(f"/v1/games/{created['id']}").get_json()
    assert view["status"] == "active"
    assert view["players"][1]["controller"] == "bot"
    assert view["players"][1]["player"] == "bot-random"


def test_a_player_who_seats_a_bot_player_gets_no_token_to_see_its_cards(client):
    """A rated table of Ada and bot-mcts: the answer shows Ada's own seat token only, so no
    token shows her the bot's hand (a rematch's answer is made by the same code). Anonymous
    bot seats keep theirs: the creator's own game, to watch with."""
    ada = player(client)
    created = table(client, ada, [{"player": ada["id"]}, {"player": "bot-mcts"}],
                    type_="tides-of-time", options={"rated": True})
    gid = created["id"]
    assert [s["token"] is not None for s in created["seats"]] == [True, False]
    view = client.get(f"/v1/games/{gid}", headers=auth(ada["token"])).get_json()
    assert view["options"]["rated"] is True and view["you"] == 0
    assert [p["hand"] is None for p in view["state"]["seats"]] == [False, True]
    anonymous = client.post("/v1/games", json={"type": "tides-of-time", "players": [
        {"name": "me"}, {"name": "R", "bot": {"level": "random"}}]}).get_json()
    assert all(s["token"] for s in anonymous["seats"])


@pytest.mark.parametrize("game_type,n", [("diamant", 3), ("tides-of-time", 2),
                                         ("scarabya", 2), ("pharaohs-wall", 2),
                                         ("papyrus", 2)])
def test_a_finished_table_exports_and_verifies(client, game_type, n):
    from service.games import GAMES

    players = [player(client, f"P{i}") for i in range(n)]
    options = {"turn_limit": 6} if game_type == "papyrus" else {}
    gid = table(client, players[0], [{"player": players[0]["id"]}] +
                [{"open": True}] * (n - 1), type_=game_type, options=options)["id"]
    for who in players[1:]:
        assert join(client, gid, who).status_code == 201
    game = GAMES[game_type]
    for _ in range(4000):
        view = client.get(f"/v1/games/{gid}").get_json()
        if view["status"] != "active":
            break
        seat = view["awaiting"][0]["seat"]
        legal = client.get(f"/v1/games/{gid}/legal-actions",
                           headers=auth(players[seat]["token"])).get_json()["actions"]
        r = client.post(f"/v1/games/{gid}/actions", headers=auth(players[seat]["token"]),
                        json={"action": legal[0]})
        assert r.status_code == 201, r.get_json()
    else:
        pytest.fail(f"{game.name} did not end in 4000 first-legal moves")
    doc = client.get(f"/v1/games/{gid}/export").get_json()
    assert [p["player"] for p in doc["players"]] == [p["id"] for p in players]
    assert verify(doc) == {"valid": True, "version": None, "reason": None,
                           "details": {"checked": len(doc["events"]),
                                       "signature": "unchecked"}}
    # a join moved to after the start, or a changed joiner, does not verify
    bad = {**doc, "events": [dict(e) for e in doc["events"]]}
    bad["events"][1] = {**bad["events"][1], "data": {**bad["events"][1]["data"],
                                                      "name": "Mallory"}}
    assert not verify(bad)["valid"]


def test_rematch_is_one_game_for_both_seats(client):
    ada, bob = player(client, "Ada"), player(client, "Bob")
    created = table(client, ada, [{"player": ada["id"]}, {"open": True}, {"name": "Cy"}])
    gid, cy_token = created["id"], created["seats"][2]["token"]
    join(client, gid, bob)
    r = client.post(f"/v1/games/{gid}/rematch", headers=auth(ada["token"]))
    assert r.status_code == 409 and error(r)["code"] == "cannot_rematch"
    tokens = [ada["token"], bob["token"], cy_token]
    while (view := client.get(f"/v1/games/{gid}").get_json())["status"] == "active":
        seat = view["awaiting"][0]["seat"]
        client.post(f"/v1/games/{gid}/actions", headers=auth(tokens[seat]),
                    json={"action": {"type": "decide", "choice": "return"}})
    first = client.post(f"/v1/games/{gid}/rematch", headers=auth(bob["token"]))
    assert first.status_code == 201
    again = client.post(f"/v1/games/{gid}/rematch", headers=auth(cy_token))
    assert again.status_code == 200 and again.get_json()["id"] == first.get_json()["id"]
    new = client.get(f"/v1/games/{first.get_json()['id']}").get_json()
    assert new["rematch_of"] == gid and new["status"] == "waiting"
    # seats rotated by one: Ada (0) is invited to seat 1, Bob (1) who asked sits at seat 2,
    # the anonymous Cy's seat (2) becomes an open seat 0
    assert new["players"][1]["invited"] == ada["id"]
    assert new["players"][2]["player"] == bob["id"]
    assert new["players"][0]["controller"] == "open"
    assert client.get(f"/v1/games/{gid}").get_json()["rematch"] == new["id"]
    assert join(client, new["id"], ada).get_json()["status"] == "waiting"
    assert join(client, new["id"], None, name="Cy").get_json()["status"] == "active"


def test_a_player_holding_two_seats_plays_one_game_and_rejoins_both_in_the_rematch(client):
    """Ada held two seats (her token plays both): her profile counts one game (won if either
    seat won); the rematch Bob asks for invites her to both, and her two joins fill them and
    start the game."""
    ada, bob = player(client, "Ada"), player(client, "Bob")
    gid = table(client, ada, [{"player": ada["id"]}, {"player": ada["id"]}, {"open": True}])["id"]
    join(client, gid, bob)
    while (view := client.get(f"/v1/games/{gid}").get_json())["status"] == "active":
        who = bob if view["awaiting"][0]["seat"] == 2 else ada
        client.post(f"/v1/games/{gid}/actions", headers=auth(who["token"]),
                    json={"action": {"type": "decide", "choice": "return"}})
    winners = set(view["result"]["winners"])
    stats = client.get(f"/v1/players/{ada['id']}").get_json()["stats"]["diamant"]
    assert (stats["games"], stats["wins"]) == (1, int(bool(winners & {0, 1})))
    rematch = client.post(f"/v1/games/{gid}/rematch", headers=auth(bob["token"])).get_json()
    new = client.get(f"/v1/games/{rematch['id']}").get_json()
    assert [p.get("invited") for p in new["players"]] == [None, ada["id"], ada["id"]]
    assert [join(client, new["id"], ada).get_json()["seat"] for _ in range(2)] == [1, 2]
    assert client.get(f"/v1/games/{new['id']}").get_json()["status"] == "active"
    assert error(join(client, new["id"], ada))["code"] == "game_full"


def test_creating_for_an_unknown_player_is_refused(client):
    ada = player(client)
    r = client.post("/v1/games", headers=auth(ada["token"]), json={
        "type": "diamant", "players": [{"player": ada["id"]}, {"player": "p-00000000000000ff"},
                                       {"open": True}]})
    assert r.status_code == 422 and error(r)["code"] == "player_not_found"
    r = client.post("/v1/games", json={"type": "diamant", "players": [
        {"name": "a", "open": True}, {"open": True}, {"open": True}]})
    assert r.status_code == 400
    r = client.post("/v1/games", json={"type": "diamant", "players": [
        {"name": "a"}, {"open": True}, {"open": True}], "options": {"on_decline": "never"}})
    assert r.status_code == 422
    for options in ({"on_decline": None}, {"on_decline": None, "clock": None}):
        r = client.post("/v1/games", json={"type": "diamant", "players": [
            {"name": "a"}, {"open": True}, {"open": True}], "options": options})
        assert r.status_code == 422 and error(r)["details"]["option"] == "on_decline"
        r = client.post("/v1/games/bulk", json={"games": [{"type": "diamant", "options": options,
                                                           "players": [{"name": "a"}] * 3}]})
        assert r.status_code == 422, r.get_json()


def test_forks_of_a_table_start_from_its_filled_seats(client):
    ada, bob = player(client, "Ada"), player(client, "Bob")
    gid = table(client, ada, [{"player": ada["id"]}, {"open": True}, {"name": "Cy"}])["id"]
    # a running table: not for players
    r = client.post(f"/v1/games/{gid}/fork", json={"version": 1})
    assert r.status_code == 403 and error(r)["code"] == "fork_forbidden"
    join(client, gid, bob)
    for _ in range(3):
        view = client.get(f"/v1/games/{gid}", headers=auth(ada["token"])).get_json()
        if view["status"] != "active":
            break
        client.post(f"/v1/games/{gid}/abort", headers=auth(ada["token"]))
    # finished (aborted before a move): fork it after the start, as anyone may
    view = client.get(f"/v1/games/{gid}").get_json()
    assert view["status"] == "aborted"
    events = client.get(f"/v1/games/{gid}/events").get_json()["events"]
    started = next(e["version"] for e in events if e["type"] == "GameStarted")
    setup_end = max(e["version"] for e in events if e["type"] != "GameAborted")
    r = client.post(f"/v1/games/{gid}/fork", json={"version": setup_end})
    assert r.status_code == 201, r.get_json()
    fork = client.get(f"/v1/games/{r.get_json()['id']}").get_json()
    assert fork["status"] == "active" and setup_end > started
    assert [p["name"] for p in fork["players"]] == ["Ada", "Bob", "Cy"]
    r = client.post(f"/v1/games/{gid}/fork", json={"version": 1})  # before the table started
    assert r.status_code == 422 and error(r)["code"] == "game_not_started"


def counted(client, players) -> dict:
    """Each player's games and wins by rating type, as its profile shows them."""
    return {p["id"]: {t: (st["games"], st["wins"]) for t, st in
                      client.get(f"/v1/players/{p['id']}").get_json()["stats"].items()}
            for p in players}


@pytest.mark.unswept  # the parent's rating job would run beside it, in the session's worker
def test_a_fork_seats_nobody_s_player_and_counts_in_no_profile(client):
    # anybody may fork a finished game; the fork's seats are played with its new seat
    # tokens, so its players' games and counts are not touched by it
    ada, bob = player(client, "Ada"), player(client, "Bob")
    gid = table(client, ada, [{"player": ada["id"]}, {"player": bob["id"]}],
                type_="tides-of-time")["id"]
    assert join(client, gid, bob).status_code == 201
    for _ in range(200):
        view = client.get(f"/v1/games/{gid}").get_json()
        if view["status"] != "active":
            break
        for who in (ada, bob):
            legal = client.get(f"/v1/games/{gid}/legal-actions",
                               headers=auth(who["token"])).get_json()["actions"]
            if legal:
                client.post(f"/v1/games/{gid}/actions", json={"action": legal[0]},
                            headers=auth(who["token"]))
    assert view["status"] == "finished"
    counts = counted(client, (ada, bob))
    assert counts[ada["id"]] == {"tides-of-time": (1, int(0 in view["result"]["winners"]))}
    start = next(e["version"] for e in client.get(f"/v1/games/{gid}/events?limit=1000")
                 .get_json()["events"] if e["type"] == "GameStarted")
    for version in (view["version"], start + 1):  # born finished; played out by a stranger
        r = client.post(f"/v1/games/{gid}/fork", json={"version": version})
        assert r.status_code in (201, 422), r.get_json()
        if r.status_code == 422:
            continue
        fork = r.get_json()
        seen = client.get(f"/v1/games/{fork['id']}", headers=auth(ada["token"])).get_json()
        assert seen["you"] is None and [p["name"] for p in seen["players"]] == ["Ada", "Bob"]
        tokens = [s["token"] for s in fork["seats"]]
        for _ in range(200):
            if client.get(f"/v1/games/{fork['id']}").get_json()["status"] != "active":
                break
            for t in tokens:
                legal = client.get(f"/v1/games/{fork['id']}/legal-actions",
                                   headers=auth(t)).get_json()["actions"]
                if legal:
                    client.post(f"/v1/games/{fork['id']}/actions",
                                json={"action": legal[0]}, headers=auth(t))
        assert client.get(f"/v1/games/{fork['id']}").get_json()["status"] == "finished"
    assert counted(client, (ada, bob)) == counts


def test_platform_keys_seat_players_and_find_them_by_external_id(redis_url, queue_url):
    import hashlib

    from service.app import create_app
    from service.config import Config

    key = "platform-secret"
    app = create_app(Config(redis_url=redis_url, queue_url=queue_url,
                            platform_key_digests=(hashlib.sha256(key.encode()).hexdigest(),)))
    c = app.test_client()
    r = c.post("/v1/players", json={"name": "Ada"})
    assert r.status_code == 403 and error(r)["code"] == "platform_key_required"
    r = c.post("/v1/players", json={"name": "Ada", "external_id": "u-1"}, headers=auth(key))
    assert r.status_code == 201
    ada = r.get_json()
    r = c.post("/v1/players", json={"name": "Ada 2", "external_id": "u-1"}, headers=auth(key))
    assert r.status_code == 422 and error(r)["details"]["player_id"] == ada["id"]
    found = c.get("/v1/players?external_id=u-1", headers=auth(key)).get_json()
    assert found["id"] == ada["id"] and found["external_id"] == "u-1"
    assert c.get("/v1/players?external_id=u-1").status_code == 403
    # the platform's user id is its own and the player's: the public profile has none
    public = c.get(f"/v1/players/{ada['id']}")
    assert public.status_code == 200 and "external_id" not in public.get_json()
    assert "u-1" not in public.get_data(as_text=True)
    assert c.get("/v1/players/me", headers=auth(ada["token"])).get_json()["external_id"] \
        == "u-1"
    bob = c.post("/v1/players", json={"name": "Bob"}, headers=auth(key)).get_json()
    # a platform seats the players it names; the game starts at once
    r = c.post("/v1/games", headers=auth(key), json={"type": "tides-of-time", "players": [
        {"player": ada["id"]}, {"player": bob["id"]}]})
    assert r.status_code == 201
    view = c.get(f"/v1/games/{r.get_json()['id']}", headers=auth(bob["token"])).get_json()
    assert view["status"] == "active" and view["you"] == 1
    # players cannot create games where keys are configured
    r = c.post("/v1/games", headers=auth(ada["token"]), json={"type": "tides-of-time",
               "players": [{"player": ada["id"]}, {"open": True}]})
    assert r.status_code == 403
    # a rated game once dealt: its seats cannot abort it (they would deal again until a hand
    # suits them); the platform can
    gid = c.post("/v1/games", headers=auth(key), json={
        "type": "tides-of-time", "players": [{"player": ada["id"]}, {"player": bob["id"]}],
        "options": {"rated": True}}).get_json()["id"]
    r = c.post(f"/v1/games/{gid}/abort", headers=auth(ada["token"]))
    assert r.status_code == 409 and error(r)["code"] == "cannot_abort"
    r = c.post(f"/v1/games/{gid}/abort", headers=auth(key))
    assert r.status_code == 200 and r.get_json()["status"] == "aborted"


def test_a_platform_key_that_looks_like_a_player_token_is_the_platform(redis_url, queue_url):
    # an operator chooses its keys; one starting with the player tokens' prefix is still a key
    import hashlib

    from service.app import create_app
    from service.config import Config

    key = "cp_operator-secret"
    app = create_app(Config(redis_url=redis_url, queue_url=queue_url,
                            platform_key_digests=(hashlib.sha256(key.encode()).hexdigest(),)))
    c = app.test_client()
    r = c.post("/v1/games", headers=auth(key), json={"type": "diamant", "players": [
        {"name": "p0"}, {"name": "p1"}, {"name": "p2"}]})
    assert r.status_code == 201, r.get_json()
    gid = r.get_json()["id"]
    view = c.get(f"/v1/games/{gid}", headers=auth(key))
    assert view.status_code == 200, view.get_json()
    assert view.get_json()["you"] is None  # the platform sees the game as everybody may
    r = c.post("/v1/players", json={"name": "Ada", "external_id": "u-1"}, headers=auth(key))
    assert r.status_code == 201, r.get_json()
    assert c.get("/v1/players?external_id=u-1", headers=auth(key)).status_code == 200


def test_a_rated_game_once_dealt_cannot_be_aborted_by_its_seats(client):
    """Aborting before the first move would let a player deal again until a hand suits it:
    in a game that counts for ratings the seats resign instead. A table still waiting, and a
    game that does not count for ratings (unrated, or a seat without a player), abort as
    before."""
    ada, bob = player(client, "Ada"), player(client, "Bob")
    for rated, named in ((True, False), (False, False), (True, True)):
        seats = [{"player": ada["id"]}, {"name": "Cy"} if named else {"open": True}]
        gid = table(client, ada, seats, type_="tides-of-time",
                    options={"rated": rated})["id"]
        if not named:
            join(client, gid, bob)
        view = client.get(f"/v1/games/{gid}", headers=auth(ada["token"])).get_json()
        assert view["status"] == "active"
        r = client.post(f"/v1/games/{gid}/abort", headers=auth(ada["token"]))
        if rated and not named:
            assert r.status_code == 409 and error(r)["code"] == "cannot_abort"
            assert "resign" in error(r)["message"]
            r = client.post(f"/v1/games/{gid}/resign", headers=auth(bob["token"]))
            assert r.status_code == 200
        else:
            assert r.status_code == 200 and r.get_json()["status"] == "aborted"
    waiting = table(client, ada, [{"player": ada["id"]}, {"open": True}], type_="tides-of-time")
    r = client.post(f"/v1/games/{waiting['id']}/abort", headers=auth(ada["token"]))
    assert r.status_code == 200 and r.get_json()["status"] == "aborted"


def test_a_tables_clock_starts_with_the_game(client):
    ada, bob = player(client, "Ada"), player(client, "Bob")
    gid = table(client, ada, [{"player": ada["id"]}, {"open": True}], type_="tides-of-time",
                options={"clock": {"per_decision_ms": 600_000}})["id"]
    view = client.get(f"/v1/games/{gid}").get_json()
    assert view["clock"]["remaining_ms"] is None and view["awaiting"] == []
    join(client, gid, bob)
    view = client.get(f"/v1/games/{gid}").get_json()
    assert view["status"] == "active"
    assert all(a["deadline_at"] is not None for a in view["awaiting"]) and view["awaiting"]
    assert all(ms is not None and ms > 590_000 for ms in view["clock"]["remaining_ms"])


def test_me_lists_every_waiting_or_running_game_up_to_its_cap(redis_url, queue_url):
    """A bot resynchronising from /me after a gap finds every game it is in: not only the
    newest hundred, and none that is over."""
    from service.app import create_app
    from service.config import Config
    from service.store.players import games as games_key

    def me(client, who):
        return [g["id"] for g in client.get("/v1/players/me",
                                            headers=auth(who["token"])).get_json()["games"]]

    client = create_app(Config(redis_url=redis_url, queue_url=queue_url)).test_client()
    ada = player(client)
    made = [table(client, ada, [{"player": ada["id"]}, {"open": True}, {"open": True}])["id"]
            for _ in range(105)]
    assert me(client, ada) == made[::-1]
    # a game that ended while the list missed it (its removal lost) is left out, and dropped
    gone = made[0]
    assert client.post(f"/v1/games/{gone}/leave", json={"seat": 0},
                       headers=auth(ada["token"])).status_code == 200
    svc = client.application.extensions["cartouche"]
    svc.player_store.r.zadd(games_key(ada["id"]), {gone: 1})
    assert gone not in me(client, ada)
    assert svc.player_store.game_ids(ada["id"], 1000) == made[1:][::-1]

    capped = create_app(Config(redis_url=redis_url, queue_url=queue_url,
                               player_games_max=3)).test_client()
    bob = player(capped, "Bob")
    newest = [table(capped, bob, [{"player": bob["id"]}, {"open": True}, {"open": True}])["id"]
              for _ in range(5)][-3:]
    assert me(capped, bob) == newest[::-1]
