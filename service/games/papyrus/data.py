"""Papyrus game data: loaded once at import from ``data/*.json`` and validated.

``game.json`` holds the alphabet and bag (``glyphs``), the God cards, the Event cards, the
movement cards and the scoring constants (rules section 12.6). ``nile-rings-v1.json`` is the
built-in board (section 2.6). A board supplied by a client (``options.board``) goes through the
very same :data:`BOARD_SCHEMA` and :func:`validate_board` and is rejected with
:class:`InvalidOptions` ``invalid_board`` (``details.option`` says where, ``details.expected`` or
``details.reason`` what).
"""

from __future__ import annotations

import json
import os
from collections import deque
from typing import Any

from ...engine import InvalidOptions
from ...engine.options import check, invalid

_HERE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "data")

COLOURS = ("light", "darkness", "nature", "water")
KINDS = COLOURS + ("eye",)
EFFECT_KINDS = ("draw_movement", "draw_glyphs", "take_market", "draw_and_return", "free_move",
                "discard_movement", "return_glyph", "swap_god", "skip_turn")

#: limits for client-supplied maps (keeps legal_actions and states small)
MAX_NODES = 200
MAX_PATHS = 1000
MAX_PATH_SQUARES = 12
MAX_ID_LEN = 64
MAX_NAME_LEN = 200


class DataError(Exception):
    """The packaged data is inconsistent (a bug in the package, raised at import)."""


def _load(name: str) -> Any:
    with open(os.path.join(_HERE, name), encoding="utf-8") as fh:
        return json.load(fh)


# --------------------------------------------------------------------------------------------
# game data


def _check(cond: bool, msg: str) -> None:
    if not cond:
        raise DataError(msg)


def validate_game_data(doc: dict) -> dict:
    """Validate ``game.json`` and return the compiled tables (raises :class:`DataError`)."""
    glyphs = doc["glyphs"]
    glyph_ids = [g["id"] for g in glyphs]
    _check(len(set(glyph_ids)) == len(glyph_ids), "duplicate glyph id")
    letter_to_glyph: dict[str, str] = {}
    for g in glyphs:
        _check(isinstance(g["tiles"], int) and g["tiles"] >= 0, f"bad tile count {g['id']}")
        for letter in g["letters"]:
            _check(letter not in letter_to_glyph, f"letter {letter} twice")
            letter_to_glyph[letter] = g["id"]
    bag = {g["id"]: g["tiles"] for g in glyphs}
    _check(sum(bag.values()) == 300, "the bag must hold 300 tiles")
    x_spelling = doc["x_spelling"]
    _check(all(x in bag for x in x_spelling), "bad X spelling")

    gods = doc["gods"]
    god_ids = [g["id"] for g in gods]
    _check(len(set(god_ids)) == len(god_ids) == 36, "36 distinct gods")
    for g in gods:
        spelled: list[str] = []
        for ch in g["name"].upper():
            if ch in "- ":
                continue
            if ch == "X":
                spelled += x_spelling
            else:
                _check(ch in letter_to_glyph, f"{g['id']}: letter {ch} has no glyph")
                spelled.append(letter_to_glyph[ch])
        _check(spelled == g["spelling"], f"{g['id']}: spelling does not match the name")
        _check(g["value"] == len(g["spelling"]) + 1, f"{g['id']}: value is tiles + 1")
        for glyph in set(g["spelling"]):
            _check(bag[glyph] >= g["spelling"].count(glyph), f"{g['id']}: bag too small")
    _check(sum(len(g["spelling"]) for g in gods) == 191, "191 tiles spell all gods")
    _check(sum(g["value"] for g in gods) == 227, "values add up to 227")
    sons = [g["id"] for g in gods if g["son_of_horus"]]
    _check(sorted(sons) == ["duamutef", "hapi", "imsety", "qebehsenuef"], "four sons of Horus")
    _check(doc["tiebreak_god"] in god_ids, "tie-break god")

    events = doc["events"]
    event_ids = [e["id"] for e in events]
    _check(len(set(event_ids)) == len(event_ids), "duplicate event id")
    _check(sum(e["count"] for e in events) == 40, "40 event cards")
    for e in events:
        _check(e["effect"]["kind"] in EFFECT_KINDS, f"unknown effect {e['id']}")
        _check(isinstance(e["effect"]["n"], int) and e["effect"]["n"] >= 1, "effect n")
    _check(len({e["effect"]["kind"] for e in events}) == len(events), "one card per effect")

    movement = doc["movement_cards"]
    _check(tuple(movement) == KINDS, "movement kinds in card order")
    _check(sum(movement.values()) == 110 and movement["eye"] == 14, "110 movement cards")
    _check(doc["holder_capacity"] == 20, "capacity 20")
    _check(doc["start"] == {"movement": 4, "gods": 3, "glyphs": 10}, "start hands")
    _check(doc["scarab_points"] == 5 and doc["draw_movement"] == 2, "constants")
    _check(doc["sons_bonus"] == {"2": 5, "3": 8, "4": 10}, "sons bonus")
    return doc


GAME_DATA = validate_game_data(_load("game.json"))

GLYPHS: list[str] = [g["id"] for g in GAME_DATA["glyphs"]]
GLYPH_INDEX = {g: i for i, g in enumerate(GLYPHS)}
BAG_COUNTS: dict[str, int] = {g["id"]: g["tiles"] for g in GAME_DATA["glyphs"]}
GODS: list[str] = [g["id"] for g in GAME_DATA["gods"]]
GOD = {g["id"]: g for g in GAME_DATA["gods"]}
#: spelling as a multiset {glyph: n} (glyph order of table 2.3)
SPELLING = {g["id"]: {x: g["spelling"].count(x) for x in GLYPHS if x in g["spelling"]}
            for g in GAME_DATA["gods"]}
SONS = frozenset(g["id"] for g in GAME_DATA["gods"] if g["son_of_horus"])
TIEBREAK_GOD: str = GAME_DATA["tiebreak_god"]
EVENTS: list[str] = [e["id"] for e in GAME_DATA["events"]]
EVENT = {e["id"]: e for e in GAME_DATA["events"]}
EVENT_COUNTS = {e["id"]: e["count"] for e in GAME_DATA["events"]}
MOVEMENT_COUNTS: dict[str, int] = dict(GAME_DATA["movement_cards"])
CAPACITY: int = GAME_DATA["holder_capacity"]
SCARAB_POINTS: int = GAME_DATA["scarab_points"]
SONS_BONUS = {int(k): v for k, v in GAME_DATA["sons_bonus"].items()}
START = GAME_DATA["start"]
DRAW_MOVEMENT: int = GAME_DATA["draw_movement"]


def canonical_movement(counts: dict[str, int] | None = None) -> list[str]:
    counts = MOVEMENT_COUNTS if counts is None else counts
    return [k for k in KINDS for _ in range(counts.get(k, 0))]


def canonical_glyphs(counts: dict[str, int] | None = None) -> list[str]:
    counts = BAG_COUNTS if counts is None else counts
    return [g for g in GLYPHS for _ in range(counts.get(g, 0))]


def canonical_events(counts: dict[str, int] | None = None) -> list[str]:
    counts = EVENT_COUNTS if counts is None else counts
    return [e for e in EVENTS for _ in range(counts.get(e, 0))]


# --------------------------------------------------------------------------------------------
# boards


class Board:
    """A validated map compiled for play."""

    def __init__(self, doc: dict) -> None:
        self.doc = doc
        self.id = doc["id"]
        self.nodes = {n["id"]: n for n in doc["nodes"]}
        self.start = next(n["id"] for n in doc["nodes"] if n["kind"] == "start")
        self.paths = {p["id"]: p for p in doc["paths"]}
        self.path_order = [p["id"] for p in doc["paths"]]
        self.adjacent: dict[str, list[str]] = {n: [] for n in self.nodes}
        for p in doc["paths"]:
            self.adjacent[p["a"]].append(p["id"])
            self.adjacent[p["b"]].append(p["id"])
        self.has_events = any(n["kind"] == "event" for n in doc["nodes"])

    def other_end(self, path_id: str, space: str) -> str:
        p = self.paths[path_id]
        return p["b"] if p["a"] == space else p["a"]


_ID_SCHEMA = {"type": "string", "minLength": 1, "maxLength": MAX_ID_LEN}
_NAME_SCHEMA = {"type": "string", "maxLength": MAX_NAME_LEN}
_COORD_SCHEMA = {"type": "integer", "minimum": -10 ** 6, "maximum": 10 ** 6}

#: JSON Schema of a map document (12.6); :func:`validate_board` checks the rules it cannot say.
BOARD_SCHEMA = {
    "type": "object",
    "x-error": {"code": "invalid_board"},
    "description": "a map (rules 12.6): node ids unique, exactly one start node, one pyramid "
                   "per God card in play, every path joining two distinct existing nodes (one "
                   "path per pair, ids unique) with 1 to 12 squares of the board's colours, "
                   "every node reachable from the start",
    "required": ["id", "nodes", "paths"],
    "additionalProperties": False,
    "properties": {
        "id": _ID_SCHEMA,
        "name": _NAME_SCHEMA,
        "colours": {"type": "array", "items": {"enum": list(COLOURS)}},
        "nodes": {"type": "array", "maxItems": MAX_NODES, "items": {
            "type": "object",
            "required": ["id", "kind"],
            "additionalProperties": False,
            "properties": {"id": _ID_SCHEMA, "name": _NAME_SCHEMA,
                           "kind": {"enum": ["start", "pyramid", "event"]},
                           "god": {"enum": GODS},
                           "ring": {"type": "string", "maxLength": MAX_ID_LEN},
                           "x": _COORD_SCHEMA, "y": _COORD_SCHEMA},
            "if": {"properties": {"kind": {"const": "pyramid"}}},
            "then": {"required": ["god"]},
            "else": {"not": {"required": ["god"]}},
        }},
        "paths": {"type": "array", "maxItems": MAX_PATHS, "items": {
            "type": "object",
            "required": ["id", "a", "b", "squares"],
            "additionalProperties": False,
            "properties": {"id": _ID_SCHEMA, "a": {"type": "string"}, "b": {"type": "string"},
                           "squares": {"type": "object", "additionalProperties": False,
                                       "properties": {c: {"type": "integer", "minimum": 0,
                                                          "maximum": MAX_PATH_SQUARES}
                                                      for c in COLOURS}}},
        }},
    },
}


def _bad(option: str, reason: str, message: str, **details: Any) -> InvalidOptions:
    return invalid("invalid_board", f"board.{option}" if option else "board", message,
                   reason=reason, **details)


def validate_board(doc: dict, gods_in_play: list[str] | None = None) -> dict:
    """The normalised copy of a map document that passed :data:`BOARD_SCHEMA`, after the rules
    of 12.6 the schema cannot say (raises :class:`InvalidOptions` ``invalid_board``).

    ``gods_in_play`` are the God cards that may be drawn in this game: each needs exactly one
    pyramid node (default: every God card of the game data).
    """
    gods_in_play = GODS if gods_in_play is None else gods_in_play
    colours = doc.get("colours", list(COLOURS))
    out_nodes: list[dict] = []
    seen: set[str] = set()
    pyramid_of: dict[str, str] = {}
    for i, n in enumerate(doc["nodes"]):
        nid = n["id"]
        if nid in seen:
            raise _bad(f"nodes.{i}.id", "duplicate_node", "node ids must be unique")
        seen.add(nid)
        node = {"id": nid, "name": n.get("name", nid), "kind": n["kind"]}
        if n["kind"] == "pyramid":
            if n["god"] in pyramid_of:
                raise _bad(f"nodes.{i}.god", "duplicate_god", "a God card has two pyramid nodes",
                           god=n["god"])
            pyramid_of[n["god"]] = nid
            node["god"] = n["god"]
        node.update((key, n[key]) for key in ("ring", "x", "y") if key in n)
        out_nodes.append(node)
    starts = [n["id"] for n in out_nodes if n["kind"] == "start"]
    if len(starts) != 1:
        raise _bad("nodes", "start_count", "a board has exactly one start node",
                   starts=len(starts))
    for god in gods_in_play:
        if god not in pyramid_of:
            raise _bad("nodes", "god_missing", "a God card in play has no pyramid", god=god)
    out_paths: list[dict] = []
    path_ids: set[str] = set()
    pairs: set[tuple[str, str]] = set()
    adj: dict[str, list[str]] = {n["id"]: [] for n in out_nodes}
    for i, p in enumerate(doc["paths"]):
        pid, a, b = p["id"], p["a"], p["b"]
        if pid in path_ids:
            raise _bad(f"paths.{i}.id", "duplicate_path_id", "path ids must be unique")
        path_ids.add(pid)
        for end in ("a", "b"):
            if p[end] not in seen:
                raise _bad(f"paths.{i}.{end}", "unknown_node", "a path joins two existing nodes")
        if a == b:
            raise _bad(f"paths.{i}", "self_loop", "a path joins two distinct nodes")
        key = (a, b) if a < b else (b, a)
        if key in pairs:
            raise _bad(f"paths.{i}", "duplicate_path", "two paths join the same pair of nodes")
        pairs.add(key)
        squares = p["squares"]
        for c in squares:
            if c not in colours:
                raise _bad(f"paths.{i}.squares.{c}", "not_a_board_colour",
                           "path colour is not a board colour")
        sq = {c: squares[c] for c in COLOURS if squares.get(c, 0)}
        total = sum(sq.values())
        if total < 1:
            raise _bad(f"paths.{i}.squares", "empty_path", "a path has at least one square")
        if total > MAX_PATH_SQUARES:
            raise _bad(f"paths.{i}.squares", "too_many_squares", "a path is too long",
                       max_squares=MAX_PATH_SQUARES)
        out_paths.append({"id": pid, "a": a, "b": b, "squares": sq})
        adj[a].append(b)
        adj[b].append(a)
    reached = {starts[0]}
    queue = deque([starts[0]])
    while queue:
        for nxt in adj[queue.popleft()]:
            if nxt not in reached:
                reached.add(nxt)
                queue.append(nxt)
    for god in gods_in_play:
        if pyramid_of[god] not in reached:
            raise _bad("paths", "god_unreachable", "a pyramid cannot be reached from the start",
                       god=god, node=pyramid_of[god])
    for n in out_nodes:
        if n["id"] not in reached:
            raise _bad("paths", "not_connected", "the board graph is not connected", node=n["id"])
    return {"id": doc["id"], "name": doc.get("name", doc["id"]),
            "colours": [c for c in COLOURS if c in colours], "nodes": out_nodes,
            "paths": out_paths}


def _builtin_board() -> dict:
    raw = _load("nile-rings-v1.json")
    try:
        check(BOARD_SCHEMA, raw)
        doc = validate_board(raw)
    except InvalidOptions as exc:  # pragma: no cover - packaging bug
        raise DataError(f"built-in board invalid: {exc.code} {exc.details}") from exc
    _check(doc == raw, "built-in board is not in normal form")
    _check(len(doc["nodes"]) == 45 and len(doc["paths"]) == 96, "45 spaces, 96 paths")
    totals = {c: sum(p["squares"].get(c, 0) for p in doc["paths"]) for c in COLOURS}
    _check(totals == {"light": 71, "darkness": 67, "nature": 69, "water": 72}, "square totals")
    p13 = next(p for p in doc["paths"] if p["id"] == "p13")
    _check(p13 == {"id": "p13", "a": "horus", "b": "anubis",
                   "squares": {"light": 2, "water": 4}}, "Horus-Anubis path")
    return doc


BUILTIN_BOARD_DOC = _builtin_board()
BUILTIN_BOARD = Board(BUILTIN_BOARD_DOC)
BOARDS = {BUILTIN_BOARD.id: BUILTIN_BOARD}
