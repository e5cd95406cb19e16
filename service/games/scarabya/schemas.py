"""JSON Schemas (2020-12) of what Scarabya serves: ``STATE`` (the ``state`` of a game view, for
every viewer, in every mode) and ``EVENTS`` (event type -> schema of its ``data``), the
redacted forms included.

Meanings are those of the spec (shared/rules/scarabya.md); shapes are those of
:meth:`Scarabya.view` and :meth:`Scarabya.visible`. Cells are ``[row, col]``, row 0-9 top to
bottom, column 0-9 left to right. While the game runs a viewer does not see: the mission order
(``deck`` and ``MissionDeckShuffled.order``, absent) and, in the standard mode, another seat's
committed and not yet revealed placement (``seats[].pending`` and
``PlacementCommitted.cells``, absent). The platform key (``all``) and everybody after the end
see everything. Fields of one mode only are absent in the others (said per field and checked by
the ``if``/``then`` rules of ``STATE``).
"""

from __future__ import annotations

from ...engine.schemas import closed
from .data import DUEL_GAMES, LEGEND, LETTERS, MODE_PLAYERS, MODES, N, ROUNDS

MAX_SEATS = max(high for _, high in MODE_PLAYERS.values())
#: Scarabs on a site: 6 in each quadrant (layout rule V2).
SCARABS = 4 * 6
#: The largest region that scores (spec 8): its size is the value of its tokens.
REGION_MAX = 4

SEAT = {"type": "integer", "minimum": 0, "maximum": MAX_SEATS - 1, "description": "a seat number"}
DUEL_SEAT = {"type": "integer", "minimum": 0, "maximum": 1, "description": "a duel seat"}
ROUND = {"type": "integer", "minimum": 1, "maximum": ROUNDS,
         "description": "the mission (round) number, 1-12"}
GAME_NUMBER = {"type": "integer", "minimum": 1, "maximum": max(DUEL_GAMES),
               "description": "the game of the duel match (always 1 in the other modes)"}
PIECE = {"type": "string", "enum": list(LETTERS),
         "description": "a pentomino (mission card) by its letter"}
POINTS = {"type": "integer", "minimum": 0, "description": "points"}
CELL = {"type": "array", "items": {"type": "integer", "minimum": 0, "maximum": N - 1},
        "minItems": 2, "maxItems": 2, "description": "a cell [row, col]"}
CAMP_CELLS = {"type": "array", "items": CELL, "minItems": 5, "maxItems": 5,
              "description": "a camp's 5 cells, sorted by row then column"}
SCARAB_CELLS = {"type": "array", "items": CELL, "maxItems": SCARABS,
                "description": "scarab cells, sorted by row then column"}
PIECES = {"type": "array", "items": PIECE, "uniqueItems": True, "maxItems": ROUNDS}
LAYOUT = {"type": "array", "minItems": N, "maxItems": N,
          "items": {"type": "string", "pattern": f"^[.SR]{{{N}}}$"},
          "description": "the landscape, 10 rows of 10: '.' blank, 'S' scarab, 'R' rock"}
_CAMP_CHARS = "".join(LETTERS) + "".join(LETTERS).lower()
ROWS = {"type": "array", "minItems": N, "maxItems": N,
        "items": {"type": "string", "pattern": f"^[.SR1-{REGION_MAX}{_CAMP_CHARS}]{{{N}}}$"},
        "description": "a site drawn as 10 rows of 10 (see legend)"}
MATCH_SCORES = {"type": "array", "items": POINTS, "minItems": 2, "maxItems": 2}
#: What a seat is doing in the current round.
STATUSES = {
    "await": "its placement is awaited",
    "committed": "standard mode: placed, hidden until every seat has",
    "placed": "placed this round",
    "discarded": "the piece had no legal placement and was discarded",
    "idle": "nothing to do this round (the other duel seat's turn, or the game is over)",
}


def seats_list(items: dict, description: str) -> dict:
    return {"type": "array", "items": items, "minItems": 1, "maxItems": MAX_SEATS,
            "description": description}


CAMP = closed("A camp on the site.", ["piece", "cells", "seat", "round"],
              piece=PIECE, cells=CAMP_CELLS, seat={**SEAT, "description": "who placed it"},
              round=ROUND)
CAMPS = {"type": "array", "items": CAMP, "maxItems": ROUNDS,
         "description": "the camps on the site, in play order"}
TOKEN = closed("A scarab token won by enclosing a small region.", ["cell", "value", "seat"],
               cell={**CELL, "description": "the scarab's cell"},
               value={"type": "integer", "minimum": 1, "maximum": REGION_MAX,
                      "description": "points: the size of the enclosed region"},
               seat={**SEAT, "description": "who won it"})
TOKENS = {"type": "array", "items": TOKEN, "maxItems": SCARABS,
          "description": "the scarab tokens won on the site"}
DISCARDED = {**PIECES, "description": "pieces discarded for want of a legal placement"}

SITE = closed(
    "An excavation site: each seat's own in the standard mode, the one shared site otherwise.",
    ["rows", "camps", "tokens", "discarded"],
    rows={"anyOf": [ROWS, {"type": "null"}],
          "description": "the site drawn; null only before the setup draws the layout (the "
                         "state at version 1)"},
    camps=CAMPS,
    tokens=TOKENS,
    discarded=DISCARDED,
    seat={**SEAT, "description": "standard mode only: whose site it is"},
)

SEAT_VIEW = closed(
    "One seat.", ["seat", "score", "status"],
    seat=SEAT,
    score={**POINTS, "description": "points in the current game"},
    status={"type": "string", "enum": list(STATUSES),
            "description": "; ".join(f"{k}: {v}" for k, v in STATUSES.items())},
    pending={**CAMP_CELLS, "description": "standard mode: the seat's committed placement, "
                                          "present for the seat itself only (absent for "
                                          "others and when nothing is committed)"},
)

GAME_LOG = closed(
    "A finished game of a duel match.", ["game", "starter", "scores", "rows", "camps",
                                         "discarded"],
    game=GAME_NUMBER, starter={**DUEL_SEAT, "description": "the seat that played first"},
    scores={**MATCH_SCORES, "description": "each seat's points in that game"},
    rows=ROWS, camps=CAMPS, discarded=DISCARDED)

STANDARD_DETAILS = closed(
    "Standard mode: each seat's site.", ["seats"],
    seats=seats_list(closed("A seat's final site.", ["score", "tokens", "discarded",
                                                     "covered_scarabs", "rows"],
                            score=POINTS, tokens=TOKENS, discarded=DISCARDED,
                            covered_scarabs={"type": "integer", "minimum": 0,
                                             "maximum": SCARABS,
                                             "description": "scarabs under the seat's camps"},
                            rows=ROWS), "by seat"))
DUEL_DETAILS = closed(
    "Duel: the match.", ["games", "match_scores"],
    games={"type": "array", "items": GAME_LOG, "minItems": 1, "maxItems": max(DUEL_GAMES),
           "description": "the match's games, in order"},
    match_scores={**MATCH_SCORES, "description": "each seat's points over the match"})
SOLO_DETAILS = closed(
    "Solo: won when every scarab is covered.",
    ["won", "covered", "uncovered", "rounds_played", "discarded", "rows"],
    won={"type": "boolean", "description": "every scarab was covered"},
    covered={"type": "integer", "minimum": 0, "maximum": SCARABS,
             "description": "scarabs covered by camps"},
    uncovered=SCARAB_CELLS, rounds_played=ROUND, discarded=DISCARDED, rows=ROWS)

RESULT = closed(
    "The result: scores (duel: over the match; solo: scarabs covered), competition ranks and "
    "winners (solo: [0] when won, else []).",
    ["scores", "ranks", "winners", "details"],
    scores=seats_list(POINTS, "by seat"),
    ranks=seats_list({"type": "integer", "minimum": 1, "maximum": MAX_SEATS}, "by seat"),
    winners={"type": "array", "items": SEAT, "uniqueItems": True, "maxItems": MAX_SEATS,
             "description": "the winning seats"},
    details={"oneOf": [STANDARD_DETAILS, DUEL_DETAILS, SOLO_DETAILS],
             "description": "the mode's final details"},
)

#: The fields of the view that only one mode serves.
DUEL_FIELDS = {
    "game": GAME_NUMBER,
    "duel_games": {"type": "integer", "enum": list(DUEL_GAMES),
                   "description": "duel only: games in the match"},
    "starter": {**DUEL_SEAT, "description": "duel only: the seat that plays the current game's "
                                            "odd turns"},
    "active_seat": {"anyOf": [DUEL_SEAT, {"type": "null"}],
                    "description": "duel only: the seat whose turn it is (null after the end "
                                   "and while round is 0)"},
    "games": {"type": "array", "items": GAME_LOG, "maxItems": max(DUEL_GAMES),
              "description": "duel only: the match's finished games"},
    "match_scores": {**MATCH_SCORES, "description": "duel only: points over the match so far"},
}
SOLO_FIELDS = {
    "covered": {"anyOf": [{"type": "integer", "minimum": 0, "maximum": SCARABS}, {"type": "null"}],
                "description": "solo only: scarabs covered by camps; null before the setup "
                               "draws the layout (the state at version 1)"},
    "uncovered": {"anyOf": [SCARAB_CELLS, {"type": "null"}],
                  "description": "solo only: the scarabs still uncovered; null before the "
                                 "setup draws the layout"},
    "solo_discard_loses": {"type": "boolean",
                           "description": "solo only: a discarded piece loses the game"},
}


def only_in(mode: str, fields: dict) -> dict:
    """The rule that ``fields`` are served in ``mode`` and in no other."""
    return {"if": {"properties": {"mode": {"const": mode}}},
            "then": {"required": list(fields)},
            "else": {"properties": {name: False for name in fields}}}


STATE = {
    **closed(
        "Scarabya as the viewer may see it.",
        ["mode", "phase", "round", "rounds", "piece", "revealed", "missions_left",
         "allow_reflection", "layout", "legend", "sites", "scores", "seats", "setup"],
        mode={"type": "string", "enum": list(MODES),
              "description": "standard: 2-4 seats, each on its own site, placing at once; "
                             "duel: 2 seats on one site, alternating, a match of duel_games; "
                             "solo: 1 seat covering the 24 scarabs"},
        phase={"type": "string", "enum": ["placing", "over"],
               "description": "placing while the game runs, over after the end"},
        round={**ROUND, "minimum": 0,
               "description": "the mission (round) number, 1-12; 0 before a game's first "
                              "mission (only in the states inside a command: the setup, a "
                              "duel's next game)"},
        rounds={"type": "integer", "const": ROUNDS, "description": "missions per game"},
        piece={"anyOf": [PIECE, {"type": "null"}],
               "description": "the current (after the end: the last) mission's piece; null "
                              "while round is 0"},
        revealed={**PIECES, "description": "the missions revealed this game, in order"},
        missions_left={"type": "integer", "minimum": 0, "maximum": ROUNDS,
                       "description": "missions of this game still to reveal"},
        allow_reflection={"type": "boolean", "description": "pieces may be flipped"},
        layout={"anyOf": [LAYOUT, {"type": "null"}],
                "description": "the landscape; null only before the setup draws it (the "
                               "state at version 1, inside the creating command)"},
        legend=closed("what the characters of rows mean", list(LEGEND),
                      **{k: {"type": "string", "const": v, "description": f"what {k} stands for"}
                         for k, v in LEGEND.items()}),
        sites={"type": "array", "items": SITE, "minItems": 1, "maxItems": MAX_SEATS,
               "description": "standard: one per seat, by seat; duel and solo: the one site"},
        scores=seats_list(POINTS, "each seat's points in the current game (duel: see "
                                  "match_scores)"),
        seats=seats_list(SEAT_VIEW, "every seat, by seat number"),
        setup={"type": "string", "enum": ["standard", "custom"],
               "description": "custom when options.setup fixed the layout or mission order"},
        deck={**PIECES, "minItems": ROUNDS,
              "description": "the mission order: only for the platform key and after the end "
                             "(absent otherwise)"},
        result={**RESULT, "description": "after the end only (absent before)"},
        **DUEL_FIELDS, **SOLO_FIELDS),
    "allOf": [
        only_in("duel", DUEL_FIELDS),
        only_in("solo", SOLO_FIELDS),
        {"if": {"properties": {"phase": {"const": "over"}}},
         "then": {"required": ["result"]}, "else": {"properties": {"result": False}}},
        {"if": {"properties": {"mode": {"const": "standard"}}},
         "then": {"properties": {"sites": {"minItems": 2, "items": {"required": ["seat"]}}}},
         "else": {"properties": {"sites": {"maxItems": 1,
                                           "items": {"properties": {"seat": False}}}}}},
    ],
}

REGION = closed(
    "A region of 1-4 cells newly enclosed by the camp.", ["cells", "scarabs", "size", "points"],
    cells={"type": "array", "items": CELL, "minItems": 1, "maxItems": REGION_MAX,
           "description": "its cells, sorted"},
    scarabs={"type": "array", "items": CELL, "maxItems": REGION_MAX,
             "description": "its scarabs (each gets a token)"},
    size={"type": "integer", "minimum": 1, "maximum": REGION_MAX,
          "description": "its cells' count: each of its scarabs scores this"},
    points={"type": "integer", "minimum": 0, "maximum": REGION_MAX * REGION_MAX,
            "description": "scarabs x size"})

EVENTS: dict[str, dict] = {
    "LayoutCreated": closed(
        "The landscape.", ["rows", "source", "attempts"],
        rows=LAYOUT,
        source={"type": "string", "enum": ["generated", "setup"],
                "description": "drawn by the server, or given in options.setup"},
        attempts={"type": "integer", "minimum": 0,
                  "description": "layouts drawn until one was valid (0: from options.setup)"}),
    "MissionDeckShuffled": closed(
        "The mission deck.", ["source"],
        order={**PIECES, "minItems": ROUNDS,
               "description": "first revealed first: absent while the game runs"},
        source={"type": "string", "enum": ["shuffled", "setup"],
                "description": "shuffled by the server, or given in options.setup"}),
    "MissionRevealed": closed(
        "The next mission: every awaited seat places this piece.", ["round", "piece", "game"],
        round=ROUND, piece=PIECE, game=GAME_NUMBER,
        seat={**DUEL_SEAT, "description": "duel only: the seat whose turn it is"}),
    "CampDiscarded": closed(
        "The seat's piece has no legal placement: it is discarded.", ["seat", "piece", "round"],
        seat=SEAT, piece=PIECE, round=ROUND),
    "PlacementCommitted": closed(
        "Standard mode: the seat has placed, hidden until every seat has.",
        ["seat", "round", "piece"],
        seat=SEAT, round=ROUND, piece=PIECE,
        cells={**CAMP_CELLS, "description": "for the seat itself (and after the end) only, "
                                            "absent for others while the game runs"}),
    "PlacementsRevealed": closed(
        "Standard mode: every placement of the round, revealed together.",
        ["round", "piece", "placements"],
        round=ROUND, piece=PIECE,
        placements=seats_list({"oneOf": [{"type": "null"}, CAMP_CELLS]},
                              "by seat: the camp's cells, null for a seat that discarded")),
    "CampPlaced": closed(
        "Duel and solo: the seat places its camp.", ["seat", "round", "piece", "cells"],
        seat=SEAT, round=ROUND, piece=PIECE, cells=CAMP_CELLS),
    "RegionsScored": closed(
        "Regions the seat's camp enclosed (duel and standard), each scarab in them scoring "
        "the region's size.", ["seat", "round", "regions", "points"],
        seat=SEAT, round=ROUND,
        regions={"type": "array", "items": REGION, "minItems": 1,
                 "description": "the regions, by lowest cell"},
        points={**POINTS, "description": "the regions' points together"}),
    "DuelGameEnded": closed(
        "Duel: a game of the match ends.", ["game", "scores"],
        game=GAME_NUMBER, scores={**MATCH_SCORES, "description": "each seat's points in it"}),
    "DuelGameStarted": closed(
        "Duel: the next game, on a fresh site, the other seat starting.", ["game", "starter"],
        game={**GAME_NUMBER, "minimum": 2}, starter=DUEL_SEAT),
    "GameEnded": closed("The end.", ["result"], result=RESULT),
}
