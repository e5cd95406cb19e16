"""Papyrus one-step oracle: is there a better action than the heuristic's, and does the search
see it?

    python bench/papyrus_oracle.py [--seats 2] [--games 3] [--every 20] [--worlds 40]
                                   [--seed 1] [--iterations 100] [--searches 2]

It plays all-heuristic games (every seat the ``heuristic`` level, from its observation). At
every ``--every``-th turn of one seat (seat ``game % seats``; turns with a pending Event
decision are skipped) it asks, for each of the search's candidates (``Bots.candidates``, plus
the heuristic's own choice): what does the end of the game look like if the seat plays this
now and every seat then plays the heuristic (``papyrus.bots.policy``) to the end? It answers on
``--worlds`` determinizations of the seat's observation, one playout per world and candidate,
with the same world and the same random stream for every candidate (common random numbers):
the seat's final score minus its rivals' mean final score (the margin), and its win share. The
same playouts give the search's cut-off reward (``Bots.evaluate``) after 1, 2, 4, 8 and 16
rounds.

Last stdout line, one JSON object:

* ``better`` / ``worse`` of ``compared``: candidates whose mean margin over the heuristic's
  choice (paired by world) is more than 2 standard errors above / below zero; ``mean_diff``:
  the mean of those paired differences over every candidate compared;
* ``split_half``: the correlation, across a state's candidates, of their mean margin on the
  even worlds with that on the odd worlds (mean over states): how reliably ``--worlds``
  playouts tell the candidates apart;
* ``evaluate_corr``: for each cut-off, the correlation across a state's candidates of the mean
  cut-off reward with the mean final margin (mean over states): how well what the search sees
  at its horizon predicts the end;
* with ``--iterations``: ``search`` — ``ismcts.search`` at that count, ``--searches`` times a
  state: how often it overruled the heuristic, and ``gain``: the oracle's margin of its choice
  minus the heuristic's (mean and standard error over the searches).

``states`` lists each sampled turn (game, turn, candidates, the heuristic's index, the mean
margins). Playouts run to the game's end: a state early in a game costs ~``worlds`` x
candidates x 0.1 s.

``--targets`` asks the same of the seat's *target* (the god its plans pursue) instead of its
next action: at the seat's first turn after each ``--every``-th of its conquests (a fresh choice
of target), the candidates are the God cards in its hand, each pursued until it leaves the hand
(``policy(..., target=)``), against the heuristic left to choose (the ``heuristic`` entry, the
first of ``cands``, ``null``); the search is not run.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import random
import statistics
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
if ROOT not in sys.path:
    sys.path.insert(0, ROOT)

from service.engine.bots import SeatLog  # noqa: E402
from service.engine.ismcts import action_key, search, win_share  # noqa: E402
from service.engine.local import LocalGame  # noqa: E402
from service.engine.rng import SimRng  # noqa: E402
from service.engine.runner import command  # noqa: E402
from service.games import GAMES  # noqa: E402
from service.games.papyrus.bots import policy  # noqa: E402

CUTS = (1, 2, 4, 8, 16)
GAME = GAMES["papyrus"]
HOOKS = GAME.bots


def play_out(world: dict, seat: int, first: dict | None, seed: int,
             target: str | None = None) -> dict:
    """``first`` (unless None), then the heuristic for every seat to the end, the seat pursuing
    ``target`` while it holds it: the seat's margin, win share and the search's cut-off reward
    after each of ``CUTS`` rounds."""
    rnd = random.Random(seed)
    rng = SimRng(rnd)
    n = world["n"]
    start = world["turns"]
    state = world if first is None else command(GAME, world, seat, first, rng,
                                                simulated=True)[1]
    cut = {}
    while True:
        for r in CUTS:
            if r not in cut and (state["over"] or state["turns"] - start >= r * n):
                cut[r] = HOOKS.evaluate(GAME, state, seat)
        if state["over"]:
            break
        s = GAME.awaiting(state)[0]
        choice = policy(state, s, GAME.legal_actions(state, s), target if s == seat else None)
        state = command(GAME, state, s, choice, rng, simulated=True)[1]
    scores = GAME.result(state)["scores"]
    return {"margin": scores[seat] - (sum(scores) - scores[seat]) / (n - 1),
            "win": win_share(GAME, state, seat), "cut": cut}


def correlation(xs: list[float], ys: list[float]) -> float | None:
    try:
        return statistics.correlation(xs, ys)
    except statistics.StatisticsError:  # a constant series (e.g. the game is decided)
        return None


def examine(obs, heuristic_choice: dict, worlds: int, rnd: random.Random) -> dict | None:
    """The oracle at one decision: every candidate on the same ``worlds`` worlds."""
    seat = obs.seat
    cands = None
    runs: dict[int, list[dict]] = {}
    for _ in range(worlds):
        world = HOOKS.for_simulation(HOOKS.determinize(obs, rnd))
        legal = GAME.legal_actions(world, seat)
        if cands is None:
            cands = HOOKS.candidates(GAME, world, seat, legal)
            if heuristic_choice not in cands:
                cands.append(heuristic_choice)
        seed = rnd.getrandbits(64)
        keys = {action_key(a) for a in legal}
        for i, a in enumerate(cands):
            # a candidate illegal in some world is left out of the comparison below
            runs.setdefault(i, []).append(play_out(world, seat, a, seed)
                                          if action_key(a) in keys else None)
    full = {i: r for i, r in runs.items() if all(x is not None for x in r)}
    h = cands.index(heuristic_choice)
    if h not in full or len(full) < 2:
        return None
    return {"cands": cands, "heuristic": h, "runs": full}


def examine_targets(obs, worlds: int, rnd: random.Random) -> dict | None:
    """The oracle at a fresh choice of target: the heuristic left to choose (``None``, index 0)
    and every God card in hand pursued, on the same ``worlds`` worlds."""
    cands = [None] + list(obs.view["seats"][obs.seat]["gods"])
    if len(cands) < 3:
        return None
    runs: dict[int, list[dict]] = {i: [] for i in range(len(cands))}
    for _ in range(worlds):
        world = HOOKS.for_simulation(HOOKS.determinize(obs, rnd))
        seed = rnd.getrandbits(64)
        for i, god in enumerate(cands):
            runs[i].append(play_out(world, obs.seat, None, seed, target=god))
    return {"cands": cands, "heuristic": 0, "runs": runs}


def summarize(found: dict) -> dict:
    runs, h = found["runs"], found["heuristic"]
    idx = sorted(runs)
    mean = {i: statistics.mean(x["margin"] for x in runs[i]) for i in idx}
    out = {"margin": [round(mean[i], 2) for i in idx], "index": idx, "better": 0, "worse": 0,
           "diffs": []}
    for i in idx:
        if i == h:
            continue
        d = [a["margin"] - b["margin"] for a, b in zip(runs[i], runs[h])]
        m = statistics.mean(d)
        se = statistics.stdev(d) / math.sqrt(len(d)) if len(d) > 1 else math.inf
        out["diffs"].append(m)
        out["better"] += m > 2 * se
        out["worse"] += m < -2 * se
    ms = [mean[i] for i in idx]
    out["split_half"] = correlation(
        [statistics.mean(x["margin"] for x in runs[i][0::2]) for i in idx],
        [statistics.mean(x["margin"] for x in runs[i][1::2]) for i in idx])
    out["evaluate_corr"] = {r: correlation(ms, [statistics.mean(x["cut"][r] for x in runs[i])
                                                for i in idx]) for r in CUTS}
    return out


def mean_of(xs: list) -> float | None:
    xs = [x for x in xs if x is not None]
    return round(statistics.mean(xs), 3) if xs else None


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--seats", type=int, default=2)
    ap.add_argument("--games", type=int, default=3)
    ap.add_argument("--every", type=int, default=None,
                    help="examine every k-th turn of the seat (default 20; with --targets, the "
                         "turn after every k-th conquest, default 2)")
    ap.add_argument("--targets", action="store_true",
                    help="compare targets (the gods in hand, each pursued) instead of actions")
    ap.add_argument("--worlds", type=int, default=40, help="determinizations per turn examined")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--iterations", type=int, default=None,
                    help="also run the search at this many iterations on each state examined")
    ap.add_argument("--searches", type=int, default=2, help="searches per state")
    args = ap.parse_args(argv)
    if not GAME.min_players <= args.seats <= GAME.max_players or args.seats < 2:
        ap.error(f"--seats must be 2-{GAME.max_players}")
    if args.every is None:
        args.every = 2 if args.targets else 20
    if args.targets and args.iterations:
        ap.error("--iterations runs the search on actions: not with --targets")

    t0 = time.perf_counter()
    states = []
    gains: list[float] = []
    overruled = searched = 0
    for gi in range(args.games):
        me = gi % args.seats
        rnd = random.Random(f"oracle-{args.seed}-{args.seats}-{gi}")
        g = LocalGame(GAME, [{"name": f"h{i}", "bot": {"level": "heuristic"}}
                             for i in range(args.seats)], {},
                      f"oracle-{args.seed}-{args.seats}-{gi}".encode())
        logs = [SeatLog(GAME, g.events[0]["data"], s) for s in range(args.seats)]
        turns = conquests = 0
        while g.awaiting():
            seat = g.awaiting()[0]
            obs = logs[seat].observe(g.events, g.state, g.version, log_start=1)
            choice = HOOKS.heuristic(obs, rnd)
            if seat == me and len(obs.legal) > 1 and obs.view["pending"] is None:
                turns += 1
                if args.targets:
                    conquered = len(obs.view["seats"][me]["conquered"])
                    fresh = conquered != conquests and conquered % args.every == 0
                    conquests = conquered
                    found = examine_targets(obs, args.worlds, rnd) if fresh else None
                elif turns % args.every == 0:
                    found = examine(obs, choice, args.worlds, rnd)
                else:
                    found = None
                if found is not None:
                    row = summarize(found)
                    row.update(game=gi, turn=g.state["turns"], seat=me,
                               heuristic=found["heuristic"], cands=found["cands"])
                    if args.iterations:
                        value = {action_key(found["cands"][i]): m
                                 for i, m in zip(row["index"], row["margin"])}
                        base = value[action_key(choice)]
                        for k in range(args.searches):
                            a = search(obs, HOOKS, random.Random(f"{gi}-{turns}-{k}"),
                                       budget_ms=None, iterations=args.iterations)
                            searched += 1
                            overruled += a != choice
                            if action_key(a) in value:
                                gains.append(value[action_key(a)] - base)
                    states.append(row)
            g.act(seat, choice)

    diffs = [d for s in states for d in s["diffs"]]
    report = {
        "bench": "papyrus_oracle", "compare": "targets" if args.targets else "actions",
        "seats": args.seats, "games": args.games,
        "every": args.every, "worlds": args.worlds, "seed": args.seed,
        "states_examined": len(states),
        "compared": len(diffs),
        "better": sum(s["better"] for s in states),
        "worse": sum(s["worse"] for s in states),
        "mean_diff": mean_of(diffs),
        "split_half": mean_of([s["split_half"] for s in states]),
        "evaluate_corr": {str(r): mean_of([s["evaluate_corr"][r] for s in states])
                          for r in CUTS},
        "seconds": round(time.perf_counter() - t0, 1),
        "load_avg_1min": round(os.getloadavg()[0], 2),
        "states": [{k: s[k] for k in ("game", "turn", "seat", "heuristic", "index", "margin",
                                      "better", "worse")} | {"cands": s["cands"]}
                   for s in states],
    }
    if args.iterations:
        report["search"] = {
            "iterations": args.iterations, "searches": searched, "overruled": overruled,
            "gain": mean_of(gains),
            "gain_se": (round(statistics.stdev(gains) / math.sqrt(len(gains)), 3)
                        if len(gains) > 1 else None)}
    for s in states:
        print(f"game {s['game']} turn {s['turn']}: {len(s['index'])} candidates, "
              f"{s['better']} better / {s['worse']} worse than the heuristic's", file=sys.stderr)
    print(json.dumps(report))
    return 0


if __name__ == "__main__":
    sys.exit(main())
