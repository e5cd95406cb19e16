"""Benchmark: a Swiss tournament of ``--players`` (32) participants run to its end in one
process (``GameService`` on an embedded Valkey, no HTTP, no worker): wall time, and the time of
each pairing (``Tournaments.advance`` once the round's games are over: recording them, pairing,
creating and writing the next round's games), against the pure pairing alone
(``engine.tournament``). Every participant leaves its games at once and the clock's automatic
move (random) plays its seats, run here as the bot jobs would.

    .venv/bin/python bench/tournament.py [--players 32] [--rounds 5] [--type tides-of-time]
                                         [--seats 2] [--duplicate]

Prints a human summary, then one JSON line (the last line of output).
"""

from __future__ import annotations

import argparse
import json
import statistics
import time

import redis

from _harness import Redis, machine
from service.application import GameService, NullScheduler
from service.config import Config
from service.engine.tournament import Tournament


def finish(svc: GameService, game_id: str) -> None:
    table = svc.load(game_id)
    for seat, c in enumerate(table.shell.controllers):
        if c.human:
            svc.resign(game_id, seat)
    while not (table := svc.load(game_id)).over:
        for seat in table.awaiting():
            svc.play_bot(game_id, seat, table.version)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--players", type=int, default=32)
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--type", default="tides-of-time")
    ap.add_argument("--seats", type=int, default=2)
    ap.add_argument("--duplicate", action="store_true")
    args = ap.parse_args()
    server = Redis()
    try:
        client = redis.Redis.from_url(server.db(0))
        svc = GameService.configured(Config(redis_url=server.db(0)), client,
                                     scheduler=NullScheduler())
        ids = [svc.players.create(f"P{i}", "human")["id"] for i in range(args.players)]
        start = time.perf_counter()
        shown = svc.tournaments.create({
            "name": "bench", "type": args.type, "format": "swiss", "rounds": args.rounds,
            "seats_per_game": args.seats, "participants": ids, "duplicate": args.duplicate,
            "rated": False})
        tid = shown["id"]
        first_ms = (time.perf_counter() - start) * 1000
        pair_ms, play_s, pure_ms = [], [], []
        while shown["status"] != "finished":
            t0 = time.perf_counter()
            for g in shown["rounds"][-1]["games"]:
                finish(svc, g["id"])
            play_s.append(time.perf_counter() - t0)
            t0 = time.perf_counter()
            svc.tournaments.advance(tid)
            pair_ms.append((time.perf_counter() - t0) * 1000)
            events = svc.tournaments.store.events(tid)
            if events[-1]["type"] == "RoundPaired":  # the pure decision alone, again
                before = Tournament.of(events[:-1])
                t0 = time.perf_counter()
                before.plan()
                pure_ms.append((time.perf_counter() - t0) * 1000)
            shown = svc.tournaments.show(tid)
        wall = time.perf_counter() - start
        games = sum(len(r["games"]) for r in shown["rounds"])
        out = {"bench": "tournament", "players": args.players, "rounds": args.rounds,
               "type": args.type, "seats": args.seats, "duplicate": args.duplicate,
               "games": games, "wall_s": round(wall, 2),
               "create_with_round1_ms": round(first_ms, 1),
               "advance_ms": [round(x, 1) for x in pair_ms],
               "advance_median_ms": round(statistics.median(pair_ms), 1),
               "pure_pairing_ms": [round(x, 2) for x in pure_ms],
               "play_s_per_round": [round(x, 2) for x in play_s], "machine": machine()}
        print(f"{args.players}-player Swiss of {args.type}, {args.rounds} rounds, {games} "
              f"games: {wall:.1f} s wall; creation + round 1 {first_ms:.0f} ms; each later "
              f"round's advance (record + pair + create) median {out['advance_median_ms']} ms "
              f"(the pure pairing {statistics.median(pure_ms or [0]):.2f} ms)")
        print(json.dumps(out))
    finally:
        server.stop()


if __name__ == "__main__":
    main()
