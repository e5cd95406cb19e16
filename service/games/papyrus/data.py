"""Papyrus game data: loaded once at import from ``data/*.json`` and validated.

``game.json`` holds the alphabet and bag (``glyphs``), the God cards, the Event cards, the
movement cards and the scoring constants (rules section 12.6). ``nile-rings-v1.json`` is the
built-in board (section 2.6). A board supplied by a client (``options.board``) goes through the
very same :func:`validate_board` and is rejected with a precise :class:`InvalidOptions` code.
"""

from __future__ import annotations

import json
import os
from collections import deque
from typing import Any

from ...engine import InvalidOptions, is_int

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


def _bad(code: str, message: str, **details: Any) -> InvalidOptions:
    return InvalidOptions(code, message, details or None)


def _is_id(v: Any) -> bool:
    return isinstance(v, str) and 0 < len(v) <= MAX_ID_LEN


def validate_board(doc: Any, gods_in_play: list[str] | None = None) -> dict:
    """Validate a map document (12.6) and return its normalised copy.

    ``gods_in_play`` are the God cards that may be drawn in this game: each needs exactly one
    pyramid node (default: every God card of the game data). Raises :class:`InvalidOptions`.
    """
    gods_in_play = GODS if gods_in_play is None else gods_in_play
    if not isinstance(doc, dict):
        raise _bad("board_malformed", "a board is an object with id, nodes and paths")
    allowed = {"id", "name", "colours", "nodes", "paths"}
    extra = sorted(k for k in doc if k not in allowed)
    if extra:
        raise _bad("board_malformed", "unknown board field", field=str(extra[0])[:MAX_ID_LEN])
    if not _is_id(doc.get("id")):
        raise _bad("board_malformed", "board id must be a non-empty string", field="id")
    name = doc.get("name", doc["id"])
    if not isinstance(name, str) or len(name) > MAX_NAME_LEN:
        raise _bad("board_malformed", "board name must be a string", field="name")
    colours = doc.get("colours", list(COLOURS))
    if not isinstance(colours, list) or not all(isinstance(c, str) for c in colours):
        raise _bad("board_malformed", "colours must be a list of colour names", field="colours")
    for c in colours:
        if c not in COLOURS:
            raise _bad("board_invalid_colour", "unknown colour", colour=c[:MAX_ID_LEN])
    nodes = doc.get("nodes")
    paths = doc.get("paths")
    if not isinstance(nodes, list) or not isinstance(paths, list):
        raise _bad("board_malformed", "nodes and paths must be lists")
    if len(nodes) > MAX_NODES or len(paths) > MAX_PATHS:
        raise _bad("board_too_large", "too many nodes or paths", max_nodes=MAX_NODES,
                   max_paths=MAX_PATHS)
    out_nodes: list[dict] = []
    seen: set[str] = set()
    pyramid_of: dict[str, str] = {}
    starts = 0
    for i, n in enumerate(nodes):
        if not isinstance(n, dict):
            raise _bad("board_malformed", "a node is an object", node_index=i)
        extra = [k for k in n if k not in {"id", "name", "kind", "god", "ring", "x", "y"}]
        if extra:
            raise _bad("board_malformed", "unknown node field", node_index=i)
        nid = n.get("id")
        if not _is_id(nid):
            raise _bad("board_malformed", "node id must be a non-empty string", node_index=i)
        if nid in seen:
            raise _bad("board_duplicate_node", "node ids must be unique", node=nid)
        seen.add(nid)
        kind = n.get("kind")
        if kind not in ("start", "pyramid", "event"):
            raise _bad("board_invalid_node_kind", "node kind is start, pyramid or event",
                       node=nid)
        node = {"id": nid, "name": n.get("name", nid), "kind": kind}
        if not isinstance(node["name"], str) or len(node["name"]) > MAX_NAME_LEN:
            raise _bad("board_malformed", "node name must be a string", node=nid)
        if kind == "start":
            starts += 1
        if kind == "pyramid":
            god = n.get("god")
            if not isinstance(god, str) or god not in GOD:
                raise _bad("board_unknown_god", "a pyramid node must name a God card",
                           node=nid)
            if god in pyramid_of:
                raise _bad("board_duplicate_god", "a God card has two pyramid nodes", god=god)
            pyramid_of[god] = nid
            node["god"] = god
        elif "god" in n:
            raise _bad("board_malformed", "only pyramid nodes name a god", node=nid)
        if "ring" in n:
            if not isinstance(n["ring"], str) or len(n["ring"]) > MAX_ID_LEN:
                raise _bad("board_malformed", "ring must be a string", node=nid)
            node["ring"] = n["ring"]
        for axis in ("x", "y"):
            if axis in n:
                if not is_int(n[axis]) or not -10**6 <= n[axis] <= 10**6:
                    raise _bad("board_malformed", "coordinates are integers", node=nid)
                node[axis] = n[axis]
        out_nodes.append(node)
    if starts != 1:
        raise _bad("board_start_count", "a board has exactly one start node", starts=starts)
    for god in gods_in_play:
        if god not in pyramid_of:
            raise _bad("board_god_missing", "a God card in play has no pyramid", god=god)
    out_paths: list[dict] = []
    path_ids: set[str] = set()
    pairs: set[tuple[str, str]] = set()
    adj: dict[str, list[str]] = {n["id"]: [] for n in out_nodes}
    for i, p in enumerate(paths):
        if not isinstance(p, dict) or set(p) - {"id", "a", "b", "squares"}:
            raise _bad("board_malformed", "a path is {id, a, b, squares}", path_index=i)
        pid = p.get("id")
        if not _is_id(pid):
            raise _bad("board_malformed", "path id must be a non-empty string", path_index=i)
        if pid in path_ids:
            raise _bad("board_duplicate_path_id", "path ids must be unique", path=pid)
        path_ids.add(pid)
        a, b = p.get("a"), p.get("b")
        for end in (a, b):
            if not isinstance(end, str) or end not in seen:
                raise _bad("board_unknown_node", "a path joins two existing nodes", path=pid)
        if a == b:
            raise _bad("board_self_loop", "a path joins two distinct nodes", path=pid)
        key = (a, b) if a < b else (b, a)
        if key in pairs:
            raise _bad("board_duplicate_path", "two paths join the same pair of nodes",
                       path=pid)
        pairs.add(key)
        squares = p.get("squares")
        if not isinstance(squares, dict):
            raise _bad("board_malformed", "squares is an object colour -> count", path=pid)
        sq: dict[str, int] = {}
        for c, v in squares.items():
            if c not in COLOURS or c not in colours:
                raise _bad("board_invalid_colour", "path colour is not a board colour",
                           path=pid, colour=str(c)[:MAX_ID_LEN])
            if not is_int(v) or v < 0 or v > MAX_PATH_SQUARES:
                raise _bad("board_invalid_squares", "square counts are small integers",
                           path=pid)
        for c in COLOURS:
            if squares.get(c, 0):
                sq[c] = squares[c]
        total = sum(sq.values())
        if total < 1:
            raise _bad("board_empty_path", "a path has at least one square", path=pid)
        if total > MAX_PATH_SQUARES:
            raise _bad("board_invalid_squares", "a path is too long", path=pid,
                       max_squares=MAX_PATH_SQUARES)
        out_paths.append({"id": pid, "a": a, "b": b, "squares": sq})
        adj[a].append(b)
        adj[b].append(a)
    start = next(n["id"] for n in out_nodes if n["kind"] == "start")
    reached = {start}
    queue = deque([start])
    while queue:
        for nxt in adj[queue.popleft()]:
            if nxt not in reached:
                reached.add(nxt)
                queue.append(nxt)
    for god in gods_in_play:
        if pyramid_of[god] not in reached:
            raise _bad("board_god_unreachable", "a pyramid cannot be reached from the start",
                       god=god, node=pyramid_of[god])
    for n in out_nodes:
        if n["id"] not in reached:
            raise _bad("board_not_connected", "the board graph is not connected", node=n["id"])
    return {"id": doc["id"], "name": name, "colours": [c for c in COLOURS if c in colours],
            "nodes": out_nodes, "paths": out_paths}


def _builtin_board() -> dict:
    raw = _load("nile-rings-v1.json")
    try:
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
