"""Scale-out: the event store on a real 3-master Redis Cluster, queues on a separate plain
server, two gunicorn instances and two RQ workers. Many concurrent games of every type with bots
and humans, a client alternating instances, an SSE stream followed on one instance while acting
through the other, clocks, and a master killed and restarted (AOF) mid-play."""

import json
import os
import random
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import pytest
import requests
from redis.crc import key_slot

from service import embedded
from service.replay import verify
from service.store import connect, keys
from service.store.players import NoticePage, PlayerStore
from service.store.tournaments import RUNNING_KEY, TournamentStore, events_key
from service.webhooks import WebhookStore
from tests.reliability.procs import wait_until
from tests.webhooks.test_webhooks import Receiver

ROOT = Path(__file__).resolve().parents[2]
EXTRA = {"papyrus": {"turn_limit": 40}}


def spawn(args, env, log):
    return subprocess.Popen(args, cwd=ROOT, env=env, stdout=log, stderr=subprocess.STDOUT,
                            preexec_fn=embedded._die_with_parent)


@pytest.fixture(scope="module")
def deployment():
    tmp = Path(tempfile.mkdtemp(prefix="cartouche-cluster-"))
    cluster = embedded.start_cluster(tmp / "cluster")
    queue = embedded.start(tmp / "queue", unix_socket=False)
    env = dict(os.environ, EVENTSTORE_URL=cluster.url, QUEUE_URL=queue.url,
               REDIS_URL=queue.url, WEB_CONCURRENCY="2", CARTOUCHE_SSE_KEEPALIVE_MS="1000")
    log = open(tmp / "services.log", "w")
    procs, urls = [], []
    gunicorn = str(Path(sys.executable).parent / "gunicorn")
    for _ in range(2):
        port = embedded.free_port()
        procs.append(spawn([gunicorn, "--config", "python:service.gunicorn_conf", "--bind",
                            f"127.0.0.1:{port}", "service.app:wsgi()"], env, log))
        urls.append(f"http://127.0.0.1:{port}")
    for i in range(2):
        procs.append(spawn([sys.executable, "-m", "workers.main", "--name", f"w{i}"]
                           + (["--with-scheduler"] if i == 0 else []), env, log))
    deadline = time.monotonic() + 40
    for url in urls:
        while True:
            try:
                if requests.get(f"{url}/readyz", timeout=1).status_code == 200:
                    break
            except requests.RequestException:
                pass
            assert time.monotonic() < deadline, (tmp / "services.log").read_text()[-3000:]
            time.sleep(0.2)
    yield {"urls": urls, "cluster": cluster, "queue": queue, "tmp": tmp}
    for p in procs:
        p.terminate()
    for p in procs:
        try:
            p.wait(10)
        except subprocess.TimeoutExpired:
            p.kill()
    cluster.stop()
    queue.stop()
    log.close()


def test_every_key_of_a_game_maps_to_one_slot():
    for gid in ("0123456789abcdef0123", "ffffffffffffffffffff", "a"):
        ks = keys.all_of_game(gid) + [keys.idempotency(gid, "k")]
        assert len({key_slot(k.encode()) for k in ks}) == 1


def test_a_quota_on_a_cluster_is_charged_before_the_append(deployment):
    """The event store on a cluster: rate-limit counters live in other slots than the game, so
    a quota is charged by its own call (one per identity) before the append, with the same
    outcomes as inside the script on a single server."""
    from service.store.connect import client
    from service.store.events import EventStore
    from service.store.quota import Quota

    store = EventStore(client(deployment["cluster"].url))
    gid = "c1a55e7" + "0" * 13
    env = {"type": "Test", "seat": None, "data": {}, "at": None, "schema": 1}
    store.create(gid, {"type": "diamant", "created_ms": "1", "tokens": "[]",
                       "status": "active", "created_version": "1"}, "00" * 32, [env])
    counters = (("cartouche:rl:{tok:c1}:9", "cartouche:rl:{tok:c1}:8"),
                ("cartouche:rl:{ip:c1}:9", "cartouche:rl:{ip:c1}:8"))
    assert len({key_slot(c[0].encode()) for c in counters}
               | {key_slot(keys.events(gid).encode())}) == 3
    q = Quota(counters, (5, 1), 60_000, 0.0)
    res = store.append(gid, 1, [env], quota=q, reads=[("XLEN", keys.events(gid))])
    assert (res.outcome, res.version, res.reads) == ("ok", 2, (2,)) and q.charged
    res = store.append(gid, 2, [env], quota=Quota(counters, (5, 1), 60_000, 0.0))
    assert res.outcome == "limited" and res.charged.counts == ((2, 0), (2, 0))
    assert store.version(gid) == 2


def test_a_creation_on_a_cluster_lists_its_games_or_leaves_none(deployment):
    """On a cluster the game index lives in other slots than a game: the store lists each
    game right after writing it, and a creation that fails part-way deletes and unlists the
    games it wrote, so none is left stored or listed."""
    from service.store.connect import client
    from service.store.events import EventStore

    store = EventStore(client(deployment["cluster"].url))
    env = {"type": "Test", "seat": None, "data": {}, "at": None, "schema": 1}
    meta = {"type": "diamant", "created_ms": "1", "tokens": "[]", "status": "waiting",
            "created_version": "1"}

    everywhere = {"all", "type:diamant", "status:waiting", "type-status:diamant:waiting"}

    def listed(gid):
        return {s for s in everywhere if store.r.zscore(f"cartouche:index:{s}", gid) is not None}

    ids = ["c7ea7e" + f"{i:014x}" for i in range(3)]
    store.create_many([(gid, meta, "00" * 32, [env], ("diamant", 11)) for gid in ids[:2]])
    assert [listed(gid) for gid in ids[:2]] == [everywhere] * 2
    # the second game's id is taken: the first one written is deleted and unlisted
    with pytest.raises(KeyError):
        store.create_many([(ids[2], meta, "00" * 32, [env], ("diamant", 12)),
                           (ids[0], meta, "00" * 32, [env], ("diamant", 12))])
    assert listed(ids[2]) == set() and store.version(ids[2]) == 0
    assert listed(ids[0]) == everywhere
    assert store.version(ids[0]) == 1


class Client:
    """Alternates between the instances on every request."""

    def __init__(self, urls, seed):
        self.urls, self.n = urls, seed
        self.session = requests.Session()

    def url(self):
        self.n += 1
        return self.urls[self.n % len(self.urls)]

    def get(self, path, **kw):
        return self.session.get(self.url() + path, timeout=30, **kw)

    def post(self, path, **kw):
        return self.session.post(self.url() + path, timeout=30, **kw)


def play_game(urls, type_, n, options, humans, seed, out):
    c = Client(urls, seed)
    rnd = random.Random(seed)
    players = [{"name": f"h{i}"} if i in humans else {"name": f"b{i}", "bot": {"level": "random"}}
               for i in range(n)]
    r = c.post("/v1/games", json={"type": type_, "players": players, "options": options})
    assert r.status_code == 201, r.text
    gid, tokens = r.json()["id"], [s["token"] for s in r.json()["seats"]]
    acked = []
    deadline = time.monotonic() + 150
    while time.monotonic() < deadline:
        view = c.get(f"/v1/games/{gid}").json()
        if view["status"] != "active":
            break
        mine = [a["seat"] for a in view["awaiting"] if a["seat"] in humans]
        if not mine:
            time.sleep(0.02)
            continue
        seat = rnd.choice(mine)
        h = {"Authorization": f"Bearer {tokens[seat]}", "Idempotency-Key": f"{gid}-{len(acked)}"}
        legal = c.get(f"/v1/games/{gid}/legal-actions", headers=h).json()["actions"]
        if not legal:
            continue
        res = c.post(f"/v1/games/{gid}/actions", headers=h,
                     json={"action": rnd.choice(legal)})
        if res.status_code == 201:
            acked.append((res.json()["events"][0]["version"], res.json()["version"]))
        else:
            assert res.status_code in (409, 503), res.text  # raced a bot, or a timeout
    out[gid] = {"type": type_, "acked": acked}


def check_game(c, gid, acked):
    view = c.get(f"/v1/games/{gid}").json()
    assert view["status"] == "finished", (gid, view["version"])
    log = c.get(f"/v1/games/{gid}/events?limit=1000").json()["events"]
    if view["version"] <= 1000:
        assert [e["version"] for e in log] == list(range(1, view["version"] + 1))
    for first, last in acked:
        assert last <= view["version"] and log[first - 1]["version"] == first
    export = c.get(f"/v1/games/{gid}/export").json()
    outcome = verify(export)
    assert outcome["valid"], outcome
    return export


def test_many_games_on_the_cluster_across_two_instances(deployment):
    urls = deployment["urls"]
    tables = [("diamant", 4, {}, {0, 1}), ("tides-of-time", 2, {}, {0}),
              ("pharaohs-wall", 3, {}, {1}), ("scarabya", 2, {"mode": "duel"}, {0}),
              ("papyrus", 3, EXTRA["papyrus"], {2}), ("diamant", 8, {}, set()),
              ("scarabya", 3, {"mode": "standard"}, {0, 2}), ("tides-of-time", 2, {}, set())]
    out = {}
    threads = [threading.Thread(target=play_game, args=(urls, t, n, o, h, i, out))
               for i, (t, n, o, h) in enumerate(tables * 2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(200)
    assert len(out) == len(tables) * 2
    c = Client(urls, 0)
    for gid, info in out.items():
        check_game(c, gid, info["acked"])
    # listed under their end status, off the active list (the index lives in other slots)
    listed = {status: {g["id"] for g in c.get(f"/v1/games?status={status}&per_page=100")
                       .json()["games"]} for status in ("finished", "active")}
    assert set(out) <= listed["finished"] and not set(out) & listed["active"]
    diamant = c.get("/v1/games?type=diamant&status=finished&per_page=100").json()
    assert {g for g, info in out.items() if info["type"] == "diamant"} <= \
        {g["id"] for g in diamant["games"]} and diamant["total"] == len(diamant["games"])
    # the index by type and status, kept on the cluster too; rebuilt there chunk by chunk
    from service.games import GAMES
    from service.store import keys
    from service.store.connect import client
    from service.store.events import STATUSES, EventStore

    store = EventStore(client(deployment["cluster"].url), game_types=tuple(GAMES))
    assert store.type_status_consistent()
    store.r.set(keys.index_rebuild_lock(), "1", ex=600)  # the workers' sweeps keep off
    store.r.delete(*(keys.index_type_status(t, s) for t in GAMES for s in STATUSES))
    assert not store.type_status_consistent()
    assert c.get("/v1/games?type=diamant&status=finished&per_page=100").json() == diamant
    store.rebuild_type_status_index()
    assert store.type_status_consistent()
    assert c.get("/v1/games?type=diamant&status=finished&per_page=100").json() == diamant
    store.r.delete(keys.index_rebuild_lock())
    # the sweep's page of the active games: the index and the cursor live in other slots
    store.r.delete(keys.sweep_cursor())
    assert {g for g, _ in store.sweep_page(10_000)} == \
        {g.decode() for g in store.r.zrange(keys.index_status("active"), 0, -1)}
    far = 3600 * (10**7 + int(time.time()) % 10**6)  # a window no worker reaches
    assert store.claim_sweep_window(3600, far) and not store.claim_sweep_window(3600, far)


def test_sse_on_one_instance_while_acting_through_the_other(deployment):
    a, b = deployment["urls"]
    r = requests.post(f"{b}/v1/games", json={"type": "diamant",
                                             "players": [{"name": f"p{i}"} for i in range(3)]})
    gid, tokens = r.json()["id"], [s["token"] for s in r.json()["seats"]]
    got = []

    def follow():
        with requests.get(f"{a}/v1/games/{gid}/events/stream", stream=True, timeout=120) as s:
            for line in s.iter_lines():
                if line.startswith(b"id: "):
                    got.append(int(line[4:]))
                if line == b"event: end":
                    return

    t = threading.Thread(target=follow)
    t.start()
    rnd = random.Random(9)
    while True:
        view = requests.get(f"{b}/v1/games/{gid}").json()
        if view["status"] != "active":
            break
        seat = rnd.choice([x["seat"] for x in view["awaiting"]])
        requests.post(f"{b}/v1/games/{gid}/actions",
                      headers={"Authorization": f"Bearer {tokens[seat]}"},
                      json={"action": {"type": "decide", "choice": rnd.choice(
                          ["continue", "return"])}})
    t.join(60)
    assert got[:-1] == list(range(1, view["version"] + 1)) and got[-1] == view["version"]


def test_clocks_fire_once_on_the_cluster(deployment):
    a, b = deployment["urls"]
    r = requests.post(f"{a}/v1/games", json={
        "type": "diamant", "players": [{"name": f"p{i}"} for i in range(3)],
        "options": {"clock": {"per_decision_ms": 1000, "timeout": "auto"}}})
    gid = r.json()["id"]
    deadline = time.monotonic() + 90
    while requests.get(f"{b}/v1/games/{gid}").json()["status"] == "active":
        assert time.monotonic() < deadline
        time.sleep(0.3)
    export = requests.get(f"{b}/v1/games/{gid}/export").json()
    assert verify(export)["valid"]
    timeouts = [e for e in export["events"] if e.get("cmd", {}).get("timeout")]
    commits = [e for e in export["events"] if e["type"] == "ChoiceCommitted"]
    assert timeouts and len(timeouts) == len(commits)  # one timeout per decision, no double


def test_a_tournament_runs_to_its_end_on_the_cluster(deployment):
    """A tournament's stream and record share a slot, its running index lives in another:
    created, listed as running, its game played by the workers' bots, finished by their job
    and listed as finished, off the running list; a creation past the running limit writes
    nothing."""
    a, b = deployment["urls"]
    r = requests.post(f"{a}/v1/tournaments", json={
        "name": "Cluster Cup", "type": "tides-of-time", "format": "swiss", "rounds": 1,
        "seats_per_game": 2, "participants": ["bot-random", "bot-heuristic"]}, timeout=10)
    assert r.status_code == 201, r.text
    tid = r.json()["id"]

    def listed(status):
        found = requests.get(f"{b}/v1/tournaments?status={status}", timeout=10).json()
        return {t["id"] for t in found["tournaments"]}

    def read():
        return requests.get(f"{b}/v1/tournaments/{tid}", timeout=10).json()

    def finished():
        if (now := read())["status"] == "finished":
            return now
        if tid not in listed("running"):  # off the list: it finished since the read above
            assert (now := read())["status"] == "finished"
            return now
        return None

    shown = wait_until(finished, 120, "the tournament to finish", 0.3)
    assert [g["status"] for rnd in shown["rounds"] for g in rnd["games"]] == ["finished"]
    assert tid in listed("finished") and tid not in listed("running")

    store = TournamentStore(connect.client(deployment["cluster"].url))
    running, late = store.r.zcard(RUNNING_KEY), "t-00000000000000cc"
    assert store.append(late, 0, [{"type": "TournamentCreated", "data": {}}], max_events=5,
                        max_running=running, now_ms=1, status="running") == "full"
    assert not store.r.exists(events_key(late)) and store.r.zcard(RUNNING_KEY) == running


def test_a_player_stream_on_the_cluster(deployment):
    """The player stream's page (its notices and whether it has dropped some, read in one
    step: a cluster client's MULTI answers unparsed replies) on the cluster, and over HTTP."""
    players = PlayerStore(connect.client(deployment["cluster"].url), stream_max=5)
    ids = [players.notify("p-00000000000000cc", "x", {"i": i}) for i in range(300)]
    page = players.page("p-00000000000000cc", "0-0", count=1000)
    kept = [n.id for n in page.notices]
    assert 5 <= len(kept) < 300 and kept == ids[-len(kept):] and page.oldest == kept[0]
    assert [n.data["i"] for n in players.page("p-00000000000000cc", ids[-3], count=9).notices] \
        == [298, 299]
    assert players.page("p-00000000000000dd", "0-0", count=9) == NoticePage([], None)

    a, b = deployment["urls"]
    ada, bob = (requests.post(f"{a}/v1/players", json={"name": n}, timeout=10).json()
                for n in ("Ada", "Bob"))
    for who in (ada, bob):
        r = requests.post(f"{b}/v1/seeks", json={"type": "tides-of-time", "seats": 2},
                          headers={"Authorization": f"Bearer {who['token']}"}, timeout=10)
        assert r.status_code == 201, r.text
    game = r.json()["game_id"]
    with requests.get(f"{a}/v1/players/me/events/stream", stream=True, timeout=30,
                      headers={"Authorization": f"Bearer {ada['token']}"}) as s:
        assert s.status_code == 200
        seen = []
        for line in s.iter_lines():
            if line.startswith(b"event: "):
                seen.append(line[7:].decode())
            elif line.startswith(b"data: ") and seen and seen[-1] in ("game_start",
                                                                        "your_turn"):
                assert game in line.decode()
                if seen[-1] == "your_turn":  # a script's write, on the player's slot
                    break
    assert seen[:3] == ["seek_matched", "game_start", "your_turn"]


def test_webhook_deliveries_on_the_cluster(deployment):
    """A subscription in the cluster's store gets every command of a game, in order, delivered
    by the workers (its outbox on the cluster, its jobs on the queue's server)."""
    a, b = deployment["urls"]
    receiver = Receiver()
    try:
        WebhookStore(connect.client(deployment["cluster"].url)).create(
            receiver.url + "/cluster", ["diamant"], None, None, now_ms=int(time.time() * 1000))
        r = requests.post(f"{a}/v1/games", json={
            "type": "diamant", "players": [{"name": f"p{i}"} for i in range(3)]}, timeout=10)
        gid, tokens = r.json()["id"], [s["token"] for s in r.json()["seats"]]
        rnd = random.Random(11)
        while (view := requests.get(f"{b}/v1/games/{gid}", timeout=10).json())["status"] \
                == "active":
            seat = rnd.choice([x["seat"] for x in view["awaiting"]])
            requests.post(f"{(a, b)[seat % 2]}/v1/games/{gid}/actions", timeout=10,
                          headers={"Authorization": f"Bearer {tokens[seat]}"},
                          json={"action": {"type": "decide",
                                           "choice": rnd.choice(["continue", "return"])}})
        def delivered():
            got = [json.loads(x["body"]) for x in receiver.at("/cluster")]
            return got if got and got[-1]["last_version"] == view["version"] else None

        got = wait_until(delivered, 60, "the game's last version to be delivered", 0.1)
    finally:
        receiver.close()
    assert {d["game_id"] for d in got} == {gid}
    assert [d["first_version"] for d in got] == \
        [1] + [d["last_version"] + 1 for d in got[:-1]]  # every version once, in order
    assert got[-1]["status"] == "finished"


def test_a_rated_seek_filled_with_bots_on_the_cluster(deployment):
    """The platform's jobs on the cluster: a seek filled with a bot by a worker once due, the
    game played out by the workers' bots after its player resigns, rated by the rating job,
    and the player on the leaderboard."""
    a, b = deployment["urls"]
    ada = requests.post(f"{a}/v1/players", json={"name": "Ada"}, timeout=10).json()
    mine = {"Authorization": f"Bearer {ada['token']}"}
    r = requests.post(f"{a}/v1/seeks", headers=mine, timeout=10, json={
        "type": "tides-of-time", "seats": 2,
        "fill_with_bots": {"after_s": 1, "level": "random"}})
    assert r.status_code == 201, r.text

    def until(url, done):
        def found():
            answer = requests.get(url, headers=mine, timeout=10).json()
            return answer if done(answer) else None
        return wait_until(found, 60, f"{url} to answer as wanted", 0.2)

    seek = until(f"{b}/v1/seeks/{r.json()['id']}", lambda s: s["status"] == "matched")
    gid = seek["game_id"]
    assert requests.post(f"{b}/v1/games/{gid}/resign", headers=mine, timeout=10).ok
    until(f"{a}/v1/games/{gid}", lambda g: g["status"] == "finished")
    board = until(f"{b}/v1/leaderboards/tides-of-time", lambda x: x["provisional"])
    rated = {p["id"]: p for p in board["provisional"]}
    assert rated[ada["id"]]["games"] == 1 and rated[ada["id"]]["mu"] < 25  # she resigned: lost
    assert "bot-random" in rated


def test_a_master_killed_and_restarted_loses_nothing(deployment):
    urls, cluster = deployment["urls"], deployment["cluster"]
    c = Client(urls, 5)
    victim_slots = range(16384 // 3, 2 * 16384 // 3)  # node 1's range (start_cluster)

    def on_victim(gid):
        return key_slot(keys.events(gid).encode()) in victim_slots

    games = []
    while (len(games) < 12 or sum(on_victim(gid) for gid, _ in games) < 3
           or sum(not on_victim(gid) for gid, _ in games) < 3):
        assert len(games) < 200  # ids are random: each lands on node 1 with chance 1/3
        r = c.post("/v1/games", json={"type": "diamant",
                                      "players": [{"name": f"p{k}"} for k in range(3)]})
        games.append((r.json()["id"], [s["token"] for s in r.json()["seats"]]))
    acked = {gid: [] for gid, _ in games}

    def move(gid, tokens, rnd):
        view = c.get(f"/v1/games/{gid}")
        if view.status_code != 200 or view.json()["status"] != "active":
            return view.status_code
        seat = rnd.choice([x["seat"] for x in view.json()["awaiting"]])
        res = c.post(f"/v1/games/{gid}/actions", headers={
            "Authorization": f"Bearer {tokens[seat]}"}, json={
            "action": {"type": "decide", "choice": rnd.choice(["continue", "return"])}})
        if res.status_code == 201:
            acked[gid].append(res.json()["version"])
        return res.status_code

    rnd = random.Random(1)
    for _ in range(3):
        for gid, tokens in games:
            move(gid, tokens, rnd)
    victim_port = cluster.ports[1]
    cluster.kill(1)
    statuses = set()
    t0 = time.monotonic()
    while time.monotonic() - t0 < 4:
        for gid, tokens in games:
            statuses.add(move(gid, tokens, rnd))
    assert 503 in statuses  # the slots of the dead master answer 503 with Retry-After
    dead = [gid for gid, _ in games if on_victim(gid)]
    r = c.get(f"/v1/games/{dead[0]}")
    assert r.status_code == 503 and r.headers.get("Retry-After") == "1"
    cluster.restart(1)
    assert cluster.ports[1] == victim_port
    deadline = time.monotonic() + 30
    while True:  # the service recovers by itself
        if c.get(f"/v1/games/{dead[0]}").status_code == 200:
            break
        assert time.monotonic() < deadline
        time.sleep(0.2)
    for _ in range(3):
        for gid, tokens in games:
            move(gid, tokens, rnd)
    for gid, _ in games:
        log = c.get(f"/v1/games/{gid}/events?limit=1000").json()["events"]
        versions = [e["version"] for e in log]
        assert versions == list(range(1, len(log) + 1))
        assert set(acked[gid]) <= set(versions)
