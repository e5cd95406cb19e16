"""Every registered game played to the end over the API with random legal actions, each step
checked against the same game played in memory by the engine (same seed): the shell adds
persistence and redaction, never a different game."""

import hashlib
import random

import pytest

from service.engine.local import LocalGame
from service.games import GAMES

from .helpers import auth

#: Random play can wander for a long time in Papyrus; its own safety valve bounds the test.
EXTRA = {"papyrus": {"turn_limit": 60}}
VARIANTS = [(t, v["id"], {**v["options"], **EXTRA.get(t, {})}) for t, g in GAMES.items()
            for v in (g.variants or [{"id": "default", "options": {}}])]


@pytest.mark.parametrize("type_,variant,options", VARIANTS)
def test_random_games_over_http_equal_the_engine(client, type_, variant, options):
    game = GAMES[type_]
    counts = sorted({game.min_players, game.max_players,
                     (game.min_players + game.max_players) // 2})
    played = 0
    for n in counts:
        players = [{"name": f"p{i}"} for i in range(n)]
        r = client.post("/v1/games", json={"type": type_, "players": players,
                                           "options": options})
        if r.status_code == 422 and r.get_json()["error"]["details"].get("code") \
                == "invalid_player_count":
            continue  # this variant is for other table sizes
        play(client, game, players, options, n)
        played += 1
    assert played, "no table size accepted this variant"


def play(client, game, players, options, n):
    type_ = game.type_id
    seed_hex = hashlib.sha256(f"{type_}/{options}/{n}".encode()).hexdigest()
    r = client.post("/v1/games", json={"type": type_, "players": players, "seed": seed_hex,
                                       "options": options})
    assert r.status_code == 201, r.get_json()
    gid, tokens = r.get_json()["id"], [s["token"] for s in r.get_json()["seats"]]
    local = LocalGame(game, players, options, bytes.fromhex(seed_hex))
    rnd = random.Random(n)
    for step in range(5000):
        assert r.get_json()["version"] == local.version
        check_views = step % 5 == 0 or game.is_over(local.state)
        for seat in range(n) if check_views else ():
            view = client.get(f"/v1/games/{gid}", headers=auth(tokens[seat])).get_json()
            assert view["state"] == game.view(local.state, seat)
        if check_views:
            spectator = client.get(f"/v1/games/{gid}").get_json()
            assert spectator["state"] == game.view(local.state, None)
            assert [a["seat"] for a in spectator["awaiting"]] == local.awaiting()
        if game.is_over(local.state):
            assert spectator["status"] == "finished"
            assert spectator["result"] == game.result(local.state)
            break
        seat = rnd.choice(local.awaiting())
        legal = client.get(f"/v1/games/{gid}/legal-actions", headers=auth(tokens[seat]))
        actions = legal.get_json()["actions"]
        assert actions == local.legal(seat)
        action = rnd.choice(actions)
        r = client.post(f"/v1/games/{gid}/actions", json={"action": action},
                        headers=auth(tokens[seat]))
        assert r.status_code == 201, r.get_json()
        local.act(seat, action)
    else:
        pytest.fail("game did not finish in 5000 actions")
    log = client.get(f"/v1/games/{gid}/events?limit=1000").get_json()["events"]
    assert len(log) == min(local.version, 1000)
