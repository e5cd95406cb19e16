"""Write the stored exports that ``test_golden_exports.py`` replays.

Run from the repository root with a Redis URL (``python -m tests.golden.make_exports URL``). Every
game and variant is played to its end through the HTTP API with a fixed seed and a fixed
``random.Random`` choosing among the legal actions; a few games also hold a resignation, a
forfeit or an abort, so the shell's commands are in the stored logs too. The files were written
by the code of the commit that added them and must go on verifying, and re-deriving to the same
bytes, under every later version of the rules and the engine.
"""

from __future__ import annotations

import gzip
import json
import random
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent / "exports"

#: (file name, type, seats, options, resign (version, seat) or None, clock or None)
GAMES = [
    ("pharaohs-wall-base", "pharaohs-wall", 3, {"curse": False, "sphinx": False}, None, None),
    ("pharaohs-wall-curse", "pharaohs-wall", 2, {"curse": True, "sphinx": False}, None, None),
    ("pharaohs-wall-sphinx", "pharaohs-wall", 4, {"curse": False, "sphinx": True}, None, None),
    ("pharaohs-wall-curse-sphinx", "pharaohs-wall", 3, {"curse": True, "sphinx": True}, None,
     None),
    ("scarabya-standard", "scarabya", 3, {"mode": "standard"}, None, None),
    ("scarabya-duel", "scarabya", 2, {"mode": "duel", "duel_games": 2}, None, None),
    ("scarabya-solo", "scarabya", 1, {"mode": "solo"}, None, None),
    ("tides-of-time-standard", "tides-of-time", 2, {"strict_zero_ties": False}, None, None),
    ("tides-of-time-strict", "tides-of-time", 2, {"strict_zero_ties": True}, None, None),
    ("diamant", "diamant", 4, {}, None, None),
    ("diamant-forfeit", "diamant", 3, {}, (9, 2),
     {"per_decision_ms": 60000, "increment_ms": 0, "timeout": "forfeit"}),
    ("papyrus-standard", "papyrus", 3, {"variant": "standard", "turn_limit": 30}, None, None),
    ("papyrus-forfeit", "papyrus", 3, {"variant": "standard", "turn_limit": 30}, (40, 1),
     {"per_decision_ms": 60000, "increment_ms": 0, "timeout": "forfeit"}),
    ("papyrus-solo", "papyrus", 1, {"variant": "solo", "turn_limit": 30}, None, None),
]


def auth(token):
    return {"Authorization": f"Bearer {token}"}


def play(client, name, type_, n, options, resign, clock):
    seed = f"{sum(map(ord, name)):02x}" * 32
    body = {"type": type_, "players": [{"name": f"{name[:3]}{i}"} for i in range(n)],
            "options": dict(options, **({"clock": clock} if clock else {})), "seed": seed[:64]}
    r = client.post("/v1/games", json=body)
    assert r.status_code == 201, r.get_json()
    gid, tokens = r.get_json()["id"], [s["token"] for s in r.get_json()["seats"]]
    rnd = random.Random(name)
    for _ in range(20000):
        view = client.get(f"/v1/games/{gid}").get_json()
        if view["status"] != "active":
            break
        if resign and view["version"] >= resign[0]:
            assert client.post(f"/v1/games/{gid}/resign",
                               headers=auth(tokens[resign[1]])).status_code == 200
            resign = None
            continue
        seats = [a["seat"] for a in view["awaiting"]
                 if view["players"][a["seat"]]["controller"] == "human"]
        seat = rnd.choice(seats)
        actions = client.get(f"/v1/games/{gid}/legal-actions",
                             headers=auth(tokens[seat])).get_json()["actions"]
        r = client.post(f"/v1/games/{gid}/actions", json={"action": rnd.choice(actions)},
                        headers=auth(tokens[seat]))
        assert r.status_code == 201, r.get_json()
    else:
        raise AssertionError(f"{name} did not end")
    return client.get(f"/v1/games/{gid}/export").get_json()


def aborted(client):
    r = client.post("/v1/games", json={"type": "diamant", "seed": "ab" * 32,
                                       "players": [{"name": f"abo{i}"} for i in range(3)]})
    gid, tokens = r.get_json()["id"], [s["token"] for s in r.get_json()["seats"]]
    assert client.post(f"/v1/games/{gid}/abort", headers=auth(tokens[0])).status_code == 200
    return client.get(f"/v1/games/{gid}/export").get_json()


def main(url: str) -> None:
    from service.app import create_app
    from service.config import Config

    app = create_app(Config(redis_url=url, queue_url=url, snapshot_every=10))
    client = app.test_client()
    HERE.mkdir(exist_ok=True)
    docs = {spec[0]: play(client, *spec) for spec in GAMES}
    docs["diamant-aborted"] = aborted(client)
    for name, doc in docs.items():
        assert doc.get("format") == "cartouche-export/1", (name, doc)
        raw = json.dumps(doc, separators=(",", ":")).encode()
        (HERE / f"{name}.json.gz").write_bytes(gzip.compress(raw, mtime=0))
        print(name, len(doc["events"]), doc["status"])


if __name__ == "__main__":
    main(sys.argv[1])
