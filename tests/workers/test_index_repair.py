"""The game index by type and status after an upgrade from a version without it: listings stay
right while it is missing, and the workers' sweep rebuilds it."""

from __future__ import annotations

from service.store import keys
from service.store.events import STATUSES
from tests.api.helpers import create, player, table
from workers import jobs


def test_the_sweep_rebuilds_the_index_by_type_and_status_after_an_upgrade(app, client,
                                                                          monkeypatch):
    svc = app.extensions["cartouche"]
    monkeypatch.setattr(jobs, "_service", svc)
    for game_type, seats in (("diamant", 3), ("diamant", 4), ("tides-of-time", 2),
                             ("diamant", 3), ("tides-of-time", 2)):
        create(client, seats, type_=game_type)  # active
    ada = player(client)
    for game_type, seats in (("diamant", 3), ("tides-of-time", 2), ("diamant", 4)):
        table(client, ada, [{"player": ada["id"]}] + [{"open": True}] * (seats - 1),
              type_=game_type)  # waiting for players
    queries = {(t, s, p): f"/v1/games?type={t}&status={s}&per_page=2&page={p}"
               for t in ("diamant", "tides-of-time") for s in STATUSES for p in (1, 2)}
    before = {q: client.get(url).get_json() for q, url in queries.items()}
    assert [before[t, s, 1]["total"] for t in ("diamant", "tides-of-time")
            for s in ("active", "waiting")] == [3, 2, 2, 1]
    # what a store written by a version without the index holds
    svc.store.r.delete(*(keys.index_type_status(t, s) for t in svc.store.game_types
                         for s in STATUSES))
    assert not svc.store.type_status_consistent()
    assert {q: client.get(url).get_json() for q, url in queries.items()} == before
    jobs.sweep()
    assert svc.store.type_status_consistent()
    assert svc.store.r.zcard(keys.index_type_status("diamant", "active")) == 3
    assert {q: client.get(url).get_json() for q, url in queries.items()} == before
