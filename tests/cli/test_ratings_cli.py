"""The terminal client's ratings: ``leaderboard TYPE`` and ``player show ID|me`` against a real
gunicorn and worker (the worker rates the finished table)."""

from __future__ import annotations

import re
import time

from service.client import Client

from .terminal import run


def test_a_rated_table_shows_on_the_leaderboard_and_the_profiles(live_url, worker, redis_url):
    api = Client(live_url)
    ada_made, bob_made = api.create_player("Ada"), api.create_player("Bob")
    ada, bob = api.as_seat(ada_made["token"]), api.as_seat(bob_made["token"])
    gid = ada.create_table("tides-of-time", open=1)["id"]
    bob.join(gid)
    while (view := api.get(gid))["status"] == "active":
        for seat in [a["seat"] for a in view["awaiting"]]:
            me = (ada, bob)[seat]
            legal = me.legal_actions(gid)["actions"]
            if legal:
                me.act(gid, legal[0])
    deadline = time.monotonic() + 60
    while not api.leaderboard("tides-of-time")["provisional"] and time.monotonic() < deadline:
        time.sleep(0.2)

    out = run("--url", live_url, "leaderboard", "tides-of-time")
    assert out.returncode == 0, out.stderr
    assert "nobody has 5 rated games yet" in out.stdout
    assert "provisional" in out.stdout
    rows = [line for line in out.stdout.splitlines() if ada_made["id"] in line
            or bob_made["id"] in line]
    assert len(rows) == 2 and all(re.search(r"[\s│]1[\s│]*$", row) for row in rows), out.stdout

    out = run("--url", live_url, "player", "show", ada_made["id"])
    assert out.returncode == 0, out.stderr
    cells = r"tides-of-time{0}1{0}[01]{0}-?\d+\.\d{0}\d+\.\d{0}\d+\.\d\d".format(r"[\s│]+")
    assert re.search(cells, out.stdout), out.stdout  # games, wins, ordinal, mu, sigma
    out = run("--url", live_url, "player", "show", "me", env={"CARTOUCHE_TOKEN": bob_made["token"]})
    assert out.returncode == 0 and "Bob" in out.stdout and "tides-of-time" in out.stdout

    out = run("--url", live_url, "player", "show", "me")
    assert out.returncode == 1 and "token_required" in out.stderr
    out = run("--url", live_url, "leaderboard", "chess")
    assert out.returncode == 1 and "unknown_rating_type" in out.stderr
