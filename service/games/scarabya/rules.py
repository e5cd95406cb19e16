"""Scarabya (Cathala & Maublanc, Blue Orange 2018): pentomino camps on a 10 x 10 excavation site.

Normative spec: ``/work/shared/rules/scarabya.md``. Modes: ``standard`` (2-4 seats, simultaneous
hidden placements on each seat's own copy of the site, revealed together), ``duel`` (2 seats, one
shared site, alternating turns, a match of ``duel_games`` games with the start player swapped and
the same mission order), ``solo`` (1 seat, cover all 24 scarabs).

Randomness (all of it happens in :meth:`Scarabya.create`; ``decide`` never draws)
----------------------------------------------------------------------------------
The engine RNG passed to ``create`` is consumed in exactly this order:

1. The landscape, unless ``options.setup.layout`` is given (then no draw at all for it).
   Per attempt (attempt = 1, 2, ...) and per quadrant q = 0, 1, 2, 3 (Q0 rows 0-4 x cols 0-4,
   Q1 rows 0-4 x cols 5-9, Q2 rows 5-9 x cols 0-4, Q3 rows 5-9 x cols 5-9): the list
   ``L = [0, 1, ..., 24]`` (canonical order: local index ``k = 5*lr + lc`` ascending) is
   Fisher-Yates shuffled with ``for i = 24 down to 1: j = rng.below(i + 1); swap L[i], L[j]``
   (24 draws, so 96 draws per attempt). Rocks = the first 2 entries of L (list order) that are not
   the quadrant's centre cell (local (4,4), (4,0), (0,4), (0,0) for Q0..Q3); scarabs = the first
   6 entries of L (list order) that are not rocks. The attempt is accepted iff V4 (the 92
   non-rock cells are orthogonally connected) and V5 (every piece has a legal first placement
   under the game's ``allow_reflection``) hold; otherwise the next attempt continues the same
   stream. Nothing else is drawn for the layout (no draw decides tile rotation or themes).
2. The mission deck, unless ``options.setup.mission_order`` is given (then no draw). Canonical
   order ``F I L N P T U V W X Y Z``; ``for i = 11 down to 1: j = rng.below(i + 1); swap`` (11
   draws); index 0 is the first card revealed. The duel's later games reuse this order.

Both results are written into events (``LayoutCreated``, ``MissionDeckShuffled``), so ``apply``
and replays never draw.

Events
------
``LayoutCreated{rows, source, attempts}``, ``MissionDeckShuffled{order, source}`` (``order``
hidden from everybody while the game runs), ``MissionRevealed{round, piece, game}`` (duel: also
``seat`` = the active seat), ``CampDiscarded{seat, piece, round}`` (automatic, when the piece has
no legal placement on the seat's site), standard: ``PlacementCommitted{seat, round, piece, cells}``
(``cells`` redacted for every other viewer) then ``PlacementsRevealed{round, piece, placements}``
(a list indexed by seat: sorted cells or None for a seat that discarded), duel/solo:
``CampPlaced{seat, round, piece, cells}``, ``RegionsScored{seat, round, regions: [{cells,
scarabs, size, points}], points}`` (every newly enclosed region of 1-4 cells, also those without
scarabs; not emitted in solo, where nothing scores), duel: ``DuelGameEnded{game, scores}``,
``DuelGameStarted{game, starter}``; ``GameEnded{result}``.

Cells are ``[r, c]`` (row 0-9 top to bottom, column 0-9 left to right). Internally a set of cells
is a Python int bitmask, bit ``10*r + c`` (never stored in the state: orjson caps ints at 64 bits).
"""

from __future__ import annotations

from functools import lru_cache
from typing import Any, Sequence

from ...engine import (ALL, Game, IllegalAction, InvalidOptions, Outcome, clone, redact, sees,
                      standard_result)
from ...engine.options import invalid
from ...engine.actions import action_type, check_fields, invalid_field
from ...engine.rng import fisher_yates
from . import schemas
from .data import (ACTIONS, CANONICAL, CENTER_CELLS, DUEL_GAMES, INNER, LEGEND, LETTERS,
                   MODE_PLAYERS, MODES, N, ORIGIN, ROUNDS)

# ---------------------------------------------------------------------------------------------
# Geometry and pieces (the site's and pieces' tables are data.py's)
# ---------------------------------------------------------------------------------------------

FULL = (1 << 100) - 1
COL0 = sum(1 << (10 * r) for r in range(N))
COL9 = COL0 << 9
NOT_COL0 = FULL & ~COL0
NOT_COL9 = FULL & ~COL9


def bit(r: int, c: int) -> int:
    return 1 << (10 * r + c)


CENTER = sum(bit(r, c) for r, c in CENTER_CELLS)


def mask_of(cells) -> int:
    m = 0
    for r, c in cells:
        m |= 1 << (10 * r + c)
    return m


def cells_of(mask: int) -> list[list[int]]:
    """The cells of ``mask``, sorted ascending by (row, col)."""
    out = []
    while mask:
        low = mask & -mask
        i = low.bit_length() - 1
        out.append([i // 10, i % 10])
        mask ^= low
    return out


def neighbours(mask: int) -> int:
    """Cells orthogonally adjacent to ``mask`` (excluding ``mask`` itself)."""
    grow = ((mask << 1) & NOT_COL0) | ((mask >> 1) & NOT_COL9) | (mask << 10) | (mask >> 10)
    return grow & FULL & ~mask


def normalize(cells) -> tuple[tuple[int, int], ...]:
    mr = min(r for r, _ in cells)
    mc = min(c for _, c in cells)
    return tuple(sorted((r - mr, c - mc) for r, c in cells))


def rotate(cells):
    """90 degrees clockwise: (r, c) -> (c, -r), then normalise."""
    return normalize([(c, -r) for r, c in cells])


def reflect(cells):
    """(r, c) -> (r, -c), then normalise."""
    return normalize([(r, -c) for r, c in cells])


def shapes(piece: str, allow_reflection: bool) -> tuple[tuple[tuple[int, int], ...], ...]:
    """The distinct normalised orientations of ``piece`` (sorted, for determinism)."""
    out = set()
    starts = [normalize(CANONICAL[piece])]
    if allow_reflection:
        starts.append(reflect(CANONICAL[piece]))
    for s in starts:
        for _ in range(4):
            out.add(s)
            s = rotate(s)
    return tuple(sorted(out))


SHAPES: dict[tuple[str, bool], frozenset] = {
    (p, refl): frozenset(shapes(p, refl)) for p in LETTERS for refl in (True, False)
}


class Placement:
    """One placement of a piece on the empty 10 x 10 board (precomputed)."""

    __slots__ = ("mask", "nbr", "cells")

    def __init__(self, cells: tuple[tuple[int, int], ...]) -> None:
        self.cells = cells  # sorted ascending by (row, col)
        self.mask = mask_of(cells)
        self.nbr = neighbours(self.mask)


def _placements(piece: str, allow_reflection: bool) -> tuple[Placement, ...]:
    out = []
    for shape in shapes(piece, allow_reflection):
        h = max(r for r, _ in shape) + 1
        w = max(c for _, c in shape) + 1
        for dr in range(N - h + 1):
            for dc in range(N - w + 1):
                out.append(Placement(tuple(sorted((r + dr, c + dc) for r, c in shape))))
    out.sort(key=lambda p: p.cells)  # distinct shapes never give the same cell set
    return tuple(out)


#: Every placement of every piece on the empty board, sorted by cell list: the raw material of
#: ``legal_actions`` (a legal placement is a filter of this list by two bitmask tests).
PLACEMENTS: dict[tuple[str, bool], tuple[Placement, ...]] = {
    (p, refl): _placements(p, refl) for p in LETTERS for refl in (True, False)
}


# ---------------------------------------------------------------------------------------------
# Layouts
# ---------------------------------------------------------------------------------------------


@lru_cache(maxsize=4096)
def layout_masks(rows: tuple[str, ...]) -> tuple[int, int]:
    """(rock mask, scarab mask) of a valid layout."""
    rocks = scarabs = 0
    for r, row in enumerate(rows):
        for c, ch in enumerate(row):
            if ch == "R":
                rocks |= bit(r, c)
            elif ch == "S":
                scarabs |= bit(r, c)
    return rocks, scarabs


def flood(seed: int, open_mask: int) -> int:
    """The orthogonally connected component of ``open_mask`` containing the bit ``seed``."""
    region = seed
    while True:
        grow = (region | ((region << 1) & NOT_COL0) | ((region >> 1) & NOT_COL9)
                | (region << 10) | (region >> 10)) & open_mask
        if grow == region:
            return region
        region = grow


def regions(open_mask: int) -> list[int]:
    """Every region (maximal connected set) of ``open_mask``, by lowest cell."""
    out = []
    while open_mask:
        reg = flood(open_mask & -open_mask, open_mask)
        out.append(reg)
        open_mask &= ~reg
    return out


def has_first_placement(piece: str, rocks: int, allow_reflection: bool) -> bool:
    return any(not p.mask & rocks and p.mask & CENTER
               for p in PLACEMENTS[(piece, allow_reflection)])


def layout_problem(rows: Any, allow_reflection: bool) -> dict | None:
    """None when ``rows`` passes V1-V5, else ``{"rule": "V<n>", ...}`` describing the failure."""
    if not isinstance(rows, list) or len(rows) != N:
        return {"rule": "V1", "reason": "not a list of 10 strings"}
    for r, row in enumerate(rows):
        if not isinstance(row, str) or len(row) != N:
            return {"rule": "V1", "reason": "row is not a string of 10 characters", "row": r}
        bad = [c for c, ch in enumerate(row) if ch not in ".SR"]
        if bad:
            return {"rule": "V1", "reason": "character outside {., S, R}", "row": r,
                    "col": bad[0]}
    for q, (orow, ocol) in enumerate(ORIGIN):
        block = [rows[orow + lr][ocol + lc] for lr in range(5) for lc in range(5)]
        s, k = block.count("S"), block.count("R")
        if s != 6 or k != 2:
            return {"rule": "V2", "reason": "a quadrant needs exactly 6 S and 2 R",
                    "quadrant": q, "scarabs": s, "rocks": k}
    for r, c in CENTER_CELLS:
        if rows[r][c] == "R":
            return {"rule": "V3", "reason": "a centre cell is a rock", "cell": [r, c]}
    rocks, _ = layout_masks(tuple(rows))
    open_mask = FULL & ~rocks
    if flood(open_mask & -open_mask, open_mask) != open_mask:
        return {"rule": "V4", "reason": "the non-rock cells are not connected"}
    for piece in LETTERS:
        if not has_first_placement(piece, rocks, allow_reflection):
            return {"rule": "V5", "reason": "a piece has no legal first placement",
                    "piece": piece}
    return None


def generate_layout(rng, allow_reflection: bool = True,
                    trace: list | None = None) -> tuple[list[str], int]:
    """Section 4.1: returns (rows, attempts). ``rng`` only needs ``below(n)`` (so does
    :func:`shuffle_missions`: both take section 4.3's reference generator, and their shuffles
    draw through ``below`` with :func:`~service.engine.rng.fisher_yates`, which is
    ``Rng.shuffle``'s own).

    ``trace`` (tests) receives every attempt's rows, rejected ones included.
    """
    attempt = 0
    while True:
        attempt += 1
        grid = [["."] * N for _ in range(N)]
        for q in range(4):
            order = list(range(25))
            fisher_yates(order, rng.below)
            inner = INNER[q][0] * 5 + INNER[q][1]
            rocks = [k for k in order if k != inner][:2]
            scarabs = [k for k in order if k not in rocks][:6]
            orow, ocol = ORIGIN[q]
            for k in rocks:
                grid[orow + k // 5][ocol + k % 5] = "R"
            for k in scarabs:
                grid[orow + k // 5][ocol + k % 5] = "S"
        rows = ["".join(row) for row in grid]
        if trace is not None:
            trace.append(rows)
        if layout_problem(rows, allow_reflection) is None:
            return rows, attempt


def shuffle_missions(rng) -> list[str]:
    """Section 4.2: Fisher-Yates over F I L N P T U V W X Y Z, index 0 revealed first."""
    deck = list(LETTERS)
    fisher_yates(deck, rng.below)
    return deck


# ---------------------------------------------------------------------------------------------
# Sites
# ---------------------------------------------------------------------------------------------


def new_site() -> dict:
    return {"camps": [], "tokens": [], "discarded": []}


def occupied(site: dict) -> int:
    m = 0
    for camp in site["camps"]:
        for r, c in camp["cells"]:
            m |= 1 << (10 * r + c)
    return m


@lru_cache(maxsize=16384)
def legal_masks(piece: str, allow_reflection: bool, rocks: int, occ: int
                ) -> tuple[Placement, ...]:
    """Every legal placement of ``piece`` on a site (section 7), sorted by cell list. Memoized
    (a site recurs: ``legal_actions``, ``decide``'s validation and the bots ask for the same
    one, and a search's simulations revisit the sites near its root)."""
    table = PLACEMENTS[(piece, allow_reflection)]
    if not occ:
        return tuple(p for p in table if not p.mask & rocks and p.mask & CENTER)
    blocked = rocks | occ
    return tuple(p for p in table if not p.mask & blocked and p.nbr & occ)


def enclosed(rocks: int, occ: int, pmask: int) -> list[int]:
    """Regions of 1-4 cells newly enclosed by placing ``pmask`` (section 8), by lowest cell.

    The camp lies inside one region R; the new regions are exactly the components of R minus the
    camp, and each touches the camp, so flooding from the camp's open neighbours finds them all.
    """
    open_after = FULL & ~(rocks | occ | pmask)
    todo = neighbours(pmask) & open_after
    out = []
    while todo:
        reg = flood(todo & -todo, open_after)
        todo &= ~reg
        if reg.bit_count() <= 4:
            out.append(reg)
    out.sort(key=lambda m: (m & -m).bit_length())
    return out


def render(rows: Sequence[str], site: dict) -> list[str]:
    """The spec's text rows: . S R, a token digit, a camp letter (lower case over a scarab)."""
    grid = [list(row) for row in rows]
    for tok in site["tokens"]:
        r, c = tok["cell"]
        grid[r][c] = str(tok["value"])
    for camp in site["camps"]:
        for r, c in camp["cells"]:
            grid[r][c] = camp["piece"].lower() if rows[r][c] == "S" else camp["piece"]
    return ["".join(row) for row in grid]


# ---------------------------------------------------------------------------------------------
# The game (the modes' tables are data.py's)
# ---------------------------------------------------------------------------------------------


class Scarabya(Game):
    type_id = "scarabya"
    catalog_position = 2
    name = "Scarabya"
    min_players = 1
    max_players = 4
    options_schema = {
        "type": "object",
        "additionalProperties": False,
        "properties": {
            "mode": {"enum": [*MODES, None],
                     "description": "default (absent or null): solo for 1 seat, otherwise "
                                    "standard; standard takes 2-4 seats, duel 2, solo 1"},
            "allow_reflection": {"type": "boolean", "default": True},
            "duel_games": {"type": "integer", "enum": list(DUEL_GAMES), "default": 2},
            "solo_discard_loses": {"type": "boolean", "default": False},
            "setup": {
                "type": ["object", "null"],
                "x-error": {"code": "invalid_setup"},
                "additionalProperties": False,
                "properties": {
                    "layout": {"type": ["array", "null"], "minItems": 10, "maxItems": 10,
                               "items": {"type": "string", "pattern": "^[.SR]{10}$"},
                               "x-error": {"code": "invalid_layout", "rule": "V1"},
                               "description": "10 rows of 10 of '.', 'S', 'R' that pass the "
                                              "layout rules V1-V5"},
                    "mission_order": {"type": ["array", "null"], "minItems": 12,
                                      "maxItems": 12, "uniqueItems": True,
                                      "items": {"enum": list(LETTERS)}},
                },
            },
        },
    }
    variants = [
        {"id": "standard", "name": "Standard (2-4 players, own sites, simultaneous)",
         "options": {"mode": "standard"}},
        {"id": "duel", "name": "Duel (2 players, one shared site, two-game match)",
         "options": {"mode": "duel", "duel_games": 2}},
        {"id": "solo", "name": "Solo (cover all 24 scarabs)", "options": {"mode": "solo"}},
    ]
    action_schemas = {
        "place": {
            "type": "object",
            "additionalProperties": False,
            "required": ["type", "piece", "cells"],
            "properties": {
                "type": {"const": "place"},
                "piece": {"enum": list(LETTERS)},
                "cells": {"type": "array", "minItems": 5, "maxItems": 5,
                          "items": {"type": "array", "minItems": 2, "maxItems": 2,
                                    "items": {"type": "integer", "minimum": 0, "maximum": 9}}},
            },
        },
    }
    state_schema = schemas.STATE
    event_schemas = schemas.EVENTS

    def rating_type(self, options: dict) -> str:
        """The duel (a match of two games on one shared site) is rated apart."""
        return f"{self.type_id}-duel" if options.get("mode") == "duel" else self.type_id

    @property
    def rating_types(self) -> tuple[str, ...]:
        return (self.type_id, f"{self.type_id}-duel")

    # -- creation -------------------------------------------------------------------------
    def normalize_options(self, options: dict, players: Sequence[dict]) -> dict:
        checked = self.checked_options(options)
        n = len(players)
        mode = checked.get("mode") or ("solo" if n == 1 else "standard")
        low, high = MODE_PLAYERS[mode]
        if not low <= n <= high:
            raise InvalidOptions("invalid_player_count", f"{mode} needs {low}-{high} players",
                                 {"option": "mode", "mode": mode, "players": n, "min": low,
                                  "max": high})
        out: dict[str, Any] = {"mode": mode}
        for key in ("allow_reflection", "solo_discard_loses", "duel_games"):
            out[key] = checked[key]
        setup = checked.get("setup") or {}
        clean: dict[str, Any] = {}
        if setup.get("layout") is not None:
            problem = layout_problem(setup["layout"], out["allow_reflection"])
            if problem:
                raise invalid("invalid_layout", "setup.layout",
                              f"fails {problem['rule']}: {problem['reason']}", **problem)
            clean["layout"] = list(setup["layout"])
        if setup.get("mission_order") is not None:
            clean["mission_order"] = list(setup["mission_order"])
        if clean:
            out["setup"] = clean
        return out

    def initial(self, players: Sequence[dict], options: dict) -> dict:
        n = len(players)
        mode = options["mode"]
        return {
            "mode": mode,
            "players": n,
            "allow_reflection": options["allow_reflection"],
            "duel_games": options["duel_games"],
            "solo_discard_loses": options["solo_discard_loses"],
            "setup": options.get("setup") or {},
            "layout": None,
            "deck": None,
            "game": 1,
            "starter": 0,
            "round": 0,
            "piece": None,
            "revealed": [],
            "sites": [new_site() for _ in range(n if mode == "standard" else 1)],
            "scores": [0] * n,
            "status": ["idle"] * n,
            "pending": [None] * n,
            "game_log": [],
            "over": False,
            "result": None,
        }

    def create(self, state: dict, rng) -> tuple[list[dict], dict]:
        out = Outcome(self, state)
        setup = out.state["setup"]
        if "layout" in setup:
            out.emit("LayoutCreated", {
                "rows": list(setup["layout"]), "source": "setup", "attempts": 0})
        else:
            rows, attempts = generate_layout(rng, out.state["allow_reflection"])
            out.emit("LayoutCreated", {
                "rows": rows, "source": "generated", "attempts": attempts})
        if "mission_order" in setup:
            order, source = list(setup["mission_order"]), "setup"
        else:
            order, source = shuffle_missions(rng), "shuffled"
        out.emit("MissionDeckShuffled", {"order": order, "source": source})
        self._advance(out)
        return out.done()

    # -- helpers --------------------------------------------------------------------------
    @staticmethod
    def _site_index(state: dict, seat: int) -> int:
        return seat if state["mode"] == "standard" else 0

    @staticmethod
    def _active(state: dict) -> int:
        """Duel: the seat playing the current turn (turn = round)."""
        return state["starter"] if state["round"] % 2 == 1 else 1 - state["starter"]

    def _masks(self, state: dict, seat: int) -> tuple[int, int, int]:
        rocks, scarabs = layout_masks(tuple(state["layout"]))
        return rocks, scarabs, occupied(state["sites"][self._site_index(state, seat)])

    def _legal(self, state: dict, seat: int) -> tuple[Placement, ...]:
        rocks, _, occ = self._masks(state, seat)
        return legal_masks(state["piece"], state["allow_reflection"], rocks, occ)

    def _advance(self, out: Outcome) -> None:
        """Reveal cards (discarding automatically) until a seat is awaited or the game ends."""
        work = out.state
        mode = work["mode"]
        while True:
            if work["round"] >= ROUNDS:
                if mode == "duel":
                    out.emit("DuelGameEnded", {
                        "game": work["game"], "scores": list(work["scores"])})
                    if work["game"] < work["duel_games"]:
                        out.emit("DuelGameStarted", {
                            "game": work["game"] + 1, "starter": 1 - work["starter"]})
                        continue
                self._end(out)
                return
            rnd = work["round"] + 1
            piece = work["deck"][rnd - 1]
            data = {"round": rnd, "piece": piece, "game": work["game"]}
            if mode == "duel":
                data["seat"] = work["starter"] if rnd % 2 == 1 else 1 - work["starter"]
            out.emit("MissionRevealed", data)
            for seat in range(work["players"]):
                if work["status"][seat] == "await" and not self._legal(work, seat):
                    out.emit("CampDiscarded", {
                        "seat": seat, "piece": piece, "round": rnd}, seat)
                    if mode == "solo" and work["solo_discard_loses"]:
                        self._end(out)
                        return
            if "await" in work["status"]:
                return

    def _end(self, out: Outcome) -> None:
        out.emit("GameEnded", {"result": self._compute_result(out.state)})

    def _compute_result(self, state: dict) -> dict:
        mode = state["mode"]
        layout = state["layout"]
        rocks, scarabs = layout_masks(tuple(layout))
        if mode == "solo":
            site = state["sites"][0]
            occ = occupied(site)
            left = scarabs & ~occ
            covered = (scarabs & occ).bit_count()
            won = left == 0
            return {"scores": [covered], "ranks": [1], "winners": [0] if won else [],
                    "details": {"won": won, "covered": covered, "uncovered": cells_of(left),
                                "rounds_played": state["round"],
                                "discarded": list(site["discarded"]),
                                "rows": render(layout, site)}}
        if mode == "duel":
            games = state["game_log"]
            totals = [sum(g["scores"][s] for g in games) for s in range(2)]
            return standard_result(totals, details={"games": games, "match_scores": totals})
        per_seat = []
        for seat, site in enumerate(state["sites"]):
            per_seat.append({
                "score": state["scores"][seat],
                "tokens": [dict(t) for t in site["tokens"]],
                "discarded": list(site["discarded"]),
                "covered_scarabs": (scarabs & occupied(site)).bit_count(),
                "rows": render(layout, site),
            })
        return standard_result(list(state["scores"]), details={"seats": per_seat})

    def _validate(self, state: dict, seat: int, action: Any) -> int:
        """The placement's bitmask, or IllegalAction with the section 7 code."""
        action_type(action, ACTIONS)
        check_fields(action, ("piece", "cells"))
        piece = action["piece"]
        if not isinstance(piece, str):
            raise invalid_field("piece", "piece must be a one-letter string")
        if piece != state["piece"]:
            raise IllegalAction("not_current_piece", "this round's piece is "
                                f"{state['piece']}", {"piece": state["piece"]})
        cells = action["cells"]
        if not isinstance(cells, list) or len(cells) != 5:
            raise IllegalAction("bad_cells", "cells must be a list of 5 [row, col] pairs")
        pairs = []
        for cell in cells:
            if (not isinstance(cell, list) or len(cell) != 2
                    or type(cell[0]) is not int or type(cell[1]) is not int):
                raise IllegalAction("bad_cells", "cells must be a list of 5 [row, col] pairs "
                                    "of integers")
            pairs.append((cell[0], cell[1]))
        if len(set(pairs)) != 5:
            raise IllegalAction("bad_cells", "the 5 cells must be distinct")
        if not all(0 <= r < N and 0 <= c < N for r, c in pairs):
            raise IllegalAction("off_board", "every cell must be inside the 10 x 10 board")
        if normalize(pairs) not in SHAPES[(piece, state["allow_reflection"])]:
            raise IllegalAction("bad_shape", f"the cells do not form an allowed {piece} shape",
                                {"allow_reflection": state["allow_reflection"]})
        pmask = mask_of(pairs)
        rocks, _, occ = self._masks(state, seat)
        if pmask & rocks:
            raise IllegalAction("covers_rock", "a camp cannot cover a rock",
                                {"cells": cells_of(pmask & rocks)})
        if pmask & occ:
            raise IllegalAction("piece_overlaps", "a camp cannot overlap another camp",
                                {"cells": cells_of(pmask & occ)})
        if not occ:
            if not pmask & CENTER:
                raise IllegalAction("first_must_cover_center",
                                    "the first camp must cover a centre square",
                                    {"center": [list(c) for c in CENTER_CELLS]})
        elif not neighbours(pmask) & occ:
            raise IllegalAction("not_adjacent",
                                "a camp must touch an earlier camp along an edge")
        return pmask

    def _scoring(self, state: dict, seat: int, pmask: int) -> list[dict]:
        rocks, scarabs, occ = self._masks(state, seat)
        out = []
        for reg in enclosed(rocks, occ, pmask):
            size = reg.bit_count()
            k = (reg & scarabs).bit_count()
            out.append({"cells": cells_of(reg), "scarabs": cells_of(reg & scarabs),
                        "size": size, "points": k * size})
        return out

    # -- the decider ----------------------------------------------------------------------
    def decide(self, state: dict, seat: int, action: dict, rng) -> tuple[list[dict], dict]:
        pmask = self._validate(state, seat, action)
        cells = cells_of(pmask)
        out = Outcome(self, state)
        work = out.state
        mode = work["mode"]
        rnd, piece = work["round"], work["piece"]
        if mode == "standard":
            out.emit("PlacementCommitted", {
                "seat": seat, "round": rnd, "piece": piece, "cells": cells}, seat)
            if "await" in work["status"]:
                return out.done()
            scored = []
            for s in range(work["players"]):
                if work["pending"][s] is not None:
                    scored.append((s, self._scoring(work, s, mask_of(work["pending"][s]))))
            out.emit("PlacementsRevealed", {
                "round": rnd, "piece": piece, "placements": list(work["pending"])})
            for s, regs in scored:
                if regs:
                    out.emit("RegionsScored", {
                        "seat": s, "round": rnd, "regions": regs,
                        "points": sum(x["points"] for x in regs)}, s)
        else:
            regs = self._scoring(work, seat, pmask) if mode == "duel" else []
            out.emit("CampPlaced", {
                "seat": seat, "round": rnd, "piece": piece, "cells": cells}, seat)
            if regs:
                out.emit("RegionsScored", {
                    "seat": seat, "round": rnd, "regions": regs,
                    "points": sum(x["points"] for x in regs)}, seat)
            if mode == "solo":
                _, scarabs, occ = self._masks(work, seat)
                if not scarabs & ~occ:
                    self._end(out)
                    return out.done()
        self._advance(out)
        return out.done()

    def apply(self, state: dict, ev: dict) -> None:
        t, d = ev["type"], ev["data"]
        if t == "LayoutCreated":
            state["layout"] = list(d["rows"])
        elif t == "MissionDeckShuffled":
            state["deck"] = list(d["order"])
        elif t == "MissionRevealed":
            state["round"] = d["round"]
            state["piece"] = d["piece"]
            state["revealed"].append(d["piece"])
            n = state["players"]
            if state["mode"] == "duel":
                state["status"] = ["await" if s == d["seat"] else "idle" for s in range(n)]
            else:
                state["status"] = ["await"] * n
            state["pending"] = [None] * n
        elif t == "CampDiscarded":
            state["sites"][self._site_index(state, d["seat"])]["discarded"].append(d["piece"])
            state["status"][d["seat"]] = "discarded"
        elif t == "PlacementCommitted":
            state["pending"][d["seat"]] = [list(c) for c in d["cells"]]
            state["status"][d["seat"]] = "committed"
        elif t == "PlacementsRevealed":
            for s, cells in enumerate(d["placements"]):
                if cells is not None:
                    state["sites"][s]["camps"].append({
                        "piece": d["piece"], "cells": [list(c) for c in cells], "seat": s,
                        "round": d["round"]})
                    state["status"][s] = "placed"
            state["pending"] = [None] * state["players"]
        elif t == "CampPlaced":
            s = d["seat"]
            state["sites"][0]["camps"].append({
                "piece": d["piece"], "cells": [list(c) for c in d["cells"]], "seat": s,
                "round": d["round"]})
            state["status"][s] = "placed"
        elif t == "RegionsScored":
            s = d["seat"]
            site = state["sites"][self._site_index(state, s)]
            for reg in d["regions"]:
                for cell in reg["scarabs"]:
                    site["tokens"].append({"cell": list(cell), "value": reg["size"], "seat": s})
            state["scores"][s] += d["points"]
        elif t == "DuelGameEnded":
            state["game_log"].append({
                "game": d["game"], "starter": state["starter"], "scores": list(d["scores"]),
                "rows": render(state["layout"], state["sites"][0]),
                "camps": clone(state["sites"][0]["camps"]),
                "discarded": list(state["sites"][0]["discarded"])})
        elif t == "DuelGameStarted":
            state["game"] = d["game"]
            state["starter"] = d["starter"]
            state["round"] = 0
            state["piece"] = None
            state["revealed"] = []
            state["sites"] = [new_site()]
            state["scores"] = [0] * state["players"]
            state["status"] = ["idle"] * state["players"]
        elif t == "GameEnded":
            state["over"] = True
            state["result"] = d["result"]
            state["status"] = ["idle"] * state["players"]
            state["pending"] = [None] * state["players"]
        else:  # pragma: no cover - an event this module never writes
            raise ValueError(f"unknown event {t}")

    # -- questions ------------------------------------------------------------------------
    def is_over(self, state: dict) -> bool:
        return state["over"]

    def awaiting(self, state: dict) -> list[int]:
        if state["over"]:
            return []
        return [s for s, st in enumerate(state["status"]) if st == "await"]

    def not_awaited_reason(self, state: dict, seat: int) -> str:
        if state["over"]:
            return "game_over"
        if state["mode"] == "duel":
            return "not_your_turn"
        st = state["status"][seat] if 0 <= seat < state["players"] else "idle"
        return {"committed": "already_committed", "discarded": "piece_discarded"}.get(
            st, "wrong_phase")

    def _awaited_placements(self, state: dict, seat: int) -> tuple[Placement, ...]:
        """The awaited ``seat``'s legal placements (none for any other seat)."""
        if state["over"] or not (0 <= seat < state["players"]) \
                or state["status"][seat] != "await":
            return ()
        return self._legal(state, seat)

    @staticmethod
    def _place(piece: str, placement: Placement) -> dict:
        return {"type": "place", "piece": piece, "cells": [[r, c] for r, c in placement.cells]}

    def legal_actions(self, state: dict, seat: int) -> list[dict]:
        return [self._place(state["piece"], p) for p in self._awaited_placements(state, seat)]

    def only_action(self, state: dict, seat: int) -> dict | None:
        placements = self._awaited_placements(state, seat)  # one action each
        return self._place(state["piece"], placements[0]) if len(placements) == 1 else None

    def timeout_action(self, state: dict, seat: int) -> dict:
        """The legal placement whose sorted cell list is lexicographically smallest."""
        return self.legal_actions(state, seat)[0]

    def result(self, state: dict) -> dict | None:
        return state["result"] if state["over"] else None

    # -- information ----------------------------------------------------------------------
    def view(self, state: dict, viewer) -> dict:
        over = state["over"]
        mode = state["mode"]
        layout = state["layout"]
        full = over or viewer == ALL
        sites = []
        for i, site in enumerate(state["sites"]):
            item = {
                "rows": render(layout, site) if layout else None,
                "camps": [dict(c, cells=[list(x) for x in c["cells"]]) for c in site["camps"]],
                "tokens": [dict(t, cell=list(t["cell"])) for t in site["tokens"]],
                "discarded": list(site["discarded"]),
            }
            if mode == "standard":
                item["seat"] = i
            sites.append(item)
        seats = []
        for s in range(state["players"]):
            entry = {"seat": s, "score": state["scores"][s], "status": state["status"][s]}
            pending = state["pending"][s]
            if pending is not None and (full or sees(viewer, s)):
                entry["pending"] = [list(c) for c in pending]
            seats.append(entry)
        out: dict[str, Any] = {
            "mode": mode,
            "phase": "over" if over else "placing",
            "round": state["round"],
            "rounds": ROUNDS,
            "piece": state["piece"],
            "revealed": list(state["revealed"]),
            "missions_left": ROUNDS - state["round"],
            "allow_reflection": state["allow_reflection"],
            "layout": list(layout) if layout else None,
            "legend": LEGEND,
            "sites": sites,
            "scores": list(state["scores"]),
            "seats": seats,
            "setup": "custom" if state["setup"] else "standard",
        }
        if full and state["deck"] is not None:
            out["deck"] = list(state["deck"])
        if mode == "duel":
            out["game"] = state["game"]
            out["duel_games"] = state["duel_games"]
            out["starter"] = state["starter"]
            out["active_seat"] = None if over or not state["round"] else self._active(state)
            out["games"] = [dict(g) for g in state["game_log"]]
            out["match_scores"] = [sum(g["scores"][s] for g in state["game_log"])
                                   + (0 if over else state["scores"][s]) for s in range(2)]
        if mode == "solo":
            out["covered"] = out["uncovered"] = None  # no layout yet (the setup's own state)
            if layout:
                _, scarabs, occ = self._masks(state, 0)
                out["covered"] = (scarabs & occ).bit_count()
                out["uncovered"] = cells_of(scarabs & ~occ)
            out["solo_discard_loses"] = state["solo_discard_loses"]
        if over:
            out["result"] = state["result"]
        return clone(out)

    def visible(self, ev: dict, viewer) -> dict | None:
        t = ev["type"]
        if t == "MissionDeckShuffled":
            return redact(ev, drop=("order",)) if viewer != ALL else ev
        if t == "PlacementCommitted" and not sees(viewer, ev["data"]["seat"]):
            return redact(ev, drop=("cells",))
        return ev


GAME = Scarabya()
