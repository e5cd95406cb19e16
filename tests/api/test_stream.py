"""Server-Sent Events through a real gunicorn (gevent workers): every event once and in order,
redacted for the caller, resumable after a dropped connection, keep-alives, an end event, and
hundreds of subscribers without starving the action endpoints."""

import json
import random
import statistics
import threading
import time

import requests

from tests.api.helpers import event_id


def parse(lines):
    """Yield (event, id, data) from an SSE line iterator; comments as ("comment", None, text)."""
    event, eid, data = None, None, []
    for raw in lines:
        line = raw.decode() if isinstance(raw, bytes) else raw
        if line == "":
            if event or data:
                yield event, eid, json.loads("\n".join(data)) if data else None
            event, eid, data = None, None, []
        elif line.startswith(":"):
            yield "comment", None, line[1:].strip()
        elif line.startswith("event: "):
            event = line[7:]
        elif line.startswith("id: "):
            eid = event_id(line[4:])
        elif line.startswith("data: "):
            data.append(line[6:])


def new_game(url, n=3):
    r = requests.post(f"{url}/v1/games", json={"type": "diamant",
                                               "players": [{"name": f"p{i}"} for i in range(n)]})
    return r.json()["id"], [s["token"] for s in r.json()["seats"]]


def play(url, gid, tokens, rnd, until_version=None):
    while True:
        view = requests.get(f"{url}/v1/games/{gid}").json()
        if view["status"] != "active" or (until_version and view["version"] >= until_version):
            return view
        seat = rnd.choice([a["seat"] for a in view["awaiting"]])
        requests.post(f"{url}/v1/games/{gid}/actions",
                      headers={"Authorization": f"Bearer {tokens[seat]}"},
                      json={"action": {"type": "decide",
                                       "choice": rnd.choice(["continue", "return"])}})


def collect(url, gid, token=None, last_id=None, stop_after=None, timeout=60):
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    if last_id is not None:
        headers["Last-Event-ID"] = str(last_id)
    got, comments = [], 0
    with requests.get(f"{url}/v1/games/{gid}/events/stream", headers=headers, stream=True,
                      timeout=timeout) as r:
        assert r.status_code == 200 and r.headers["Content-Type"].startswith("text/event-stream")
        for event, eid, data in parse(r.iter_lines()):
            if event == "comment":
                comments += 1
                continue
            got.append((event, eid, data))
            if event == "end" or (stop_after and len(got) >= stop_after):
                break
    return got, comments


def test_stream_is_complete_ordered_redacted_and_ends(live_url):
    gid, tokens = new_game(live_url)
    box = {}
    t = threading.Thread(target=lambda: box.update(zip(("events", "comments"),
                                                       collect(live_url, gid, tokens[1]))))
    t.start()
    time.sleep(1.5)  # idle long enough for a keep-alive (1 s in the test server)
    final = play(live_url, gid, tokens, random.Random(1))
    t.join(60)
    events = box["events"]
    assert events[-1][0] == "end" and events[-1][2]["result"] == final["result"]
    versions = [eid for ev, eid, _ in events if ev == "game_event"]
    assert versions == list(range(1, final["version"] + 1))
    assert box["comments"] >= 1
    # after the end everything is public: a stream read from the start now shows every choice
    replayed, _ = collect(live_url, gid, tokens[1])
    others = [data for ev, _, data in replayed if ev == "game_event"
              and data["type"] == "ChoiceCommitted" and data["seat"] != 1]
    assert others and all(d["data"].get("choice") in ("continue", "return") for d in others)
    # a browser's EventSource reconnects once the server closes after the end, with the end's
    # id: a 204 tells it to stop (it would get the end event again, and reconnect, for ever)
    assert events[-1][1] == final["version"]
    r = requests.get(f"{live_url}/v1/games/{gid}/events/stream",
                     headers={"Last-Event-ID": str(final["version"])}, timeout=10)
    assert r.status_code == 204 and r.content == b""
    earlier, _ = collect(live_url, gid, last_id=final["version"] - 1)
    assert [ev for ev, _, _ in earlier] == ["game_event", "end"]


def test_while_the_game_runs_the_stream_is_redacted_for_the_caller(live_url):
    gid, tokens = new_game(live_url)
    view = play(live_url, gid, tokens, random.Random(4), until_version=15)
    assert view["status"] == "active"
    mine, _ = collect(live_url, gid, tokens[1], stop_after=view["version"])
    theirs = [d for ev, _, d in mine if d["type"] == "ChoiceCommitted" and d["seat"] != 1]
    own = [d for ev, _, d in mine if d["type"] == "ChoiceCommitted" and d["seat"] == 1]
    assert theirs and all(d["data"] == {} for d in theirs)
    assert own and all(d["data"]["choice"] in ("continue", "return") for d in own)


def test_resume_after_a_dropped_connection(live_url):
    gid, tokens = new_game(live_url, 4)
    rnd = random.Random(2)
    play(live_url, gid, tokens, rnd, until_version=12)
    first, _ = collect(live_url, gid, stop_after=5)  # drop the connection after 5 events
    last = first[-1][1]
    final = play(live_url, gid, tokens, rnd)
    rest, _ = collect(live_url, gid, last_id=last)
    versions = [eid for _, eid, _ in first] + [eid for ev, eid, _ in rest if ev == "game_event"]
    assert versions == list(range(1, final["version"] + 1))
    bad = requests.get(f"{live_url}/v1/games/{gid}/events/stream",
                       headers={"Last-Event-ID": "abc"})
    assert bad.status_code == 400
    again, _ = collect(live_url, gid, last_id="", stop_after=3)  # empty: as if absent
    assert [eid for _, eid, _ in again] == [1, 2, 3]


def test_hundreds_of_subscribers_do_not_starve_actions(live_url):
    subscribers = 200
    gid, tokens = new_game(live_url, 8)
    results = [None] * subscribers
    ready = threading.Barrier(subscribers + 1, timeout=60)

    def follow(i):
        ready.wait()
        results[i] = collect(live_url, gid, timeout=120)[0]

    threads = [threading.Thread(target=follow, args=(i,)) for i in range(subscribers)]
    for t in threads:
        t.start()
    ready.wait()
    time.sleep(1.0)
    latencies = []
    rnd = random.Random(5)
    while True:
        view = requests.get(f"{live_url}/v1/games/{gid}").json()
        if view["status"] != "active":
            break
        seat = rnd.choice([a["seat"] for a in view["awaiting"]])
        t0 = time.perf_counter()
        requests.post(f"{live_url}/v1/games/{gid}/actions",
                      headers={"Authorization": f"Bearer {tokens[seat]}"},
                      json={"action": {"type": "decide",
                                       "choice": rnd.choice(["continue", "return"])}})
        latencies.append(time.perf_counter() - t0)
    for t in threads:
        t.join(120)
    final = view["version"]
    for got in results:
        assert got is not None and got[-1][0] == "end"
        assert [eid for ev, eid, _ in got if ev == "game_event"] == list(range(1, final + 1))
    latencies.sort()
    p99 = latencies[int(0.99 * (len(latencies) - 1))]
    print(f"actions with {subscribers} subscribers: n={len(latencies)} "
          f"median={statistics.median(latencies) * 1000:.1f}ms p99={p99 * 1000:.1f}ms")
    assert p99 < 2.0


def test_viewers_with_different_redaction_on_one_game(live_url):
    """Three subscribers per seat and three spectators on one game (one hub per gunicorn
    worker): each gets every event once, in order, redacted for its own seat while the game
    runs, the same bytes as the others of its class; the command that ends the game is public."""
    gid, tokens = new_game(live_url)
    viewers = [0, 1, 2, None] * 3
    got = [[] for _ in viewers]

    def follow(i, viewer):
        headers = {"Authorization": f"Bearer {tokens[viewer]}"} if viewer is not None else {}
        with requests.get(f"{live_url}/v1/games/{gid}/events/stream", headers=headers,
                          stream=True, timeout=120) as r:
            for event, eid, data in parse(r.iter_lines()):
                if event != "comment":
                    got[i].append((event, eid, data))
                if event == "end":
                    return

    threads = [threading.Thread(target=follow, args=(i, v)) for i, v in enumerate(viewers)]
    for t in threads:
        t.start()
    rnd = random.Random(6)
    while True:  # one command at a time, each seen by everybody before the next
        view = requests.get(f"{live_url}/v1/games/{gid}").json()
        if view["status"] != "active":
            break
        before_last = view["version"]
        deadline = time.monotonic() + 30
        while not all(g and g[-1][1] == before_last for g in got):
            assert time.monotonic() < deadline, "a subscriber fell behind"
            time.sleep(0.01)
        seat = rnd.choice([a["seat"] for a in view["awaiting"]])
        requests.post(f"{live_url}/v1/games/{gid}/actions",
                      headers={"Authorization": f"Bearer {tokens[seat]}"},
                      json={"action": {"type": "decide",
                                       "choice": rnd.choice(["continue", "return"])}})
    for t in threads:
        t.join(60)
    final = view["version"]
    public, _ = collect(live_url, gid)  # after the end: everything
    for viewer in (0, 1, 2, None):
        streams = [g for g, v in zip(got, viewers) if v == viewer]
        assert streams[0] == streams[1] == streams[2]
        events = streams[0]
        assert events[-1] == public[-1] and events[-1][0] == "end"
        assert [eid for ev, eid, _ in events if ev == "game_event"] == list(range(1, final + 1))
        assert events[before_last:] == public[before_last:]  # the last command: public
        choices = [d for ev, eid, d in events[:before_last] if d["type"] == "ChoiceCommitted"]
        assert {d["seat"] for d in choices} == {0, 1, 2}
        for d in choices:
            if d["seat"] == viewer:
                assert d["data"]["choice"] in ("continue", "return")
            else:
                assert d["data"] == {}
