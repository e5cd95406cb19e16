"""Game lengths: how many turns and events bot games of each type take, in memory.

    python bench/game_lengths.py [--games N] [--types papyrus ...] [--levels heuristic mcts]
                                 [--seats 2 3] [--mode default solo ...] [--iterations K]
                                 [--budget-ms MS] [--seed S]

Every seat is played by the same level, each choosing from its own observation (as the server
does). Per type, variant, seat count and level it prints the games' event counts (the log's
length, creation event included) and, for Papyrus, turns played (``state["turns"]``): min, mean,
max. The longest games are what ``turn_limit``'s default and ``CARTOUCHE_MAX_EVENTS_PER_GAME``
are set against (docs/every-game-ends.md). mcts is slow: ``--iterations`` bounds each search by
a number of iterations instead of ``--budget-ms`` (say which in any number you publish).
A game still going after ``MAX_STEPS`` decisions is stopped and reported with ``over: false``
(a loop: e.g. two heuristic Papyrus seats exchanging glyphs for ever without a turn cap). The
last stdout line is one JSON object with every figure.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
if ROOT not in sys.path:
    sys.path.insert(0, ROOT)

from service.engine.bots import SeatLog, choose  # noqa: E402
from service.engine.ismcts import search  # noqa: E402
from service.engine.local import LocalGame  # noqa: E402
from service.games import GAMES  # noqa: E402

MAX_STEPS = 40_000


def play(game, level: str, seats: int, options: dict, seed: bytes, rnd: random.Random,
         budget_ms: int, iterations: int | None) -> dict:
    """One game with every seat at ``level``: its event count, turns, steps and seconds."""
    g = LocalGame(game, [{"name": f"{level}{i}", "bot": {"level": level}}
                         for i in range(seats)], dict(options), seed)
    created = g.events[0]["data"]
    logs = [SeatLog(game, created, s) for s in range(seats)]
    t0 = time.perf_counter()
    steps = 0
    while steps < MAX_STEPS:
        awaiting = g.awaiting()
        if not awaiting:
            break
        seat = awaiting[0]
        obs = logs[seat].observe(g.events, g.state, g.version, log_start=1)
        if level == "random":
            action = rnd.choice(obs.legal)
        elif level == "mcts" and iterations is not None and len(obs.legal) > 1:
            action = search(obs, game.bots, rnd, budget_ms=None, iterations=iterations)
        else:
            action = choose(level, obs, rnd, budget_ms=budget_ms)
        g.act(seat, action)
        steps += 1
    return {"events": g.version, "turns": g.state.get("turns"), "steps": steps,
            "over": not g.awaiting(), "seconds": round(time.perf_counter() - t0, 2)}


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser()
    p.add_argument("--games", type=int, default=3)
    p.add_argument("--types", nargs="*", default=sorted(GAMES))
    p.add_argument("--levels", nargs="*", default=["heuristic"])
    p.add_argument("--seats", nargs="*", type=int, default=None)
    p.add_argument("--mode", nargs="*", default=["default"])
    p.add_argument("--options", default="{}", help="JSON options added to every game")
    p.add_argument("--iterations", type=int, default=None)
    p.add_argument("--budget-ms", type=int, default=100)
    p.add_argument("--seed", type=int, default=1)
    args = p.parse_args(argv)
    out = []
    for type_id in args.types:
        game = GAMES[type_id]
        for mode in args.mode:
            options = dict(json.loads(args.options))
            if mode != "default":
                variant = next((v for v in game.variants if v["id"] == mode), None)
                if variant is None:
                    continue
                options.update(variant.get("options", {}))
            counts = args.seats or sorted({game.min_players, game.max_players,
                                           min(max(2, game.min_players), game.max_players)})
            for seats in counts:
                try:
                    game.normalize_options(dict(options), [{"name": "x"}] * seats)
                except Exception:  # noqa: BLE001 - a seat count the variant refuses
                    continue
                for level in args.levels:
                    rnd = random.Random(args.seed)
                    games = [play(game, level, seats, options,
                                  f"lengths-{type_id}-{mode}-{seats}-{i}-{args.seed}".encode(),
                                  rnd, args.budget_ms, args.iterations)
                             for i in range(args.games)]
                    row = {"type": type_id, "mode": mode, "seats": seats, "level": level,
                           "games": games}
                    ev = [x["events"] for x in games]
                    print(f"{type_id:15} {mode:8} {seats} {level:9} events min/mean/max "
                          f"{min(ev)}/{sum(ev) / len(ev):.0f}/{max(ev)} turns "
                          f"{[x['turns'] for x in games]} over {[x['over'] for x in games]} "
                          f"s {[x['seconds'] for x in games]}", flush=True)
                    out.append(row)
    print(json.dumps(out))


if __name__ == "__main__":
    main()
