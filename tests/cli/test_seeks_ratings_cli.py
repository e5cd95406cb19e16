"""The terminal client's matchmaking and ratings: ``seek TYPE``, ``leaderboard TYPE`` and
``player show ID|me`` against a real gunicorn (and a worker, which rates the finished table)."""

from __future__ import annotations

import re
import signal
import time

from service.client import Client

from .terminal import CLI, Terminal, run
from .test_tables_cli import created_player, play_out


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


def test_two_terminals_seek_are_matched_and_play_to_the_end(live_url):
    ada, bob = (created_player(live_url) for _ in range(2))
    # a pool of its own (a clock no other test asks for): these two seeks meet each other
    options = '{"clock": {"per_decision_ms": 3600000}}'
    terms = [Terminal([*CLI, "--url", live_url, "seek", "tides-of-time", "--options", options],
                      env={"CARTOUCHE_TOKEN": who["token"]}) for who in (ada, bob)]
    try:
        games = set()
        for term in terms:
            term.expect([r"Seek (s-\w+) opened: Tides of Time, seats 2"])
            _, matched = term.expect([r"Matched: game (\w+), you are seat (\d)"])
            games.add(matched.group(1))
        assert len(games) == 1
        assert play_out(terms) == ["finished", "finished"]
        assert all(term.wait() == 0 for term in terms)
    finally:
        for term in terms:
            term.close()
    assert all("Traceback" not in term.seen for term in terms)
    view = Client(live_url).get(games.pop())
    assert sorted(p["player"] for p in view["players"]) == sorted([ada["id"], bob["id"]])
    assert view["options"]["rated"] is True


def test_ctrl_c_while_seeking_cancels_the_seek(live_url):
    token = created_player(live_url)["token"]
    term = Terminal([*CLI, "--url", live_url, "seek", "diamant", "--seats", "3-4",
                     "--options", '{"clock": {"per_decision_ms": 3599000}}'],
                    env={"CARTOUCHE_TOKEN": token})
    try:
        _, opened = term.expect([r"Seek (s-\w+) opened"])
        term.expect([r"Waiting for a match"])
        term.proc.send_signal(signal.SIGINT)
        assert term.wait() == 130
    finally:
        term.close()
    assert Client(live_url, token).get_seek(opened.group(1))["status"] == "cancelled"
