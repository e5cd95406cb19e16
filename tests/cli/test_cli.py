"""The terminal client driven as a user would: a pseudo-terminal, keys typed, output read.

Against a real gunicorn (``live_url``) and a real RQ worker playing the bot seats (``worker``).
The CLI runs as ``python -m service.cli`` (the same entry as the ``cartouche`` script).
"""

from __future__ import annotations

import json
import re

import pytest

from service.client import ApiError, Client

from .terminal import CLI, Terminal, run


def finish_bot_game(url: str) -> str:
    """A 3-seat Diamant game between random bots, followed over SSE to its end."""
    api = Client(url)
    game = api.create("diamant", [{"name": f"R{i}", "bot": {"level": "random"}}
                                  for i in range(3)], seed="ab" * 32)
    items = list(api.stream(game["id"]))
    assert items[-1].kind == "end" and items[-1].data["status"] == "finished"
    return game["id"]


@pytest.fixture(scope="module")
def finished(live_url, worker):
    return finish_bot_game(live_url)


def test_play_diamant_to_the_end_against_random_bots(live_url, worker):
    term = Terminal([*CLI, "--url", live_url, "play", "diamant", "--seats", "3",
                     "--vs", "random", "--name", "Ann"])
    try:
        _, created = term.expect([r"Game (\w+) created"])
        game_id = created.group(1)
        moves = 0
        while True:
            i, m = term.expect([r"Your choice \[1-(\d+)", r"Game over \((\w+)"], timeout=30)
            if i == 1:
                assert m.group(1) == "finished"
                break
            # Diamant's menu is continue/return: explore a little, then go home.
            term.send("1" if moves % 3 == 0 else "2")
            moves += 1
            assert moves < 200
        term.expect([r"rank\s.*player\s.*score"])       # the result table
        term.expect([r"rubies in chest"])                # Diamant's scoring breakdown
        assert term.wait() == 0
    finally:
        term.close()
    assert moves >= 5                   # at least one decision in each of the five rounds
    assert "Traceback" not in term.seen
    # the bots' moves were followed live, one sentence per event
    assert re.search(r"Ahmose \(random\) (continues|returns)", term.seen)
    view = Client(live_url).get(game_id)
    assert view["status"] == "finished" and view["players"][0]["name"] == "Ann"


def test_replay_steps_next_previous_jump(live_url, finished):
    total = len(Client(live_url).export(finished)["events"])
    term = Terminal([*CLI, "--url", live_url, "replay", finished])
    try:
        term.expect([rf"version 1/{total}"])
        term.expect([r"\[q\]uit"])
        term.send("n")
        term.expect([rf"version 2/{total}"])
        term.send("n")
        term.expect([rf"version 3/{total}"])
        term.send("p")
        term.expect([rf"version 2/{total}"])
        term.send("j 9999")
        term.expect([rf"No version 9999 \(1-{total}\)"])
        term.send(f"j {total}")
        term.expect([rf"version {total}/{total}"])
        term.expect([r"Game over: R0 \d+ rub"])     # the last event, as a sentence
        term.expect([r"rank\s.*player\s.*score"])   # the result at the last version
        term.expect([r"\[q\]uit"])
        term.send("q")
        assert term.wait() == 0
    finally:
        term.close()
    assert "Traceback" not in term.seen


def test_verify_an_export_file_offline(live_url, finished, tmp_path):
    export = Client(live_url).export(finished)
    good = tmp_path / "export.json"
    good.write_text(json.dumps(export))
    # No server needed: the URL points nowhere.
    env_url = "http://127.0.0.1:9"
    out = run("--url", env_url, "verify", str(good))
    assert out.returncode == 0, out.stderr
    assert f"valid: {len(export['events'])} events" in out.stdout
    export["events"][-2]["data"] = {"tampered": True}
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps(export))
    out = run("--url", env_url, "verify", str(bad))
    assert out.returncode == 1
    assert f"INVALID at version {len(export['events']) - 1}" in out.stdout
    missing = run("verify", str(tmp_path / "nope.json"))
    assert missing.returncode != 0 and "Traceback" not in missing.stderr
    # a fork's events copied from its parent are said to be copied, not re-derived
    api = Client(live_url)
    last = len(api.export(finished)["events"])
    fork = api.fork(finished, last)["id"]  # at its end: born over, its export public
    forked = tmp_path / "fork.json"
    forked.write_text(json.dumps(api.export(fork)))
    out = run("--url", env_url, "verify", str(forked))
    assert out.returncode == 0, out.stderr
    assert f"{last - 1} copied from game {finished}" in out.stdout, out.stdout
    said = " ".join(out.stdout.split())  # as one line, however the console wrapped it
    assert "draws not proven: give the parent's export with --parent" in said, said
    # with the parent's export, the copied events must be the parent's, and it must verify
    out = run("--url", env_url, "verify", str(forked), "--parent", str(good))
    said = " ".join(out.stdout.split())
    assert out.returncode == 0 and "proven by the parent's export" in said, said
    out = run("--url", env_url, "verify", str(forked), "--parent", str(bad))
    assert out.returncode == 1 and "INVALID: parent_invalid" in out.stdout, out.stdout
    respelled = json.loads(forked.read_text())
    respelled["events"][3]["at"] = "2001-01-01T00:00:00.000Z"  # what the rules cannot check
    forked.write_text(json.dumps(respelled))
    assert run("--url", env_url, "verify", str(forked)).returncode == 0
    out = run("--url", env_url, "verify", str(forked), "--parent", str(good))
    assert out.returncode == 1 and "INVALID at version 4: parent_differs" in out.stdout
    # python -m service.replay (README) takes --parent too
    from service.replay import main as replay_main

    assert replay_main(["verify", str(forked), "--parent", str(good)]) == 1
    forked.write_text(json.dumps(api.export(fork)))
    assert replay_main(["verify", str(forked), "--parent", str(good)]) == 0
    assert replay_main(["verify", str(forked), "--parent", str(bad)]) == 1


def test_api_errors_are_one_line_with_their_code(live_url):
    out = run("--url", live_url, "watch", "0123456789abcdef0123")
    assert out.returncode == 1
    assert len(out.stderr.strip().splitlines()) == 1
    assert out.stderr.startswith("error: 404 game_not_found: ")
    out = run("--url", live_url, "play", "chess")
    assert out.returncode == 1 and len(out.stderr.strip().splitlines()) == 1
    assert out.stderr.startswith("error: unknown_game_type")
    out = run("--url", live_url, "play", "diamant", "--seats", "12")
    assert out.returncode == 1 and len(out.stderr.strip().splitlines()) == 1
    assert "422 invalid_player_count" in out.stderr
    out = run("--url", "http://127.0.0.1:9", "replay", "some-game")
    assert out.returncode == 1 and len(out.stderr.strip().splitlines()) == 1
    assert out.stderr.startswith("error: connection_failed")
    assert "Traceback" not in out.stderr


def test_client_stream_resumes_and_errors_are_typed(live_url, finished):
    api = Client(live_url)
    page = api.events(finished, after=0, limit=5)
    assert [e["version"] for e in page["events"]] == [1, 2, 3, 4, 5]
    every = list(api.all_events(finished))
    items = list(api.stream(finished, after=len(every) - 3))
    assert [i.id for i in items[:-1]] == [len(every) - 2, len(every) - 1, len(every)]
    assert items[-1].kind == "end" and items[-1].data["result"] is not None
    assert list(api.stream(finished, after=len(every))) == []  # past the end: a 204, over
    assert api.verify(api.export(finished))["valid"] is True
    with pytest.raises(ApiError) as err:
        api.state(finished, 10**6)
    assert err.value.status == 404 and err.value.code == "version_not_found"
    with pytest.raises(ApiError) as err:
        api.as_seat("not-a-token").get(finished)
    assert err.value.status == 401 and err.value.code == "invalid_token"
