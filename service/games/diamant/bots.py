"""Diamant bots: heuristic, rollout policy, determinizer, and the depth cap for ISMCTS.

Heuristic ("expected loss against expected gain", one step ahead)
----------------------------------------------------------------
From the public view only. The deck composition is public (spec section 7): the 35 cards minus
the path, the removed cards and the relics already brought back. With ``N`` cards in the deck,
``n`` players in the cave (the deciding seat included) and the trap types already on the path:

* ``p = D / N`` where ``D`` = the deck's cards of a trap type already on the path (the
  probability that the next card ends the round);
* ``G = (1/N) * sum(v // n for every treasure v in the deck)`` — the expected pocket gain of the
  next card (traps and relics count 0);
* ``A = pocket + path_rubies // n + (value of the relics on the path if n == 1)`` — what is at
  stake: the pocket plus what returning now is expected to bring from the path.

Continuing one more card and then returning is worth ``(1 - p) * A + G``; returning now is worth
``A``. So the seat **returns iff ``p * A > G``** (the expected loss from the known traps outweighs
the expected gain of the next card), and continues otherwise (always while ``p == 0``). The
choice is a secret commit: when the two are nearly equal (within ``MIX`` of the larger) the seat
picks either, from its secret stream (``engine.bots.mix``), so that nobody running this rule on
the public view can read its choice before the reveal.

Rollout policy (inside simulations, on a determinized full state): the same rule computed from
the state's deck *composition* (never its order), with the threshold jittered by a factor drawn
uniformly from [0.6, 1.4] so that simulated opponents are not all identical.

Determinizer: keeps everything public as it is, samples a uniformly random order of the public
deck composition, reconstructs the other seats' chests from the public log (every amount that
enters a chest is public when banked: ``PlayersReturned`` and the relic values), and samples the
committed-but-hidden choices of other seats in the cave with the rollout policy. Relic card ids
are interchangeable; taken ones come from the log (``relics_taken``) when it is complete.

Depth cap for ISMCTS (``horizon``/``evaluate``): a simulation stops at the end of the current
round. The observer's reward there is a logistic estimate of winning given the chests and the
rounds left: ``1 / (1 + exp(-(chest_me - best_other_chest) / (8 * sqrt(rounds_left))))``, and the
exact win share when the game is over.
"""

from __future__ import annotations

import math
import random

from ...engine import clone
from ...engine.bots import BotHooks, mix
from .data import (CANONICAL, RELIC_VALUES, RELICS, ROUNDS, TRAP_TYPE, TRAP_TYPES,
                   TREASURE_VALUE)

RETURN = {"type": "decide", "choice": "return"}
CONTINUE = {"type": "decide", "choice": "continue"}
#: Near-equal: the expected loss and gain within this share of the larger (the heuristic mixes).
MIX = 0.35
#: Logistic scale per remaining round at the depth cap (about 0.8 x the spread of one round's
#: haul of a player).
EVAL_SCALE = 8.0


def _relic_value(brought_back: int, k: int) -> int:
    return sum(RELIC_VALUES[min(brought_back + i, len(RELIC_VALUES) - 1)] for i in range(k))


def leave_margin(deck, path, pocket: int, path_rubies: int, n_in: int,
                 brought_back: int) -> tuple[float, float]:
    """``(p * A, G)`` of the module docstring for a deck *composition* (any order)."""
    seen = {TRAP_TYPE[c] for c in path if c in TRAP_TYPE}
    total = len(deck)
    if total == 0 or n_in < 1:
        return 0.0, 0.0
    gain = 0
    danger = 0
    tv = TREASURE_VALUE
    tt = TRAP_TYPE
    for c in deck:
        v = tv.get(c)
        if v is not None:
            gain += v // n_in
        elif tt.get(c) in seen:
            danger += 1
    stake = pocket + path_rubies // n_in
    if n_in == 1:
        relics = sum(1 for c in path if c in _RELIC_SET)
        if relics:
            stake += _relic_value(brought_back, relics)
    return danger / total * stake, gain / total


_RELIC_SET = frozenset(RELICS)


def public_deck(view: dict) -> list[str]:
    """The deck composition the view implies (canonical order), relic ids interchangeable."""
    gone = set(view["path"]) | set(view["removed"])
    relics_left = [r for r in RELICS if r not in gone]
    taken = view["relics_brought_back"]
    deck = [c for c in CANONICAL if c not in gone and c not in _RELIC_SET]
    deck += relics_left[taken:]
    return deck


# -- heuristic -----------------------------------------------------------------------------

def heuristic(obs, rnd: random.Random) -> dict:
    legal = obs.legal
    if len(legal) == 1:
        return legal[0]
    view = obs.view
    me = view["players"][obs.seat]
    n_in = sum(1 for p in view["players"] if p["in_cave"])
    loss, gain = leave_margin(public_deck(view), view["path"], me["pocket"], view["path_rubies"],
                              n_in, view["relics_brought_back"])
    choice = mix([(RETURN, loss), (CONTINUE, gain)], rnd, MIX * max(loss, gain))
    return _pick(legal, choice["choice"])


def _pick(legal, choice):
    for a in legal:
        if a.get("choice") == choice:
            return a
    return legal[0]


# -- rollout -------------------------------------------------------------------------------

def rollout(game, state: dict, seat: int, legal: list, rnd: random.Random) -> dict:
    in_cave = state["in_cave"]
    n_in = 0
    for x in in_cave:
        if x:
            n_in += 1
    loss, gain = leave_margin(state["deck"], state["path"], state["pocket"][seat],
                              state["path_rubies"], n_in, state["relics_brought_back"])
    if loss > gain * (0.6 + 0.8 * rnd.random()):
        return RETURN
    return CONTINUE


# -- determinizer --------------------------------------------------------------------------

def _from_log(obs) -> tuple[list[int], list[list[str]], list[int]] | None:
    """Chests, relics taken and relic points per seat from the public log, or None if the log
    does not agree with the view (incomplete log)."""
    n = len(obs.view["players"])
    chest = [0] * n
    pocket = [0] * n
    taken: list[list[str]] = [[] for _ in range(n)]
    points = [0] * n
    for ev in obs.events:
        t = ev.get("type")
        d = ev.get("data") or {}
        if t == "RoundStarted":
            pocket = [0] * n
        elif t == "CardRevealed":
            for s in d.get("recipients", []):
                pocket[s] += d.get("share_each", 0)
        elif t == "PlayersReturned":
            seats = d.get("seats", [])
            for s in seats:
                chest[s] += pocket[s] + d.get("share_each", 0)
                pocket[s] = 0
            if len(seats) == 1 and d.get("relics_taken"):
                v = sum(d.get("relic_values", []))
                chest[seats[0]] += v
                points[seats[0]] += v
                taken[seats[0]].extend(d["relics_taken"])
        elif t == "RoundEndedByTrap":
            pocket = [0] * n
    players = obs.view["players"]
    for s, p in enumerate(players):
        if len(taken[s]) != p["relics"]:
            return None
        if p["chest"] is not None and p["chest"] != chest[s]:
            return None
        if p["in_cave"] and p["pocket"] != pocket[s]:
            return None
    return chest, taken, points


_cache: list = [None, None]


def _template(obs) -> dict:
    if _cache[0] is obs:
        return _cache[1]
    view = obs.view
    players = view["players"]
    n = len(players)
    me = obs.seat
    known = _from_log(obs)
    gone = set(view["path"]) | set(view["removed"])
    free_relics = [r for r in RELICS if r not in gone]
    if known is not None:
        chest, taken, points = known
    else:
        # Incomplete log: relic ids are interchangeable; other chests guessed equal to ours.
        mine = players[me]["chest"] or 0
        chest = [mine] * n
        taken = []
        i = 0
        for p in players:
            taken.append(free_relics[i:i + p["relics"]])
            i += p["relics"]
        points = [0] * n
    taken_ids = {r for t in taken for r in t}
    deck = [c for c in CANONICAL if c not in gone and c not in taken_ids]
    state = {
        "n": n,
        "options": clone(obs.options),
        "round": view["round"],
        "phase": "decision",
        "deck": deck,
        "path": list(view["path"]),
        "path_rubies": view["path_rubies"],
        "removed": list(view["removed"]),
        "relics_brought_back": view["relics_brought_back"],
        "in_cave": [p["in_cave"] for p in players],
        "pocket": [p["pocket"] for p in players],
        "chest": [players[s]["chest"] if players[s]["chest"] is not None else chest[s]
                  for s in range(n)],
        "taken": [list(t) for t in taken],
        "relic_points": list(points),
        "choice": [p["choice"] for p in players],
    }
    committed = [s for s, p in enumerate(players) if p["committed"] and p["choice"] is None]
    tpl = {"state": state, "hidden": committed}
    _cache[0], _cache[1] = obs, tpl
    return tpl


def determinize(obs, rnd: random.Random) -> dict:
    tpl = _template(obs)
    src = tpl["state"]
    state = dict(src)
    deck = list(src["deck"])
    rnd.shuffle(deck)
    state["deck"] = deck
    for key in ("path", "removed", "in_cave", "pocket", "chest", "relic_points", "choice"):
        state[key] = list(src[key])
    state["taken"] = [list(t) for t in src["taken"]]
    state["options"] = src["options"]  # read-only in the rules module
    choice = state["choice"]
    for s in tpl["hidden"]:
        choice[s] = rollout(obs.game, state, s, None, rnd)["choice"]
    return state


# -- depth cap -----------------------------------------------------------------------------

def horizon(state: dict):
    return state["round"]


def evaluate(game, state: dict, seat: int) -> float:
    if game.is_over(state):
        res = game.result(state)
        return 1.0 / len(res["winners"]) if seat in res["winners"] else 0.0
    chest = state["chest"]
    others = max(c for s, c in enumerate(chest) if s != seat)
    left = ROUNDS - state["round"] + 1  # the round just started is still to play
    x = (chest[seat] - others) / (EVAL_SCALE * math.sqrt(max(1, left)))
    return 1.0 / (1.0 + math.exp(-x))


__all__ = ["heuristic", "rollout", "determinize", "horizon", "evaluate", "leave_margin",
           "public_deck", "TRAP_TYPES"]


class Bots(BotHooks):
    """This game's bot hooks (:class:`~service.engine.bots.BotHooks`)."""

    cuts_simulations = True
    heuristic = staticmethod(heuristic)
    determinize = staticmethod(determinize)
    rollout = staticmethod(rollout)
    horizon = staticmethod(horizon)
    evaluate = staticmethod(evaluate)


BOTS = Bots()
