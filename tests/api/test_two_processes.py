"""Two API processes on one event store (two apps here): an action answers from the
process's cached game without reading the store first (GameService.load_for_command), so these
check that a cached game another process has moved on never yields a wrong answer: the
conditional append turns a stale decision into a reload, and a refusal decided on the cache is
decided again on the stored game before it is served."""

from service.app import create_app
from service.config import Config

from tests.api.helpers import act, auth, create, record_commands


def _two(redis_url, queue_url):
    a = create_app(Config(redis_url=redis_url, queue_url=queue_url))
    b = create_app(Config(redis_url=redis_url, queue_url=queue_url))
    return a.test_client(), b.test_client()


def _awaited(client, gid):
    return [x["seat"] for x in client.get(f"/v1/games/{gid}").get_json()["awaiting"]]


def test_a_refusal_on_a_stale_cache_is_decided_again_on_the_stored_game(redis_url, queue_url):
    a, b = _two(redis_url, queue_url)
    gid, tokens, _ = create(a, n=3, seed="11" * 32)
    # A caches the game with seat 0 committed for this turn
    assert act(a, gid, tokens[0]).status_code == 201
    # B completes the turn: the cave advances, seat 0 is awaited again
    assert act(b, gid, tokens[1]).status_code == 201
    assert act(b, gid, tokens[2]).status_code == 201
    assert 0 in _awaited(b, gid)
    # on A's cached game seat 0 has already committed (409): A must not answer from it
    res = act(a, gid, tokens[0])
    assert res.status_code == 201, res.get_json()
    assert res.get_json()["version"] == b.get(f"/v1/games/{gid}").get_json()["version"]


def test_expected_version_is_compared_with_the_stored_game(redis_url, queue_url):
    a, b = _two(redis_url, queue_url)
    gid, tokens, _ = create(a, n=3, seed="12" * 32)
    assert act(a, gid, tokens[0]).status_code == 201
    assert act(b, gid, tokens[1]).status_code == 201  # A's cache is one version behind
    current = b.get(f"/v1/games/{gid}").get_json()["version"]
    stale = act(a, gid, tokens[2], expected_version=current - 1)
    assert stale.status_code == 409
    assert stale.get_json()["error"]["details"]["current_version"] == current
    fresh = act(a, gid, tokens[2], expected_version=current)
    assert fresh.status_code == 201, fresh.get_json()


def test_a_stale_accept_is_re_decided_and_both_processes_agree(redis_url, queue_url):
    a, b = _two(redis_url, queue_url)
    gid, tokens, _ = create(a, n=3, seed="13" * 32)
    for _ in range(6):  # alternate processes; each acts on a cache the other moved on
        status = a.get(f"/v1/games/{gid}").get_json()
        if status["status"] != "active":
            break
        for k, seat in enumerate(_awaited(a, gid)):
            client = (a, b)[k % 2]
            assert act(client, gid, tokens[seat]).status_code == 201
    events_a = a.get(f"/v1/games/{gid}/events", headers=auth(tokens[0])).get_json()
    events_b = b.get(f"/v1/games/{gid}/events", headers=auth(tokens[0])).get_json()
    assert events_a == events_b
    versions = [e["version"] for e in events_a["events"]]
    assert versions == sorted(set(versions))


def test_a_game_played_through_both_processes_in_turn_is_read_first_not_appended_in_vain(
        redis_url, queue_url):
    """Where a game's commands come through two processes in turn (clients without kept-alive
    connections, a balancer), each process's cached game is behind at every command. After its
    first lost append there, a process reads the game first: one read and one append a command,
    not a refused append, a read and an append. Once the game's commands come through it
    alone, it answers from its cache again (one append, no read)."""
    apps = [create_app(Config(redis_url=redis_url, queue_url=queue_url)) for _ in range(2)]
    clients = [app.test_client() for app in apps]
    sent = [record_commands(app.extensions["cartouche"].store.r) for app in apps]
    gid, tokens, _ = create(clients[0], n=3, seed="14" * 32)

    def scripts(process: int, seat: int) -> int:
        """Act for ``seat`` through ``process``: how many script calls the command made."""
        before = len(sent[process])
        res = act(clients[process], gid, tokens[seat])  # every seat continues: all awaited
        assert res.status_code == 201, res.get_json()
        assert set(sent[process][before:]) == {"EVALSHA"}
        return len(sent[process]) - before

    in_turn = [scripts(k % 2, k % 3) for k in range(12)]
    # the second process never saw the game: a read. Then each finds its cache behind once:
    # the first loses an append (its decision stood on the cache), the second has seat 0's
    # new turn refused on it (decided again after a read). From then on: a read, an append.
    assert in_turn[:4] == [1, 2, 3, 2], in_turn
    assert in_turn[4:] == [2] * 8, in_turn
    # the first process alone: a read finds the other's last command, the next finds nothing
    # new, and the cache serves the third
    assert [scripts(0, seat) for seat in range(3)] == [2, 2, 1]


def test_a_command_stores_the_shell_only_when_it_changes_and_another_process_reads_it(
        redis_url, queue_url):
    """A command's last envelope carries the shell (seats' controllers, clock, end) only when
    the command changed it; a process that never saw the game rebuilds the same shell from the
    newest one stored: the same view as the process that played it."""
    import redis

    # Jobs go to a queue no worker reads: the bot that plays seat 2 after its resignation must
    # not append between the test's reads (the session's RQ worker would play it at any time).
    a, b = _two(redis_url, queue_url.rsplit("/", 1)[0] + "/9")
    gid, tokens, _ = create(a, n=3, seed="15" * 32)
    stream = f"cartouche:{{{gid}}}:events"
    r = redis.Redis.from_url(redis_url)

    def shells_after(version: int) -> list[bool]:
        import json
        return ["shell" in json.loads(fields[b"e"])
                for _, fields in r.xrange(stream, f"{version + 1}-0", "+")]

    created = r.xlen(stream)
    for seat in range(3):
        assert act(a, gid, tokens[seat]).status_code == 201
    assert not any(shells_after(created))  # nothing changed the shell
    before_resign = r.xlen(stream)
    assert a.post(f"/v1/games/{gid}/resign", headers=auth(tokens[2])).status_code == 200
    assert shells_after(before_resign)[-1]  # seat 2 is now played for: stored
    after_resign = r.xlen(stream)
    for seat in range(2):
        assert act(a, gid, tokens[seat]).status_code == 201
    assert not any(shells_after(after_resign))
    for token in (None, tokens[0], tokens[2]):
        assert b.get(f"/v1/games/{gid}", headers=auth(token)).get_json() == \
            a.get(f"/v1/games/{gid}", headers=auth(token)).get_json()
    controllers = [p["controller"] for p in b.get(f"/v1/games/{gid}").get_json()["players"]]
    assert controllers[:2] == ["human", "human"] and controllers[2] != "human", controllers
