"""Many clients on the same game at once, through a real gunicorn: versions stay dense, no event
is lost or duplicated, every 201 is in the log, and nothing answers 500."""

import random
import threading
from collections import Counter

import requests


def test_sixteen_clients_on_one_eight_seat_game(live_url):
    games = 0
    total_ok = 0
    statuses: Counter = Counter()
    while total_ok < 600:
        games += 1
        r = requests.post(f"{live_url}/v1/games", json={
            "type": "diamant", "players": [{"name": f"p{i}"} for i in range(8)]})
        assert r.status_code == 201
        gid = r.json()["id"]
        tokens = [s["token"] for s in r.json()["seats"]]
        acked: list[tuple[int, int, int]] = []  # (first version, last version, seat)
        lock = threading.Lock()

        def client(k):
            seat = k % 8  # two clients per seat, racing each other and the other seats
            rnd = random.Random(k)
            session = requests.Session()
            h = {"Authorization": f"Bearer {tokens[seat]}"}
            while True:
                view = session.get(f"{live_url}/v1/games/{gid}", headers=h).json()
                if view["status"] == "finished":
                    return
                choice = "return" if rnd.random() < 0.3 else "continue"
                res = session.post(f"{live_url}/v1/games/{gid}/actions", headers=h,
                                   json={"action": {"type": "decide", "choice": choice}})
                with lock:
                    statuses[res.status_code] += 1
                if res.status_code == 201:
                    body = res.json()
                    with lock:
                        acked.append((body["events"][0]["version"], body["version"], seat))

        threads = [threading.Thread(target=client, args=(k,)) for k in range(16)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(120)
        log = requests.get(f"{live_url}/v1/games/{gid}/events?limit=1000").json()["events"]
        versions = [e["version"] for e in log]
        assert versions == list(range(1, len(log) + 1))
        commits = Counter((e["version"]) for e in log if e["type"] == "ChoiceCommitted")
        for first, last, seat in acked:
            assert log[first - 1]["type"] == "ChoiceCommitted" and log[first - 1]["seat"] == seat
            assert last <= len(log)
        # every commit in the log was answered 201 to exactly one client
        assert sorted(first for first, _, _ in acked) == sorted(commits)
        total_ok += len(acked)
    assert statuses[500] == 0 and set(statuses) <= {201, 409}, statuses
