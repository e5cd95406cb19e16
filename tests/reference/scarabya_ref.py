"""An independent reference implementation of Scarabya (Cathala & Maublanc, Blue Orange 2018),
written from ``/work/shared/rules/scarabya.md`` (plus the RNG contract of
``service/engine/rng.py`` and the forced-move rule of ``docs/design/api.md``) only, for
cross-checking the production rules module.

Plain and deliberately naive: cells are ``(r, c)`` tuples, sets of cells are Python sets /
frozensets, placements are enumerated by brute force, regions by flood fill. No events.

The caller owns the random stream: it passes an ``Rng`` (anything with ``below(n)``) to the
constructor, which draws the layout (section 4.1, unless ``setup.layout``) and then the mission
deck (section 4.2, unless ``setup.mission_order``). Nothing else is ever drawn, so
:meth:`ScarabyaRef.act` takes no random stream.

Forced moves are applied as the engine does (``service.engine.runner.forced_moves``): after
creation and after each act, while the game is not over and some seat of ``awaiting()`` (in that
order) has exactly one legal action, that action is played; repeat.
"""

from __future__ import annotations

from collections import deque

SIZE = 10
ROUNDS = 12
LETTERS = ["F", "I", "L", "N", "P", "T", "U", "V", "W", "X", "Y", "Z"]
CENTRE = frozenset({(4, 4), (4, 5), (5, 4), (5, 5)})
ALL_CELLS = frozenset((r, c) for r in range(SIZE) for c in range(SIZE))

# Section 5, canonical cells.
CANONICAL = {
    "F": [(0, 1), (0, 2), (1, 0), (1, 1), (2, 1)],
    "I": [(0, 0), (1, 0), (2, 0), (3, 0), (4, 0)],
    "L": [(0, 0), (1, 0), (2, 0), (3, 0), (3, 1)],
    "N": [(0, 1), (1, 1), (2, 0), (2, 1), (3, 0)],
    "P": [(0, 0), (0, 1), (1, 0), (1, 1), (2, 0)],
    "T": [(0, 0), (0, 1), (0, 2), (1, 1), (2, 1)],
    "U": [(0, 0), (0, 2), (1, 0), (1, 1), (1, 2)],
    "V": [(0, 0), (1, 0), (2, 0), (2, 1), (2, 2)],
    "W": [(0, 0), (1, 0), (1, 1), (2, 1), (2, 2)],
    "X": [(0, 1), (1, 0), (1, 1), (1, 2), (2, 1)],
    "Y": [(0, 1), (1, 0), (1, 1), (2, 1), (3, 1)],
    "Z": [(0, 0), (0, 1), (1, 1), (2, 1), (2, 2)],
}

# Section 4.1
ORIGIN = [(0, 0), (0, 5), (5, 0), (5, 5)]
INNER = [(4, 4), (4, 0), (0, 4), (0, 0)]


class Illegal(ValueError):
    """An illegal action; ``code`` is the spec's error code (section 7) or a reference code."""

    def __init__(self, code: str) -> None:
        super().__init__(code)
        self.code = code


# ---------------------------------------------------------------------------------------------
# Shapes
# ---------------------------------------------------------------------------------------------

def normalise(cells) -> frozenset:
    cells = list(cells)
    mr = min(r for r, _ in cells)
    mc = min(c for _, c in cells)
    return frozenset((r - mr, c - mc) for r, c in cells)


def rotate(cells) -> frozenset:
    return normalise((c, -r) for r, c in cells)


def reflect(cells) -> frozenset:
    return normalise((r, -c) for r, c in cells)


def shapes(letter: str, allow_reflection: bool = True) -> set:
    """The distinct allowed normalised shapes of a piece."""
    out = set()
    starts = [normalise(CANONICAL[letter])]
    if allow_reflection:
        starts.append(reflect(CANONICAL[letter]))
    for s in starts:
        for _ in range(4):
            out.add(s)
            s = rotate(s)
    return out


_PLACEMENTS: dict = {}


def all_placements(letter: str, allow_reflection: bool) -> list:
    """Every on-board cell set (frozenset) of the piece, ignoring the site's contents."""
    key = (letter, allow_reflection)
    if key not in _PLACEMENTS:
        out = set()
        for shape in shapes(letter, allow_reflection):
            h = max(r for r, _ in shape) + 1
            w = max(c for _, c in shape) + 1
            for r0 in range(SIZE - h + 1):
                for c0 in range(SIZE - w + 1):
                    out.add(frozenset((r + r0, c + c0) for r, c in shape))
        _PLACEMENTS[key] = sorted(out, key=lambda s: sorted(s))
    return _PLACEMENTS[key]


def neighbours(cell):
    r, c = cell
    for dr, dc in ((1, 0), (-1, 0), (0, 1), (0, -1)):
        rr, cc = r + dr, c + dc
        if 0 <= rr < SIZE and 0 <= cc < SIZE:
            yield (rr, cc)


def components(cells) -> list:
    """Maximal orthogonally connected subsets of ``cells`` (list of frozensets)."""
    left = set(cells)
    out = []
    while left:
        start = left.pop()
        comp = {start}
        todo = deque([start])
        while todo:
            cur = todo.popleft()
            for nb in neighbours(cur):
                if nb in left:
                    left.remove(nb)
                    comp.add(nb)
                    todo.append(nb)
        out.append(frozenset(comp))
    return out


# ---------------------------------------------------------------------------------------------
# Layout (section 3 and 4)
# ---------------------------------------------------------------------------------------------

def parse_layout(rows):
    rocks, scarabs = set(), set()
    for r, row in enumerate(rows):
        for c, ch in enumerate(row):
            if ch == "R":
                rocks.add((r, c))
            elif ch == "S":
                scarabs.add((r, c))
    return frozenset(rocks), frozenset(scarabs)


def layout_valid(rows, allow_reflection: bool = True) -> bool:
    """V1-V5."""
    if not isinstance(rows, (list, tuple)) or len(rows) != SIZE:
        return False
    for row in rows:
        if not isinstance(row, str) or len(row) != SIZE or any(ch not in ".SR" for ch in row):
            return False
    rocks, scarabs = parse_layout(rows)
    for q in range(4):
        r0, c0 = ORIGIN[q]
        quad = {(r0 + i, c0 + j) for i in range(5) for j in range(5)}
        if len(quad & scarabs) != 6 or len(quad & rocks) != 2:
            return False
    if CENTRE & rocks:
        return False
    return v4(rocks) and v5(rocks, allow_reflection)


def v4(rocks) -> bool:
    return len(components(ALL_CELLS - rocks)) == 1


def v5(rocks, allow_reflection: bool) -> bool:
    for letter in LETTERS:
        if not any(not (p & rocks) and (p & CENTRE)
                   for p in all_placements(letter, allow_reflection)):
            return False
    return True


def generate_layout(rng, allow_reflection: bool = True):
    """Section 4.1. Returns ``(rows, attempts)`` where ``attempts`` lists every attempted grid."""
    attempts = []
    while True:
        grid = [["."] * SIZE for _ in range(SIZE)]
        for q in range(4):
            lst = list(range(25))
            for i in range(24, 0, -1):
                j = rng.below(i + 1)
                lst[i], lst[j] = lst[j], lst[i]
            rocks = []
            for k in lst:
                if (k // 5, k % 5) != INNER[q]:
                    rocks.append(k)
                    if len(rocks) == 2:
                        break
            scarabs = [k for k in lst if k not in rocks][:6]
            orr, occ = ORIGIN[q]
            for k in rocks:
                grid[orr + k // 5][occ + k % 5] = "R"
            for k in scarabs:
                grid[orr + k // 5][occ + k % 5] = "S"
        rows = ["".join(row) for row in grid]
        attempts.append(rows)
        rock_cells, _ = parse_layout(rows)
        if v4(rock_cells) and v5(rock_cells, allow_reflection):
            return rows, attempts


def shuffle_missions(rng) -> list:
    """Section 4.2."""
    deck = list(LETTERS)
    for i in range(11, 0, -1):
        j = rng.below(i + 1)
        deck[i], deck[j] = deck[j], deck[i]
    return deck


class Mulberry32:
    """The reference RNG of section 4.3."""

    M = 1 << 32

    def __init__(self, seed: int) -> None:
        self.state = seed % self.M

    def next(self) -> int:
        M = self.M
        self.state = (self.state + 0x6D2B79F5) % M
        t = self.state
        t = ((t ^ (t >> 15)) * (t | 1)) % M
        t = t ^ ((t + ((t ^ (t >> 7)) * (t | 61))) % M)
        return (t ^ (t >> 14)) % M

    def below(self, n: int) -> int:
        return self.next() % n


# ---------------------------------------------------------------------------------------------
# A site
# ---------------------------------------------------------------------------------------------

class Site:
    def __init__(self, rocks, scarabs, scoring: bool = True) -> None:
        self.scoring = scoring     # solo (section 10): nothing scores, no tokens
        self.rocks = frozenset(rocks)
        self.scarabs = frozenset(scarabs)
        self.camps: dict = {}      # cell -> (letter, seat)
        self.tokens: dict = {}     # cell -> token value
        self.score = 0
        self.discarded: list = []
        self.history: list = []    # (letter, cells, seat, points, regions)

    def open_cells(self) -> set:
        return set(ALL_CELLS) - self.rocks - set(self.camps)

    def regions(self) -> list:
        return components(self.open_cells())

    def legal(self, letter: str, allow_reflection: bool) -> list:
        """Every legal placement (frozenset) of ``letter`` (rules 2-5 of section 7)."""
        covered = set(self.camps)
        if covered:
            touch = {nb for cell in covered for nb in neighbours(cell)} - covered
        out = []
        for cells in all_placements(letter, allow_reflection):
            if cells & self.rocks or cells & covered:
                continue
            if not covered:
                if not cells & CENTRE:
                    continue
            elif not cells & touch:
                continue
            out.append(cells)
        return out

    def check(self, letter: str, cells, allow_reflection: bool) -> str | None:
        """Checks 2-5 of section 7 in the spec's order: the first failing code, or None."""
        pairs = []
        if not isinstance(cells, (list, tuple)):
            return "bad_cells"
        for cell in cells:
            if (not isinstance(cell, (list, tuple)) or len(cell) != 2
                    or not all(isinstance(x, int) and not isinstance(x, bool) for x in cell)):
                return "bad_cells"
            pairs.append((cell[0], cell[1]))
        if len(pairs) != 5 or len(set(pairs)) != 5:
            return "bad_cells"
        cs = set(pairs)
        if not cs <= ALL_CELLS:
            return "off_board"
        if normalise(cs) not in shapes(letter, allow_reflection):
            return "bad_shape"
        if cs & self.rocks:
            return "covers_rock"
        if cs & set(self.camps):
            return "piece_overlaps"
        if not self.camps:
            if not cs & CENTRE:
                return "first_must_cover_center"
        elif not any(nb in self.camps for cell in cs for nb in neighbours(cell)):
            return "not_adjacent"
        return None

    def place(self, letter: str, cells, seat: int) -> int:
        """Section 8: place, score newly enclosed regions of 1-4 cells for the placer."""
        cells = frozenset(cells)
        before = set(self.regions())
        for cell in cells:
            assert cell not in self.camps and cell not in self.rocks
            self.camps[cell] = (letter, seat)
        points = 0
        scored = []
        if not self.scoring:
            self.history.append((letter, cells, seat, 0, scored))
            return 0
        for region in self.regions():
            if 1 <= len(region) <= 4 and region not in before:
                k = len(region & self.scarabs)
                points += k * len(region)
                for cell in region & self.scarabs:
                    assert cell not in self.tokens
                    self.tokens[cell] = len(region)
                scored.append((region, k, len(region), k * len(region)))
        self.score += points
        self.history.append((letter, cells, seat, points, scored))
        return points

    def covered_scarabs(self) -> set:
        return set(self.scarabs) & set(self.camps)

    def render(self) -> list:
        """Section 3 board notation."""
        out = []
        for r in range(SIZE):
            row = ""
            for c in range(SIZE):
                cell = (r, c)
                if cell in self.rocks:
                    row += "R"
                elif cell in self.camps:
                    letter = self.camps[cell][0]
                    row += letter.lower() if cell in self.scarabs else letter
                elif cell in self.tokens:
                    row += str(self.tokens[cell])
                elif cell in self.scarabs:
                    row += "S"
                else:
                    row += "."
            out.append(row)
        return out


def action(letter: str, cells) -> dict:
    return {"type": "place", "piece": letter, "cells": [list(x) for x in sorted(cells)]}


def competition_ranks(scores) -> list:
    return [1 + sum(1 for o in scores if o > s) for s in scores]


# ---------------------------------------------------------------------------------------------
# The game
# ---------------------------------------------------------------------------------------------

class ScarabyaRef:
    def __init__(self, n_players: int, rng, options: dict | None = None) -> None:
        options = dict(options or {})
        setup = dict(options.get("setup") or {})
        self.n = n_players
        self.mode = options.get("mode") or ("solo" if n_players == 1 else "standard")
        if self.mode == "standard" and not 2 <= n_players <= 4:
            raise ValueError("standard needs 2-4 seats")
        if self.mode == "duel" and n_players != 2:
            raise ValueError("duel needs 2 seats")
        if self.mode == "solo" and n_players != 1:
            raise ValueError("solo needs 1 seat")
        self.allow_reflection = bool(options.get("allow_reflection", True))
        self.duel_games = int(options.get("duel_games", 2))
        self.solo_discard_loses = bool(options.get("solo_discard_loses", False))
        # setup draws: layout first, then the mission deck
        if setup.get("layout") is not None:
            self.layout = list(setup["layout"])
            if not layout_valid(self.layout, self.allow_reflection):
                raise Illegal("invalid_layout")
            self.layout_attempts = 0
        else:
            self.layout, atts = generate_layout(rng, self.allow_reflection)
            self.layout_attempts = len(atts)
        if setup.get("mission_order") is not None:
            self.order = list(setup["mission_order"])
            assert sorted(self.order) == sorted(LETTERS)
        else:
            self.order = shuffle_missions(rng)
        self.rocks, self.scarabs = parse_layout(self.layout)
        self.over = False
        self.won = False
        self.log: list = []  # ("discard", seat, letter, round/turn) / ("place", seat, letter, cells)
        if self.mode == "standard":
            self.sites = [Site(self.rocks, self.scarabs) for _ in range(n_players)]
            self.round = 1
            self.commits: dict = {}
            self.to_act: list = []
            self._begin_round_standard()
        elif self.mode == "duel":
            self.game_no = 1
            self.game_scores: list = []  # finished games: [score seat 0, score seat 1]
            self.site = Site(self.rocks, self.scarabs)
            self.turn = 1
            self.points = [0, 0]
            self._begin_turn_duel()
        else:
            self.site = Site(self.rocks, self.scarabs, scoring=False)
            self.round = 1
            self.rounds_played = 0
            self._begin_round_solo()
        self._forced()

    # -- flow ---------------------------------------------------------------------------------
    def _begin_round_standard(self) -> None:
        while True:
            if self.round > ROUNDS:
                self.over = True
                self.to_act = []
                return
            letter = self.order[self.round - 1]
            self.commits = {}
            self.to_act = []
            for seat in range(self.n):
                if self.sites[seat].legal(letter, self.allow_reflection):
                    self.to_act.append(seat)
                else:
                    self.sites[seat].discarded.append(letter)
                    self.log.append(("discard", seat, letter, self.round))
            if self.to_act:
                return
            self.round += 1

    def _duel_active(self) -> int:
        starter = (self.game_no - 1) % 2
        return starter if self.turn % 2 == 1 else 1 - starter

    def _begin_turn_duel(self) -> None:
        while True:
            if self.turn > ROUNDS:
                self.game_scores.append(list(self.points))
                if self.game_no < self.duel_games:
                    self.game_no += 1
                    self.site = Site(self.rocks, self.scarabs)
                    self.turn = 1
                    self.points = [0, 0]
                    continue
                self.over = True
                return
            letter = self.order[self.turn - 1]
            if self.site.legal(letter, self.allow_reflection):
                return
            seat = self._duel_active()
            self.site.discarded.append(letter)
            self.log.append(("discard", seat, letter, self.turn))
            self.turn += 1

    def _begin_round_solo(self) -> None:
        while True:
            if self.round > ROUNDS:
                self.over = True
                self.won = False
                return
            letter = self.order[self.round - 1]
            if self.site.legal(letter, self.allow_reflection):
                return
            self.site.discarded.append(letter)
            self.log.append(("discard", 0, letter, self.round))
            self.rounds_played = self.round
            if self.solo_discard_loses:
                self.over = True
                self.won = False
                return
            self.round += 1

    # -- questions ----------------------------------------------------------------------------
    def current_piece(self) -> str | None:
        if self.over:
            return None
        if self.mode == "duel":
            return self.order[self.turn - 1]
        return self.order[self.round - 1]

    def awaiting(self) -> list:
        if self.over:
            return []
        if self.mode == "standard":
            return [s for s in self.to_act if s not in self.commits]
        if self.mode == "duel":
            return [self._duel_active()]
        return [0]

    def site_of(self, seat: int) -> Site:
        return self.sites[seat] if self.mode == "standard" else self.site

    def legal_cells(self, seat: int) -> list:
        if seat not in self.awaiting():
            return []
        return self.site_of(seat).legal(self.current_piece(), self.allow_reflection)

    def legal(self, seat: int) -> list:
        letter = self.current_piece()
        return [action(letter, cells) for cells in self.legal_cells(seat)]

    def check(self, seat: int, act: dict) -> str | None:
        """The section-7 error code of ``act`` for an awaited seat, or None when legal."""
        if seat not in self.awaiting():
            return "not_awaited"
        if not isinstance(act, dict) or act.get("type") != "place":
            return "bad_action"
        if act.get("piece") != self.current_piece():
            return "not_current_piece"
        return self.site_of(seat).check(act["piece"], act.get("cells"), self.allow_reflection)

    # -- acting -------------------------------------------------------------------------------
    def act(self, seat: int, act: dict, rng=None) -> None:
        code = self.check(seat, act)
        if code is not None:
            raise Illegal(code)
        self._play(seat, frozenset(tuple(x) for x in act["cells"]))
        self._forced()

    def _forced(self) -> None:
        for _ in range(1000):
            if self.over:
                return
            for seat in self.awaiting():
                options = self.legal_cells(seat)
                if len(options) == 1:
                    self._play(seat, options[0])
                    break
            else:
                return
        raise RuntimeError("forced moves did not settle")

    def _play(self, seat: int, cells: frozenset) -> None:
        letter = self.current_piece()
        self.log.append(("place", seat, letter, cells))
        if self.mode == "standard":
            self.commits[seat] = cells
            if all(s in self.commits for s in self.to_act):
                for s in sorted(self.commits):
                    self.sites[s].place(letter, self.commits[s], s)
                self.round += 1
                self._begin_round_standard()
        elif self.mode == "duel":
            self.points[seat] += self.site.place(letter, cells, seat)
            self.turn += 1
            self._begin_turn_duel()
        else:
            self.site.place(letter, cells, 0)
            self.rounds_played = self.round
            if self.scarabs <= set(self.site.camps):
                self.over = True
                self.won = True
                return
            self.round += 1
            self._begin_round_solo()

    # -- scores -------------------------------------------------------------------------------
    def scores(self) -> list:
        """Current scores: standard per-seat totals, duel match totals so far, solo [covered]."""
        if self.mode == "standard":
            return [s.score for s in self.sites]
        if self.mode == "duel":
            tot = [sum(g[i] for g in self.game_scores) for i in (0, 1)]
            if not self.over:
                tot = [tot[i] + self.points[i] for i in (0, 1)]
            return tot
        return [len(self.site.covered_scarabs())]

    def result(self) -> dict | None:
        if not self.over:
            return None
        scores = self.scores()
        if self.mode == "solo":
            uncovered = sorted(self.scarabs - set(self.site.camps))
            return {"scores": scores, "ranks": [1], "winners": [0] if self.won else [],
                    "details": {"won": self.won, "covered": scores[0],
                                "uncovered": [list(c) for c in uncovered],
                                "rounds": self.rounds_played}}
        ranks = competition_ranks(scores)
        return {"scores": scores, "ranks": ranks,
                "winners": [s for s, r in enumerate(ranks) if r == 1],
                "details": ({"games": [list(g) for g in self.game_scores]}
                            if self.mode == "duel" else {})}
