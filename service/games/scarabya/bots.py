"""Scarabya bots: the heuristic level, the rollout policy and the determinizer.

Heuristic (``heuristic(obs, rnd)``): best immediate points, then keeping future enclosures open
------------------------------------------------------------------------------------------------
Every legal placement of the current piece is scored on the deciding seat's site (the shared
site in the duel) from the public view only:

``score = points + LOOKAHEAD * potential_change``  (standard game)

* ``points``: what the placement scores now (section 8: every newly enclosed region of 1-4 cells
  scores scarabs x size), computed with the rules module's own ``enclosed``.
* ``potential``: the worth of the site's *open, unscored* scarabs for later enclosures. A scarab
  in a region of exactly 5 cells, or covered by a camp, is worth 0 (it can never score); a scarab
  in a region of 6 or more cells is worth ``NEAR[b]`` where ``b`` is the number of its four sides
  that are already closed (board edge, rock or camp): 0.6, 0.9, 1.5, 2.4 for b = 0..3 — a scarab
  almost walled in is the cheapest to enclose later. ``potential_change`` = potential after minus
  before, so covering scarabs and sealing them into dead 5-regions costs, and building walls
  around them pays. ``LOOKAHEAD`` = 0.5.
* Duel (shared site): ``score = points - THREAT * E[opponent's best points next turn]
  + 0.25 * potential_change``, the expectation taken over the pieces that may come next (the
  remaining unrevealed letters uniformly; in game 2 of a match the known order of game 1) for
  the 8 best placements by the first two terms; THREAT = 0.8. The last turn of a game has no
  threat.
* Solo (cover all 24 scarabs): ``score = 10 * scarabs covered - 30 * open scarabs sealed in new
  regions of 1-4 cells (they can never be covered) - 8 * open scarabs in new 5-cell regions
  - 0.1 * distance from the camp to the nearest other open scarab``.

Ties are broken at random. Standard mode's placements are secret commits made at once: there
the seat picks among the placements scored within ``MIX`` (half a point) of the best, from its
secret stream (``engine.bots.mix``), so that its placement cannot be read off the public view.

Rollout (``rollout(game, state, seat, legal, rnd)``)
----------------------------------------------------
A cheap greedy on the full state. Standard game: ``points - COVER * scarabs covered + WALL *
sides of open scarabs the camp closes`` (COVER = 2.5, WALL = 0.5: the two terms of the
heuristic's potential that bitmask counts give for free; as a policy of its own it scores about
as much as the heuristic at a quarter of the cost, where the former points-only greedy scored
about 30 % less). Duel: the same with WALL = 0 (a wall prepares an enclosure for whoever plays
next). Solo: the solo score above. Ties at random; 5 % of moves uniform. Points come from
``_gain``, the rules' ``enclosed`` with a bounded flood (a region is given up once it passes 4
cells). The legal placements' masks and the best indexes are cached per (site, piece) for the
current search (``_choice_cache``, cleared by a new search, at most 20,000 entries): every
iteration starts from the same root, so the sites right after it recur.

Determinizer (``determinize(obs, rnd)``)
----------------------------------------
The only hidden things are the order of the mission cards not yet revealed and, in the standard
game, other seats' committed placements. The deck is the revealed pieces followed by a uniform
shuffle of the other letters (game 2 of a duel: the order of game 1, known from the log, else
from the view's game record). Other seats' placements are never guessed from anything private:
their public sites are kept as they are; a seat that has already committed gets a placement
sampled by the rollout policy on its own public site (so the simulated round can resolve), a seat
that has not committed stays awaited. Everything built from the view is made once per
observation (``_template``, kept for the last observation only) and copied per sample.

ISMCTS hooks (``for_simulation``, ``horizon``, ``evaluate``)
-----------------------------------------------------------
A search sees 30-75 legal placements at the root, and ``ismcts`` expands every untried action
(chosen uniformly) before revisiting, also one level down: a simulation that went on in the
rules after the decided card would make the seat's *next* placement a uniformly random one.
So in the standard game (the duel: see "Duel search", its tree narrowed to 8 candidates a
node) the rules only simulate the decided card (``HORIZON`` = 1: ``horizon`` turns true when the
next card is revealed; every seat's placement of that card resolved, the other seats by the
rollout policy), and ``evaluate`` goes on alone on bitmasks, without the rules engine:

* Standard game: the seat plays the revealed card and up to ``FAST_ROUNDS`` = 5 cards in all
  from the determinized deck with the rollout policy on its own site. Its *gain* = points since
  the start of the iteration + ``EVAL_POTENTIAL`` (0.5) x the heuristic's potential change. The
  other sites never interact with ours and their playouts only add variance (measured: the two
  seats' simulated gains correlate at 0.0-0.3), so the reward is ``sigmoid((gain - centre) /
  EVAL_POINTS)`` with EVAL_POINTS = 4 and the centre = the mean gain of this search's earlier
  iterations: a risk-neutral, sharper signal than a win/loss. When the playout reaches the end
  of the game, every seat's final score is played out and the reward is the soft win share
  ``exp(score / EVAL_POINTS)`` normalised over the seats; a simulation that ends the game in the
  rules gets ``ismcts``' exact win share.
* Duel: see "Duel search" below.
* Solo: not cut (``for_simulation`` adds nothing, ``horizon`` stays false).

Duel search (``tree_every_seat``, ``candidates``)
------------------------------------------------
The duel is a two-seat game of alternating public placements on one site, so the search is a
max-min one: ``tree_every_seat`` is true and the tree branches on both seats' placements, the
opponent choosing in the tree by UCB1 on its own reward (1 - ours), where the standard game's
search lets every other seat play the greedy rollout policy (which ignores the enclosure it
leaves open; the heuristic opponent does not). A node considers ``DUEL_CANDIDATES`` = 8
placements (``candidates``): at the root, the heuristic's 8 best by its full score (threat
included; from the observation, ``_heuristic_scores``); below, for either seat, the 8 best by
the heuristic's first two terms, points + 0.25 x potential change (``_duel_ranked``, cached per
site and piece; ``_potential_fast`` counts the closed sides on bitmasks), so the opponent's
best-scoring replies are always among them. The rules simulate ``DUEL_HORIZON`` = 3 cards
(ours, the reply, ours; the tree for as deep as it reaches, then the rollout policy), then
``evaluate`` plays the next card by the rollout policy (``DUEL_FAST_ROUNDS`` = 1: the reply's
best points, the threat left open) and the reward is ``sigmoid((match lead - match lead at the
root) / EVAL_POINTS)`` (the soft share of the match scores' change since the start of the
iteration; of the match scores themselves when that playout ends the match): the reward is the
match, counted across the two games, a simulation from late in game 1 going on into game 2.
In game 2 the card order is game 1's (public; the determinizer uses it), so the search is over
a perfect-information game there; in game 1 each iteration draws an order of the unrevealed
cards and the opponent's nodes differ with the piece drawn. The tree widens progressively
(``progressive_widening``, ``DUEL_WIDENING``): a node expands its next candidate, best first,
only while (tried children)^2 <= their visits, so a node visited a few times (an opponent's
reply in game 1, split over the pieces drawn) keeps to its best-ranked replies.

Measured against the heuristic (arena, 400 iterations, docs/bots.md): 60.0 % [50.2, 69.1] of
100 matches on seed 1 and 68.5 % [58.9, 76.8] on seed 2 (the former one-card search: 42.5 % on
seed 1). On 40 matches of seed 7: 3 cards in the rules 73.8 %, 2 cards 60.0 %, 4 cards 55.0 %
(without widening; with it 72.5 %); the former search 45.0 %. An evaluation temperature of 2
instead of 4 (``DUEL_EVAL_POINTS``) measured the same (63.8 % against 64.2 %, seeds 1 and 2
pooled).

``for_simulation`` stores ``state["sim"] = {"stop", "base"}`` (an extra key the rules ignore):
the progress at which to cut and each seat's value at the start. ``evaluate`` gets no ``rnd``:
its playouts draw from ``_sim_rnd``, reseeded from the search's ``rnd`` by every
``determinize``, and the centre restarts with each new (observation, rnd) pair, so a search with
``iterations`` stays reproducible. Like the determinizer's template these are module globals: a
worker process runs one search at a time.
"""

from __future__ import annotations

import math
import random
from functools import lru_cache

import orjson

from .rules import (FULL, GAME, LETTERS, NOT_COL0, NOT_COL9, ROUNDS, cells_of, enclosed,
                              flood, layout_masks, legal_masks, mask_of, neighbours, occupied)
from ...engine.bots import BotHooks, Observation, mix

NEAR = (0.6, 0.9, 1.5, 2.4, 0.0)
LOOKAHEAD = 0.5
DUEL_POTENTIAL = 0.25
THREAT = 0.8
THREAT_CANDIDATES = 8
#: Standard mode: placements scored within this of the best are near-equal (the heuristic mixes).
MIX = 0.5
ROLLOUT_EPSILON = 0.05
#: rollout: penalty per scarab covered, bonus per side of an open scarab closed
COVER = 2.5
WALL = 0.5
#: duel: closing a scarab's side prepares an enclosure for whoever plays next
DUEL_WALL = 0.0

EDGE_TOP = sum(1 << c for c in range(10))
EDGE_BOTTOM = EDGE_TOP << 90
EDGE_LEFT = sum(1 << (10 * r) for r in range(10))
EDGE_RIGHT = EDGE_LEFT << 9


def _shift(mask: int, d: int) -> int:
    """Cells whose neighbour in direction d (0 up, 1 down, 2 left, 3 right) is in ``mask``."""
    if d == 0:
        return (mask << 10) & FULL
    if d == 1:
        return mask >> 10
    if d == 2:
        return (mask << 1) & FULL & ~EDGE_LEFT
    return (mask >> 1) & ~EDGE_RIGHT


def potential(rocks: int, scarabs: int, blocked: int) -> float:
    """Worth of the open unscored scarabs (see the module docstring). ``blocked`` = camps."""
    open_mask = FULL & ~(rocks | blocked)
    todo = scarabs & open_mask
    walls = rocks | blocked
    # closed[d]: cells whose side d is closed (edge or wall)
    closed = (_shift(walls, 0) | EDGE_TOP, _shift(walls, 1) | EDGE_BOTTOM,
              _shift(walls, 2) | EDGE_LEFT, _shift(walls, 3) | EDGE_RIGHT)
    total = 0.0
    while todo:
        reg = flood(todo & -todo, open_mask)
        todo &= ~reg
        size = reg.bit_count()
        if size <= 5:
            continue  # scored already (1-4) or dead (5)
        m = reg & scarabs
        while m:
            low = m & -m
            m ^= low
            b = sum(1 for d in range(4) if closed[d] & low)
            total += NEAR[b]
    return total


def _potential_fast(rocks: int, scarabs: int, blocked: int) -> float:
    """:func:`potential` with the closed sides counted on bitmasks for all scarabs at once (a
    bit-sliced counter) instead of one scarab at a time; equal up to float rounding. Used by the
    duel search's candidate ranking (the heuristic keeps :func:`potential`)."""
    open_mask = FULL & ~(rocks | blocked)
    todo = scarabs & open_mask
    live = 0
    while todo:
        reg = flood(todo & -todo, open_mask)
        todo &= ~reg
        if reg.bit_count() > 5:
            live |= reg & scarabs
    if not live:
        return 0.0
    walls = rocks | blocked
    ones = twos = fours = 0
    for closed in (_shift(walls, 0) | EDGE_TOP, _shift(walls, 1) | EDGE_BOTTOM,
                   _shift(walls, 2) | EDGE_LEFT, _shift(walls, 3) | EDGE_RIGHT):
        closed &= live
        carry = ones & closed
        ones ^= closed
        fours |= twos & carry
        twos ^= carry
    # a scarab with 4 closed sides is a region of one cell: never live
    return (NEAR[0] * (live & ~(ones | twos | fours)).bit_count()
            + NEAR[1] * (ones & ~twos).bit_count()
            + NEAR[2] * (twos & ~ones).bit_count()
            + NEAR[3] * (ones & twos).bit_count())


def _points(rocks: int, scarabs: int, occ: int, pmask: int) -> int:
    pts = 0
    for reg in enclosed(rocks, occ, pmask):
        pts += (reg & scarabs).bit_count() * reg.bit_count()
    return pts


def _solo_score(rocks: int, scarabs: int, occ: int, pmask: int) -> float:
    open_scarabs = scarabs & ~(occ | pmask)
    score = 10.0 * (scarabs & pmask & ~occ).bit_count()
    open_after = FULL & ~(rocks | occ | pmask)
    todo = neighbours(pmask) & open_after
    while todo:
        reg = flood(todo & -todo, open_after)
        todo &= ~reg
        size = reg.bit_count()
        k = (reg & open_scarabs).bit_count()
        if size <= 4:
            score -= 30.0 * k
        elif size == 5:
            score -= 8.0 * k
    if open_scarabs:
        # distance (rows+cols) from the camp to the nearest open scarab
        pc = cells_of(pmask)
        sc = cells_of(open_scarabs)
        dist = min(abs(r1 - r2) + abs(c1 - c2) for r1, c1 in pc for r2, c2 in sc)
        score -= 0.1 * dist
    return score


def _site_of(view_or_state: dict, seat: int) -> dict:
    sites = view_or_state["sites"]
    return sites[seat] if view_or_state["mode"] == "standard" else sites[0]


def _remaining(revealed: list[str]) -> list[str]:
    return [p for p in LETTERS if p not in revealed]


def _known_order(obs: Observation) -> list[str] | None:
    """The mission order when it is public (duel game 2), else None."""
    view = obs.view
    if view["mode"] != "duel" or view.get("game", 1) < 2:
        return None
    order: dict[int, str] = {}
    for ev in obs.events:
        if ev["type"] == "MissionRevealed" and ev["data"].get("game") == 1:
            order[ev["data"]["round"]] = ev["data"]["piece"]
    if len(order) == ROUNDS:
        return [order[r] for r in range(1, ROUNDS + 1)]
    if view.get("games"):
        g1 = view["games"][0]
        for camp in g1["camps"]:
            order[camp["round"]] = camp["piece"]
        missing = [r for r in range(1, ROUNDS + 1) if r not in order]
        left = [p for p in g1["discarded"] if p not in order.values()]
        if len(missing) == len(left) == 1:
            order[missing[0]] = left[0]
        if len(order) == ROUNDS:
            return [order[r] for r in range(1, ROUNDS + 1)]
    return None


def _heuristic_scores(obs: Observation) -> list[float]:
    """The heuristic's score of every legal placement (``obs.legal`` order; see the module
    docstring). Duel: the placements outside the ``THREAT_CANDIDATES`` examined for the threat
    get -1e6 more."""
    legal = obs.legal
    view, me = obs.view, obs.seat
    mode = view["mode"]
    rocks, scarabs = layout_masks(tuple(view["layout"]))
    occ = occupied(_site_of(view, me))
    masks = [mask_of(a["cells"]) for a in legal]
    if mode == "solo":
        return [_solo_score(rocks, scarabs, occ, m) for m in masks]
    base = potential(rocks, scarabs, occ)
    pts = [_points(rocks, scarabs, occ, m) for m in masks]
    lam = LOOKAHEAD if mode == "standard" else DUEL_POTENTIAL
    scores = [p + lam * (potential(rocks, scarabs, occ | m) - base)
              for p, m in zip(pts, masks)]
    if mode == "duel" and view["round"] < ROUNDS:
        known = _known_order(obs)
        if known is not None:
            upcoming = [known[view["round"]]]
        else:
            upcoming = _remaining(view["revealed"])
        order = sorted(range(len(legal)), key=lambda i: -scores[i])[:THREAT_CANDIDATES]
        for i in order:
            after = occ | masks[i]
            exp = 0.0
            for piece in upcoming:
                opts = legal_masks(piece, view["allow_reflection"], rocks, after)
                exp += max((_points(rocks, scarabs, after, p.mask) for p in opts),
                           default=0)
            scores[i] -= THREAT * exp / len(upcoming)
        cut = set(order)
        for i in range(len(legal)):
            if i not in cut:
                scores[i] -= 1e6  # only the examined candidates compete
    return scores


def heuristic(obs: Observation, rnd: random.Random) -> dict:
    legal = obs.legal
    if len(legal) == 1:
        return legal[0]
    scores = _heuristic_scores(obs)
    # standard mode's placements are secret commits: near-equal ones mixed (see MIX)
    return mix(list(zip(legal, scores)), rnd, MIX if obs.view["mode"] == "standard" else 0.0)


def _gain(rocks: int, scarabs: int, occ: int, pmask: int) -> int:
    """``_points`` with a bounded flood: each open neighbour of the camp is grown one ring at a
    time and given up as soon as its region passes 4 cells (it cannot score), instead of
    flooding the whole (usually large) region as ``enclosed`` does."""
    open_after = FULL & ~(rocks | occ | pmask)
    todo = neighbours(pmask) & open_after
    pts = 0
    while todo:
        reg = todo & -todo
        while True:
            grow = (reg | ((reg << 1) & NOT_COL0) | ((reg >> 1) & NOT_COL9) | (reg << 10)
                    | (reg >> 10)) & open_after
            if grow == reg:
                pts += (reg & scarabs).bit_count() * reg.bit_count()
                break
            reg = grow
            if reg.bit_count() > 4:
                break
        todo &= ~reg
    return pts


def _policy_score(rocks: int, scarabs: int, occ: int, m: int, wall: float = WALL) -> float:
    """Rollout score of one placement: points now, minus ``COVER`` per scarab covered, plus
    ``wall`` per side of an open scarab the camp closes."""
    open_sc = scarabs & ~(occ | m)
    walls = ((((m << 10) & FULL) & open_sc).bit_count() + ((m >> 10) & open_sc).bit_count()
             + ((m << 1) & NOT_COL0 & open_sc).bit_count()
             + ((m >> 1) & NOT_COL9 & open_sc).bit_count())
    return _gain(rocks, scarabs, occ, m) - COVER * (m & scarabs).bit_count() + wall * walls


#: (rocks, scarabs, occupied, piece, reflection, mode) -> (masks of the legal placements in
#: ``legal_actions`` order, indexes of the rollout policy's best ones). The simulations of one
#: search start from the same root and revisit the same sites, so most lookups hit.
_choice_cache: dict = {}
CHOICE_CACHE_SIZE = 20_000


def _choices(rocks: int, scarabs: int, occ: int, piece: str, refl: bool,
             mode: str) -> tuple[list[int], list[int]]:
    key = (rocks, scarabs, occ, piece, refl, mode)
    hit = _choice_cache.get(key)
    if hit is not None:
        return hit
    masks = [p.mask for p in legal_masks(piece, refl, rocks, occ)]
    best: list[int] = []
    best_s = None
    for i, m in enumerate(masks):
        if mode == "solo":
            s = _solo_score(rocks, scarabs, occ, m)
        else:
            s = _policy_score(rocks, scarabs, occ, m, WALL if mode == "standard" else DUEL_WALL)
        if best_s is None or s > best_s:
            best, best_s = [i], s
        elif s == best_s:
            best.append(i)
    if len(_choice_cache) >= CHOICE_CACHE_SIZE:
        _choice_cache.clear()
    hit = _choice_cache[key] = (masks, best)
    return hit


def rollout(game, state: dict, seat: int, legal: list[dict], rnd: random.Random) -> dict:
    if len(legal) == 1 or rnd.random() < ROLLOUT_EPSILON:
        return legal[rnd.randrange(len(legal))]
    rocks, scarabs = layout_masks(tuple(state["layout"]))
    occ = occupied(_site_of(state, seat))
    masks, best = _choices(rocks, scarabs, occ, state["piece"], state["allow_reflection"],
                           state["mode"])
    if len(masks) != len(legal):  # pragma: no cover - not this site's legal actions
        masks = [mask_of(x["cells"]) for x in legal]
        best = [max(range(len(masks)),
                    key=lambda i: _policy_score(rocks, scarabs, occ, masks[i]))]
    return legal[best[rnd.randrange(len(best))] if len(best) > 1 else best[0]]


_cache: list = [None, None]


def _template(obs: Observation) -> dict:
    """The part of a determinization that does not depend on the draw (one per observation)."""
    if _cache[0] is obs:
        return _cache[1]
    view = obs.view
    mode = view["mode"]
    n = len(view["seats"])
    sites = []
    for site in view["sites"]:
        sites.append({"camps": [{k: (list(map(list, v)) if k == "cells" else v)
                                 for k, v in c.items()} for c in site["camps"]],
                      "tokens": [dict(t, cell=list(t["cell"])) for t in site["tokens"]],
                      "discarded": list(site["discarded"])})
    status = [s["status"] for s in view["seats"]]
    state = {
        "mode": mode,
        "players": n,
        "allow_reflection": view["allow_reflection"],
        "duel_games": view.get("duel_games", obs.options.get("duel_games", 2)),
        "solo_discard_loses": view.get("solo_discard_loses",
                                       obs.options.get("solo_discard_loses", False)),
        "setup": {"hidden": True} if view["setup"] == "custom" else {},
        "layout": list(view["layout"]),
        "deck": None,
        "game": view.get("game", 1),
        "starter": view.get("starter", 0),
        "round": view["round"],
        "piece": view["piece"],
        "revealed": list(view["revealed"]),
        "sites": sites,
        "scores": list(view["scores"]),
        "status": status,
        "pending": [None] * n,
        "game_log": [dict(g) for g in view.get("games", [])],
        "over": view["phase"] == "over",
        "result": view.get("result"),
    }
    hidden = []
    for s, entry in enumerate(view["seats"]):
        if "pending" in entry:
            state["pending"][s] = [list(c) for c in entry["pending"]]
        elif status[s] == "committed":
            hidden.append(s)
    tpl = {"state": orjson.dumps(state), "known": _known_order(obs), "hidden": hidden}
    _cache[0], _cache[1] = obs, tpl
    return tpl


def determinize(obs: Observation, rnd: random.Random) -> dict:
    if _search[0] is not obs or _search[1] is not rnd:
        _search[0], _search[1] = obs, rnd
        _running[0], _running[1] = 0.0, 0
        _choice_cache.clear()
        _rank_cache.clear()
    _sim_rnd.seed(rnd.getrandbits(32))
    tpl = _template(obs)
    state = orjson.loads(tpl["state"])
    revealed = state["revealed"]
    if tpl["known"] is not None:
        state["deck"] = list(tpl["known"])
    else:
        rest = _remaining(revealed)
        rnd.shuffle(rest)
        state["deck"] = revealed + rest
    for s in tpl["hidden"]:
        # Hidden commitment of another seat: sample one on its public site.
        state["status"][s] = "await"
        legal = GAME.legal_actions(state, s)
        pick = rollout(GAME, state, s, legal, rnd)
        state["status"][s] = "committed"
        state["pending"][s] = [list(c) for c in pick["cells"]]
    return state


# --------------------------------------------------------------------------------------------
# optional ISMCTS hooks (service/engine/ismcts.py): one card in the rules, then a fast playout

#: the rules simulate this many mission cards (the one being decided included); the simulation
#: is then cut and evaluated
HORIZON = 1
#: at a cut-off the evaluation plays this many further cards with the rollout policy on bare
#: bitmasks (no rules engine, no action dicts)
FAST_ROUNDS = 5
#: the same in the duel (cards of both seats)
DUEL_FAST_ROUNDS = 1
#: duel: the search tree branches on both seats' placements (``tree_every_seat``), among this
#: many candidates at each node (``candidates``)
DUEL_CANDIDATES = 8
#: duel: the tree widens progressively over the ranked candidates (``progressive_widening``)
DUEL_WIDENING = True
#: duel: mission cards simulated in the rules (tree phase, then the rollout policy) before the cut
DUEL_HORIZON = 3
#: worth of one point of the heuristic's ``potential`` at the end of the fast playout
EVAL_POTENTIAL = 0.5
#: evaluation temperature in points
EVAL_POINTS = 4.0
#: the same in the duel (of the match lead)
DUEL_EVAL_POINTS = 4.0

#: randomness of the fast playouts (``evaluate`` gets no ``rnd``): reseeded from the search's
#: ``rnd`` by every ``determinize``, so a search with ``iterations`` stays reproducible
_sim_rnd = random.Random(0)
#: [sum, count] of the gains evaluated so far in this search (the evaluation's centre)
_running = [0.0, 0]
#: (observation, rnd) of the current search: a new pair resets ``_running``
_search: list = [None, None]


#: the root sites' potentials (the same in every determinization of a search)
_root_potential = lru_cache(maxsize=64)(potential)


def _progress(state: dict) -> int:
    """Mission cards revealed since the start of the match."""
    return (state["game"] - 1) * ROUNDS + state["round"]


def for_simulation(state: dict) -> dict:
    """Remember where the simulation started, and (standard game) each seat's value there: score
    plus ``EVAL_POTENTIAL`` x potential (an extra key the rules ignore)."""
    mode = state["mode"]
    if mode == "solo":
        return state
    if mode == "duel":
        base = [sum(g["scores"][s] for g in state["game_log"]) + state["scores"][s]
                for s in range(2)]
    else:
        rocks, scarabs = layout_masks(tuple(state["layout"]))
        base = [state["scores"][s] + EVAL_POTENTIAL * _root_potential(rocks, scarabs,
                                                                      occupied(site))
                for s, site in enumerate(state["sites"])]
    state["sim"] = {"stop": _progress(state) + (DUEL_HORIZON if mode == "duel" else HORIZON),
                    "base": base}
    return state


def horizon(state: dict):
    sim = state.get("sim")
    return sim is not None and _progress(state) >= sim["stop"]


def _pick(masks: list[int], best: list[int], rnd: random.Random) -> int:
    if ROLLOUT_EPSILON and rnd.random() < ROLLOUT_EPSILON:
        return masks[rnd.randrange(len(masks))]
    return masks[best[rnd.randrange(len(best))] if len(best) > 1 else best[0]]


def _playout_site(state: dict, seat: int, last: int, rnd: random.Random,
                  trace: list | None = None) -> tuple[int, int]:
    """Standard game: ``seat`` plays the revealed card (unless discarded) and the next ones up
    to round ``last`` on its own site. Returns (points gained, occupied mask after); ``trace``
    (tests) receives the placed masks."""
    rocks, scarabs = layout_masks(tuple(state["layout"]))
    refl = state["allow_reflection"]
    deck = state["deck"]
    occ = occupied(state["sites"][seat])
    first = state["round"] if state["status"][seat] == "await" else state["round"] + 1
    gain = 0
    for r in range(first, last + 1):
        masks, best = _choices(rocks, scarabs, occ, deck[r - 1], refl, "standard")
        if masks:
            m = _pick(masks, best, rnd)
            gain += _gain(rocks, scarabs, occ, m)
            occ |= m
            if trace is not None:
                trace.append(m)
    return gain, occ


def _playout_duel(state: dict, last: int, rnd: random.Random) -> list[int]:
    """Duel: the seats alternate on the shared site up to round ``last``; points per seat."""
    rocks, scarabs = layout_masks(tuple(state["layout"]))
    refl = state["allow_reflection"]
    deck = state["deck"]
    occ = occupied(state["sites"][0])
    starter = state["starter"]
    gains = [0, 0]
    for r in range(state["round"], last + 1):
        masks, best = _choices(rocks, scarabs, occ, deck[r - 1], refl, "duel")
        if masks:
            m = _pick(masks, best, rnd)
            gains[starter if r % 2 == 1 else 1 - starter] += _gain(rocks, scarabs, occ, m)
            occ |= m
    return gains


#: (rocks, scarabs, occupied, piece, reflection) -> (number of legal placements, the duel
#: candidates' indexes in ``legal_actions`` order); cleared with ``_choice_cache``
_rank_cache: dict = {}
#: [observation, indexes]: the root's candidates of the current search
_root_rank: list = [None, None]


def _duel_ranked(rocks: int, scarabs: int, occ: int, piece: str, refl: bool
                 ) -> tuple[int, list[int]]:
    """(number of legal placements, the ``DUEL_CANDIDATES`` best of them by the heuristic's
    first two terms: points + ``DUEL_POTENTIAL`` x potential change), best first, ties in legal
    order."""
    key = (rocks, scarabs, occ, piece, refl)
    hit = _rank_cache.get(key)
    if hit is not None:
        return hit
    masks = [p.mask for p in legal_masks(piece, refl, rocks, occ)]
    base = _potential_fast(rocks, scarabs, occ)
    scores = [_gain(rocks, scarabs, occ, m)
              + DUEL_POTENTIAL * (_potential_fast(rocks, scarabs, occ | m) - base)
              for m in masks]
    hit = (len(masks), sorted(range(len(masks)), key=lambda i: -scores[i])[:DUEL_CANDIDATES])
    if len(_rank_cache) >= CHOICE_CACHE_SIZE:
        _rank_cache.clear()
    _rank_cache[key] = hit
    return hit


def candidates(game, state: dict, seat: int, legal: list[dict]) -> list[dict]:
    """Duel: the placements a tree node considers. At the root (the observer's decision, read
    from the search's observation): the ``DUEL_CANDIDATES`` best by the heuristic's full score
    (threat included); further down, for either seat: the best by :func:`_duel_ranked`, from
    the (public) shared site and the piece. Other modes: every legal placement."""
    if state["mode"] != "duel" or len(legal) <= DUEL_CANDIDATES:
        return legal
    obs = _search[0]
    if obs is not None and seat == obs.seat and state["game"] == obs.view.get("game", 1) \
            and state["round"] == obs.view["round"] and len(legal) == len(obs.legal):
        if _root_rank[0] is not obs:
            scores = _heuristic_scores(obs)
            _root_rank[0] = obs
            _root_rank[1] = sorted(range(len(legal)), key=lambda i: -scores[i])[
                :DUEL_CANDIDATES]
        ranked = _root_rank[1]
    else:
        rocks, scarabs = layout_masks(tuple(state["layout"]))
        n, ranked = _duel_ranked(rocks, scarabs, occupied(state["sites"][0]), state["piece"],
                                 state["allow_reflection"])
        if len(legal) != n:  # pragma: no cover - not this site's legal actions
            return legal
    return [legal[i] for i in ranked]


def _share(vals: list[float], seat: int, temp: float) -> float:
    top = max(vals)
    ws = [math.exp((v - top) / temp) for v in vals]
    return ws[seat] / sum(ws)


def evaluate(game, state: dict, seat: int) -> float:
    """Estimated win share in [0, 1] at a simulation cut-off (see the module docstring)."""
    if state["over"]:
        res = game.result(state)
        return 1.0 / len(res["winners"]) if seat in res["winners"] else 0.0
    mode = state["mode"]
    rnd = _sim_rnd
    last = min(ROUNDS, state["round"] + FAST_ROUNDS - 1)
    if mode == "solo":  # pragma: no cover - solo simulations are never cut
        _, scarabs = layout_masks(tuple(state["layout"]))
        return (scarabs & occupied(state["sites"][0])).bit_count() / scarabs.bit_count()
    if mode == "duel":
        gains = _playout_duel(state, min(ROUNDS, state["round"] + DUEL_FAST_ROUNDS - 1), rnd)
        match = [sum(g["scores"][s] for g in state["game_log"]) + state["scores"][s] + gains[s]
                 for s in range(2)]
        if state["round"] + DUEL_FAST_ROUNDS - 1 >= ROUNDS \
                and state["game"] >= state["duel_games"]:
            return _share(match, seat, DUEL_EVAL_POINTS)
        base = state["sim"]["base"]
        return _share([match[s] - base[s] for s in range(2)], seat, DUEL_EVAL_POINTS)
    if last == ROUNDS:
        # The playout ends the game: every seat's final score is simulated.
        finals = [state["scores"][s] + _playout_site(state, s, last, rnd)[0]
                  for s in range(state["players"])]
        return _share(finals, seat, EVAL_POINTS)
    # The other sites never interact with ours: compare our simulated gain (points plus the
    # change of potential) with the mean gain of this search's simulations so far.
    rocks, scarabs = layout_masks(tuple(state["layout"]))
    gain, occ = _playout_site(state, seat, last, rnd)
    mine = (state["scores"][seat] + gain + EVAL_POTENTIAL * potential(rocks, scarabs, occ)
            - state["sim"]["base"][seat])
    run = _running
    centre = run[0] / run[1] if run[1] else mine
    run[0] += mine
    run[1] += 1
    return 1.0 / (1.0 + math.exp((centre - mine) / EVAL_POINTS))


__all__ = ["heuristic", "rollout", "determinize", "for_simulation", "horizon", "evaluate",
           "GAME"]


class Bots(BotHooks):
    """This game's bot hooks (:class:`~service.engine.bots.BotHooks`)."""

    cuts_simulations = True
    heuristic = staticmethod(heuristic)
    determinize = staticmethod(determinize)
    rollout = staticmethod(rollout)
    for_simulation = staticmethod(for_simulation)
    horizon = staticmethod(horizon)
    evaluate = staticmethod(evaluate)
    candidates = staticmethod(candidates)

    def tree_every_seat(self, obs) -> bool:
        """The duel's placements are public and alternate: the tree branches on both seats."""
        return obs.view["mode"] == "duel"

    def progressive_widening(self, obs) -> bool:
        """The duel's candidates come best first (``candidates``): widen the tree in order."""
        return DUEL_WIDENING and obs.view["mode"] == "duel"


BOTS = Bots()
