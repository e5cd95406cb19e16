"""The README's "A bot that plays all its games on one connection", run as written: its code
block is cut out of README.md and run as a process of its own, invited to a game of every type
at once, against a real gunicorn (``live_url``) and a real RQ worker playing the other seats."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import time
from pathlib import Path

from service.client import Client, player_seat
from service.replay import verify

ROOT = Path(__file__).resolve().parents[2]
SECTION = "### A bot that plays all its games on one connection\n"
#: (type, the built-in bot players in the other seats, options)
GAMES = [("diamant", ["bot-random", "bot-heuristic"], None),
         ("tides-of-time", ["bot-heuristic"], None),
         ("scarabya", ["bot-random"], None),
         ("pharaohs-wall", ["bot-random"], None),
         ("papyrus", ["bot-random"], {"turn_limit": 6})]
TIMEOUT_S = 120


def readme_bot() -> str:
    """The first python block of the README's section, verbatim."""
    _, found, rest = (ROOT / "README.md").read_text().partition(SECTION)
    assert found, "README.md has no section " + SECTION
    block = re.search(r"```python\n(.*?)```", rest, re.S)
    assert block, "the section has no python block"
    return block.group(1)


def test_the_readme_bot_plays_all_its_games_on_one_connection(live_url, worker, tmp_path):
    api = Client(live_url)
    bot = api.create_player("Readme bot", "bot")
    host = api.as_seat(api.create_player("Host")["token"])
    script = tmp_path / "bot.py"
    script.write_text(readme_bot())
    env = dict(os.environ, CARTOUCHE_URL=live_url, CARTOUCHE_TOKEN=bot["token"],
               PYTHONUNBUFFERED="1")
    proc = subprocess.Popen([sys.executable, str(script)], cwd=tmp_path, env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        # The host invites the bot to one table of each type; the other seats are bot players.
        games = [host.create(game_type, [player_seat(bot["id"]), *map(player_seat, others)],
                             options)["id"] for game_type, others, options in GAMES]
        deadline = time.monotonic() + TIMEOUT_S
        while (statuses := [api.get(g)["status"] for g in games]) != ["finished"] * len(games):
            assert proc.poll() is None, "the bot stopped:\n" + proc.stdout.read()[-3000:]
            assert time.monotonic() < deadline, f"not all finished: {statuses}"
            time.sleep(0.2)
    finally:
        proc.kill()
        output = proc.communicate()[0]
    assert "Traceback" not in output, output
    for game_id in games:
        view = api.get(game_id)
        assert view["players"][0].get("player") == bot["id"]
        assert verify(api.export(game_id))["valid"]
