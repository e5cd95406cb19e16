"""Many clients on several games at once through the real gunicorn, every logical request sent
twice at the same moment with the same Idempotency-Key (a client and its own retry racing each
other) and once more afterwards: versions stay dense, no event is lost or duplicated, each key
appends exactly once and every copy of its answer is the same 201, every 201 is in the log, and
nothing answers 500. (tests/api/test_race_http.py covers one 8-seat game without keys.)"""

from __future__ import annotations

import random
import threading
import time
from collections import Counter, defaultdict

import requests

#: (type, seats, options): simultaneous commits (diamant, tides) and a turn-based game.
TABLES = [("diamant", 5, {}), ("diamant", 4, {}), ("diamant", 3, {}),
          ("tides-of-time", 2, {}), ("tides-of-time", 2, {})]


def test_many_clients_several_games_duplicate_keys(live_url):
    games = []
    created_version: dict[str, int] = {}
    for type_, n, options in TABLES:
        r = requests.post(f"{live_url}/v1/games", json={
            "type": type_, "options": options, "players": [{"name": f"p{i}"} for i in range(n)]})
        assert r.status_code == 201, r.text
        games.append((r.json()["id"], [s["token"] for s in r.json()["seats"]]))
        created_version[r.json()["id"]] = r.json()["version"]

    lock = threading.Lock()
    statuses: Counter = Counter()
    answers: dict[tuple[str, str], list[dict]] = defaultdict(list)  # (game, key) -> 201 bodies
    failures: list[str] = []
    lost_race: Counter = Counter()

    def post(session, gid, token, key, action):
        res = session.post(f"{live_url}/v1/games/{gid}/actions", json={"action": action},
                           headers={"Authorization": f"Bearer {token}",
                                    "Idempotency-Key": key}, timeout=30)
        with lock:
            statuses[res.status_code] += 1
            if res.status_code == 201:
                answers[(gid, key)].append(res.json())
            elif res.status_code in (409, 422):
                # Known race (see test_a_retry_racing_its_original_gets_the_original_201): a
                # copy that read the key before the original stored it, then re-decided after
                # the game moved on, answers 409/422 although its key was applied once.
                lost_race[(gid, key)] += 1
            else:
                failures.append(f"{res.status_code} {res.text[:300]}")
        return res

    def seat_client(gid, tokens, seat, deadline):
        session = requests.Session()
        h = {"Authorization": f"Bearer {tokens[seat]}"}
        while time.monotonic() < deadline:
            legal = session.get(f"{live_url}/v1/games/{gid}/legal-actions", headers=h,
                                timeout=30).json()
            if not legal["actions"]:
                view = session.get(f"{live_url}/v1/games/{gid}", timeout=30).json()
                if view["status"] != "active":
                    return
                time.sleep(0.005)
                continue
            version = legal["version"]
            rnd = random.Random(f"{gid}/{seat}/{version}")
            action = rnd.choice(legal["actions"])
            key = f"seat{seat}-at{version}"
            # the request and its retry, at the same moment, on two connections
            twin = threading.Thread(target=post, args=(requests.Session(), gid, tokens[seat],
                                                       key, action))
            twin.start()
            post(session, gid, tokens[seat], key, action)
            twin.join(30)
            if rnd.random() < 0.2:  # a late retry of the same request
                post(session, gid, tokens[seat], key, action)

    deadline = time.monotonic() + 90
    threads = [threading.Thread(target=seat_client, args=(gid, tokens, seat, deadline))
               for gid, tokens in games for seat in range(len(tokens))]
    for t in threads:
        t.start()
    for t in threads:
        t.join(120)
    assert not any(t.is_alive() for t in threads)
    assert not failures, failures[:5]
    assert statuses[500] == 0 and set(statuses) <= {201, 409, 422}, statuses
    print(f"statuses {dict(statuses)}; keys whose racing copy lost: {len(lost_race)}")

    acked_total = 0
    for gid, tokens in games:
        view = requests.get(f"{live_url}/v1/games/{gid}").json()
        assert view["status"] == "finished", (gid, view["version"])
        log = requests.get(f"{live_url}/v1/games/{gid}/events?limit=1000").json()["events"]
        assert [e["version"] for e in log] == list(range(1, len(log) + 1))  # dense, complete
        assert len(log) == view["version"]
        commands: dict[int, str] = {}
        for (g, key), bodies in answers.items():
            if g != gid:
                continue
            # every copy of a key's answer is the same 201: one append per key
            first = bodies[0]
            for other in bodies[1:]:
                assert other["version"] == first["version"]
                assert [e["version"] for e in other["events"]] == \
                    [e["version"] for e in first["events"]]
            start = first["events"][0]["version"] if first["events"] else None
            assert start is not None
            assert start not in commands, f"two keys claim version {start}"
            commands[start] = key
            seat = int(key[4:].split("-")[0])
            assert log[start - 1]["seat"] == seat
            for ev in first["events"]:
                assert log[ev["version"] - 1]["type"] == ev["type"]
            acked_total += 1
        # every command in the log (a non-forced event with a seat that starts a command) was
        # answered: the served events of all 201s tile the log after creation
        covered = set()
        for (g, key), bodies in answers.items():
            if g == gid:
                b = bodies[0]
                covered |= set(range(b["events"][0]["version"], b["version"] + 1))
        assert covered == set(range(created_version[gid] + 1, len(log) + 1)), \
            "an event no 201 accounts for"
    assert acked_total > 100



def test_a_retry_racing_its_original_gets_the_original_201(client, svc, monkeypatch):
    """Deterministic interleaving: the retry's key lookup happened before the original stored
    its record (we make the first lookup miss), and by the time it decides, the seat has
    already committed."""
    from tests.api.helpers import create

    gid, tokens, _ = create(client, 3)
    first = client.post(f"/v1/games/{gid}/actions", json={"action": {"type": "decide",
                                                                  "choice": "continue"}},
                    headers={"Authorization": f"Bearer {tokens[0]}", "Idempotency-Key": "k1"})
    assert first.status_code == 201
    real = svc.store.idempotency_record
    calls = {"n": 0}

    def first_lookup_misses(game_id, digest):
        calls["n"] += 1
        return None if calls["n"] == 1 else real(game_id, digest)

    monkeypatch.setattr(svc.store, "idempotency_record", first_lookup_misses)
    again = client.post(f"/v1/games/{gid}/actions", json={"action": {"type": "decide",
                                                                      "choice": "continue"}},
                        headers={"Authorization": f"Bearer {tokens[0]}",
                                 "Idempotency-Key": "k1"})
    assert again.status_code == 201, again.get_json()
    assert again.get_json() == first.get_json()
    log = client.get(f"/v1/games/{gid}/events?limit=100").get_json()["events"]
    assert sum(e["type"] == "ChoiceCommitted" and e["seat"] == 0 for e in log) == 1
