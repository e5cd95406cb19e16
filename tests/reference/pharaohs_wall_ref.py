"""An independent reference implementation of Pharaoh's Wall, written from
``/work/shared/rules/pharaohs-wall.md`` (normative), ``docs/design/api.md`` (action shapes,
forced moves) and the RNG sequence documented in the production module's docstring only, for
cross-checking the production rules module ``service.games.pharaohs_wall``.

Plain and deliberately naive: mutable attributes, no events, no views. The component data are the
spec's tables 2.1-2.5, typed in here again (the test suite checks them against ``data.json``).

The caller owns the random stream: the constructor takes an ``Rng`` (``Rng(seed, 1)`` in the
engine) and makes exactly these calls (production docstring, "Exact sequence of RNG calls"):

1. ``shuffle(animals)`` -> pillar display order;
2. deck (unless ``setup`` fixes it): curse off ``shuffle(49 cards)``; curse on ``shuffle(49 cards)``
   (first 20 = start pile) then ``shuffle(other 29 in canonical order + C1..C6)`` (main pile);
3. sarcophagi (unless fixed): ``shuffle`` tier 1, tier 2, tier 3; stack i at the i-th animal;
4. pharaohs (unless fixed): ``shuffle(P-*)``; seat s takes index s.

No later command draws, so :meth:`PharaohsWallRef.act` takes no random stream.

Forced moves (docs/design/api.md): after construction and after every act, while some awaited
seat (in ``awaiting()`` order) has exactly one legal action, that action is played; repeat.
"""

from __future__ import annotations

ANIMALS = ["CAMEL", "MULE", "SNAKE", "IBIS", "CROCODILE", "FALCON", "CAT"]
LEFT_COUNT = {"CAMEL": 4, "MULE": 3, "SNAKE": 4, "IBIS": 3, "CROCODILE": 4, "FALCON": 3,
              "CAT": 4}  # table 2.2
CARD_IDS = [f"H-{a}-{k}" for a in ANIMALS for k in range(1, 8)]
CARD = {f"H-{a}-{k}": (a, "LEFT" if k <= LEFT_COUNT[a] else "RIGHT")
        for a in ANIMALS for k in range(1, 8)}

# table 2.3, ids S01..S21 in table order
_VALUES = [3, 3, 3, 3, 4, 4, 4, 5, 5, 5, 5, 6, 6, 6, 7, 7, 7, 8, 8, 10, 10]
SARC_IDS = [f"S{i:02d}" for i in range(1, 22)]
SARC_VALUE = dict(zip(SARC_IDS, _VALUES))
SARC_EYES = {sid: 1 + i // 7 for i, sid in enumerate(SARC_IDS)}
TIERS = [SARC_IDS[0:7], SARC_IDS[7:14], SARC_IDS[14:21]]

PHARAOHS = [f"P-{a}" for a in ANIMALS]

CURSES = {  # table 2.5
    "C1": ["CAMEL", "MULE", "SNAKE"],
    "C2": ["IBIS", "CROCODILE", "FALCON"],
    "C3": ["CAT", "CAMEL", "IBIS"],
    "C4": ["MULE", "FALCON", "CAT"],
    "C5": ["SNAKE", "CROCODILE", "CAMEL"],
    "C6": ["FALCON", "IBIS", "MULE"],
}
CURSE_IDS = ["C1", "C2", "C3", "C4", "C5", "C6"]

W = H = 7
HAND = 3
EXPLORERS = 5
SCARABS = 16
MAX_PER_TURN = 2
MAX_END_MOVES = 16
PHARAOH_BONUS = 7
START_PILE = 20

NONE = "none"
RESERVE = "reserve"


def is_curse(card: str) -> bool:
    return card in CURSES


def segments_of(occupied) -> list[tuple[tuple[int, int], ...]]:
    """Every straight segment of 3 consecutive occupied cells, cells sorted ascending."""
    out = []
    for c in range(W):
        for r in range(H):
            for dc, dr in ((1, 0), (0, 1), (1, 1), (1, -1)):
                cells = [(c + i * dc, r + i * dr) for i in range(3)]
                if all(0 <= x < W and 0 <= y < H and (x, y) in occupied for x, y in cells):
                    out.append(tuple(sorted(cells)))
    return out


class PharaohsWallRef:
    def __init__(self, n_players: int, options: dict | None, rng) -> None:
        if not 2 <= n_players <= 4:
            raise ValueError("2 to 4 players")
        options = dict(options or {})
        self.n = n = n_players
        self.curse = bool(options.get("curse", False))
        self.sphinx = bool(options.get("sphinx", False))
        setup = options.get("setup") or {}

        # 1. pillar display order
        self.pillar_order = list(ANIMALS)
        rng.shuffle(self.pillar_order)

        # 2. deck(s)
        self.pile: list[str] = []        # base: the draw pile, top first
        self.start_pile: list[str] = []  # curse: S
        self.main_pile: list[str] = []   # curse: M
        if not self.curse:
            if "deck_order" in setup:
                deck = list(setup["deck_order"])
                if sorted(deck) != sorted(CARD_IDS):
                    raise ValueError("deck_order is not a permutation of the 49 cards")
            else:
                deck = list(CARD_IDS)
                rng.shuffle(deck)
            self.hands = [deck[3 * s:3 * s + 3] for s in range(n)]
            self.pile = deck[3 * n:]
        else:
            if "start_pile" in setup or "main_pile" in setup:
                start = list(setup["start_pile"])
                main = list(setup["main_pile"])
                if len(start) != 20 or sorted(start + main) != sorted(CARD_IDS + CURSE_IDS) \
                        or any(is_curse(c) for c in start):
                    raise ValueError("bad start_pile/main_pile")
            else:
                deck = list(CARD_IDS)
                rng.shuffle(deck)
                start = deck[:START_PILE]
                rest = [c for c in CARD_IDS if c not in start] + list(CURSE_IDS)
                rng.shuffle(rest)
                main = rest
            self.hands = [start[3 * s:3 * s + 3] for s in range(n)]
            self.start_pile = start[3 * n:]
            self.main_pile = main

        # 3. sarcophagi
        if "sarcophagi" in setup:
            stacks = {a: list(setup["sarcophagi"][a]) for a in ANIMALS}
        else:
            tiers = [list(t) for t in TIERS]
            for t in tiers:
                rng.shuffle(t)
            stacks = {a: [tiers[0][i], tiers[1][i], tiers[2][i]] for i, a in enumerate(ANIMALS)}

        # 4. pharaohs
        if "pharaohs" in setup:
            self.pharaoh = list(setup["pharaohs"])
        else:
            ph = list(PHARAOHS)
            rng.shuffle(ph)
            self.pharaoh = ph[:n]

        self.wall: dict[tuple[int, int], str] = {}
        self.height = [0] * W
        self.occupant = {a: None for a in ANIMALS}
        self.scarabs = {a: 0 for a in ANIMALS}
        self.stack = stacks
        self.supply = SCARABS
        self.reserve = [EXPLORERS] * n
        self.owned: list[list[str]] = [[] for _ in range(n)]

        self.phase = "play"  # play | curse_claims | curse_victim | curse_give | end | over
        self.active = 0
        # curse round
        self.curse_card = None
        self.responded: set[int] = set()
        self.finder = None
        self.victim = None
        self.discarded_curses: list[str] = []
        # end phase
        self.end_seat = None
        self.end_done: set[int] = set()
        self.end_moves = [0] * n
        self.last_inserter = None

        self._forced()

    # -- geometry ------------------------------------------------------------------------------
    def animal_at(self, cell):
        return CARD[self.wall[cell]][0]

    def pairs_for(self, card: str, cell) -> list[tuple[tuple[int, int], bool]]:
        """[(other cell, same_facing)] the card would form at ``cell`` (section 3 / 8)."""
        animal, facing = CARD[card]
        c, r = cell
        out = []
        if not self.sphinx:
            for dc in (-1, 0, 1):
                for dr in (-1, 0, 1):
                    if dc == dr == 0:
                        continue
                    o = (c + dc, r + dr)
                    if o in self.wall and CARD[self.wall[o]][0] == animal:
                        out.append((o, CARD[self.wall[o]][1] == facing))
        else:
            lines = [
                [(x, r) for x in range(W) if x != c],
                [(c, y) for y in range(H) if y != r],
                [(c + d, r + d) for d in range(-6, 7) if d and 0 <= c + d < W and 0 <= r + d < H],
                [(c + d, r - d) for d in range(-6, 7) if d and 0 <= c + d < W and 0 <= r - d < H],
            ]
            for line in lines:
                same = [o for o in line if o in self.wall and CARD[self.wall[o]][0] == animal]
                if len(same) == 1:
                    o = same[0]
                    out.append((o, CARD[self.wall[o]][1] == facing))
        return out

    def explorer_options(self, seat: int, card: str, column: int) -> list:
        cell = (column, self.height[column])
        pairs = self.pairs_for(card, cell)
        if not pairs:
            return [NONE]
        p = CARD[card][0]
        occ = self.occupant[p]
        if occ is None:
            allowed = True
        elif occ == seat:
            allowed = False
        else:
            allowed = any(same for _, same in pairs)
        if not allowed:
            return [NONE]
        if self.reserve[seat] > 0:
            return [NONE, RESERVE]
        return [NONE] + [{"from_pillar": a} for a in ANIMALS if self.occupant[a] == seat]

    # -- questions -----------------------------------------------------------------------------
    def awaiting(self) -> list[int]:
        if self.phase == "play":
            return [self.active]
        if self.phase == "curse_claims":
            return sorted(s for s in range(self.n) if s not in self.responded)
        if self.phase == "curse_victim":
            return [self.finder]
        if self.phase == "curse_give":
            return [self.victim]
        if self.phase == "end":
            return [self.end_seat]
        return []

    def segments(self):
        return segments_of(self.wall)

    def matching_segments(self):
        """Segments that would be a correct claim for the current curse card."""
        seq = CURSES[self.curse_card]
        return [s for s in self.segments()
                if [self.animal_at(x) for x in s] in (seq, seq[::-1])]

    def curse_victims(self, finder: int) -> list[int]:
        return [s for s in range(self.n) if s != finder and self.owned[s]]

    def end_moves_for(self, seat: int) -> list[dict]:
        mine = [a for a in ANIMALS if self.occupant[a] == seat]
        return [{"type": "move_scarab", "from": x, "to": y}
                for x in mine for y in mine
                if x != y and self.scarabs[x] > 0 and self.scarabs[y] < 3]

    def legal(self, seat: int) -> list[dict]:
        if seat not in self.awaiting():
            return []
        if self.phase == "play":
            out = []
            for card in self.hands[seat]:
                for col in range(W):
                    if self.height[col] >= H:
                        continue
                    for ex in self.explorer_options(seat, card, col):
                        out.append({"type": "insert", "card": card, "column": col,
                                    "explorer": ex})
            return out
        if self.phase == "curse_claims":
            return [{"type": "curse_claim", "cells": [list(x) for x in s]}
                    for s in self.segments()] + [{"type": "curse_pass"}]
        if self.phase == "curse_victim":
            return [{"type": "curse_victim", "seat": v} for v in self.curse_victims(seat)]
        if self.phase == "curse_give":
            return [{"type": "curse_give", "sarcophagus": sid} for sid in self.owned[seat]]
        if self.phase == "end":
            return self.end_moves_for(seat) + [{"type": "done"}]
        return []

    # -- the command ---------------------------------------------------------------------------
    def act(self, seat: int, action: dict) -> None:
        self._play(seat, action)
        self._forced()

    def _forced(self) -> None:
        for _ in range(10_000):
            if self.phase == "over":
                return
            for seat in self.awaiting():
                acts = self.legal(seat)
                # a play is never made for a seat: with its last card, whether it has one
                # explorer option depends on the card, which the others do not see
                if len(acts) == 1 and self.phase != "play":
                    self._play(seat, acts[0])
                    break
            else:
                return
        raise RuntimeError("forced moves did not settle")

    def _play(self, seat: int, action: dict) -> None:
        if seat not in self.awaiting():
            raise ValueError(f"seat {seat} is not awaited")
        if not isinstance(action, dict):
            raise ValueError("not an action")
        t = action.get("type")
        if self.phase == "curse_claims" and t == "curse_claim":
            cells = action.get("cells")
            try:
                key = tuple(sorted((int(x), int(y)) for x, y in cells))
            except Exception as exc:  # noqa: BLE001
                raise ValueError("bad cells") from exc
            if len(cells) != 3 or key not in self.segments():
                raise ValueError("not_a_segment")
            self._claim(seat, key)
            return
        if action not in self.legal(seat):
            raise ValueError(f"illegal action {action!r} for seat {seat}")
        if t == "insert":
            self._insert(seat, action["card"], action["column"], action["explorer"])
        elif t == "curse_pass":
            self._curse_response(seat)
        elif t == "curse_victim":
            self.victim = action["seat"]
            self.phase = "curse_give"
        elif t == "curse_give":
            sid = action["sarcophagus"]
            self.owned[seat].remove(sid)
            self.owned[self.finder].append(sid)
            self._curse_over()
        elif t == "move_scarab":
            x, y = action["from"], action["to"]
            self.scarabs[x] -= 1
            self.scarabs[y] += 1
            self._opening(y)
            self.end_moves[seat] += 1
            if self.end_moves[seat] >= MAX_END_MOVES:
                self._end_next()
        elif t == "done":
            self._end_next()
        else:  # pragma: no cover
            raise ValueError("unknown action")

    # -- turn ----------------------------------------------------------------------------------
    def _opening(self, a: str) -> None:
        if self.scarabs[a] == 3 and self.occupant[a] is not None and self.stack[a]:
            self.owned[self.occupant[a]].append(self.stack[a].pop(0))
            self.scarabs[a] = 0
            self.supply += 3

    def _insert(self, seat: int, card: str, col: int, explorer) -> None:
        cell = (col, self.height[col])
        pairs = self.pairs_for(card, cell)
        self.hands[seat].remove(card)
        self.wall[cell] = card
        self.height[col] += 1
        self.last_inserter = seat
        if pairs:
            p = CARD[card][0]
            # 5.3 explorer step
            if explorer != NONE:
                occ = self.occupant[p]
                if occ is not None:
                    assert occ != seat
                    self.reserve[occ] += 1
                    self.occupant[p] = None
                if explorer == RESERVE:
                    assert self.reserve[seat] > 0
                    self.reserve[seat] -= 1
                else:
                    src = explorer["from_pillar"]
                    assert self.occupant[src] == seat and self.reserve[seat] == 0
                    self.occupant[src] = None
                self.occupant[p] = seat
            self._opening(p)
            # 5.4 scarab step
            for _ in range(min(len(pairs), MAX_PER_TURN)):
                if self.scarabs[p] >= 3 or self.supply == 0:
                    continue
                self.supply -= 1
                self.scarabs[p] += 1
                self._opening(p)
        # 5.6 draw
        if not self.curse:
            if self.pile:
                self.hands[seat].append(self.pile.pop(0))
            self._end_turn()
        else:
            self._curse_draw()

    def _curse_draw(self) -> None:
        """Section 7 drawing; stops (returns) when a curse round needs input."""
        seat = self.active
        while len(self.hands[seat]) < HAND and (self.start_pile or self.main_pile):
            pile = self.start_pile if self.start_pile else self.main_pile
            top = pile.pop(0)
            if not is_curse(top):
                self.hands[seat].append(top)
                continue
            self.curse_card = top
            self.responded = set()
            self.finder = None
            self.victim = None
            self.phase = "curse_claims"
            return
        self._end_turn()

    def _claim(self, seat: int, key) -> None:
        seq = CURSES[self.curse_card]
        animals = [self.animal_at(x) for x in key]
        if animals == seq or animals == seq[::-1]:
            self.finder = seat
            if self.curse_victims(seat):
                self.phase = "curse_victim"
            else:
                self._curse_over()
            return
        self._curse_response(seat)  # a wrong claim is a pass

    def _curse_response(self, seat: int) -> None:
        self.responded.add(seat)
        if len(self.responded) == self.n:
            self._curse_over()

    def _curse_over(self) -> None:
        self.discarded_curses.append(self.curse_card)
        self.curse_card = None
        self.responded = set()
        self.finder = None
        self.victim = None
        self.phase = "play"
        self._curse_draw()

    def _end_turn(self) -> None:
        if len(self.wall) == W * H:
            self.phase = "end"
            self.end_done = set()
            self.end_seat = (self.last_inserter + 1) % self.n
            return
        self.phase = "play"
        self.active = (self.active + 1) % self.n

    def _end_next(self) -> None:
        self.end_done.add(self.end_seat)
        if len(self.end_done) == self.n:
            self.phase = "over"
            self.end_seat = None
            return
        self.end_seat = (self.end_seat + 1) % self.n

    # -- result --------------------------------------------------------------------------------
    def score(self, seat: int) -> int:
        total = sum(SARC_VALUE[s] for s in self.owned[seat])
        fav = self.pharaoh[seat][2:]
        if self.occupant[fav] == seat:
            total += PHARAOH_BONUS
        return total

    def result(self):
        if self.phase != "over":
            return None
        scores = [self.score(s) for s in range(self.n)]
        keys = [(scores[s], len(self.owned[s])) for s in range(self.n)]
        ranks = [1 + sum(1 for o in keys if o > mine) for mine in keys]
        return {"scores": scores, "ranks": ranks,
                "winners": [s for s in range(self.n) if ranks[s] == 1]}
