"""Pharaoh's Wall bots: the heuristic level, the rollout policy, the determinizer and the ISMCTS
hooks (``for_simulation``, ``horizon``, ``evaluate``).

Everything here reads either an :class:`~service.engine.bots.Observation` (``heuristic``,
``determinize``) or a full simulation state that is already a determinization (``rollout`` and
the hooks). Nothing touches the true state of a real game.

The public position model
-------------------------
Both policies work on a small *public position*: the wall, per pillar its occupant, scarab count
and the **eye counts** of its remaining stack (ids/values are never read for stacks), the scarab
supply and the reserves. A sarcophagus of unknown value is worth the mean value of its tier
(:data:`EYE_EV`: 1 eye 3.43, 2 eyes 5.43, 3 eyes 8.14, from the reconstructed data table).

Static worth of a seat ``s`` (only its *changes* are ever used):

* every sarcophagus ``s`` opens: its tier mean;
* every pillar ``s`` occupies whose stack is not empty: ``EV(front) * PROGRESS[scarabs]``
  (0 scarabs 0.30, 1: 0.45, 2: 0.65) — an occupied pillar is a claim on its next sarcophagus;
* the pharaoh bonus: ``7 * P(pharaoh of s is this animal) * w`` for every pillar ``s`` occupies,
  ``w = 0.4 + 0.6 * (cards on the wall / 49)`` (an explorer is likelier to stay late in the game).
  For the deciding seat ``P`` is 1 for its own pharaoh's animal and 0 otherwise; for any other seat
  it is uniform over the animals that are not the decider's pharaoh (never a hidden card);
* every explorer in reserve: ``RESERVE_VALUE`` (0.5, the option to claim a pillar later).

Heuristic (``heuristic(obs, rnd)``)
-----------------------------------
* **insert**: for every legal insert, simulate the explorer step, the scarab step and every
  opening check exactly as the rules do, on the public position. Its *gain* is the change of the
  decider's worth minus the mean change of the other seats' worths (zero-sum in 2 seats). The
  ten best inserts are then charged the **threat**: the expected best gain (its worth change
  minus the decider's) the *next* seat can make on the resulting wall with one insert, for each
  animal/facing weighted by the chance the next seat holds such a card — hypergeometric over the
  cards this seat has not seen (49 minus the wall minus its own hand), the next seat's hand size
  from the view, and ``E[max]`` taken over animals in descending order of gain. The threat weighs
  1.0 with 2 seats and 0.6 with more. Highest ``gain - weight * threat`` wins; ties are broken at
  random.
* **curse_claim / curse_pass**: claim the first listed segment that reads the revealed curse
  sequence on the public wall (either direction, facing ignored); pass when there is none.
* **curse_victim**: the other seat with the most sarcophagus points by tier means (then the most
  sarcophagi).
* **curse_give**: the own sarcophagus of lowest value (then fewest eyes).
* **end phase**: an exact plan over the seat's own scarab moves: every combination of openings
  (the first ``k`` sarcophagi of each own pillar) that its scarabs (3 per opening) and the moves
  left allow, maximising the tier-mean value opened (+0.01 per sarcophagus for the tie-break,
  then fewer moves); ``done`` when no opening is possible.

Rollout (``rollout(game, state, seat, legal, rnd)``)
----------------------------------------------------
The heuristic's one-ply *gain* without the threat, on the (determinized) full state, using the
acting seat's own pharaoh from that state; 10 % of inserts are uniformly random to keep
simulations diverse. Curse rounds, victims, gifts and the end phase are played as by the heuristic.
An insert that forms no pair changes nobody's worth (gain 0) and is not simulated; pairs are found
with :func:`pairs_at` (the rules' ``find_pairs`` over precomputed neighbours). Inside a search the
rollout is the opponents' model (``service.engine.ismcts``: the tree branches on the observer only).

The mcts level: a short horizon and a static evaluation (ISMCTS hooks)
----------------------------------------------------------------------
Playouts to the end of the game (25 turns each, ~5 ms) scored by the win alone were too few and
too noisy: 800 ms gave ~150 of them over ~21 root actions, and mcts lost to the heuristic it uses
as its rollout. Instead each iteration simulates ``HORIZON_ROUNDS`` (3) rounds of turns — the
observer's moves from the tree, the opponents' from ``rollout`` — and stops when the observer is
about to insert again (``for_simulation`` stamps the start turn, ``horizon`` compares); an
iteration that fills the wall first plays the end phase and is scored by the result.

``evaluate`` scores a cut-off as ``sigmoid((margin now - margin at the start) / EVAL_SCALE)``
(scale 3 points): ``margin`` is the observer's ``worths`` minus the best other seat's. Centring on
the iteration's start keeps the reward away from 0 and 1 when one seat leads by many points, so
the moves stay apart by the points they win or lose. ``worths`` counts what the observer may
know only — its own sarcophagus values, the others' by tier mean, its own pharaoh, the others' as
uniform over the six other animals — so the sampled secrets of a determinization add no noise
(and tell nothing). The rest of ``worths`` is the public position model above (claims on held
pillars, the pharaoh bonus weighted by the game's progress, explorers in reserve).

The horizon is what makes mcts stronger than the heuristic (measured with bench/arena.py, 2
seats: 1 round ~ the heuristic's own one-ply threat, 2-5 rounds better, 3 best per iteration
cost); each iteration costs ~0.5 ms, most of it the rules' ``legal_actions``.

What the tree searches (``exact``, ``candidates``, ``prior``, ``next_to_commit``)
-------------------------------------------------------------------------------
Only inserts are searched. Every other decision (``SOLVED_KINDS``: curse claim or pass, curse
victim, curse gift, end-phase scarab move or done) is answered by the heuristic's own rule
(``exact``: the search returns it without an iteration; inside the tree such a node has that one
candidate). Searching them lost games: a curse round lists every straight segment of three
cards (~55 on average), 200 iterations spread over them, and mcts at 200 iterations never once
made the heuristic's claim (0 of 20 claim decisions in 4 curse games), i.e. it gave up nearly
every curse it could have won; its end-phase moves matched the exact plan 18% of the time.

Inserts: at the real decision (the iteration's first observer node) the tree considers the
``ROOT_CANDIDATES`` (8) best by the heuristic's score (one-ply gain minus the next seat's
threat, :func:`threat_scores`, computed on the public position, the seat's hand and pharaoh, so
every determinization gives the same 8; cached per decision), deeper in the tree the
``TREE_CANDIDATES`` (8) best by one-ply gain. The answer is the heuristic's insert (``prior``)
unless the most visited one's mean reward is higher by ``PRIOR_MARGIN`` (0.05). With ~20
legal inserts, 200 iterations gave each ~10 visits and the answer was close to a coin among
near-equal moves: it differed from the heuristic's insert 59 times in 3 curse games (seat 0,
~24 inserts a game), and playing both continuations out from 16 determinizations (both seats
then playing the heuristic) scored those deviations 0.820 against the heuristic's 0.808; with
the candidates and the prior, 31 deviations scored 0.834 against 0.788.

A curse round is a race: the first correct claim wins. In ``bench/arena.py`` (and any
sequential ``LocalGame``) the awaited seats act in seat order, so the lower seat takes every curse
that has a match: heuristic against heuristic, seat 0 received all 108 sarcophagi given by
curses in 100 curse games and won 76% of them (59% in the base game). The engine's default
simulation order (the other seats commit first) handed every race to the opponent;
``next_to_commit`` lets the simulations follow the engine's ``awaiting`` order (seat order)
instead, so mcts values a curse match on the wall as a gain when it claims first and as a loss
when the other seat does. Measured on the same 30 curse games (seed 1, 200 iterations): others
first 56.7%, a uniform draw of the race's order 53.3%, seat order 70.0%. On a live server a
race is decided by which claim arrives first; this model is right where seats claim in order.

Determinizer (``determinize(obs, rnd)``)
---------------------------------------
Builds a full engine state from ``obs.view`` (and ``obs.events`` for sarcophagus ids this seat
legitimately knows, e.g. one it gave away): everything public is copied; the hidden parts are
sampled uniformly and consistently:

* the hieroglyph cards not on the wall and not in this seat's hand are shuffled and dealt to the
  other seats' hands (their public sizes), then the start/draw pile, then the hieroglyphs of the
  main pile;
* the main pile holds the curse cards neither revealed nor done; its top is a curse exactly when
  the view says so;
* the other seats' pharaohs are drawn from the six pharaoh cards this seat does not hold, the rest
  are the unused ones;
* sarcophagus ids of unknown value (all stacks, other seats' sarcophagi) are drawn per tier from
  the ids this seat has not seen.

The deterministic part (the public state as JSON, the pools to draw from) is computed once per
observation and kept for the last observation seen (a search determinizes it thousands of times);
the draws are the same as when it was computed every time.
"""

from __future__ import annotations

import random
from math import comb, exp

import orjson

from .rules import (ANIMALS, CARD_IDS, CARDS, CELLS, CURSE_IDS, CURSES,
                                   DIRECTIONS8, GAME, HEIGHT, LINES4, PHARAOH_BONUS, PHARAOHS,
                                   SARCOPHAGI, TIERS, WIDTH, segment_matches)
from ...engine.bots import BotHooks, Observation
from ...engine.ismcts import action_key

EYE_EV: dict[int, float] = {
    e: sum(SARCOPHAGI[s]["value"] for s in TIERS[e - 1]) / len(TIERS[e - 1]) for e in (1, 2, 3)}
PROGRESS = (0.30, 0.45, 0.65, 0.85)
RESERVE_VALUE = 0.5
THREAT_CANDIDATES = 10
ROLLOUT_EPSILON = 0.10
#: ISMCTS: rounds of turns simulated before ``evaluate`` takes over (see ``horizon``).
HORIZON_ROUNDS = 3
#: ISMCTS: the sigmoid scale of ``evaluate``, in points of margin.
EVAL_SCALE = 3.0
SIM_START = "_sim_start_turn"
SIM_BASE = "_sim_base_margin"
#: A representative card id per (animal, facing), for hypothetical inserts of unseen cards.
REPRESENTATIVE: dict[tuple[str, str], str] = {}
for _cid in CARD_IDS:
    REPRESENTATIVE.setdefault((CARDS[_cid]["animal"], CARDS[_cid]["facing"]), _cid)
_ANIMAL = {c: CARDS[c]["animal"] for c in CARD_IDS}
_FACING = {c: CARDS[c]["facing"] for c in CARD_IDS}
#: King's-move neighbours of every cell, ``_NEIGHBOURS[col][row]``.
_NEIGHBOURS = [[[(c + dc, r + dr) for dc, dr in DIRECTIONS8
                 if 0 <= c + dc < WIDTH and 0 <= r + dr < HEIGHT]
                for r in range(HEIGHT)] for c in range(WIDTH)]


#: Eyes of the Sphinx: per cell its 4 lines (row, column, both diagonals), each the other
#: cells in the order the rules' ``find_pairs`` walks them.
_LINES = [[[[(c + sign * k * dc, r + sign * k * dr) for sign in (-1, 1)
             for k in range(1, max(WIDTH, HEIGHT))
             if 0 <= c + sign * k * dc < WIDTH and 0 <= r + sign * k * dr < HEIGHT]
            for dc, dr in LINES4]
           for r in range(HEIGHT)] for c in range(WIDTH)]


def pairs_at(wall: list[list[str]], col: int, row: int, card: str, sphinx: bool) -> list[dict]:
    """The rules' :func:`find_pairs` (same pairs, same order), faster: precomputed neighbours
    and, with the sphinx, precomputed lines."""
    animal = _ANIMAL[card]
    out = []
    if sphinx:
        for line in _LINES[col][row]:
            found = None
            for c, r in line:
                shaft = wall[c]
                if r < len(shaft) and _ANIMAL[shaft[r]] == animal:
                    if found is not None:
                        found = None
                        break
                    found = (c, r, shaft[r])
            if found is not None:
                c, r, other = found
                out.append({"cell": [c, r], "card": other,
                            "facing": "same" if _FACING[other] == _FACING[card]
                            else "opposite"})
        return out
    for c, r in _NEIGHBOURS[col][row]:
        shaft = wall[c]
        if r < len(shaft):
            other = shaft[r]
            if _ANIMAL[other] == animal:
                out.append({"cell": [c, r], "card": other,
                            "facing": "same" if _FACING[other] == _FACING[card]
                            else "opposite"})
    return out


# ---------------------------------------------------------------------------------------------
# Public position
# ---------------------------------------------------------------------------------------------

class Pub:
    """The public position (see the module docstring). Cheap to copy."""

    __slots__ = ("wall", "occ", "sc", "stack", "supply", "reserves", "n", "sphinx", "weight",
                 "pharaoh_p")

    def copy(self) -> "Pub":
        out = Pub.__new__(Pub)
        out.wall = list(self.wall)
        out.occ = dict(self.occ)
        out.sc = dict(self.sc)
        out.stack = dict(self.stack)
        out.supply = self.supply
        out.reserves = list(self.reserves)
        out.n = self.n
        out.sphinx = self.sphinx
        out.weight = self.weight
        out.pharaoh_p = self.pharaoh_p
        return out


def _pharaoh_probs(n: int, me: int, my_pharaoh: str | None) -> list[dict[str, float]]:
    mine = my_pharaoh[2:] if my_pharaoh else None
    others = [a for a in ANIMALS if a != mine]
    out = []
    for s in range(n):
        if s == me and mine:
            out.append({a: (1.0 if a == mine else 0.0) for a in ANIMALS})
        else:
            out.append({a: (1.0 / len(others) if a in others else 0.0) for a in ANIMALS})
    return out


def _make_pub(wall, pillars_occ, pillars_sc, stacks_eyes, supply, reserves, sphinx, me,
              my_pharaoh) -> Pub:
    p = Pub.__new__(Pub)
    p.wall = [list(c) for c in wall]
    p.occ = pillars_occ
    p.sc = pillars_sc
    p.stack = stacks_eyes
    p.supply = supply
    p.reserves = list(reserves)
    p.n = len(reserves)
    p.sphinx = sphinx
    filled = sum(len(c) for c in wall)
    p.weight = 0.4 + 0.6 * filled / CELLS
    p.pharaoh_p = _pharaoh_probs(p.n, me, my_pharaoh)
    return p


def pub_from_view(view: dict, me: int) -> Pub:
    pil = view["pillars"]
    return _make_pub(view["wall"], {a: pil[a]["occupant"] for a in ANIMALS},
                     {a: pil[a]["scarabs"] for a in ANIMALS},
                     {a: tuple(x["eyes"] for x in pil[a]["stack"]) for a in ANIMALS},
                     view["supply"], view["reserves"], view["variants"]["sphinx"], me,
                     view["pharaohs"][me])


def pub_from_state(state: dict, me: int) -> Pub:
    pil = state["pillars"]
    return _make_pub(state["wall"], {a: pil[a]["occupant"] for a in ANIMALS},
                     {a: pil[a]["scarabs"] for a in ANIMALS},
                     {a: tuple(SARCOPHAGI[s]["eyes"] for s in pil[a]["stack"]) for a in ANIMALS},
                     state["supply"], state["reserves"], state["sphinx"], me,
                     state["pharaohs"][me])


def _pillar_worth(pub: Pub, a: str, occ, sc: int, stack: tuple) -> float:
    if occ is None:
        return 0.0
    w = PHARAOH_BONUS * pub.pharaoh_p[occ][a] * pub.weight
    if stack:
        w += EYE_EV[stack[0]] * PROGRESS[min(sc, 3)]
    return w


def explorer_options(pub: Pub, seat: int, animal: str, pairs: list) -> list:
    """The engine's explorer options (spec 5.3) on the public position."""
    if not pairs:
        return ["none"]
    occ = pub.occ[animal]
    if occ == seat:
        return ["none"]
    if occ is not None and not any(p["facing"] == "same" for p in pairs):
        return ["none"]
    if pub.reserves[seat] > 0:
        return ["none", "reserve"]
    return ["none"] + [{"from_pillar": a} for a in ANIMALS if pub.occ[a] == seat]


def simulate(pub: Pub, seat: int, card: str, col: int, explorer, pairs: list | None = None,
             apply: bool = False) -> list[float]:
    """Worth change of every seat caused by inserting ``card`` into ``col`` (spec 5.1-5.5).

    With ``apply`` the position is updated in place (the wall column is copied first).
    """
    n = pub.n
    delta = [0.0] * n
    a = CARDS[card]["animal"]
    if pairs is None:
        pairs = pairs_at(pub.wall, col, len(pub.wall[col]), card, pub.sphinx)
    occ, sc, stack, supply = pub.occ[a], pub.sc[a], pub.stack[a], pub.supply
    reserves = pub.reserves
    if occ is not None:
        delta[occ] -= _pillar_worth(pub, a, occ, sc, stack)
    src = None
    if explorer != "none":
        if occ is not None:
            delta[occ] += RESERVE_VALUE
            if apply:
                reserves[occ] += 1
        if explorer == "reserve":
            delta[seat] -= RESERVE_VALUE
            if apply:
                reserves[seat] -= 1
        else:
            src = explorer["from_pillar"]
            delta[seat] -= _pillar_worth(pub, src, seat, pub.sc[src], pub.stack[src])
        occ = seat
    if pairs:
        if sc == 3 and occ is not None and stack:
            delta[occ] += EYE_EV[stack[0]]
            stack, sc, supply = stack[1:], 0, supply + 3
        for _ in range(min(len(pairs), 2)):
            if sc >= 3 or supply == 0:
                continue
            sc += 1
            supply -= 1
            if sc == 3 and occ is not None and stack:
                delta[occ] += EYE_EV[stack[0]]
                stack, sc, supply = stack[1:], 0, supply + 3
    if occ is not None:
        delta[occ] += _pillar_worth(pub, a, occ, sc, stack)
    if apply:
        pub.wall[col] = pub.wall[col] + [card]
        pub.occ[a], pub.sc[a], pub.stack[a], pub.supply = occ, sc, stack, supply
        if src is not None:
            pub.occ[src] = None
    return delta


def _relative(delta: list[float], seat: int) -> float:
    n = len(delta)
    if n == 1:
        return delta[seat]
    return delta[seat] - (sum(delta) - delta[seat]) / (n - 1)


def insert_gains(pub: Pub, seat: int, legal: list[dict]) -> list[tuple[float, dict]]:
    cache: dict[tuple, list] = {}
    out = []
    for act in legal:
        if act["type"] != "insert":
            continue
        key = (act["card"], act["column"])
        if key not in cache:
            c = act["column"]
            cache[key] = pairs_at(pub.wall, c, len(pub.wall[c]), act["card"], pub.sphinx)
        d = simulate(pub, seat, act["card"], act["column"], act["explorer"], cache[key])
        out.append((_relative(d, seat), act))
    return out


# ---------------------------------------------------------------------------------------------
# Threat: what the next seat can do on the resulting wall
# ---------------------------------------------------------------------------------------------

def unseen_counts(view: dict, me: int) -> dict[tuple[str, str], int]:
    counts = {k: 0 for k in REPRESENTATIVE}
    seen = {c for col in view["wall"] for c in col} | set(view["hands"][me] or [])
    for cid in CARD_IDS:
        if cid not in seen:
            counts[(CARDS[cid]["animal"], CARDS[cid]["facing"])] += 1
    return counts


def threat(pub: Pub, me: int, opp: int, hand: int, counts: dict) -> float:
    """Expected best relative gain of ``opp`` with one insert from an unseen hand of ``hand``."""
    total = sum(counts.values())
    if hand <= 0 or total == 0:
        return 0.0
    best: dict[tuple[str, str], float] = {}
    for col in range(WIDTH):
        row = len(pub.wall[col])
        if row >= HEIGHT:
            continue
        for key, card in REPRESENTATIVE.items():
            if not counts[key]:
                continue
            pairs = pairs_at(pub.wall, col, row, card, pub.sphinx)
            if not pairs:
                continue
            for opt in explorer_options(pub, opp, key[0], pairs):
                d = simulate(pub, opp, card, col, opt, pairs)
                g = d[opp] - d[me]
                if g > best.get(key, 0.0):
                    best[key] = g
    if not best:
        return 0.0
    per_animal = []
    denom = comb(total, min(hand, total))
    for a in ANIMALS:
        u = counts[(a, "LEFT")] + counts[(a, "RIGHT")]
        if not u:
            continue
        g = (counts[(a, "LEFT")] * best.get((a, "LEFT"), 0.0)
             + counts[(a, "RIGHT")] * best.get((a, "RIGHT"), 0.0)) / u
        if g <= 0:
            continue
        p_hold = 1.0 - comb(total - u, min(hand, total)) / denom
        per_animal.append((g, p_hold))
    per_animal.sort(reverse=True)
    exp, none_yet = 0.0, 1.0
    for g, p in per_animal:
        exp += g * p * none_yet
        none_yet *= 1.0 - p
    return exp


# ---------------------------------------------------------------------------------------------
# Non-insert decisions (shared by heuristic and rollout)
# ---------------------------------------------------------------------------------------------

def claim_for(wall: list[list[str]], sequence: list[str], legal: list[dict]) -> dict:
    for act in legal:
        if act["type"] == "curse_claim" and segment_matches(wall, act["cells"], sequence):
            return act
    return {"type": "curse_pass"}


def end_move(pub: Pub, seat: int, legal: list[dict], moves_left: int) -> dict:
    """The first move of an optimal own scarab-move plan (or ``done``).

    Every opening uses 3 scarabs from the seat's own pillars (they then leave the game), so a plan
    is a number of openings ``k`` per own pillar (its first ``k`` sarcophagi, front first) with
    ``3 * sum(k) <= scarabs there`` and ``sum(3k - scarabs at the target) <= moves left``. All plans
    are enumerated (at most 4^5); the best by tier-mean value (+0.01 per sarcophagus, then fewer
    moves) is followed: one scarab from a pillar outside the plan to the target that is closest
    to its 3 scarabs.
    """
    mine = [a for a in ANIMALS if pub.occ[a] == seat]
    sc = [pub.sc[a] for a in mine]
    total = sum(sc)
    best_plan, best_key = None, (0.0, 0)
    plans = [([], 0.0, 0, 0)]  # (k per pillar so far, value, openings, moves)
    for i, a in enumerate(mine):
        stack = pub.stack[a]
        grown = []
        for ks, value, count, moves in plans:
            v = value
            for k in range(len(stack) + 1):
                if k:
                    v += EYE_EV[stack[k - 1]]
                if 3 * (count + k) > total:
                    break
                extra = 3 * k - sc[i] if k else 0
                grown.append((ks + [k], v, count + k, moves + extra))
        plans = grown
    for ks, value, count, moves in plans:
        if count == 0 or moves > moves_left:
            continue
        key = (value + 0.01 * count, -moves)
        if best_plan is None or key > best_key:
            best_plan, best_key = ks, key
    done = {"type": "done"}
    if best_plan is not None:
        targets = [i for i, k in enumerate(best_plan) if k > 0 and sc[i] < 3]
        sources = [i for i, k in enumerate(best_plan) if k == 0 and sc[i] > 0]
        if targets and sources:
            t = max(targets, key=lambda i: sc[i])
            want = {"type": "move_scarab", "from": mine[sources[0]], "to": mine[t]}
            if want in legal:
                return want
    return done if done in legal else legal[0]


def _victim(legal: list[dict], sarcophagi: list[list[dict]]) -> dict:
    def key(act):
        own = sarcophagi[act["seat"]]
        return (sum(EYE_EV[x["eyes"]] for x in own), len(own), -act["seat"])
    return max(legal, key=key)


def _give(legal: list[dict]) -> dict:
    return min(legal, key=lambda a: (SARCOPHAGI[a["sarcophagus"]]["value"],
                                     SARCOPHAGI[a["sarcophagus"]]["eyes"], a["sarcophagus"]))


# ---------------------------------------------------------------------------------------------
# heuristic
# ---------------------------------------------------------------------------------------------

def heuristic(obs: Observation, rnd: random.Random) -> dict:
    legal = obs.legal
    if len(legal) == 1:
        return legal[0]
    view, me = obs.view, obs.seat
    kind = legal[0]["type"]
    if kind in ("curse_claim", "curse_pass"):
        return claim_for(view["wall"], view["curse"]["sequence"], legal)
    if kind == "curse_victim":
        return _victim(legal, view["sarcophagi"])
    if kind == "curse_give":
        return _give(legal)
    pub = pub_from_view(view, me)
    if kind in ("move_scarab", "done"):
        left = 16 - view["end"]["moves"][me] if view.get("end") else 16
        return end_move(pub, me, legal, left)
    scored = [(g + rnd.random() * 1e-6, i, a) for i, (g, a) in
              enumerate(insert_gains(pub, me, legal))]
    scored.sort(reverse=True)
    n = pub.n
    opp = (me + 1) % n
    counts = unseen_counts(view, me)
    hand = view["hand_sizes"][opp]
    weight = 1.0 if n == 2 else 0.6
    best, best_score = scored[0][2], None
    for g, _, act in scored[:THREAT_CANDIDATES]:
        after = pub.copy()
        simulate(after, me, act["card"], act["column"], act["explorer"], apply=True)
        after.weight = pub.weight + 0.6 / CELLS
        score = g - weight * threat(after, me, opp, hand, counts)
        if best_score is None or score > best_score:
            best, best_score = act, score
    return best


# ---------------------------------------------------------------------------------------------
# rollout
# ---------------------------------------------------------------------------------------------

def rollout(game, state: dict, seat: int, legal: list[dict], rnd: random.Random) -> dict:
    if len(legal) == 1:
        return legal[0]
    kind = legal[0]["type"]
    if kind in ("curse_claim", "curse_pass"):
        return claim_for(state["wall"], CURSES[state["curse"]["card"]], legal)
    if kind == "curse_victim":
        return _victim(legal, [[{"eyes": SARCOPHAGI[s]["eyes"]} for s in own]
                               for own in state["owned"]])
    if kind == "curse_give":
        return _give(legal)
    if kind in ("move_scarab", "done"):
        return end_move(pub_from_state(state, seat), seat, legal,
                        16 - state["end"]["moves"][seat])
    if rnd.random() < ROLLOUT_EPSILON:
        return legal[rnd.randrange(len(legal))]
    wall, sphinx = state["wall"], state["sphinx"]
    pairs_of: dict[tuple, list] = {}
    pub = None
    best, best_g = None, None
    rand = rnd.random
    for act in legal:
        card, col = act["card"], act["column"]
        pairs = pairs_of.get((card, col))
        if pairs is None:
            pairs = pairs_of[card, col] = pairs_at(wall, col, len(wall[col]), card, sphinx)
        if pairs:  # an insert without pairs changes nobody's worth: gain 0
            if pub is None:
                pub = pub_from_state(state, seat)
            g = _relative(simulate(pub, seat, card, col, act["explorer"], pairs), seat)
        else:
            g = 0.0
        g += rand() * 1e-6
        if best_g is None or g > best_g:
            best, best_g = act, g
    return best


# ---------------------------------------------------------------------------------------------
# ISMCTS hooks: a short horizon and a static evaluation
# ---------------------------------------------------------------------------------------------

def for_simulation(state: dict) -> dict:
    """Remember, in extra keys the rules carry and ignore, the turn an iteration starts at and
    every seat's margin there (the reference of ``evaluate``)."""
    state[SIM_START] = state["turn_number"]
    state[SIM_BASE] = [margin(state, s) for s in range(state["players"])]
    return state


def horizon(state: dict) -> bool:
    """True once ``HORIZON_ROUNDS`` full rounds of turns were started since the iteration
    began: the cut falls when the observer is about to insert again (the opponents have answered).
    The end phase starts no turn, so an iteration that reaches it plays on to the end."""
    return state["turn_number"] - state.get(SIM_START, state["turn_number"]) \
        >= HORIZON_ROUNDS * state["players"]


def worths(state: dict, observer: int) -> list[float]:
    """Every seat's expected final points on a (determinized) full state, as ``observer`` may
    estimate them: sarcophagus values (the observer's own exactly, the others' by tier mean — the
    sampled ids are not its knowledge), the claim on every held pillar (tier mean of the front
    sarcophagus times ``PROGRESS``), the pharaoh bonus times ``0.4 + 0.6 * filled / 49`` (the
    observer's own pharaoh exactly, another seat's uniform over the six other animals, never the
    sampled card) and ``RESERVE_VALUE`` per explorer in reserve."""
    mine = state["pharaohs"][observer]
    fav = mine[2:] if mine else None
    filled = 0
    for col in state["wall"]:
        filled += len(col)
    bonus = PHARAOH_BONUS * (0.4 + 0.6 * filled / CELLS)
    other_bonus = bonus / (len(ANIMALS) - 1 if fav else len(ANIMALS))
    out = [RESERVE_VALUE * r for r in state["reserves"]]
    for s, own in enumerate(state["owned"]):
        if s == observer:
            out[s] += sum(SARCOPHAGI[sid]["value"] for sid in own)
        else:
            out[s] += sum(EYE_EV[SARCOPHAGI[sid]["eyes"]] for sid in own)
    for a, p in state["pillars"].items():
        occ = p["occupant"]
        if occ is None:
            continue
        stack = p["stack"]
        if stack:
            out[occ] += EYE_EV[SARCOPHAGI[stack[0]]["eyes"]] * PROGRESS[min(p["scarabs"], 3)]
        if occ == observer:
            if a == fav:
                out[occ] += bonus
        elif a != fav:
            out[occ] += other_bonus
    return out


def margin(state: dict, seat: int) -> float:
    """``worths`` of ``seat`` minus the best other seat's, as ``seat`` estimates them."""
    w = worths(state, seat)
    return w[seat] - max(x for s, x in enumerate(w) if s != seat)


def evaluate(game, state: dict, seat: int) -> float:
    """Estimated win share in [0, 1]: the exact share once the game is over, else
    ``sigmoid((margin now - margin at the iteration's start) / EVAL_SCALE)`` — centred on the
    root so that the reward separates the moves instead of saturating when one seat leads."""
    if state["phase"] == "over":
        res = game.result(state)
        return 1.0 / len(res["winners"]) if seat in res["winners"] else 0.0
    base = state[SIM_BASE][seat] if SIM_BASE in state else 0.0
    x = (margin(state, seat) - base) / EVAL_SCALE
    if x < -30:
        return 0.0
    return 1.0 / (1.0 + exp(-x))


# ---------------------------------------------------------------------------------------------
# determinize
# ---------------------------------------------------------------------------------------------

def _owned_knowledge(obs: Observation, n: int) -> list[list[str | None]]:
    """Per seat, its sarcophagi in order: the id when this seat has seen it, else None.

    Replays the sarcophagus events of the seat's log; falls back to the view (own ids only) when
    the log does not add up to the view.
    """
    view = obs.view
    owned: list[list[dict]] = [[] for _ in range(n)]
    ok = True
    for ev in obs.events:
        t, d = ev["type"], ev["data"]
        if t == "SarcophagusOpened":
            owned[d["seat"]].append({"eyes": d["eyes"], "id": d.get("sarcophagus")})
        elif t == "SarcophagusGiven":
            if d["index"] >= len(owned[d["from"]]):
                ok = False
                break
            item = owned[d["from"]].pop(d["index"])
            sid = d.get("sarcophagus") or item["id"]
            owned[d["to"]].append({"eyes": d["eyes"], "id": sid})
    if ok:
        for s in range(n):
            shown = view["sarcophagi"][s]
            if len(shown) != len(owned[s]) or any(
                    x["eyes"] != y["eyes"] or ("id" in y and x["id"] != y["id"])
                    for x, y in zip(owned[s], shown)):
                ok = False
                break
    if not ok:
        owned = [[{"eyes": y["eyes"], "id": y.get("id")} for y in view["sarcophagi"][s]]
                 for s in range(n)]
    return [[x["id"] for x in own] for own in owned]


class _Template:
    """Everything :func:`determinize` needs from one observation, computed once per observation
    (a search determinizes the same observation thousands of times): the public part of the state
    as JSON, and the pools the hidden parts are drawn from."""

    __slots__ = ("blob", "me", "n", "my_hand", "unseen", "hand_sizes", "sizes", "curse_variant",
                 "curses", "main_top_is_curse", "my_pharaoh", "other_pharaohs", "pools",
                 "owned", "stacks")

    def __init__(self, obs: Observation) -> None:
        view, me = obs.view, obs.seat
        n = len(view["reserves"])
        self.me, self.n = me, n
        self.curse_variant = view["variants"]["curse"]
        wall = [list(c) for c in view["wall"]]
        on_wall = {c for col in wall for c in col}
        self.my_hand = list(view["hands"][me] or [])
        self.unseen = [c for c in CARD_IDS if c not in on_wall and c not in self.my_hand]
        self.hand_sizes = list(view["hand_sizes"])
        self.sizes = dict(view["pile_sizes"])
        if self.curse_variant:
            active = view["curse"]["card"] if view.get("curse") else None
            self.curses = [c for c in CURSE_IDS if c not in view["curses_done"] and c != active]
            if len(self.unseen) - self.sizes["start"] - sum(self.hand_sizes) \
                    + len(self.my_hand) + len(self.curses) != self.sizes["main"]:
                raise ValueError("main pile size does not match the unseen cards")
            self.main_top_is_curse = bool(view.get("main_top_is_curse"))
        else:
            if len(self.unseen) - sum(self.hand_sizes) + len(self.my_hand) != self.sizes["draw"]:
                raise ValueError("draw pile size does not match the unseen cards")
            self.curses, self.main_top_is_curse = [], False
        self.my_pharaoh = view["pharaohs"][me]
        self.other_pharaohs = [p for p in PHARAOHS if p != self.my_pharaoh]
        # sarcophagi: per seat the known ids (None: drawn by tier), per pillar the stack's eyes
        known = _owned_knowledge(obs, n)
        seen_ids = {sid for own in known for sid in own if sid}
        self.pools = {e: [s for s in TIERS[e - 1] if s not in seen_ids] for e in (1, 2, 3)}
        self.owned = [[(sid, shown["eyes"]) for sid, shown in zip(known[s],
                                                                  view["sarcophagi"][s])]
                      for s in range(n)]
        self.stacks = [(a, [x["eyes"] for x in view["pillars"][a]["stack"]]) for a in ANIMALS]

        phase = view["phase"]
        filled = sum(len(c) for c in wall)
        if filled == 0:
            last = None
        elif phase == "end" or phase == "over":
            last = (view["end"]["order"][0] - 1) % n if view.get("end") else view["turn"]
        elif phase == "play":
            last = (view["turn"] - 1) % n
        else:
            last = view["turn"]
        curse = None
        if view.get("curse"):
            c = view["curse"]
            curse = {"card": c["card"], "drawer": c["drawer"],
                     "responses": list(c["responses"]),
                     "claims": [dict(x) for x in c["claims"]], "finder": c["finder"],
                     "victim": c["victim"]}
        end = None
        if view.get("end"):
            e = view["end"]
            end = {"order": list(e["order"]), "index": e["index"], "moves": list(e["moves"])}
        self.blob = orjson.dumps({
            "players": n,
            "names": [p.get("name") for p in obs.players],
            "curse_variant": self.curse_variant,
            "sphinx": view["variants"]["sphinx"],
            "setup": view["setup"],
            "overrides": {},
            "phase": phase,
            "turn": view["turn"],
            "turn_number": view["turn_number"],
            "pillar_order": list(view["pillar_order"]),
            "wall": wall,
            "hands": None,
            "piles": None,
            "pillars": {a: {"occupant": view["pillars"][a]["occupant"],
                            "scarabs": view["pillars"][a]["scarabs"], "stack": None}
                        for a in ANIMALS},
            "supply": view["supply"],
            "reserves": list(view["reserves"]),
            "owned": None,
            "pharaohs": None,
            "unused_pharaohs": None,
            "curse": curse,
            "curses_done": list(view["curses_done"]),
            "end": end,
            "last_inserter": last,
        })


#: The last observation determinized and its template (one entry, replaced atomically).
_LAST: tuple = (None, None)


def _template(obs: Observation) -> _Template:
    global _LAST
    cached_obs, tpl = _LAST
    if cached_obs is not obs:
        tpl = _Template(obs)
        _LAST = (obs, tpl)
    return tpl


def determinize(obs: Observation, rnd: random.Random) -> dict:
    t = _template(obs)
    me, n = t.me, t.n
    state = orjson.loads(t.blob)

    # hieroglyph cards: other hands, then piles
    unseen = list(t.unseen)
    rnd.shuffle(unseen)
    hands: list[list[str]] = []
    at = 0
    for s in range(n):
        if s == me:
            hands.append(list(t.my_hand))
        else:
            k = t.hand_sizes[s]
            hands.append(unseen[at:at + k])
            at += k
    unseen = unseen[at:]
    sizes = t.sizes
    if t.curse_variant:
        start = unseen[:sizes["start"]]
        rest = unseen[sizes["start"]:]
        curses = list(t.curses)
        if sizes["main"] and t.main_top_is_curse:
            top = curses.pop(rnd.randrange(len(curses)))
        elif sizes["main"] and rest:
            top = rest.pop(rnd.randrange(len(rest)))
        else:
            top = None
        body = rest + curses
        rnd.shuffle(body)
        main = ([top] if top is not None else []) + body
        piles = {"start": start, "main": main}
    else:
        piles = {"draw": unseen}

    # pharaohs
    others = list(t.other_pharaohs)
    rnd.shuffle(others)
    pharaohs = []
    for s in range(n):
        pharaohs.append(t.my_pharaoh if s == me else others.pop())

    # sarcophagi
    pools = {e: list(ids) for e, ids in t.pools.items()}
    for e in pools:
        rnd.shuffle(pools[e])
    owned = [[sid if sid else pools[eyes].pop() for sid, eyes in own] for own in t.owned]
    pillars = state["pillars"]
    for a, eyes in t.stacks:
        pillars[a]["stack"] = [pools[e].pop() for e in eyes]

    state["hands"] = hands
    state["piles"] = piles
    state["owned"] = owned
    state["pharaohs"] = pharaohs
    state["unused_pharaohs"] = others
    return state


__all__ = ["heuristic", "rollout", "determinize", "for_simulation", "horizon", "evaluate",
           "GAME"]


# ---------------------------------------------------------------------------------------------
# ISMCTS hooks: decisions not searched
# ---------------------------------------------------------------------------------------------

#: Decision kinds the policy answers exactly (``exact``, ``candidates``): a correct curse claim
#: can only gain (a wrong one is a pass), the victim and the gift follow from public eye counts
#: and the seat's own values, and the end-phase plan is exact over the seat's own scarab moves.
SOLVED_KINDS = frozenset(("curse_claim", "curse_pass", "curse_victim", "curse_give",
                          "move_scarab", "done"))


def exact(obs: Observation, rnd: random.Random) -> dict | None:
    """The heuristic's answer (its ties from the decision's secret stream ``rnd``) to every
    decision that is not an insert (``SOLVED_KINDS``): the search answers those without
    searching. None for an insert (searched)."""
    if obs.legal[0]["type"] not in SOLVED_KINDS:
        return None
    return heuristic(obs, rnd)


def _counts_from_state(state: dict, me: int) -> dict[tuple[str, str], int]:
    """:func:`unseen_counts` on a determinization: what ``me`` has not seen (wall, own hand)."""
    counts = {k: 0 for k in REPRESENTATIVE}
    seen = {c for col in state["wall"] for c in col} | set(state["hands"][me])
    for cid in CARD_IDS:
        if cid not in seen:
            counts[(_ANIMAL[cid], _FACING[cid])] += 1
    return counts


def threat_scores(pub: Pub, me: int, legal: list[dict], counts: dict, hand: int
                  ) -> list[tuple[float, int, dict]]:
    """Every insert scored as the heuristic scores its ten best: one-ply gain minus the next
    seat's threat (weight 1.0 with 2 seats, 0.6 with more), as ``(score, -index, action)``
    sorted best first (ties: first in ``legal``)."""
    n = pub.n
    opp = (me + 1) % n
    weight = 1.0 if n == 2 else 0.6
    out = []
    for i, (g, act) in enumerate(insert_gains(pub, me, legal)):
        after = pub.copy()
        simulate(after, me, act["card"], act["column"], act["explorer"], apply=True)
        after.weight = pub.weight + 0.6 / CELLS
        out.append((g - weight * threat(after, me, opp, hand, counts), -i, act))
    out.sort(key=lambda x: (x[0], x[1]), reverse=True)
    return out


#: ISMCTS: inserts the tree considers at the observer's decision of an iteration's start (the
#: best by :func:`threat_scores`) and at its later decisions inside the tree (the best by
#: one-ply gain).
ROOT_CANDIDATES = 8
TREE_CANDIDATES = 8
#: Root candidates of recent decisions, keyed by what the observer sees (bounded).
_ROOT_CACHE: dict[bytes, list[dict]] = {}


def _root_key(state: dict, seat: int, legal: list[dict]) -> bytes:
    pil = state["pillars"]
    return orjson.dumps([seat, state["wall"], sorted(state["hands"][seat]),
                         [len(h) for h in state["hands"]], state["pharaohs"][seat],
                         [[pil[a]["occupant"], pil[a]["scarabs"],
                           [SARCOPHAGI[x]["eyes"] for x in pil[a]["stack"]]] for a in ANIMALS],
                         state["supply"], state["reserves"], state["sphinx"], legal])


def root_candidates(state: dict, seat: int, legal: list[dict]) -> list[dict]:
    """The ``ROOT_CANDIDATES`` best inserts by :func:`threat_scores` on the observer's public
    position, its own hand and pharaoh (the same for every determinization of one
    observation), in ``legal`` order."""
    key = _root_key(state, seat, legal)
    out = _ROOT_CACHE.get(key)
    if out is None:
        pub = pub_from_state(state, seat)
        opp = (seat + 1) % pub.n
        scored = threat_scores(pub, seat, legal, _counts_from_state(state, seat),
                               len(state["hands"][opp]))
        keep = {action_key(a) for _, _, a in scored[:ROOT_CANDIDATES]}
        out = [a for a in legal if action_key(a) in keep]
        if len(_ROOT_CACHE) >= 256:
            _ROOT_CACHE.clear()
        _ROOT_CACHE[key] = out
    return out


def tree_candidates(state: dict, seat: int, legal: list[dict]) -> list[dict]:
    """The ``TREE_CANDIDATES`` best inserts by one-ply gain (ties: first in ``legal``), in
    ``legal`` order."""
    pub = pub_from_state(state, seat)
    gains = insert_gains(pub, seat, legal)
    order = sorted(range(len(gains)), key=lambda i: (-gains[i][0], i))[:TREE_CANDIDATES]
    keep = set(order)
    return [a for i, (_, a) in enumerate(gains) if i in keep]


def candidates(game, state: dict, seat: int, legal: list[dict]) -> list[dict]:
    """The observer's actions the tree considers, from what the seat sees only. A decision
    of a ``SOLVED_KINDS`` kind has one candidate, the policy's answer (read from the public
    wall, the revealed curse card, public eye counts and the seat's own values). Inserts: at
    the iteration's first decision (the real one) :func:`root_candidates`, deeper in the tree
    :func:`tree_candidates`."""
    if legal[0]["type"] in SOLVED_KINDS:
        return [rollout(game, state, seat, legal, None)]
    if len(legal) <= min(ROOT_CANDIDATES, TREE_CANDIDATES):
        return legal
    if state["turn_number"] == state.get(SIM_START):
        return root_candidates(state, seat, legal)
    return tree_candidates(state, seat, legal)


def next_to_commit(state: dict, awaited: list[int], observer: int, rnd: random.Random) -> int:
    """A curse round is a race (the first correct claim in the order actions are recorded
    wins). The simulations let the awaited seats claim in the engine's ``awaiting`` order
    (seat order), the order in which a sequential harness (``LocalGame``, ``bench/arena.py``)
    records them: there every seat claims correctly when it can, so the lowest seat wins every
    race. On a live server the first claim to arrive wins, which this model does not know
    (see the module docstring)."""
    return awaited[0]


def prior(obs: Observation, rnd: random.Random) -> dict:
    """The heuristic's insert (its ties from ``rnd``), kept unless the search finds a clearly
    better one."""
    return heuristic(obs, rnd)


class Bots(BotHooks):
    """This game's bot hooks (:class:`~service.engine.bots.BotHooks`)."""

    cuts_simulations = True
    exact = staticmethod(exact)
    candidates = staticmethod(candidates)
    prior = staticmethod(prior)
    next_to_commit = staticmethod(next_to_commit)
    heuristic = staticmethod(heuristic)
    determinize = staticmethod(determinize)
    rollout = staticmethod(rollout)
    for_simulation = staticmethod(for_simulation)
    horizon = staticmethod(horizon)
    evaluate = staticmethod(evaluate)


BOTS = Bots()
