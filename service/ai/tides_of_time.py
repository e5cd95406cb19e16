"""Tides of Time bots: heuristic, rollout policy and determinizer.

Heuristic: greedy marginal score
--------------------------------
From the public view plus the seat's own hand. For a pick, every card ``c`` of the hand is
valued as ``score_me(K_me + [c]) - score_opp(K_opp)`` where ``K`` are the kingdoms as they stand
(relics + cards played this round; the opponent's committed pick is unknown and left out) and the
scores are the rules' round scoring of both kingdoms together (section 6: majorities, BEST and
SINGLES compare with the opponent), minus a denial term: the rest of the hand goes to the
opponent, so ``DENIAL (0.5) * max over d in hand - c of [score_opp(K_opp + [d]) -
score_opp(K_opp)]`` (with ``K_me + [c]`` on our side) is subtracted. The best card is picked
(ties: lowest card number). (Measured: 82% against random with the denial term, 75% without,
150 games each.)
Relic phase, by the same evaluation restricted to what survives into the next rounds (the relics):
``keep`` maximises ``score_me(R_me + [k]) - score_opp(R_opp)``; ``remove`` (among the other four)
is the card that would help the opponent most and us least if it came back into play:
maximise ``[score_opp(R_opp + [r]) - score_opp(R_opp)] - [score_me(R_me + [k, r]) -
score_me(R_me + [k])]``.

Rollout policy (inside simulations): the same greedy pick, without the denial term (speed),
computed on the determinized state
(never reading the other seat's pending choice), epsilon-greedy with ``EPSILON = 0.25`` uniform
random picks; relic choices as the heuristic.

Scoring here is :func:`fast_totals`, a lean re-implementation of the rules module's
``score_kingdoms`` totals (tests check they agree on random kingdoms).

Determinizer
------------
The observer's hand, both kingdoms, the removed pile, the round scores and the phase are copied
from the view. The opponent's hand is reconstructed from the observer's log: after the first hand
exchange of a round it is exactly the hand the observer passed minus the observer's pick; after a
relic phase its three leftovers are public (played minus kept minus removed) and only the two
drawn cards are unknown; in round 1 before the first exchange it is 5 unknown cards. The unknown
cards are a uniformly random split of the unseen cards (18 minus everything the observer can
place) between those unknown hand slots and the draw pile, in random order. A committed but
unrevealed opponent choice (pick or relic) is sampled with the rollout policy. When the log does
not agree with the view (an observation built without the full log), the whole opponent hand is
treated as unknown.
"""

from __future__ import annotations

import random

from ..games.tides_of_time import CARDS, DRAFT, NUMBERS, RELIC, SUITS

EPSILON = 0.25
#: Weight of the denial term of the heuristic's pick value.
DENIAL = 0.5

_SUIT = {s: i for i, s in enumerate(SUITS)}
_ROOF = next(n for n, c in CARDS.items() if c["kind"] == "DOUBLE")
_NEST = next(n for n, c in CARDS.items() if c["kind"] == "TIES")
_PORT = next(n for n, c in CARDS.items() if c["kind"] == "BEST")
#: card -> (suit index or -1, kind, suit-index param(s), points)
_INFO: dict[int, tuple] = {}
for _n, _c in CARDS.items():
    _p = _c["params"]
    if _c["kind"] == "SET":
        _arg = tuple(_SUIT[s] for s in _p["suits"])
    elif "suit" in _p:
        _arg = _SUIT[_p["suit"]]
    else:
        _arg = None
    _INFO[_n] = (_SUIT[_c["suit"]] if _c["suit"] else -1, _c["kind"], _arg, _p.get("points", 0))


def _counts(kingdom) -> list[int]:
    n = [0, 0, 0, 0, 0]
    roof = False
    for c in kingdom:
        s = _INFO[c][0]
        if s >= 0:
            n[s] += 1
        elif c == _ROOF:
            roof = True
    if roof:
        m = max(n)
        if m > 0:
            n = [2 * v if v == m else v for v in n]
    return n


def _beats(a: int, b: int, ties: bool, strict: bool) -> bool:
    return a > b or (a == b and ties and (a > 0 or not strict))


def fast_totals(k0, k1, strict: bool = False) -> list[int]:
    """Round scores of two kingdoms (rules section 6), totals only."""
    ks = (k0, k1)
    ns = (_counts(k0), _counts(k1))
    ties = (_NEST in k0, _NEST in k1)
    totals = [0, 0]
    best = [0, 0]
    port = [False, False]
    for p in (0, 1):
        n, no, tie = ns[p], ns[1 - p], ties[p]
        top = 0
        tot = 0
        for c in ks[p]:
            _, kind, arg, pts = _INFO[c]
            if kind == "EACH":
                v = pts * n[arg]
            elif kind == "MAJ":
                v = pts if _beats(n[arg], no[arg], tie, strict) else 0
            elif kind == "SET":
                v = pts * min(n[s] for s in arg)
            elif kind == "MISSING":
                v = pts * n.count(0)
            elif kind == "SINGLES":
                v = pts if _beats(n.count(1), no.count(1), tie, strict) else 0
            elif kind == "BEST":
                port[p] = True
                continue
            else:
                v = 0
            tot += v
            if v > top:
                top = v
        totals[p] = tot
        best[p] = top
    for p in (0, 1):
        if port[p] and _beats(best[p], best[1 - p], ties[p], strict):
            totals[p] += _INFO[_PORT][3]
    return totals


def _margin(mine, theirs, me: int, strict: bool) -> int:
    t = fast_totals(mine, theirs, strict)
    return t[0] - t[1]


def best_pick(hand, k_me, k_opp, strict: bool, denial: float = 0.0) -> int:
    best, best_v = None, None
    for c in sorted(hand):
        mine = k_me + [c]
        v = _margin(mine, k_opp, 0, strict)
        if denial:
            rest = [d for d in hand if d != c]
            if rest:
                base = fast_totals(k_opp, mine, strict)[0]
                v -= denial * max(fast_totals(k_opp + [d], mine, strict)[0] - base for d in rest)
        if best_v is None or v > best_v:
            best, best_v = c, v
    return best


def best_relic(played, r_me, r_opp, strict: bool) -> tuple[int, int]:
    played = sorted(played)
    keep, keep_v = None, None
    for k in played:
        v = _margin(r_me + [k], r_opp, 0, strict)
        if keep_v is None or v > keep_v:
            keep, keep_v = k, v
    base_opp = fast_totals(r_opp, r_me + [keep], strict)[0]
    base_me = fast_totals(r_me + [keep], r_opp, strict)[0]
    remove, remove_v = None, None
    for r in played:
        if r == keep:
            continue
        help_opp = fast_totals(r_opp + [r], r_me + [keep], strict)[0] - base_opp
        help_me = fast_totals(r_me + [keep, r], r_opp, strict)[0] - base_me
        v = help_opp - help_me
        if remove_v is None or v > remove_v:
            remove, remove_v = r, v
    return keep, remove


def _find(legal, action):
    for a in legal:
        if a == action:
            return a
    return legal[0]


# -- heuristic -----------------------------------------------------------------------------

def heuristic(obs, rnd: random.Random) -> dict:
    legal = obs.legal
    if len(legal) == 1:
        return legal[0]
    view = obs.view
    me = obs.seat
    mine, theirs = view["seats"][me], view["seats"][1 - me]
    strict = bool(view.get("strict_zero_ties"))
    if legal[0]["type"] == "pick":
        card = best_pick(mine["hand"], list(mine["kingdom"]), list(theirs["kingdom"]), strict,
                         DENIAL)
        return _find(legal, {"type": "pick", "card": card})
    keep, remove = best_relic(mine["played_this_round"], list(mine["relics"]),
                              list(theirs["relics"]), strict)
    return _find(legal, {"type": "relic", "keep": keep, "remove": remove})


# -- rollout -------------------------------------------------------------------------------

def _policy(state: dict, seat: int, rnd: random.Random) -> dict:
    opp = 1 - seat
    strict = state["strict_zero_ties"]
    if state["phase"] == DRAFT:
        hand = state["hands"][seat]
        if rnd.random() < EPSILON:
            return {"type": "pick", "card": hand[rnd.randrange(len(hand))]}
        card = best_pick(hand, state["relics"][seat] + state["played"][seat],
                         state["relics"][opp] + state["played"][opp], strict)
        return {"type": "pick", "card": card}
    keep, remove = best_relic(state["played"][seat], state["relics"][seat], state["relics"][opp],
                              strict)
    return {"type": "relic", "keep": keep, "remove": remove}


def rollout(game, state: dict, seat: int, legal: list, rnd: random.Random) -> dict:
    return _policy(state, seat, rnd)


def for_simulation(state: dict) -> dict:
    """ISMCTS hook: the per-round breakdown (``rounds``) only feeds views and result details;
    simulations run without it so that the rules' clones stay small."""
    state["rounds"] = []
    return state


# -- determinizer --------------------------------------------------------------------------

def _opponent_hand(obs) -> tuple[list[int], int] | None:
    """(known cards, number of unknown cards) of the opponent's current hand, from the log."""
    me = obs.seat
    opp = 1 - me
    my: list[int] = []
    known: list[int] = []
    unknown = 0
    played: list[list[int]] = [[], []]
    dealt = False
    for ev in obs.events:
        t = ev.get("type")
        d = ev.get("data") or {}
        if t == "CardsDealt":
            my = list(d["hands"][me])
            known, unknown = [], len(d["hands"][me])
            played = [[], []]
            dealt = True
        elif t == "PicksRevealed":
            cards = d["cards"]
            if cards[me] in my:
                my.remove(cards[me])
            if cards[opp] in known:
                known.remove(cards[opp])
            else:
                unknown -= 1
            played[0].append(cards[0])
            played[1].append(cards[1])
        elif t == "HandsExchanged":
            known, unknown = my, 0
            my = list(d["hands"][me])
        elif t == "RelicsRevealed":
            hands = [[c for c in played[s] if c not in (d["kept"][s], d["removed"][s])]
                     for s in (0, 1)]
            my, known, unknown = hands[me], hands[opp], 0
            played = [[], []]
        elif t == "CardsDrawn":
            if ev.get("seat") == me:
                my = my + list(d.get("cards") or [])
            else:
                unknown += d.get("count", 0)
    view = obs.view
    if not dealt or sorted(my) != sorted(view["seats"][me]["hand"] or []) \
            or unknown < 0 or len(known) + unknown != view["seats"][opp]["hand_size"]:
        return None
    return known, unknown


_cache: list = [None, None]


def _template(obs) -> dict:
    if _cache[0] is obs:
        return _cache[1]
    view = obs.view
    me, opp = obs.seat, 1 - obs.seat
    seats = view["seats"]
    hand = list(seats[me]["hand"] or [])
    got = _opponent_hand(obs)
    known, unknown = got if got is not None else ([], seats[opp]["hand_size"])
    placed = set(hand) | set(known) | set(view["removed"])
    for s in seats:
        placed |= set(s["kingdom"])
    pool = [c for c in NUMBERS if c not in placed]
    if len(pool) != unknown + view["draw_pile_size"]:  # pragma: no cover - inconsistent view
        raise ValueError("Tides determinizer: the view does not account for every card")
    phase = view["phase"]
    state = {
        "strict_zero_ties": bool(view["strict_zero_ties"]),
        "deck_order": None,
        "custom_setup": view.get("setup") == "custom",
        "phase": phase,
        "round": view["round"],
        "pick": view["pick"] if phase == DRAFT else 5,
        "hands": [[], []],
        "relics": [list(seats[s]["relics"]) for s in (0, 1)],
        "played": [list(seats[s]["played_this_round"]) for s in (0, 1)],
        "pile": [],
        "removed": list(view["removed"]),
        "pending": [None, None],
        "round_scores": [list(seats[s]["round_scores"]) for s in (0, 1)],
        "totals": [seats[s]["total"] for s in (0, 1)],
        "rounds": list(view["rounds"]),
        "result": None,
    }
    state["hands"][me] = hand
    if seats[me]["pending"] is not None:
        p = seats[me]["pending"]
        state["pending"][me] = dict(p) if isinstance(p, dict) else p
    tpl = {"state": state, "known": known, "unknown": unknown, "pool": pool,
           "pile": view["draw_pile_size"], "opp_committed": seats[opp]["committed"],
           "me": me, "opp": opp}
    _cache[0], _cache[1] = obs, tpl
    return tpl


def determinize(obs, rnd: random.Random) -> dict:
    tpl = _template(obs)
    src = tpl["state"]
    me, opp = tpl["me"], tpl["opp"]
    pool = list(tpl["pool"])
    rnd.shuffle(pool)
    u = tpl["unknown"]
    state = dict(src)
    hands = [None, None]
    hands[me] = list(src["hands"][me])
    hands[opp] = tpl["known"] + pool[:u]
    state["hands"] = hands
    state["pile"] = pool[u:]
    state["relics"] = [list(x) for x in src["relics"]]
    state["played"] = [list(x) for x in src["played"]]
    state["removed"] = list(src["removed"])
    state["round_scores"] = [list(x) for x in src["round_scores"]]
    state["totals"] = list(src["totals"])
    state["rounds"] = list(src["rounds"])
    pending = list(src["pending"])
    if isinstance(pending[me], dict):
        pending[me] = dict(pending[me])
    state["pending"] = pending
    if tpl["opp_committed"]:
        act = _policy(state, opp, rnd)
        pending[opp] = act["card"] if act["type"] == "pick" else \
            {"keep": act["keep"], "remove": act["remove"]}
    return state
