"""Tides of Time bots: heuristic, rollout policy, simulation hooks and determinizer.

Heuristic: plan the rest of the round against a greedy opponent
----------------------------------------------------------------
From the public view, the seat's own hand and its own log only. A *pick* looks ahead to the end
of the current round. The opponent is modelled as the greedy rule below (the card with the best
immediate round margin for them, lowest number on ties); against that model the seat plans its
own remaining picks exhaustively: for each candidate card ``c`` of its hand, the value is the best
round margin (own round score minus the opponent's, rules section 6 on both kingdoms) it can
reach after playing ``c`` now, receiving the opponent's hand minus the opponent's greedy pick,
and so on until the fifth, forced pick. This accounts for what the seat passes on (the opponent
takes its best card out of it, the rest comes back), for majority cards still contested at the
end of the round, and for cards whose value only shows when later cards arrive (EACH and SET
objectives, The Roof of the World). The hands are known from the seat's own log after the first
exchange of a round (the opponent holds what the seat passed minus the opponent's pick; after a
relic phase its three leftovers are public); cards it cannot know (the opponent's first hand of
round 1, the two cards the opponent drew) are sampled ``SAMPLES`` (8) times from the unseen cards
with ``rnd`` and the values averaged. The pick is a secret commit: among the cards valued
within ``PICK_MIX`` (one point) of the best the seat picks one from its secret stream
(``engine.bots.mix``), so that its pick cannot be read off what others see. Greedy
rule: ``margin(K_me + [c], K_opp)`` where ``K`` are the kingdoms as they stand (relics + cards
played this round; a committed, unrevealed pick is unknown and left out).
(Measured, 300 games each, 2 seats: 93.5-94.7% against random, where the greedy rule alone with a
denial term made 71.5% over 300 games.)

Relic phase, by the round evaluation restricted to what survives into the next rounds (the relics):
``keep`` maximises ``margin(R_me + [k], R_opp)``; ``remove`` (among the other four) is the card
that would help the opponent most and us least if it came back into play: maximise
``[score_opp(R_opp + [r]) - score_opp(R_opp)] - [score_me(R_me + [k, r]) - score_me(R_me + [k])]``
(scores of the two relic sets against each other).

Rollout policy (inside simulations, on a determinized state, never reading the other seat's
pending choice): the greedy rule, epsilon-greedy with ``EPSILON = 0.25`` uniform random picks;
relic choices as the heuristic.

Simulation hooks (``service.engine.ismcts``): ``horizon`` cuts a simulation at the end of the
current round's draft (when the fifth, forced pick is due; for a relic decision, when the next round
starts); ``evaluate`` then plays the rest of the game once with the same rollout policy on a lean
copy of the state (:func:`playout`: plain lists and bitmasks, no events, no copies of the whole
state), its random choices seeded from the state itself (so ``evaluate`` is a pure function), and
returns the observer's win share of that playout (1, 1/2 on equal totals, 0). The expected reward
is the same as a playout through the rules module; it costs a fraction (tests check that
:func:`playout` and the rules give the same totals for the same choices). ``for_simulation``
drops the per-round breakdown, which only feeds views and result details.

Scoring: :func:`totals` gives the rules module's ``score_kingdoms`` totals for kingdoms as
bitmasks (the order of a kingdom's cards never matters) from a per-kingdom profile (effective
counts, the points of the cards that need no comparison, ...; memoized per mask) and memoizes
each pair (both memos are bounded by ``MEMO_LIMIT`` entries and cleared when full). Tests check
it against the rules on random kingdoms.

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

from ...engine.bots import BotHooks, mix
from .rules import (CARDS, DRAFT, NUMBERS, PICKS_PER_ROUND, RELIC, ROUNDS,
                                   SUITS)

EPSILON = 0.25
#: Opponent hands the heuristic samples when part of it is unknown.
SAMPLES = 8
#: Picks valued within this many points of the best are near-equal (the heuristic mixes).
PICK_MIX = 1.0

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


# -- scoring on bitmasks, memoized ---------------------------------------------------------

#: card -> its bit in a kingdom mask (bits 1..18)
BIT = {c: 1 << c for c in NUMBERS}
_MASK_BITS = max(NUMBERS) + 1
_STRICT_BIT = 1 << (2 * _MASK_BITS)
#: Bound on each memo of :func:`totals` (cleared when full; the pair memo is ~25 MB full).
MEMO_LIMIT = 100_000
_memo: dict[int, tuple[int, int]] = {}


def _situation(cards: int, m_me: int, m_opp: int, strict: bool) -> int:
    """One int for (a set of cards, both kingdoms, strict): the key of the per-decision memos."""
    key = cards | (m_me | m_opp << _MASK_BITS) << _MASK_BITS
    return -key - 1 if strict else key


def _remember(memo: dict, key: int, value):
    """Store ``value`` in a memo bounded by ``MEMO_LIMIT`` (cleared when full)."""
    if len(memo) >= MEMO_LIMIT:
        memo.clear()
    memo[key] = value
    return value


def mask(cards) -> int:
    m = 0
    for c in cards:
        m |= BIT[c]
    return m


def cards_of(m: int) -> list[int]:
    return [c for c in NUMBERS if m >> c & 1]


#: card -> (points of the card alone if it needs no comparison, or None; MAJ suit or -1)
_SOLO_KINDS = ("EACH", "SET", "MISSING")
_MAJ = {c: (i[2], i[3]) for c, i in _INFO.items() if i[1] == "MAJ"}
_MOLE = next(n for n, c in CARDS.items() if c["kind"] == "SINGLES")
_MOLE_PTS = _INFO[_MOLE][3]
_PORT_PTS = _INFO[_PORT][3]
_profiles: dict[int, tuple] = {}


def _profile(m: int) -> tuple:
    """What one kingdom's scoring needs, whatever the opponent: effective counts, singles,
    ties flag, points and best card of the cards that need no comparison, MAJ (suit, points),
    Molehill and Port present (memoized per mask)."""
    got = _profiles.get(m)
    if got is None:
        cards = cards_of(m)
        n = tuple(_counts(cards))  # a tuple of ints: the GC need not track the entry
        own = top = 0
        maj = []
        for c in cards:
            _, kind, arg, pts = _INFO[c]
            if kind == "EACH":
                v = pts * n[arg]
            elif kind == "SET":
                v = pts * min(n[s] for s in arg)
            elif kind == "MISSING":
                v = pts * n.count(0)
            else:
                if kind == "MAJ":
                    maj.append(_MAJ[c])
                continue
            own += v
            if v > top:
                top = v
        got = _remember(_profiles, m, (n, n.count(1), bool(m & BIT[_NEST]), own, top,
                                       tuple(maj), bool(m & BIT[_MOLE]), bool(m & BIT[_PORT])))
    return got


def _pair_totals(m0: int, m1: int, strict: bool) -> tuple[int, int]:
    """Round scores (rules section 6) from the two kingdoms' profiles."""
    a, b = _profile(m0), _profile(m1)
    out = []
    tops = []
    for pp, oo in ((a, b), (b, a)):
        n, ones, tie, tot, top, maj, mole, _ = pp
        no = oo[0]
        for s, pts in maj:
            x, y = n[s], no[s]
            if x > y or (x == y and tie and (x > 0 or not strict)):
                tot += pts
                if pts > top:
                    top = pts
        if mole:
            y = oo[1]
            if ones > y or (ones == y and tie and (ones > 0 or not strict)):
                tot += _MOLE_PTS
                if _MOLE_PTS > top:
                    top = _MOLE_PTS
        out.append(tot)
        tops.append(top)
    if a[7] and _beats(tops[0], tops[1], a[2], strict):
        out[0] += _PORT_PTS
    if b[7] and _beats(tops[1], tops[0], b[2], strict):
        out[1] += _PORT_PTS
    return out[0], out[1]


def totals(m0: int, m1: int, strict: bool) -> tuple[int, int]:
    """The round scores of the kingdoms given as bitmasks, memoized."""
    key = m0 | m1 << _MASK_BITS
    if strict:
        key |= _STRICT_BIT
    got = _memo.get(key)
    if got is None:
        got = _remember(_memo, key, _pair_totals(m0, m1, strict))
        other = m1 | m0 << _MASK_BITS
        _remember(_memo, other | _STRICT_BIT if strict else other, (got[1], got[0]))
    return got


def margin(m_me: int, m_opp: int, strict: bool) -> int:
    t = totals(m_me, m_opp, strict)
    return t[0] - t[1]


_greedy: dict[int, int] = {}
_relic: dict[int, tuple[int, int]] = {}


def greedy_pick(hand, m_me: int, m_opp: int, strict: bool) -> int:
    """The greedy rule: the card with the best immediate round margin (lowest number on ties).
    Memoized on (hand, kingdoms)."""
    key = _situation(mask(hand), m_me, m_opp, strict)
    got = _greedy.get(key)
    if got is None:
        got = _remember(_greedy, key, _greedy_pick(sorted(hand), m_me, m_opp, strict))
    return got


def _greedy_pick(hand, m_me: int, m_opp: int, strict: bool) -> int:
    base = m_opp << _MASK_BITS
    if strict:
        base |= _STRICT_BIT
    get = _memo.get
    best, best_v = None, None
    for c in hand:
        m = m_me | BIT[c]
        t = get(m | base)
        if t is None:
            t = totals(m, m_opp, strict)
        v = t[0] - t[1]
        if best_v is None or v > best_v:
            best, best_v = c, v
    return best


def best_relic(played, r_me, r_opp, strict: bool) -> tuple[int, int]:
    """(keep, remove) of the relic rule (module docstring); ``r_*`` are relic lists."""
    played = sorted(played)
    m_me, m_opp = mask(r_me), mask(r_opp)
    return _best_relic(played, m_me, m_opp, strict)


def _best_relic(played, m_me: int, m_opp: int, strict: bool) -> tuple[int, int]:
    """:func:`best_relic` with ``played`` sorted and relics as masks, memoized."""
    key = _situation(mask(played), m_me, m_opp, strict)
    got = _relic.get(key)
    if got is None:
        got = _remember(_relic, key, _relic_rule(played, m_me, m_opp, strict))
    return got


def _relic_rule(played, m_me: int, m_opp: int, strict: bool) -> tuple[int, int]:
    keep, keep_v = None, None
    for k in played:
        v = margin(m_me | BIT[k], m_opp, strict)
        if keep_v is None or v > keep_v:
            keep, keep_v = k, v
    m_keep = m_me | BIT[keep]
    base_opp = totals(m_opp, m_keep, strict)[0]
    base_me = totals(m_keep, m_opp, strict)[0]
    remove, remove_v = None, None
    for r in played:
        if r == keep:
            continue
        help_opp = totals(m_opp | BIT[r], m_keep, strict)[0] - base_opp
        help_me = totals(m_keep | BIT[r], m_opp, strict)[0] - base_me
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

def _plan(mine, theirs, m_me: int, m_opp: int, strict: bool) -> int:
    """The best round margin the seat holding ``mine`` reaches against the greedy rule, with
    ``theirs`` the opponent's hand (same size) and ``m_*`` the kingdoms."""
    if len(mine) == 1:
        return margin(m_me | BIT[mine[0]], m_opp | BIT[theirs[0]], strict)
    o = greedy_pick(theirs, m_opp, m_me, strict)
    back = [x for x in theirs if x != o]
    m_opp2 = m_opp | BIT[o]
    best = None
    for c in mine:
        v = _plan(back, [x for x in mine if x != c], m_me | BIT[c], m_opp2, strict)
        if best is None or v > best:
            best = v
    return best


def pick_values(hand, opp_hand, m_me: int, m_opp: int, strict: bool) -> dict[int, int]:
    """Per card of ``hand``: the planned round margin after picking it now (module docstring)."""
    o = greedy_pick(opp_hand, m_opp, m_me, strict)
    back = [x for x in opp_hand if x != o]
    m_opp2 = m_opp | BIT[o]
    out = {}
    for c in sorted(hand):
        rest = [x for x in hand if x != c]
        if not rest:
            out[c] = margin(m_me | BIT[c], m_opp2, strict)
        else:
            out[c] = _plan(back, rest, m_me | BIT[c], m_opp2, strict)
    return out


def heuristic(obs, rnd: random.Random) -> dict:
    legal = obs.legal
    if len(legal) == 1:
        return legal[0]
    view = obs.view
    me = obs.seat
    mine, theirs = view["seats"][me], view["seats"][1 - me]
    strict = bool(view.get("strict_zero_ties"))
    m_me, m_opp = mask(mine["kingdom"]), mask(theirs["kingdom"])
    if legal[0]["type"] == "pick":
        hand = list(mine["hand"])
        got = _opponent_hand(obs)
        known, unknown = got if got is not None else ([], theirs["hand_size"])
        if unknown == 0:
            values = pick_values(hand, known, m_me, m_opp, strict)
        else:
            placed = set(hand) | set(known) | set(view["removed"]) | set(mine["kingdom"]) \
                | set(theirs["kingdom"])
            pool = [c for c in NUMBERS if c not in placed]
            values = dict.fromkeys(hand, 0)
            for _ in range(SAMPLES):
                sample = known + rnd.sample(pool, unknown)
                for c, v in pick_values(hand, sample, m_me, m_opp, strict).items():
                    values[c] += v
        per = SAMPLES if unknown else 1
        card = mix([(c, values[c] / per) for c in sorted(values)], rnd, PICK_MIX)
        return _find(legal, {"type": "pick", "card": card})
    keep, remove = best_relic(mine["played_this_round"], mine["relics"], theirs["relics"],
                              strict)
    return _find(legal, {"type": "relic", "keep": keep, "remove": remove})


# -- rollout policy and simulation hooks ---------------------------------------------------

def _policy(state: dict, seat: int, rnd: random.Random) -> dict:
    opp = 1 - seat
    strict = state["strict_zero_ties"]
    if state["phase"] == DRAFT:
        hand = state["hands"][seat]
        if len(hand) == 1:
            return {"type": "pick", "card": hand[0]}
        if rnd.random() < EPSILON:
            return {"type": "pick", "card": hand[rnd.randrange(len(hand))]}
        relics, played = state["relics"], state["played"]
        card = greedy_pick(hand, mask(relics[seat]) | mask(played[seat]),
                           mask(relics[opp]) | mask(played[opp]), strict)
        return {"type": "pick", "card": card}
    keep, remove = best_relic(state["played"][seat], state["relics"][seat], state["relics"][opp],
                              strict)
    return {"type": "relic", "keep": keep, "remove": remove}


def rollout(game, state: dict, seat: int, legal: list, rnd: random.Random) -> dict:
    return _policy(state, seat, rnd)


def for_simulation(state: dict) -> dict:
    """ISMCTS hook: the per-round breakdown (``rounds``) only feeds views and result details;
    simulations run without it (None: the rules record none either) so that the state each
    command clones stays small."""
    state["rounds"] = None
    return state


def horizon(state: dict):
    """ISMCTS hook: a key that changes when the current round's draft is over (the fifth pick,
    which is forced, is due) and again when the next round starts (after a relic phase)."""
    r = 2 * state["round"]
    if state["phase"] == DRAFT and state["pick"] < PICKS_PER_ROUND:
        return r
    return r + 1


def playout(state: dict, rnd, epsilon: float = EPSILON, choose=None) -> list[int]:
    """Final totals after playing ``state`` (DRAFT or RELIC, any pick, pending choices honoured)
    to the end with the rollout policy for both seats, on lean copies (``state`` is not
    modified). ``choose(seat, phase, hand_or_played, m_me, m_opp)`` may replace the policy
    (tests: the same choices through the rules module give the same totals)."""
    strict = state["strict_zero_ties"]
    hands = [list(state["hands"][0]), list(state["hands"][1])]
    played = [list(state["played"][0]), list(state["played"][1])]
    rel = [mask(state["relics"][0]), mask(state["relics"][1])]
    km = [rel[0] | mask(played[0]), rel[1] | mask(played[1])]
    pile = state["pile"]
    tot = list(state["totals"])
    rnd_no = state["round"]
    phase = state["phase"]
    pending = list(state["pending"])
    rand = rnd.random
    while True:
        if phase == DRAFT:
            while hands[0]:
                picks = [0, 0]
                for s in (0, 1):
                    c = pending[s]
                    if c is None:
                        h = hands[s]
                        if len(h) == 1:
                            c = h[0]
                        elif choose is not None:
                            c = choose(s, DRAFT, h, km[s], km[1 - s])
                        elif rand() < epsilon:
                            c = h[rnd.randrange(len(h))]
                        else:
                            c = greedy_pick(h, km[s], km[1 - s], strict)
                    picks[s] = c
                pending = [None, None]
                for s in (0, 1):
                    c = picks[s]
                    hands[s].remove(c)
                    played[s].append(c)
                    km[s] |= BIT[c]
                if hands[0]:
                    hands.reverse()
            t = totals(km[0], km[1], strict)
            tot[0] += t[0]
            tot[1] += t[1]
            if rnd_no >= ROUNDS:
                return tot
            phase = RELIC
        # RELIC
        for s in (0, 1):
            p = pending[s]
            if p is not None:
                keep, remove = p["keep"], p["remove"]
            elif choose is not None:
                keep, remove = choose(s, RELIC, played[s], rel[s], rel[1 - s])
            else:
                keep, remove = _best_relic(sorted(played[s]), rel[s], rel[1 - s], strict)
            pending[s] = (keep, remove)
        for s in (0, 1):
            keep, remove = pending[s]
            rel[s] |= BIT[keep]
            hands[s] = [c for c in played[s] if c != keep and c != remove]
            played[s] = []
        pending = [None, None]
        hands[0] += pile[0:2]
        hands[1] += pile[2:4]
        pile = pile[4:]
        km = [rel[0], rel[1]]
        rnd_no += 1
        phase = DRAFT


def evaluate(game, state: dict, seat: int) -> float:
    """ISMCTS hook: ``seat``'s win share of one :func:`playout` of the rest of the game, its
    random choices seeded from the state (a pure function of ``state``)."""
    if state["phase"] not in (DRAFT, RELIC):
        tot = state["totals"]
    else:
        h, p = state["hands"], state["played"]
        seed = hash((tuple(h[0]), tuple(h[1]), tuple(p[0]), tuple(p[1]), tuple(state["pile"]),
                     state["round"], state["totals"][0], state["totals"][1]))
        tot = playout(state, random.Random(seed))
    mine, theirs = tot[seat], tot[1 - seat]
    return 1.0 if mine > theirs else 0.5 if mine == theirs else 0.0


# -- determinizer --------------------------------------------------------------------------

def _rules_hand(view: dict, seat: int) -> tuple[list[int], int]:
    """(``seat``'s hand as the rules state holds it, or [] when hidden; its size). In the relic
    phase the cards taken back into hand (spec 5.3.1) are the state's ``played`` and its hands
    are empty, whatever the view shows as the hand."""
    if view["phase"] == RELIC:
        return [], 0
    s = view["seats"][seat]
    return list(s["hand"] or []), s["hand_size"]


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
    if not dealt or sorted(my) != sorted(_rules_hand(view, me)[0]) \
            or unknown < 0 or len(known) + unknown != _rules_hand(view, opp)[1]:
        return None
    return known, unknown


_cache: list = [None, None]


def _template(obs) -> dict:
    if _cache[0] is obs:
        return _cache[1]
    view = obs.view
    me, opp = obs.seat, 1 - obs.seat
    seats = view["seats"]
    hand = _rules_hand(view, me)[0]
    got = _opponent_hand(obs)
    known, unknown = got if got is not None else ([], _rules_hand(view, opp)[1])
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


class Bots(BotHooks):
    """This game's bot hooks (:class:`~service.engine.bots.BotHooks`)."""

    cuts_simulations = True
    heuristic = staticmethod(heuristic)
    determinize = staticmethod(determinize)
    rollout = staticmethod(rollout)
    for_simulation = staticmethod(for_simulation)
    horizon = staticmethod(horizon)
    evaluate = staticmethod(evaluate)


BOTS = Bots()
