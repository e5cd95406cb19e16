"""The README's tournament walkthrough ("Walkthrough: a 3-round Swiss of Diamant with duplicate
deals"), run as written against a live gunicorn and an RQ worker of its own: its shell blocks go
to bash in an empty folder, with ``URL`` set and curl made to fail on an HTTP error and to end
each answer with a newline. Between the first blocks (creation, Ann's first move) and the last
(standings, export, verification) the test plays the people and Robo's program: random legal
actions through the API with their player tokens, while the worker plays the bot players and
pairs the rounds.

The worker thinks 20 ms per ``mcts`` decision instead of 800 (``bots.DEFAULT_BUDGET_MS``, set in
its process only): the walkthrough's 24 games would take minutes of bot time otherwise; the
bots' other paths are unchanged."""

from __future__ import annotations

import json
import os
import random
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from concurrent.futures import ThreadPoolExecutor

import pytest
import requests

from tests.api.test_readme_lobby import shell_blocks
from tests.reliability.procs import ROOT, Proc, db, flush, start_gunicorn

SECTION = "#### Walkthrough: a 3-round Swiss of Diamant with duplicate deals"
WORKER = ("import sys; import service.engine.bots as b; b.DEFAULT_BUDGET_MS = 20; "
          "from workers.main import main; sys.exit(main(['--with-scheduler']))")


def sh_blocks(title: str) -> list[str]:
    """The ``sh`` blocks of the README section that starts with ``title``, one by one."""
    text = (ROOT / "README.md").read_text()
    section = re.split(r"\n#{2,6} ", text[text.index(title) + len(title):], maxsplit=1)[0]
    return re.findall(r"```sh\n(.*?)```", section, re.S)


@pytest.fixture
def served(redis_server):
    """A gunicorn and a worker on databases of their own (10: the store, 11: the queues), so
    that no other test's worker takes these jobs at the full mcts budget."""
    store, queues = db(redis_server.url, 10), db(redis_server.url, 11)
    flush(store), flush(queues)
    web, url = start_gunicorn(store, queues)
    log = Path(tempfile.mkdtemp(prefix="cartouche-readme-tournament-")) / "worker.log"
    worker = Proc([sys.executable, "-c", WORKER],
                  dict(os.environ, REDIS_URL=store, QUEUE_URL=queues), log)
    yield url
    worker.stop()
    web.stop()


def run(url, folder, script):
    """``script`` in bash in ``folder``; its variables carried to the next call (vars.sh)."""
    script = script.replace("curl -s ", "curl -sS --fail-with-body -w '\\n' ")
    carried = "source vars.sh\n" if (folder / "vars.sh").exists() else ""
    env = dict(os.environ, PATH=os.path.dirname(sys.executable) + ":" + os.environ["PATH"])
    done = subprocess.run(["bash", "-euo", "pipefail", "-c",
                           f"set -a\nURL={url}\n{carried}{script}\nexport -p > vars.sh"],
                          cwd=folder, env=env, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr + done.stdout
    return done.stdout


def play_game(url, gid, tokens, rnd, deadline):
    """Random legal actions for the seats of ``gid`` held by ``tokens``' players (player id ->
    token) until the game is over; the built-in bots' seats are the worker's."""
    http = requests.Session()
    while True:
        view = http.get(f"{url}/v1/games/{gid}", timeout=10).json()
        if view["status"] != "active":
            return
        assert time.monotonic() < deadline, view["version"]
        acted = False
        for awaited in view["awaiting"]:
            token = tokens.get(view["players"][awaited["seat"]].get("player"))
            if token is None:
                continue
            auth = {"Authorization": f"Bearer {token}"}
            legal = http.get(f"{url}/v1/games/{gid}/legal-actions", headers=auth,
                             timeout=10).json()["actions"]
            if legal:
                r = http.post(f"{url}/v1/games/{gid}/actions",
                              json={"action": rnd.choice(legal)}, headers=auth, timeout=10)
                assert r.status_code in (201, 409), r.text  # 409: the game moved on
                acted = True
        if not acted:
            time.sleep(0.15)  # the bots (the worker) move meanwhile: few polls


def play_people(url, tid, tokens, seed, deadline):
    """Every round's games played at once (a thread each) until the tournament is over; the
    worker pairs each next round."""
    played = 0
    with ThreadPoolExecutor(8) as pool:
        while True:
            shown = requests.get(f"{url}/v1/tournaments/{tid}", timeout=10).json()
            if shown["status"] == "finished":
                return shown
            assert time.monotonic() < deadline, [[g["status"] for g in r["games"]]
                                                 for r in shown["rounds"]]
            if len(shown["rounds"]) > played:
                played = len(shown["rounds"])
                games = [g["id"] for g in shown["rounds"][-1]["games"]]
                list(pool.map(lambda g: play_game(url, g, tokens, random.Random(f"{seed}/{g}"),
                                                  deadline), games))
            else:
                time.sleep(0.05)


def test_the_tournament_walkthrough_runs_to_a_verified_export(served, tmp_path):
    assert shell_blocks(SECTION).count("curl -s ") == 10
    blocks = sh_blocks(SECTION)
    assert len(blocks) == 3
    started = time.monotonic()
    run(served, tmp_path, blocks[0])
    cup = json.loads((tmp_path / "cup.json").read_text())
    assert cup["status"] == "running" and cup["duplicate"] and cup["rounds_total"] == 3
    people = {who: json.loads((tmp_path / f"{who}.json").read_text())
              for who in ("Ann", "Ben", "Cyd", "Dot", "Robo")}
    assert people["Robo"]["kind"] == "bot" and people["Ann"]["kind"] == "human"
    ids = [p["player"] for p in cup["participants"]]
    assert ids == [p["id"] for p in people.values()] + ["bot-random", "bot-heuristic",
                                                         "bot-mcts"]
    assert len(cup["rounds"][0]["games"]) == 8 and cup["rounds"][0]["byes"] == []

    moved = json.loads(run(served, tmp_path, blocks[1]).splitlines()[-1])
    first = [g for g in cup["rounds"][0]["games"] if people["Ann"]["id"] in g["seats"]][0]
    assert [(e["type"], e["seat"]) for e in moved["events"]][:1] == [
        ("ChoiceCommitted", first["seats"].index(people["Ann"]["id"]))]

    tokens = {p["id"]: p["token"] for p in people.values()}
    play_people(served, cup["id"], tokens, "readme/tournament", started + 60)

    verdict = run(served, tmp_path, blocks[2])  # cartouche verify: exit status 0, "valid"
    assert verdict.startswith("valid: "), verdict
    final = json.loads((tmp_path / "final.json").read_text())
    assert [len(r["games"]) for r in final["rounds"]] == [8, 8, 8]
    assert all(g["status"] == "finished" for r in final["rounds"] for g in r["games"])
    standings = final["standings"]
    assert sorted(s["player"] for s in standings) == sorted(ids)
    assert [s["games"] for s in standings] == [12] * 8
    assert sum(s["points"] for s in standings) == 24 * (0 + 1 + 2 + 3)
    assert [s["points"] for s in standings] == sorted((s["points"] for s in standings),
                                                     reverse=True)
    export = json.loads((tmp_path / "cup-export.json").read_text())
    assert export["format"] == "cartouche-tournament" and len(export["games"]) == 24
    assert export["standings"] == standings
