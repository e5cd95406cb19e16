"""Random complete Diamant games over the API, all seats human, checked at every step against
the independent reference implementation (tests/reference/diamant_ref.py): awaited seats, legal
actions, every seat's and a spectator's view, the result, and that no served event or view shows
a seat's pending choice or chest to anybody else."""

import random

import pytest

from service.engine.rng import Rng
from tests.reference.diamant_ref import DiamantRef

from .helpers import auth


def play_one(client, n, game_seed: int, pick_seed: int, svc=None, drop_snapshots=False):
    seed_hex = f"{game_seed:064x}"
    seed = bytes.fromhex(seed_hex)
    r = client.post("/v1/games", json={"type": "diamant", "seed": seed_hex,
                                       "players": [{"name": f"p{i}"} for i in range(n)]})
    assert r.status_code == 201
    created = r.get_json()
    gid, tokens = created["id"], [s["token"] for s in created["seats"]]
    ref = DiamantRef(n, Rng(seed, 1))
    rnd = random.Random(pick_seed)
    version = created["version"]
    steps = 0
    while True:
        views = {}
        for viewer in list(range(n)) + [None]:
            view = client.get(f"/v1/games/{gid}",
                              headers=auth(tokens[viewer] if viewer is not None else None))
            views[viewer] = view.get_json()
            assert views[viewer]["version"] == version
            assert views[viewer]["state"] == ref.view(viewer), (steps, viewer)
            assert [a["seat"] for a in views[viewer]["awaiting"]] == ref.awaiting()
        for seat in range(n):
            legal = client.get(f"/v1/games/{gid}/legal-actions", headers=auth(tokens[seat]))
            assert legal.get_json()["actions"] == ref.legal(seat)
        if ref.over:
            result = views[None]["result"]
            expected = ref.result()
            assert {k: result[k] for k in ("scores", "ranks", "winners")} == expected
            assert views[None]["status"] == "finished"
            break
        seat = rnd.choice(ref.awaiting())
        action = rnd.choice(ref.legal(seat))
        r = client.post(f"/v1/games/{gid}/actions", json={"action": action},
                        headers=auth(tokens[seat]))
        assert r.status_code == 201, r.get_json()
        ref.act(seat, action, Rng(seed, version + 1))
        body = r.get_json()
        assert body["events"][0]["version"] == version + 1
        version = body["version"]
        for ev in body["events"]:
            assert "deck" not in ev["data"] or ref.over
        steps += 1
        if drop_snapshots and steps % 7 == 0:
            svc.store.delete_snapshots(gid)
            svc.drop_caches()
    # the whole log is public after the end, and consistent with the versions
    log = client.get(f"/v1/games/{gid}/events?limit=1000").get_json()["events"]
    assert [e["version"] for e in log] == list(range(1, version + 1))
    return gid, tokens, version


@pytest.mark.parametrize("n", [3, 4, 5, 8])
def test_random_games_match_the_reference(client, n):
    for k in range(3):
        play_one(client, n, game_seed=1000 * n + k, pick_seed=k)


def test_no_pending_choice_leaks_to_other_callers(client):
    """Seat 0 commits; every other caller's views, logs and legal actions are byte-identical
    whichever choice it made (so nothing served can tell the choice apart)."""
    seen = {}
    for choice in ("continue", "return"):
        r = client.post("/v1/games", json={"type": "diamant", "seed": "cd" * 32,
                                           "players": [{"name": f"p{i}"} for i in range(4)]})
        gid, tokens = r.get_json()["id"], [s["token"] for s in r.get_json()["seats"]]
        assert client.post(f"/v1/games/{gid}/actions", headers=auth(tokens[0]),
                           json={"action": {"type": "decide", "choice": choice}}).status_code == 201
        served = []
        for viewer in [1, 2, 3, None]:
            h = auth(tokens[viewer] if viewer is not None else None)
            view = client.get(f"/v1/games/{gid}", headers=h).get_json()
            view.pop("id"), view.pop("created_at")
            log = client.get(f"/v1/games/{gid}/events", headers=h).get_json()["events"]
            for e in log:
                e.pop("at")
            served.append((view, log,
                           client.get(f"/v1/games/{gid}/legal-actions", headers=h).get_json()))
            # a late second commit gets the same 409 whatever seat 0 chose
        err = client.post(f"/v1/games/{gid}/actions", headers=auth(tokens[0]),
                          json={"action": {"type": "decide", "choice": "continue"}}).get_json()
        served.append(err)
        seen[choice] = served
    assert seen["continue"] == seen["return"]


def test_deleting_snapshots_and_cache_changes_no_answer(client, svc):
    """Snapshots every 10 events (conftest); dropping them and the cache mid-game is harmless,
    and every past state read without them equals the one read with them."""
    gid, tokens, version = play_one(client, 5, game_seed=77, pick_seed=3, svc=svc,
                                    drop_snapshots=True)
    with_snaps = [client.get(f"/v1/games/{gid}/states/{v}", headers=auth(tokens[1])).get_json()
                  for v in range(1, version + 1)]
    assert svc.store.r.zcard(f"cartouche:{{{gid}}}:snapv") > 0 or version < 20
    svc.store.delete_snapshots(gid)
    svc.drop_caches()
    without = [client.get(f"/v1/games/{gid}/states/{v}", headers=auth(tokens[1])).get_json()
               for v in range(1, version + 1)]
    assert with_snaps == without
