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

Ties are broken at random.

Rollout (``rollout(game, state, seat, legal, rnd)``)
----------------------------------------------------
Light greedy on the full state: the placement with the most immediate points (solo: the most
scarabs covered minus scarabs sealed in small regions), ties at random; 15 % of moves uniform.

Determinizer (``determinize(obs, rnd)``)
----------------------------------------
The only hidden things are the order of the mission cards not yet revealed and, in the standard
game, other seats' committed placements. The deck is the revealed pieces followed by a uniform
shuffle of the other letters (game 2 of a duel: the order of game 1, known from the log, else
from the view's game record). Other seats' placements are never guessed from anything private:
their public sites are kept as they are; a seat that has already committed gets a placement
sampled by the rollout policy on its own public site (so the simulated round can resolve), a seat
that has not committed stays awaited.
"""

from __future__ import annotations

import random

from ..games.scarabya import (FULL, GAME, LETTERS, ROUNDS, cells_of, enclosed, flood, layout_masks,
                              legal_masks, mask_of, neighbours, occupied)
from . import Observation

NEAR = (0.6, 0.9, 1.5, 2.4, 0.0)
LOOKAHEAD = 0.5
DUEL_POTENTIAL = 0.25
THREAT = 0.8
THREAT_CANDIDATES = 8
ROLLOUT_EPSILON = 0.15

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


def heuristic(obs: Observation, rnd: random.Random) -> dict:
    legal = obs.legal
    if len(legal) == 1:
        return legal[0]
    view, me = obs.view, obs.seat
    mode = view["mode"]
    rocks, scarabs = layout_masks(tuple(view["layout"]))
    occ = occupied(_site_of(view, me))
    masks = [mask_of(a["cells"]) for a in legal]
    if mode == "solo":
        scores = [_solo_score(rocks, scarabs, occ, m) for m in masks]
    else:
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
    best = max(scores)
    return rnd.choice([a for a, s in zip(legal, scores) if s >= best - 1e-9])


def rollout(game, state: dict, seat: int, legal: list[dict], rnd: random.Random) -> dict:
    if len(legal) == 1 or rnd.random() < ROLLOUT_EPSILON:
        return rnd.choice(legal)
    rocks, scarabs = layout_masks(tuple(state["layout"]))
    occ = occupied(_site_of(state, seat))
    solo = state["mode"] == "solo"
    best, best_s = [], None
    for a in legal:
        m = mask_of(a["cells"])
        s = _solo_score(rocks, scarabs, occ, m) if solo else _points(rocks, scarabs, occ, m)
        if best_s is None or s > best_s:
            best, best_s = [a], s
        elif s == best_s:
            best.append(a)
    return rnd.choice(best)


def determinize(obs: Observation, rnd: random.Random) -> dict:
    view, me = obs.view, obs.seat
    mode = view["mode"]
    n = len(view["seats"])
    revealed = list(view["revealed"])
    known = _known_order(obs)
    if known is not None:
        deck = known
    else:
        rest = _remaining(revealed)
        rnd.shuffle(rest)
        deck = revealed + rest
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
        "deck": deck,
        "game": view.get("game", 1),
        "starter": view.get("starter", 0),
        "round": view["round"],
        "piece": view["piece"],
        "revealed": revealed,
        "sites": sites,
        "scores": list(view["scores"]),
        "status": status,
        "pending": [None] * n,
        "game_log": [dict(g) for g in view.get("games", [])],
        "over": view["phase"] == "over",
        "result": view.get("result"),
    }
    for s, entry in enumerate(view["seats"]):
        if "pending" in entry:
            state["pending"][s] = [list(c) for c in entry["pending"]]
        elif status[s] == "committed":
            # Hidden commitment of another seat: sample one on its public site.
            state["status"][s] = "await"
            legal = GAME.legal_actions(state, s)
            pick = rollout(GAME, state, s, legal, rnd)
            state["status"][s] = "committed"
            state["pending"][s] = [list(c) for c in pick["cells"]]
    return state


__all__ = ["heuristic", "rollout", "determinize", "GAME"]
