"""Papyrus bots: the heuristic level, the rollout policy and the determinizer.

Heuristic (standard game), from the seat's view only
------------------------------------------------------
Every God card in hand gets a *plan estimate*: the turns still needed to conquer it,

* tiles: missing glyphs in the market cost one exchange each; the rest come from the bag, and
  drawing them costs ``sum 1/q`` turns where ``q`` is the chance that one draw is one of the still
  missing glyph types (the bag's composition is estimated from what the seat has not seen:
  300 tiles minus its holder, the market and the glyph discard pile); a spelling longer than the
  holder (Qebehsenuef) adds a penalty, since an Event card must grow the holder first;
* travel: the cheapest route in squares to the god's pyramid (leaving and coming back when the
  pawn stands on it), one turn per path plus half a turn per missing movement card.

Its worth is ``value + 5`` (the scarab) plus the sons-of-Horus bonus it would add (and a
half point for Amon-Ra, the tie-break); the *target* is the god with the best worth per turn.
The turn is then, in this order:

1. conquer now: a move onto the pyramid of a spelled god in hand (the most points first);
2. target spelled: step along the cheapest route towards it (a detour of one square is allowed
   when the best step is unaffordable); if no step is affordable, draw movement cards;
3. target not spelled: an exchange that takes a missing glyph from the market (of the target, or
   else of another god in hand), paying the least useful tile, when the exchange leaves the plans
   better (the sum of their worth per turn goes up: paying one tile of a plan for another it
   needs gains nothing, and two seats doing so could swap the same glyphs for ever); else a step
   towards the target that does not land on it (the tiles come on the way); else an exchange
   with the bag paying a surplus tile when a useful draw is likely enough; else draw movement
   cards.

Payments use the fewest Eyes of Horus (wilds are kept) and spend the colours held most. Event
decisions: Temple Offering takes the most useful market glyph; Wisdom of Thoth, Tomb Robbers and
capacity discards give up the least useful tiles (surplus first, then the tiles of the worst
plan, the most common glyphs first); Sacred Barque conquers if it can, else takes a free step
that shortens the route (never onto the target before it is spelled), else declines; Sandstorm
discards the colours held most, Eyes last; Divine Revelation swaps the worst God card when its
plan is clearly bad (at least 3 missing tiles or an estimate above 12 turns), else declines.

Solo variant: always form a god when possible (the one worth most, then the one that destroys
the least progress of the others); the purchase is blind; the capacity discard gives up the least
useful tile as above.

Rollout: the same policy on the full (determinized) state, with 5 % uniformly random moves. It
conquers steadily, so simulated games end.

Determinizer: reads only ``obs``. It replays the seat's visible event log to know which tiles
and cards could still be in the bag / movement deck since their last refill (the refilled
piles are public), which God cards this seat put under the God deck (and where they are now),
and fills every hidden place — other seats' holders, movement cards and God cards, the deck and
bag orders, the God cards out of the game — by a uniform shuffle of the unseen remainder.
Everything public is copied from the view.
"""

from __future__ import annotations

import heapq
import random
from typing import Any

from ...engine.bots import BotHooks, digest
from .data import (BAG_COUNTS, BUILTIN_BOARD, BUILTIN_BOARD_DOC, COLOURS,
                                  EVENT_COUNTS, EVENTS, GLYPHS, GOD, GODS, KINDS,
                                  MOVEMENT_COUNTS, SCARAB_POINTS, SONS, SONS_BONUS, SPELLING,
                                  TIEBREAK_GOD, Board)

ROLLOUT_EPSILON = 0.05
#: how a target whose glyph is not to be found anymore is priced (turns)
HOPELESS = 60.0
#: demand of each glyph over all 36 gods (keeps common, much-needed tiles over rare useless ones)
DEMAND = {x: sum(SPELLING[g].get(x, 0) for g in GODS) for x in GLYPHS}

# --------------------------------------------------------------------------------------------
# boards: all-pairs cheapest routes (squares, paths), cached per board


class _Routes:
    def __init__(self, board: Board) -> None:
        self.board = board
        self.cost = {pid: sum(p["squares"].values()) for pid, p in board.paths.items()}
        self.dist: dict[str, dict[str, tuple[int, int]]] = {}
        for src in board.nodes:
            best = {src: (0, 0)}
            heap = [(0, 0, src)]
            while heap:
                d, h, u = heapq.heappop(heap)
                if best.get(u, (1 << 30, 0)) < (d, h):
                    continue
                for pid in board.adjacent[u]:
                    v = board.other_end(pid, u)
                    cand = (d + self.cost[pid], h + 1)
                    if cand < best.get(v, (1 << 30, 0)):
                        best[v] = cand
                        heapq.heappush(heap, (cand[0], cand[1], v))
            self.dist[src] = best
        self.pyramid = {n["god"]: nid for nid, n in board.nodes.items() if n["kind"] == "pyramid"}

    def eff(self, frm: str, to: str) -> tuple[int, int]:
        """Squares and paths to *arrive* at ``to`` (leave and come back when already there)."""
        if frm != to:
            return self.dist[frm][to]
        return min((2 * self.cost[pid], 2) for pid in self.board.adjacent[frm])


_routes_cache: dict[str, _Routes] = {}


def _routes_for_doc(doc: dict | None) -> _Routes:
    if doc is None or doc is BUILTIN_BOARD_DOC:
        key = "\0builtin"
    else:
        key = repr(doc) if doc != BUILTIN_BOARD_DOC else "\0builtin"
    r = _routes_cache.get(key)
    if r is None:
        if len(_routes_cache) > 32:
            _routes_cache.clear()
        board = BUILTIN_BOARD if key == "\0builtin" else Board(doc)
        r = _routes_cache[key] = _Routes(board)
    return r


# --------------------------------------------------------------------------------------------
# what a seat knows about itself (the same for a view and a full state)


class _Me:
    __slots__ = ("seat", "solo", "pawn", "cards", "gods", "holder", "market", "pool",
                 "pool_total", "routes", "sons", "conquered", "pending", "bag_ok", "owners")

    def __init__(self, seat, solo, pawn, cards, gods, holder, market, discard, routes, sons,
                 pending, bag_ok, owners=()):
        self.seat = seat
        self.solo = solo
        self.pawn = pawn
        self.cards = cards
        self.gods = gods
        self.holder = holder
        self.market = market
        # tiles this seat has not seen: the bag and the other holders
        self.pool = {x: max(0, BAG_COUNTS[x] - holder.get(x, 0) - market.get(x, 0)
                            - discard.get(x, 0)) for x in GLYPHS}
        self.pool_total = sum(self.pool.values())
        self.routes = routes
        self.sons = sons
        self.pending = pending
        self.bag_ok = bag_ok
        self.owners = owners


def _me_from_view(view: dict, seat: int) -> _Me:
    solo = view["variant"] == "solo"
    mine = view["seats"][seat]
    routes = None if solo else _routes_for_doc(
        None if view["board"] == BUILTIN_BOARD_DOC else view["board"])
    return _Me(seat, solo, mine.get("pawn"), mine.get("movement") or {}, list(mine["gods"]),
               dict(mine["holder"]), view.get("market") or {}, view["glyph_discard"], routes,
               mine["sons_of_horus"], view["pending"],
               view["bag_count"] > 0 or any(view["glyph_discard"].values()), view["owners"])


def _me_from_state(state: dict, seat: int) -> _Me:
    solo = state["variant"] == "solo"
    p = state["seats"][seat]
    routes = None if solo else _routes_for_doc(state["board"])
    return _Me(seat, solo, p["pawn"], p["movement"], p["gods"], p["holder"], state["market"],
               state["glyph_discard"], routes, sum(1 for g in p["conquered"] if g in SONS),
               state["pending"], bool(state["bag"]) or any(state["glyph_discard"].values()),
               state["owners"])


# --------------------------------------------------------------------------------------------
# plan estimates


def _missing(holder: dict, god: str) -> dict[str, int]:
    return {x: k - holder.get(x, 0) for x, k in SPELLING[god].items() if holder.get(x, 0) < k}


def _spelled(holder: dict, god: str) -> bool:
    return all(holder.get(x, 0) >= k for x, k in SPELLING[god].items())


def _worth(me: _Me, god: str) -> float:
    w = GOD[god]["value"] + SCARAB_POINTS
    if not me.solo and god in SONS:
        w += SONS_BONUS.get(min(me.sons + 1, 4), 0) - SONS_BONUS.get(min(me.sons, 4), 0)
    if god == TIEBREAK_GOD:
        w += 0.5
    return w


def _tile_turns(me: _Me, holder: dict, god: str, market: dict | None = None) -> float:
    market = me.market if market is None else market
    miss = _missing(holder, god)
    if not miss:
        return 0.0
    turns = 0.0
    rem: dict[str, int] = {}
    for x, k in miss.items():
        from_market = 0 if me.solo else min(k, market.get(x, 0))
        turns += from_market
        if k > from_market:
            rem[x] = k - from_market
    total = me.pool_total or 1
    while rem:
        q = sum(me.pool[x] for x in rem) / total
        if q <= 0:
            return turns + HOPELESS
        turns += 1.0 / q
        x = max(rem, key=lambda y: me.pool[y])
        rem[x] -= 1
        if not rem[x]:
            del rem[x]
    size = sum(SPELLING[god].values())
    if size > max(sum(holder.values()), 10):
        turns += 15.0
    return min(turns, HOPELESS)


def _travel_turns(me: _Me, god: str) -> float:
    if me.solo:
        return 0.0
    target = me.routes.pyramid.get(god)
    if target is None:
        return HOPELESS
    squares, paths = me.routes.eff(me.pawn, target)
    return paths + max(0, squares - sum(me.cards.values())) / 2.0


def _plans(me: _Me, holder: dict | None = None,
           market: dict | None = None) -> list[tuple[float, str, float]]:
    """[(rate, god, turns)] best first (with ``holder`` and ``market`` instead of the seat's
    when given)."""
    holder = me.holder if holder is None else holder
    out = []
    for g in me.gods:
        t = _tile_turns(me, holder, g, market) + _travel_turns(me, g)
        out.append((_worth(me, g) / (t + 2.0), g, t))
    out.sort(key=lambda r: (-r[0], r[1]))
    return out


def _reserved(me: _Me, plans) -> dict[str, int]:
    """Tiles of the holder earmarked for the gods in hand, best plan first."""
    left = dict(me.holder)
    keep = {x: 0 for x in GLYPHS}
    for _, g, _ in plans:
        for x, k in SPELLING[g].items():
            take = min(k, left.get(x, 0))
            keep[x] += take
            left[x] = left.get(x, 0) - take
    return keep


def _give_up_order(me: _Me, plans) -> list[str]:
    """Held tiles from least to most useful (one entry per tile)."""
    keep = _reserved(me, plans)
    surplus = []
    for x in GLYPHS:
        extra = me.holder.get(x, 0) - keep[x]
        surplus += [x] * max(0, extra)
    surplus.sort(key=lambda x: (DEMAND[x] - 3 * (me.holder.get(x, 0) - keep[x]), x))
    rest = []
    seen = {x: 0 for x in GLYPHS}
    # then the tiles of the worst plans, the most common glyphs first
    for _, g, _ in reversed(plans):
        for x in sorted(SPELLING[g], key=lambda y: (-me.pool[y], y)):
            want = min(SPELLING[g][x], keep[x] - seen[x])
            if want > 0:
                rest += [x] * want
                seen[x] += want
    return surplus + rest


def _solo_give_up_order(me: _Me, plans) -> list[str]:
    """Solo: held tiles from least to most useful. Every God card not formed yet will come (the
    deck holds them all), so a surplus tile is worth what drawing it again costs (``1 / its
    share of the bag``) while the gods still to come need it, and nothing once they do not;
    several copies of a glyph are worth less each. Then the tiles of the worst plans."""
    keep = _reserved(me, plans)
    future = {x: 0 for x in GLYPHS}
    for g in GODS:
        if g not in me.owners and g not in me.gods:
            for x, k in SPELLING[g].items():
                future[x] += k
    scored = []
    for x in GLYPHS:
        for k in range(1, me.holder.get(x, 0) - keep[x] + 1):
            value = (1.0 / BAG_COUNTS[x]) / k if k <= future[x] else 0.0
            scored.append((value, x))
    scored.sort()
    surplus = [x for _, x in scored]
    return surplus + _give_up_order(me, plans)[len(surplus):]


def _least_useful(me: _Me, plans, k: int) -> list[str]:
    order = _solo_give_up_order(me, plans) if me.solo else _give_up_order(me, plans)
    return order[:k]


def _multiset_key(glyphs) -> tuple:
    return tuple(sorted(glyphs))


# --------------------------------------------------------------------------------------------
# the standard game


def _pay_key(me: _Me, cards: dict) -> tuple:
    eyes = cards.get("eye", 0)
    return (eyes, -sum(v * me.cards.get(c, 0) for c, v in cards.items() if c != "eye"))


def _cheapest(me: _Me, moves: list[dict]) -> dict:
    return min(moves, key=lambda a: _pay_key(me, a["cards"]))


def _standard_turn(me: _Me, legal: list[dict], plans) -> dict:
    board = me.routes.board
    moves: dict[str, list[dict]] = {}
    exchanges: list[dict] = []
    draw = None
    for a in legal:
        t = a["type"]
        if t == "move":
            moves.setdefault(a["path"], []).append(a)
        elif t == "exchange":
            exchanges.append(a)
        elif t == "draw_movement":
            draw = a
    dest = {pid: board.other_end(pid, me.pawn) for pid in moves}

    # 1. conquer now
    best = None
    for pid, opts in moves.items():
        node = board.nodes[dest[pid]]
        if node["kind"] == "pyramid" and node["god"] in me.gods \
                and _spelled(me.holder, node["god"]):
            key = (_worth(me, node["god"]), pid)
            if best is None or key > best[0]:
                best = (key, _cheapest(me, opts))
    if best:
        return best[1]
    if not plans:
        return draw or legal[0]
    target = plans[0][1]
    tnode = me.routes.pyramid.get(target)

    def step(onto_target: bool, slack: int) -> dict | None:
        if tnode is None:
            return None
        here = me.routes.eff(me.pawn, tnode)[0]
        cands = []
        for pid, opts in moves.items():
            to = dest[pid]
            if to == tnode and not onto_target:
                continue
            rest = 0 if to == tnode else me.routes.dist[to][tnode][0]
            total = me.routes.cost[pid] + rest
            if total > here + slack:
                continue
            if not onto_target and rest >= here:
                continue
            bonus = -1 if board.nodes[to]["kind"] == "event" else 0
            cands.append((total, bonus, pid))
        if not cands:
            return None
        cands.sort()
        return _cheapest(me, moves[cands[0][2]])

    # 2. target spelled: travel
    if _spelled(me.holder, target):
        mv = step(True, 1)
        if mv:
            return mv
        return draw or legal[0]

    # 3. collect the tiles
    order = _give_up_order(me, plans)
    miss_target = _missing(me.holder, target)
    useful_any: dict[str, int] = {}
    for _, g, _ in plans:
        for x, k in _missing(me.holder, g).items():
            useful_any[x] = max(useful_any.get(x, 0), k)
    market_ex = {(a["pay"], a["take"]): a for a in exchanges if a["take"] != "bag"}
    tspell = SPELLING[target]
    for wanted in (miss_target, useful_any):
        takes = [x for x in wanted if me.market.get(x, 0)]
        if not takes:
            continue
        take = min(takes, key=lambda x: (me.pool[x], x))  # the rarest first
        for pay in order:
            # never pay with the take itself or a tile the target still needs
            if pay != take and me.holder.get(pay, 0) > tspell.get(pay, 0):
                a = market_ex.get((pay, take))
                if a is not None and _improves(me, plans, pay, take):
                    return a
                break
    mv = step(False, 0)
    if mv:
        return mv
    if me.bag_ok and order:
        pay = order[0]
        keep = _reserved(me, plans)
        q = sum(me.pool[x] for x in useful_any) / (me.pool_total or 1)
        if me.holder.get(pay, 0) > keep.get(pay, 0) and q >= 0.12:
            for a in exchanges:
                if a["take"] == "bag" and a["pay"] == pay:
                    return a
    if draw is not None and sum(me.cards.values()) < 12:
        return draw
    if me.bag_ok and order:
        for a in exchanges:
            if a["take"] == "bag" and a["pay"] == order[0]:
                return a
    return draw or legal[0]


def _improves(me: _Me, plans, pay: str, take: str) -> bool:
    """Whether exchanging ``pay`` for the market's ``take`` leaves the plans better: the sum of
    their rates (worth per turn), with the holder and the market after the exchange, goes up.
    Paying a tile of one plan for a tile of the same or an equal plan gains nothing, and two
    seats making such exchanges could trade the same glyphs back and forth for ever."""
    holder = dict(me.holder)
    holder[pay] -= 1
    holder[take] = holder.get(take, 0) + 1
    market = dict(me.market)
    market[take] -= 1
    market[pay] = market.get(pay, 0) + 1
    before = sum(rate for rate, _, _ in plans)
    after = sum(rate for rate, _, _ in _plans(me, holder, market))
    return after > before + 1e-9


def _pending_choice(me: _Me, legal: list[dict], plans) -> dict:
    kind = me.pending["kind"]
    count = me.pending.get("count", 1)
    if kind in ("capacity", "wisdom-of-thoth"):
        want = _multiset_key(_least_useful(me, plans, count))
        field = "glyphs" if kind == "capacity" else "return"
        for a in legal:
            if _multiset_key(a[field]) == want:
                return a
        return legal[0]
    if kind == "tomb-robbers":
        give = _least_useful(me, plans, 1)
        for a in legal:
            if give and a["return"] == give[0]:
                return a
        return legal[0]
    if kind == "temple-offering":
        miss = {}
        for rank, (_, g, _) in enumerate(plans):
            for x in _missing(me.holder, g):
                miss.setdefault(x, rank)
        return min(legal, key=lambda a: (miss.get(a["take"], 99), me.pool[a["take"]],
                                         -DEMAND[a["take"]], a["take"]))
    if kind == "sandstorm":
        hand = dict(me.cards)

        def cost(a):
            d = a["discard"]
            left = {k: hand.get(k, 0) - d.get(k, 0) for k in KINDS}
            return (d.get("eye", 0), -min(left[c] for c in COLOURS),
                    sorted(left.values()))
        return min(legal, key=cost)
    if kind == "divine-revelation":
        if plans:
            rate, worst, turns = plans[-1]
            if sum(_missing(me.holder, worst).values()) >= 3 or turns > 12:
                for a in legal:
                    if a["god"] == worst:
                        return a
        return next(a for a in legal if a["god"] is None)
    if kind == "sacred-barque":
        board = me.routes.board
        best = None
        target = plans[0][1] if plans else None
        tnode = me.routes.pyramid.get(target) if target else None
        spelled = target is not None and _spelled(me.holder, target)
        here = me.routes.eff(me.pawn, tnode)[0] if tnode else 0
        for a in legal:
            pid = a["path"]
            if pid is None:
                continue
            to = board.other_end(pid, me.pawn)
            node = board.nodes[to]
            if node["kind"] == "pyramid" and node["god"] in me.gods \
                    and _spelled(me.holder, node["god"]):
                key = (2, _worth(me, node["god"]))
            elif tnode is not None and (to != tnode or spelled):
                rest = 0 if to == tnode else me.routes.dist[to][tnode][0]
                if rest >= here:
                    continue
                key = (1, -rest)
            else:
                continue
            if best is None or key > best[0]:
                best = (key, a)
        if best:
            return best[1]
        return next(a for a in legal if a["path"] is None)
    return legal[0]


# --------------------------------------------------------------------------------------------
# solo


def _solo(me: _Me, legal: list[dict], plans) -> dict:
    if me.pending is not None:
        give = _least_useful(me, plans, 1)
        for a in legal:
            if give and a["glyph"] == give[0]:
                return a
        return legal[0]
    forms = [a for a in legal if a["type"] == "form_god"]
    if forms:
        def key(a):
            g = a["god"]
            after = dict(me.holder)
            for x, k in SPELLING[g].items():
                after[x] -= k
            others = sum(sum(_missing(after, h).values()) for h in me.gods if h != g)
            return (_worth(me, g), -others, g)
        return max(forms, key=key)
    return next(a for a in legal if a["type"] == "buy_glyph")


def _decide(me: _Me, legal: list[dict], target: str | None = None) -> dict:
    plans = _plans(me)
    if target in me.gods and not me.solo:
        plans.sort(key=lambda r: r[1] != target)  # stable: the other plans keep their order
    if me.solo:
        return _solo(me, legal, plans)
    if me.pending is not None:
        return _pending_choice(me, legal, plans)
    return _standard_turn(me, legal, plans)


# --------------------------------------------------------------------------------------------
# the interface of service.engine.bots


def heuristic(obs, rnd: random.Random) -> dict[str, Any]:
    """The documented strategy above, from ``obs.view`` and ``obs.legal`` only."""
    if len(obs.legal) == 1:
        return obs.legal[0]
    return _decide(_me_from_view(obs.view, obs.seat), obs.legal)


def policy(state: dict, seat: int, legal: list[dict], target: str | None = None) -> dict:
    """The heuristic on a full (determinized) state, from what the seat knows of it.
    ``target``: a God card the seat pursues in place of its best plan while it holds it
    (standard game; ``bench/papyrus_oracle.py --targets`` asks whether another target than the
    heuristic's would do better)."""
    if len(legal) == 1:
        return legal[0]
    return _decide(_me_from_state(state, seat), legal, target)


def rollout(game, state: dict, seat: int, legal: list[dict], rnd: random.Random) -> dict:
    """:func:`policy` with a few random moves."""
    if len(legal) == 1:
        return legal[0]
    if rnd.random() < ROLLOUT_EPSILON:
        return rnd.choice(legal)
    return policy(state, seat, legal)


# --------------------------------------------------------------------------------------------
# determinization


def _sub(a: dict, b: dict) -> dict:
    return {k: a.get(k, 0) - b.get(k, 0) for k in a}


def _expand(counts: dict, keys) -> list[str]:
    return [k for k in keys for _ in range(max(0, counts.get(k, 0)))]


class _Tracker:
    """What the visible log tells beyond the view: pile contents since the last refill, and the
    God cards this seat has placed (under the deck, or drawn by someone since). A fold over the
    seat's visible events (:meth:`feed`), kept up to date by :class:`service.engine.bots.SeatLog`
    between decisions; :meth:`consistent` checks it against the view."""

    __slots__ = ("me", "ok", "bag_pool", "glyph_discard", "deck_pool", "movement_discard",
                 "god_slots", "known_hands")

    def __init__(self, me: int, n: int) -> None:
        self.me = me
        self.ok = True
        self.bag_pool = dict(BAG_COUNTS)          # could be in the bag (since the last refill)
        self.glyph_discard = {x: 0 for x in GLYPHS}
        self.deck_pool = dict(MOVEMENT_COUNTS)    # could be in the movement deck
        self.movement_discard = {k: 0 for k in KINDS}
        self.god_slots: list[str | None] = []     # the God deck, None = unknown card
        self.known_hands: list[list[str]] = [[] for _ in range(n)]

    def copy(self) -> "_Tracker":
        out = _Tracker.__new__(_Tracker)
        out.me, out.ok = self.me, self.ok
        out.bag_pool = dict(self.bag_pool)
        out.glyph_discard = dict(self.glyph_discard)
        out.deck_pool = dict(self.deck_pool)
        out.movement_discard = dict(self.movement_discard)
        out.god_slots = list(self.god_slots)
        out.known_hands = [list(h) for h in self.known_hands]
        return out

    def feed(self, ev: dict) -> None:
        t, d, seat = ev["type"], ev["data"], ev.get("seat")
        mine = seat == self.me
        if t == "DecksShuffled":
            size = d["god_deck"]
            self.god_slots = [None] * (size if isinstance(size, int) else len(size))
        elif t == "HandDealt":
            gods = d["gods"]
            del self.god_slots[:gods if isinstance(gods, int) else len(gods)]
            if mine:
                for x in d["glyphs"]:
                    self.bag_pool[x] -= 1
                for k in d["movement"]:
                    self.deck_pool[k] -= 1
        elif t == "GlyphsDrawn" and mine:
            for x in d["glyphs"]:
                self.bag_pool[x] -= 1
        elif t == "MovementDrawn" and mine:
            for k in d["cards"]:
                self.deck_pool[k] -= 1
        elif t == "BagRefilled":
            self.bag_pool = self.glyph_discard
            self.glyph_discard = {x: 0 for x in GLYPHS}
        elif t == "MovementReshuffled":
            self.deck_pool = self.movement_discard
            self.movement_discard = {k: 0 for k in KINDS}
        elif t in ("GodConquered", "GodFormed"):
            for x in d["spelling"]:
                self.glyph_discard[x] += 1
            if isinstance(seat, int) and d["god"] in self.known_hands[seat]:
                self.known_hands[seat].remove(d["god"])
        elif t == "GlyphsDiscarded":
            for x in d["glyphs"]:
                self.glyph_discard[x] += 1
        elif t in ("PawnMoved", "MovementDiscarded"):
            for k, v in d["cards"].items():
                self.movement_discard[k] += v
        elif t == "GodDrawn":
            self._draw_god(seat, mine)
        elif t == "GodSwapped":
            if mine:
                self.god_slots.append(d["put"])
            else:
                self.god_slots.append(None)
                # the card put back may be one we knew about: forget what it holds
                self.known_hands[seat] = []
            self._draw_god(seat, mine)

    def _draw_god(self, seat, mine: bool) -> None:
        if not self.god_slots:
            self.ok = False
            return
        top = self.god_slots.pop(0)
        if not mine and top is not None:
            self.known_hands[seat].append(top)

    def consistent(self, view: dict) -> bool:
        """Whether the fold agrees with the view's public piles (else it is not used)."""
        if not self.ok:
            return False
        if self.glyph_discard != {x: view["glyph_discard"].get(x, 0) for x in GLYPHS}:
            return False
        if view["variant"] != "solo" and self.movement_discard != {
                k: view["movement_discard"].get(k, 0) for k in KINDS}:
            return False
        return len(self.god_slots) == view["god_deck_count"]


def _sample_sub(pool: dict, cap: dict, size: int, keys, rnd: random.Random) -> dict:
    """A uniform sub-multiset of ``size`` tiles of ``min(pool, cap)``."""
    items = _expand({k: min(pool.get(k, 0), cap.get(k, 0)) for k in keys}, keys)
    if len(items) < size:  # inconsistent tracking: fall back on the cap alone
        items = _expand(cap, keys)
    rnd.shuffle(items)
    out = {k: 0 for k in keys}
    for k in items[:size]:
        out[k] += 1
    return out


def determinize(obs, rnd: random.Random) -> dict:
    """A full Papyrus state that ``obs.seat`` cannot tell apart from the true one."""
    view = obs.view
    me = obs.seat
    solo = view["variant"] == "solo"
    n = len(view["seats"])
    tr = digest(obs)
    tr_ok = tr.consistent(view)
    mine = view["seats"][me]

    # -- glyphs: other holders + bag are the unseen tiles ---------------------------------
    unseen = {x: BAG_COUNTS[x] - mine["holder"].get(x, 0) - view["glyph_discard"].get(x, 0)
              - (view.get("market") or {}).get(x, 0) for x in GLYPHS}
    bag_n = view["bag_count"]
    bag_ms = _sample_sub(tr.bag_pool if tr_ok else unseen, unseen, bag_n, GLYPHS, rnd)
    bag = _expand(bag_ms, GLYPHS)
    rnd.shuffle(bag)
    rest = _expand(_sub(unseen, bag_ms), GLYPHS)
    rnd.shuffle(rest)
    holders = []
    for i, v in enumerate(view["seats"]):
        if i == me:
            holders.append({x: mine["holder"].get(x, 0) for x in GLYPHS})
            continue
        h = {x: 0 for x in GLYPHS}
        for x in rest[:v["holder_count"]]:
            h[x] += 1
        del rest[:v["holder_count"]]
        holders.append(h)

    # -- movement cards -----------------------------------------------------------------
    hands = [{k: 0 for k in KINDS} for _ in range(n)]
    movement_deck: list[str] = []
    if not solo:
        unseen_m = {k: MOVEMENT_COUNTS[k] - mine["movement"].get(k, 0)
                    - view["movement_discard"].get(k, 0) for k in KINDS}
        deck_ms = _sample_sub(tr.deck_pool if tr_ok else unseen_m, unseen_m,
                              view["movement_deck_count"], KINDS, rnd)
        movement_deck = _expand(deck_ms, KINDS)
        rnd.shuffle(movement_deck)
        rest_m = _expand(_sub(unseen_m, deck_ms), KINDS)
        rnd.shuffle(rest_m)
        for i, v in enumerate(view["seats"]):
            if i == me:
                hands[i] = {k: mine["movement"].get(k, 0) for k in KINDS}
                continue
            for k in rest_m[:v["movement_count"]]:
                hands[i][k] += 1
            del rest_m[:v["movement_count"]]

    # -- God cards ----------------------------------------------------------------------
    out_n = 36 - view["god_deck_size"]
    slots = list(tr.god_slots) if tr_ok else [None] * view["god_deck_count"]
    known = [list(h) for h in tr.known_hands] if tr_ok else [[] for _ in range(n)]
    known[me] = []
    placed = set(view["owners"]) | set(mine["gods"]) | {g for g in slots if g}
    for i in range(n):
        known[i] = [g for g in known[i] if g not in placed][:view["seats"][i]["gods_count"]]
        placed |= set(known[i])
    free = [g for g in GODS if g not in placed]
    need = slots.count(None) + out_n + sum(view["seats"][i]["gods_count"] - len(known[i])
                                          for i in range(n) if i != me)
    if need != len(free):  # tracking out of step with the view: forget the known cards
        slots = [None] * view["god_deck_count"]
        known = [[] for _ in range(n)]
        free = [g for g in GODS if g not in set(view["owners"]) | set(mine["gods"])]
    rnd.shuffle(free)
    god_deck = []
    for g in slots:
        god_deck.append(g if g is not None else free.pop())
    gods = []
    for i, v in enumerate(view["seats"]):
        if i == me:
            gods.append(list(mine["gods"]))
            continue
        hand = list(known[i])
        while len(hand) < v["gods_count"]:
            hand.append(free.pop())
        rnd.shuffle(hand)
        gods.append(hand)
    gods_out = free

    # -- events -------------------------------------------------------------------------
    event_deck: list[str] = []
    event_discard = {e: 0 for e in EVENTS}
    if not solo:
        event_discard = {e: view["event_discard"].get(e, 0) for e in EVENTS}
        left = dict(EVENT_COUNTS)
        for e in EVENTS:
            left[e] -= event_discard[e]
        if view["event_card"]:
            left[view["event_card"]] -= 1
        event_deck = _expand(left, EVENTS)
        rnd.shuffle(event_deck)

    seats = []
    for i, v in enumerate(view["seats"]):
        seats.append({"pawn": None if solo else v["pawn"], "movement": hands[i],
                      "gods": gods[i], "holder": holders[i], "score": v["score"],
                      "scarabs": v["scarabs"], "conquered": list(v["conquered"]),
                      "skip": v["skip_next_turn"], "paid": v.get("paid", 0),
                      "resigned": bool(v.get("resigned"))})
    fr = view["final_round"]
    board = None
    if not solo and view["board"] != BUILTIN_BOARD_DOC:
        board = view["board"]
    return {
        "variant": view["variant"], "n": n, "names": [v["name"] for v in view["seats"]],
        "first_player": view["first_player"], "god_deck_size": view["god_deck_size"],
        "turn_limit": view["turn_limit"], "setup": view["setup"], "board": board,
        "seats": seats,
        "movement_deck": movement_deck,
        "movement_discard": ({k: view["movement_discard"].get(k, 0) for k in KINDS}
                             if not solo else {k: 0 for k in KINDS}),
        "god_deck": god_deck, "gods_out": gods_out,
        "event_deck": event_deck, "event_discard": event_discard,
        "event_card": None if solo else view["event_card"],
        "bag": bag, "glyph_discard": {x: view["glyph_discard"].get(x, 0) for x in GLYPHS},
        "market": ({x: view["market"].get(x, 0) for x in GLYPHS} if not solo
                   else {x: 0 for x in GLYPHS}),
        "owners": dict(view["owners"]), "current": view["current"],
        "pending": dict(view["pending"]) if view["pending"] else None,
        "final": ({"trigger": fr["trigger"], "remaining": list(fr["remaining"])}
                  if fr else None),
        "turns": view["turns_played"], "over": view["phase"] == "over",
        "end_reason": view["end_reason"], "options_setup": None,
    }


# --------------------------------------------------------------------------------------------
# ISMCTS hooks (service/engine/ismcts.py): a few candidates, simulate a few rounds, evaluate

#: a simulation stops after this many rounds (turns of every seat) and is evaluated
HORIZON_ROUNDS = 4
#: evaluation temperature in points: a gain of this size over the rivals' is worth e : 1
EVAL_POINTS = 6.0
#: a God card in hand is worth ``worth * exp(-turns / PLAN_TURNS)`` (turns: its plan estimate)
PLAN_TURNS = 8.0
#: at most this many legal actions of a pending decision are searched (else the heuristic's)
MAX_PENDING = 8
#: the search overrules the heuristic's choice only when its most visited action's mean reward
#: is higher by this much (the engine's default is 0.05): at 100 iterations a candidate gets
#: ~10 visits, whose mean reward moves by ~0.1 from noise alone, so a smaller margin lets noise
#: overrule it (measurements in docs/bots.md)
PRIOR_MARGIN = 0.15
#: solo: the discards searched, the heuristic's least useful distinct glyphs first (with 2,
#: the search overruled the heuristic's discards and lost: 20 of 36 games against 26 of 36 on
#: the same deals; its 4-round evaluation does not see the gods still to come)
SOLO_DISCARDS = 1


def _solo_candidates(me: _Me, legal: list[dict]) -> list[dict]:
    """Solo: the heuristic's candidates only. A discard among the ``SOLO_DISCARDS`` least
    useful glyphs (its order); a turn forms one of the God cards it can (which one first is
    the search's question), buying only when none can be formed: forming is free and keeps
    the turn, so the heuristic never puts it off."""
    if me.pending is not None:
        give = list(dict.fromkeys(_solo_give_up_order(me, _plans(me))))[:SOLO_DISCARDS]
        return [a for a in legal if a["glyph"] in give] or legal
    return [a for a in legal if a["type"] == "form_god"] or legal


def candidates(game, state: dict, seat: int, legal: list[dict]) -> list[dict]:
    """The observer's actions worth searching, from what the seat sees: one payment per path
    (the heuristic's cheapest), one exchange per glyph taken (paying the least useful tile;
    from the market only when it leaves the plans better, as the heuristic's own exchanges),
    drawing movement cards, and the heuristic's own choice. Solo: :func:`_solo_candidates`."""
    me = _me_from_state(state, seat)
    if me.solo:
        return _solo_candidates(me, legal)
    plans = _plans(me)
    if me.pending is not None:
        if len(legal) <= MAX_PENDING:
            return legal
        return [_pending_choice(me, legal, plans)]
    out: list[dict] = []
    moves: dict[str, list[dict]] = {}
    pays: dict[str, list[dict]] = {}
    for a in legal:
        t = a["type"]
        if t == "move":
            moves.setdefault(a["path"], []).append(a)
        elif t == "exchange":
            pays.setdefault(a["take"], []).append(a)
        else:
            out.append(a)
    for opts in moves.values():
        out.append(_cheapest(me, opts))
    if pays:
        rank = {x: i for i, x in enumerate(_give_up_order(me, plans))}
        useful = {x for _, g, _ in plans for x in _missing(me.holder, g)}
        for take, opts in pays.items():
            if take == "bag" or take in useful:
                a = min(opts, key=lambda a: (rank.get(a["pay"], -1), a["pay"]))
                if take == "bag" or _improves(me, plans, a["pay"], take):
                    out.append(a)
    h = _standard_turn(me, legal, plans)
    if h not in out:
        out.append(h)
    return out


def for_simulation(state: dict) -> dict:
    """Remember where the simulation started and every seat's standing there (extra keys the
    rules ignore)."""
    state["sim_start_turn"] = state["turns"]
    state["sim_start_value"] = [_projected(state, i) for i in range(state["n"])]
    return state


def horizon(state: dict) -> bool:
    return state["turns"] - state.get("sim_start_turn", state["turns"]) \
        >= HORIZON_ROUNDS * state["n"]


def _projected(state: dict, seat: int) -> float:
    """What the rules would score for the seat now, plus each God card in hand discounted by
    the turns its plan still needs (tiles to gather, squares to travel); solo: minus the cards
    paid (the Pharaoh's target)."""
    import math

    p = state["seats"][seat]
    if p.get("resigned"):
        return -1000.0
    solo = state["variant"] == "solo"
    sons = sum(1 for g in p["conquered"] if g in SONS)
    total = p["score"] + SCARAB_POINTS * p["scarabs"]
    if not solo:
        total += SONS_BONUS.get(min(sons, 4), 0)
    me = _me_from_state(state, seat)
    for g in p["gods"]:
        turns = _tile_turns(me, p["holder"], g) + _travel_turns(me, g)
        total += _worth(me, g) * math.exp(-turns / PLAN_TURNS)
    if solo:
        total -= p["paid"]
    return total


def evaluate(game, state: dict, seat: int) -> float:
    """The observer's reward at a cut-off, in [0, 1]: a logistic of how much its projected
    score gained during the simulation over its rivals' mean gain (standard game), or of its
    own gain against the cards it paid (solo). Every rival counts alike: with 2 seats that is
    the rival's gain; with 3-5 the mean of their gains, which the rollouts' noise moves less
    than the best of them (measurements in docs/bots.md)."""
    import math

    if state["over"]:
        res = game.result(state)
        return 1.0 / len(res["winners"]) if seat in res["winners"] else 0.0
    start = state.get("sim_start_value")
    now = [_projected(state, i) for i in range(state["n"])]
    if start is None:
        start = [0.0] * state["n"]
    gain = [now[i] - start[i] for i in range(state["n"])]
    if state["variant"] == "solo" or state["n"] == 1:
        d = gain[seat]
    else:
        d = gain[seat] - (sum(gain) - gain[seat]) / (state["n"] - 1)
    d = max(-50.0, min(50.0, d / EVAL_POINTS))
    return 1.0 / (1.0 + math.exp(-d))


class Bots(BotHooks):
    """This game's bot hooks (:class:`~service.engine.bots.BotHooks`)."""

    cuts_simulations = True
    prior_margin = PRIOR_MARGIN
    heuristic = staticmethod(heuristic)
    determinize = staticmethod(determinize)
    rollout = staticmethod(rollout)
    for_simulation = staticmethod(for_simulation)
    horizon = staticmethod(horizon)
    evaluate = staticmethod(evaluate)
    candidates = staticmethod(candidates)

    def prior(self, obs, rnd: random.Random) -> dict:
        """The heuristic's choice (its ties from ``rnd``), kept unless the search finds a
        clearly better one."""
        return heuristic(obs, rnd)

    def new_digest(self, seat: int, n: int) -> _Tracker:
        return _Tracker(seat, n)


BOTS = Bots()
