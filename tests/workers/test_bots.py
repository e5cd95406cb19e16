"""Bot seats over the service with a real RQ worker: bot-only games of every type finish, a bot
plays from its own observation only, and humans and bots share a table."""

import time

import pytest

from service.engine.bots import available
from service.games import GAMES

from tests.api.helpers import act

#: Random play wanders in Papyrus; its safety valve keeps bot-only games short.
EXTRA = {"papyrus": {"turn_limit": 40}}


def wait_finished(client, gid, seconds):
    deadline = time.monotonic() + seconds
    view = None
    while time.monotonic() < deadline:
        view = client.get(f"/v1/games/{gid}").get_json()
        if view["status"] != "active":
            return view
        time.sleep(0.1)
    raise AssertionError(f"game {gid} not finished after {seconds}s at version "
                         f"{view and view['version']}")


def table_for(game):
    """A table size and options every variant list accepts (the first variant)."""
    options = dict((game.variants or [{"options": {}}])[0]["options"])
    options.update(EXTRA.get(game.type_id, {}))
    n = 2 if game.min_players <= 2 <= game.max_players else game.min_players
    return n, options


@pytest.mark.parametrize("type_", sorted(GAMES))
def test_bot_only_games_finish(client, worker, type_):
    game = GAMES[type_]
    n, options = table_for(game)
    r = client.post("/v1/games", json={
        "type": type_, "options": options,
        "players": [{"name": f"bot{i}", "bot": {"level": "random"}} for i in range(n)]})
    assert r.status_code == 201, r.get_json()
    view = wait_finished(client, r.get_json()["id"], 120)
    assert view["status"] == "finished" and view["result"] is not None
    assert all(p["controller"] == "bot" for p in view["players"])


def test_humans_and_a_bot_share_a_table(client, worker):
    r = client.post("/v1/games", json={"type": "diamant", "players": [
        {"name": "ann"}, {"name": "bob"}, {"name": "robot", "bot": {"level": "random"}}]})
    gid, tokens = r.get_json()["id"], [s["token"] for s in r.get_json()["seats"]]
    # the bot seat's token may watch but not act
    assert act(client, gid, tokens[2]).status_code == 403
    for _ in range(400):
        view = client.get(f"/v1/games/{gid}").get_json()
        if view["status"] == "finished":
            break
        awaiting = [a["seat"] for a in view["awaiting"]]
        humans = [s for s in awaiting if s < 2]
        if humans:
            act(client, gid, tokens[humans[0]], "continue" if view["state"]["round"] % 2
                else "return")
        else:
            time.sleep(0.05)
    assert view["status"] == "finished"
    log = client.get(f"/v1/games/{gid}/events?limit=1000").get_json()["events"]
    assert any(e["type"] == "ChoiceCommitted" and e["seat"] == 2 for e in log)


def test_unknown_bot_levels_are_refused(client):
    for game in GAMES.values():
        for level in ("heuristic", "mcts"):
            r = client.post("/v1/games", json={
                "type": game.type_id, "options": table_for(game)[1],
                "players": [{"name": "b", "bot": {"level": level}}] * table_for(game)[0]})
            if available(game, level):
                assert r.status_code == 201, r.get_json()
            else:
                assert r.get_json()["error"]["code"] == "bot_level_unavailable"
    r = client.post("/v1/games", json={"type": "diamant",
                                       "players": [{"name": "b", "bot": {"level": "god"}}] * 3})
    assert r.status_code == 422 and r.get_json()["error"]["code"] == "bot_level_unavailable"
