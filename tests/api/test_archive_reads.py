"""Archiving changes no answer: random games of every type (its first variant, small) and an
aborted game, every read recorded over the API as each seat, a
spectator and a platform key; then the game is archived (its stream, seed and snapshots replaced
by one zstd document) and every read must answer the same bytes, with this process's caches
warm and again cleared (as a fresh process reads it)."""

from __future__ import annotations

import hashlib
import random
import time

import orjson
import pytest

from service.app import create_app
from service.application import NullScheduler
from service.config import Config
from service.games import GAMES
from service.store import keys

from .helpers import auth

KEY = "platform-archive-key"
#: Random play wanders in Papyrus; its turn limit keeps the game small.
EXTRA = {"papyrus": {"turn_limit": 12}}
CASES = [(t, {**(g.variants[0]["options"] if g.variants else {}), **EXTRA.get(t, {})},
          max(g.min_players, 2)) for t, g in GAMES.items()]


@pytest.fixture
def api(redis_url):
    app = create_app(Config(redis_url=redis_url, snapshot_every=10,
                            platform_key_digests=(hashlib.sha256(KEY.encode()).hexdigest(),)),
                     scheduler=NullScheduler())
    return app.test_client(), app.extensions["cartouche"]


def create(client, type_, options, n):
    r = client.post("/v1/games", headers=auth(KEY), json={
        "type": type_, "players": [{"name": f"p{i}"} for i in range(n)], "options": options})
    assert r.status_code == 201, r.get_json()
    return r.get_json()["id"], [s["token"] for s in r.get_json()["seats"]]


def play_out(client, svc, gid, tokens, seed: int) -> tuple[dict, bytes]:
    """Random legal actions over the API, each with an Idempotency-Key, until the game ends;
    the last request (headers and body) and its answer."""
    rnd = random.Random(seed)
    for i in range(2000):
        table = svc.load(gid)
        seat = rnd.choice(table.awaiting())
        last = {"json": {"action": rnd.choice(table.game.legal_actions(table.state, seat))},
                "headers": {**auth(tokens[seat]), "Idempotency-Key": f"k{i}"}}
        r = client.post(f"/v1/games/{gid}/actions", **last)
        assert r.status_code == 201, r.get_json()
        if svc.load(gid).over:
            return last, r.data
    raise AssertionError("the game did not end")


def reads(client, gid, tokens, version, type_) -> dict[str, bytes]:
    """Every read of a game over as every viewer, by name, as served (bytes)."""
    viewers = {"spectator": None, "platform": KEY,
               **{f"seat{i}": token for i, token in enumerate(tokens)}}
    mid = max(1, version // 2)
    out = Answers()
    for name, token in viewers.items():
        h = auth(token)
        out[f"{name} view"] = client.get(f"/v1/games/{gid}", headers=h)
        out[f"{name} legal"] = client.get(f"/v1/games/{gid}/legal-actions", headers=h)
        for v in sorted({1, 2, mid, version - 1, version} - {0}):
            out[f"{name} state {v}"] = client.get(f"/v1/games/{gid}/states/{v}", headers=h)
        out[f"{name} state past"] = client.get(f"/v1/games/{gid}/states/{version + 1}",
                                               headers=h)
        for after, limit in ((0, 1000), (0, 7), (mid, 5), (version, 10)):
            out[f"{name} events {after} {limit}"] = client.get(
                f"/v1/games/{gid}/events?after={after}&limit={limit}", headers=h)
        out[f"{name} sse"] = client.get(f"/v1/games/{gid}/events/stream", headers=h)
        out[f"{name} sse from {mid}"] = client.get(f"/v1/games/{gid}/events/stream",
                                                   headers={**h, "Last-Event-ID": str(mid)})
        out[f"{name} export"] = client.get(f"/v1/games/{gid}/export", headers=h)
    out["verify"] = client.post("/v1/replays/verify", json=orjson.loads(out["spectator export"][1]))
    out["act"] = client.post(f"/v1/games/{gid}/actions", headers=auth(tokens[0]),
                             json={"action": {"type": "x"}})
    out["act expected"] = client.post(f"/v1/games/{gid}/actions", headers=auth(tokens[0]),
                                      json={"action": {"type": "x"}, "expected_version": 1})
    out["resign"] = client.post(f"/v1/games/{gid}/resign", headers=auth(tokens[0]))
    out["abort"] = client.post(f"/v1/games/{gid}/abort", headers=auth(KEY))
    for query in ("", "?status=finished", "?status=aborted", f"?type={type_}"):
        out[f"list {query}"] = client.get(f"/v1/games{query}")
    return out


class Answers(dict):
    """Responses by name, kept as (status, body) read at once (an event stream's body is
    read to its end before the next request)."""

    def __setitem__(self, name, response) -> None:
        body = response.get_data()
        response.close()
        super().__setitem__(name, (response.status_code, body))


def fork_log(client, gid, at) -> tuple[int, bytes]:
    """The events a fork at ``at`` copied (its own creation aside)."""
    r = client.post(f"/v1/games/{gid}/fork", json={"version": at}, headers=auth(KEY))
    if r.status_code != 201:
        return r.status_code, r.data
    fork = r.get_json()["id"]
    return 201, client.get(f"/v1/games/{fork}/events?after=1&limit=1000").data


def assert_same_after_archive(client, svc, gid, tokens):
    table = svc.load(gid)
    version = table.version
    forks = [fork_log(client, gid, at) for at in (version, 2)]  # first: they list themselves
    before = reads(client, gid, tokens, version, table.game.type_id)
    assert before["spectator export"][0] == 200
    assert before["verify"][1].startswith(b'{"valid":true')

    assert svc.archive(gid) == "ok"
    assert svc.archive(gid) == "done"
    r = svc.store.r
    assert r.exists(keys.events(gid), keys.seed(gid), keys.snapshots(gid),
                    keys.snapshot_versions(gid)) == 0
    assert r.exists(keys.archive(gid), keys.meta(gid)) == 2

    for fresh in (False, True):  # this process's caches warm, then as a new process
        if fresh:
            svc.drop_caches()
        after = reads(client, gid, tokens, version, table.game.type_id)
        for name in before:
            assert after[name] == before[name], (name, fresh)
    assert [fork_log(client, gid, at) for at in (version, 2)] == forks


@pytest.mark.parametrize("type_,options,n", CASES, ids=[c[0] for c in CASES])
def test_every_read_of_a_finished_game_is_the_same_archived(api, type_, options, n):
    client, svc = api
    gid, tokens = create(client, type_, options, n)
    last, answered = play_out(client, svc, gid, tokens, seed=n)
    assert svc.load(gid).status == "finished"
    assert_same_after_archive(client, svc, gid, tokens)
    again = client.post(f"/v1/games/{gid}/actions", **last)  # its Idempotency-Key's answer
    assert (again.status_code, again.data) == (201, answered)


def test_every_read_of_an_aborted_game_is_the_same_archived(api):
    client, svc = api
    gid, tokens = create(client, "diamant", {}, 3)
    assert client.post(f"/v1/games/{gid}/abort", headers=auth(KEY)).status_code == 200
    assert svc.load(gid).status == "aborted"
    assert_same_after_archive(client, svc, gid, tokens)


def test_a_hub_reading_a_game_archived_under_it_serves_the_document_and_ends(redis_url):
    """A hub started while the game ran (at version ``mid``) whose stream is archived before
    it read the end: its blocking read finds no stream, serves the rest from the document and
    hands out the end event, as it would have from the stream."""
    from service.api.hub import ENDED, Hubs
    from service.api.sources import GameSource

    app = create_app(Config(redis_url=redis_url), scheduler=NullScheduler())
    client, svc = app.test_client(), app.extensions["cartouche"]
    gid, tokens = create_plain(client)
    play_out(client, svc, gid, tokens, seed=3)
    mid = svc.load(gid).version // 2
    r = client.get(f"/v1/games/{gid}/events/stream", headers={"Last-Event-ID": str(mid)})
    body = r.get_data()
    r.close()
    assert svc.archive(gid) == "ok"
    svc.drop_caches()
    hubs = Hubs(GameSource(svc, app.extensions["cartouche_streams"]), keepalive_ms=400)
    feed, at = hubs.join(gid, None, mid)
    served, state, deadline = [], None, time.monotonic() + 5
    while state != ENDED:  # the hub wakes the feed at least every 100 ms (keep-alives)
        assert time.monotonic() < deadline, "the hub never ended"
        items, state, end = feed.take()
        served += [item.data for item in items]
    assert b"retry: 2000\n\n" + b"".join(served) + end == body


def create_plain(client):
    r = client.post("/v1/games", json={"type": "diamant",
                                       "players": [{"name": f"p{i}"} for i in range(3)]})
    assert r.status_code == 201
    return r.get_json()["id"], [s["token"] for s in r.get_json()["seats"]]
