"""Independent client processes meet through the lobby and play every game type to its end.

Each process (``lobby_player.py``) knows only the server's URL: it creates its own player over
the API, a host opens a table, guests find it in ``GET /v1/games?status=waiting&type=`` and
join, and every move is an answer to a ``your_turn`` on the mover's player stream. The five
game types play at once, against a real gunicorn (``live_url``).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections import defaultdict
from pathlib import Path

from service.client import Client
from service.replay import verify

ROOT = Path(__file__).resolve().parents[2]

#: (type, seats, options): every game type, Papyrus cut short by its turn limit.
GAMES = [("diamant", 3, None), ("tides-of-time", 2, None), ("scarabya", 2, None),
         ("pharaohs-wall", 2, None), ("papyrus", 2, {"turn_limit": 6})]
TIMEOUT_S = 120


def spawn(url: str, *args: str) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-m", "tests.client.lobby_player", url, *args],
                            cwd=ROOT, env=dict(os.environ), stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)


def test_independent_players_meet_in_the_lobby_and_finish_every_game(live_url, redis_url):
    # redis_url empties the store: the lobby holds this test's tables only
    players = []
    for game_type, seats, options in GAMES:
        players.append((game_type, spawn(live_url, game_type, "host", str(seats),
                                         json.dumps(options))))
        players += [(game_type, spawn(live_url, game_type, "guest")) for _ in range(seats - 1)]
    deadline = time.monotonic() + TIMEOUT_S
    reports = defaultdict(list)
    try:
        for game_type, proc in players:
            out, err = proc.communicate(timeout=max(1.0, deadline - time.monotonic()))
            assert proc.returncode == 0, f"{game_type} player failed:\n{err[-3000:]}"
            reports[game_type].append(json.loads(out))
    finally:
        for _, proc in players:
            if proc.poll() is None:
                proc.kill()
                proc.wait()
    api = Client(live_url)
    for game_type, seats, _ in GAMES:
        found = reports[game_type]
        assert len({r["game_id"] for r in found}) == 1, found    # one table per type
        assert sorted(r["seat"] for r in found) == list(range(seats))
        assert all(r["status"] == "finished" and r["turns"] > 0 for r in found), found
        game_id = found[0]["game_id"]
        view = api.get(game_id)
        assert view["status"] == "finished" and view["result"] is not None
        assert all(p.get("player") for p in view["players"])   # players, not anonymous seats
        export = api.export(game_id)
        assert verify(export)["valid"], game_type
        assert api.verify(export)["valid"], game_type
