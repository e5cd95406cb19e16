"""Observations built incrementally (:class:`service.engine.bots.SeatLog`, the path the server's
autoplay takes) equal the ones built from scratch (:func:`service.engine.bots.observe`) at every
decision of random games of every game type, for every seat; :class:`SeatLogs` reads only the
new events and starts over when a game's log does not continue the one it kept."""

from __future__ import annotations

import random

import pytest

from service.engine.bots import LogPrefix, SeatLog, SeatLogs, observe
from service.games import GAMES
from tests.ai import support

#: Seats of the game played per type; a type not listed plays at its ``min_players``.
SEATS = {"scarabya": 2, "papyrus": 3}
#: The catalog variants played per type, with their seats; a type not listed plays every
#: variant it declares (``Game.variants``) at its seats above.
VARIANTS = {"papyrus": [("solo", 2)], "scarabya": [("duel", 2), ("solo", 1)],
            "pharaohs-wall": [("curse-sphinx", 2)], "tides-of-time": []}


def seats(tid: str) -> int:
    return SEATS.get(tid, GAMES[tid].min_players)


def variants() -> list[tuple[str, str, int]]:
    return [(tid, variant, n) for tid in GAMES
            for variant, n in VARIANTS.get(tid, [(v["id"], seats(tid))
                                                 for v in GAMES[tid].variants])]


def _random_game(tid: str, n: int, options: dict, seed: int, max_steps: int) -> None:
    game = GAMES[tid]
    g = support.new_game(game, n, options, f"incr-{tid}-{seed}".encode())
    rnd = random.Random(seed)
    for _ in range(max_steps):
        awaiting = g.awaiting()
        if not awaiting:
            break
        seat = awaiting[rnd.randrange(len(awaiting))]
        for s in range(n):  # every seat, every decision: support.obs_of compares both paths
            obs = support.obs_of(game, g, s)
        g.act(seat, rnd.choice(obs.legal if s == seat else game.legal_actions(g.state, seat)))


@pytest.mark.parametrize("tid", sorted(GAMES))
def test_incremental_equals_from_scratch(tid):
    _random_game(tid, seats(tid), {}, 1, 600)


@pytest.mark.parametrize("tid,variant,n", variants())
def test_incremental_equals_from_scratch_variants(tid, variant, n):
    options = next(v["options"] for v in GAMES[tid].variants if v["id"] == variant)
    _random_game(tid, n, dict(options), 2, 600)


def test_seat_logs_read_only_the_tail_and_restart_on_a_new_log():
    game = GAMES["tides-of-time"]
    g = support.new_game(game, 2, {}, b"seatlogs")
    reads: list[tuple[int, int]] = []

    def reader(g):
        def read(after: int):
            reads.append((after, g.version))
            return g.events[after:]  # versions after ``after`` (version v at index v - 1)
        return read

    logs = SeatLogs(size=4)
    created = g.events[0]["data"]
    rnd = random.Random(0)
    for _ in range(12):
        seat = g.awaiting()[0]
        obs = logs.observe("t", game, created, seat, g.state, g.version, reader(g))
        ref = observe(game, created, g.events[1:], g.state, seat, g.version)
        support.assert_same(obs, ref)
        g.act(seat, rnd.choice(obs.legal))
    # each read starts where the seat's previous one ended
    assert all(after >= 1 for after, _ in reads)
    assert reads[-1][0] > 1
    # a shorter log under the same key (a version that went back): rebuilt from the start
    h = support.new_game(game, 2, {}, b"other")
    obs = logs.observe("t", game, h.events[0]["data"], 0, h.state, h.version, reader(h))
    support.assert_same(obs, observe(game, h.events[0]["data"], h.events[1:], h.state, 0,
                                     h.version))
    # the cache is bounded
    for k in range(10):
        logs.observe(k, game, created, 0, g.state, g.version, reader(g))
    assert len(logs._logs) == 4


def test_log_prefix_is_a_frozen_snapshot():
    items = [1, 2, 3]
    p = LogPrefix(items, 2)
    items.append(4)
    assert list(p) == [1, 2] and len(p) == 2 and p[-1] == 2 and p[:5] == [1, 2]
    assert p == [1, 2] and p != [1, 2, 3]
    with pytest.raises(IndexError):
        p[2]


def test_seat_log_snapshots_do_not_change_later():
    game = GAMES["papyrus"]
    g = support.new_game(game, 2, {}, b"snap")
    log = SeatLog(game, g.events[0]["data"], 0)
    first = log.observe(g.events, g.state, g.version, log_start=1)
    n = len(first.events)
    d = support._fields(first.extra["digest"])
    rnd = random.Random(3)
    for _ in range(30):
        seat = g.awaiting()[0]
        g.act(seat, rnd.choice(g.legal(seat)))
    log.observe(g.events, g.state, g.version, log_start=1)
    assert len(first.events) == n
    assert support._fields(first.extra["digest"]) == d
