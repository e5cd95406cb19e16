"""The terminal client's players and tables: ``player create``, ``lobby``, ``play --open`` and
``join``, against a real gunicorn (``live_url``). Two terminals meet through the lobby and play a
game to its end, each told of the start by its player stream."""

from __future__ import annotations

import re
import signal

import pytest

from service.client import Client, open_seat, player_seat

from .terminal import CLI, Terminal, run

CHOICE = r"Your choice \[1-(\d+)"
OVER = r"Game over \((\w+)"


def created_player(url: str, *extra: str) -> dict:
    out = run("--url", url, "player", "create", "Ada", *extra)
    assert out.returncode == 0, out.stderr
    return dict(re.findall(r"^(id|token)\s+(\S+)", out.stdout, re.M))


def test_player_create_prints_the_token_and_how_to_use_it(live_url):
    out = run("--url", live_url, "player", "create", "Ada")
    assert out.returncode == 0, out.stderr
    made = dict(re.findall(r"^(id|name|token)\s+(.+?)(?:\s{3}.*)?$", out.stdout, re.M))
    assert made["name"] == "Ada (human)" and made["token"].startswith("cp_")
    assert f"export CARTOUCHE_TOKEN={made['token']}" in out.stdout
    assert "cartouche join GAME_ID" in out.stdout
    assert Client(live_url, made["token"]).me()["id"] == made["id"]
    bot = created_player(live_url, "--bot")
    assert Client(live_url).player(bot["id"])["kind"] == "bot"


def test_lobby_lists_the_waiting_tables(live_url, redis_url):
    # redis_url empties the store: the lobby holds this test's tables only
    out = run("--url", live_url, "lobby")
    assert out.returncode == 0 and "No table is waiting for players." in out.stdout
    api = Client(live_url)
    ada = api.as_seat(api.create_player("Ada")["token"])
    bob = api.create_player("Bob")
    table = ada.create("diamant", [player_seat(ada.me()["id"]), player_seat(bob["id"]),
                                   open_seat(), player_seat("bot-random")])["id"]
    duel = ada.create_table("scarabya", open=1, options={"mode": "duel"})["id"]
    out = run("--url", live_url, "lobby")
    assert out.returncode == 0, out.stderr
    row = next(line for line in out.stdout.splitlines() if table in line)
    assert re.search(r"diamant\s+\S\s+2\s+\S\s+0: Ada, 1: \(invited: p-\w+\), 2: \(open\), "
                     r"3: Random bot \[random bot\]", row), out.stdout
    row = next(line for line in out.stdout.splitlines() if duel in line)
    assert re.search(r"scarabya\s+\S\s+1\s+\S\s+0: Ada, 1: \(open\)\s+\S\s+"
                     r'\{"mode":"duel","rated":true\}', row), out.stdout  # defaults not shown
    out = run("--url", live_url, "lobby", "scarabya")
    assert duel in out.stdout and table not in out.stdout


def play_out(terms: list[Terminal], timeout: float = 90) -> list[str]:
    """Answer every menu of every terminal with its first action until each game is over;
    each terminal's final status."""
    ends: dict[int, str] = {}
    for _ in range(int(timeout / 0.2)):
        for i, term in enumerate(terms):
            if i in ends:
                continue
            found = term.poll([CHOICE, OVER], 0.1)
            if found is None:
                continue
            kind, match = found
            if kind == 1:
                ends[i] = match.group(1)
            else:
                term.send("1")
        if len(ends) == len(terms):
            return [ends[i] for i in range(len(terms))]
    raise AssertionError(f"not over in {timeout} s:\n" + "\n---\n".join(
        t.seen[-2000:] for t in terms))


def test_two_terminals_meet_through_the_lobby_and_play_to_the_end(live_url):
    ada, bob = (created_player(live_url) for _ in range(2))
    host = Terminal([*CLI, "--url", live_url, "play", "--open", "papyrus", "--seats", "2",
                     "--options", '{"turn_limit": 4}'], env={"CARTOUCHE_TOKEN": ada["token"]})
    guest = None
    try:
        _, made = host.expect([r"Table (\w+) created: Papyrus\b.*, 2 seats"])
        game_id = made.group(1)
        host.expect([rf"cartouche join {game_id}"])
        host.expect([r"Waiting for players"])
        lobby = run("--url", live_url, "lobby", "papyrus")
        assert game_id in lobby.stdout, lobby.stdout
        guest = Terminal([*CLI, "--url", live_url, "join", game_id, "--token", bob["token"]])
        guest.expect([rf"You sit in seat 1 of {game_id}"])
        host.expect([rf"Every seat is taken: {game_id} starts"])
        assert play_out([host, guest]) == ["finished", "finished"]
        assert host.wait() == 0 and guest.wait() == 0
    finally:
        host.close()
        if guest is not None:
            guest.close()
    assert "Traceback" not in host.seen + guest.seen
    view = Client(live_url).get(game_id)
    assert view["status"] == "finished" and view["options"]["turn_limit"] == 4
    assert [p["player"] for p in view["players"]] == [ada["id"], bob["id"]]


def test_join_takes_up_a_game_you_sit_in(live_url):
    api = Client(live_url)
    ada = api.as_seat(api.create_player("Ada")["token"])
    bob = api.create_player("Bob")
    game_id = ada.create_table("tides-of-time", open=1)["id"]
    assert api.as_seat(bob["token"]).join(game_id)["status"] == "active"
    term = Terminal([*CLI, "--url", live_url, "join", game_id],
                    env={"CARTOUCHE_TOKEN": bob["token"]})
    try:
        term.expect([rf"You sit in seat 1 of {game_id}"])
        term.expect([CHOICE])
        term.send("q")
        term.expect([rf"Left the client; the game goes on.*{game_id}"])
        assert term.wait() == 0
    finally:
        term.close()


def test_ctrl_c_while_waiting_gives_the_seat_back(live_url):
    token = created_player(live_url)["token"]
    term = Terminal([*CLI, "--url", live_url, "play", "--open", "diamant", "--seats", "3"],
                    env={"CARTOUCHE_TOKEN": token})
    try:
        _, made = term.expect([r"Table (\w+) created"])
        term.expect([r"Waiting for players"])
        term.proc.send_signal(signal.SIGINT)
        term.expect([r"interrupted"])
        assert term.wait() == 130
    finally:
        term.close()
    assert "Traceback" not in term.seen
    view = Client(live_url).get(made.group(1))
    assert view["status"] == "aborted"              # its only player left: the table ended


@pytest.mark.parametrize("args,expected", [
    (["join", "0123456789abcdef0123"], "error: token_required: "),
    (["play", "--open", "diamant"], "error: token_required: "),
    (["play", "--open", "diamant", "--options", "[1]", "--token", "cp_x"],
     "error: invalid_options: "),
    (["join", "0123456789abcdef0123", "--token", "{player}"], "error: 404 game_not_found: "),
    (["join", "{full}", "--token", "{player}"], "error: 409 game_full: "),
    (["play", "--open", "diamant", "--token", "cp_nobody"], "error: 401 invalid_token: "),
])
def test_table_errors_are_one_line_with_their_code(live_url, args, expected):
    api = Client(live_url)
    player = api.create_player("Cy")["token"]
    full = api.create("diamant", [{"name": f"P{i}"} for i in range(3)])["id"]
    args = [a.format(player=player, full=full) for a in args]
    out = run("--url", live_url, *args, env={"CARTOUCHE_TOKEN": ""})
    assert out.returncode == 1, out.stdout
    assert len(out.stderr.strip().splitlines()) == 1, out.stderr
    assert out.stderr.startswith(expected), out.stderr
