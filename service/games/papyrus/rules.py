"""Papyrus The Game (type ``papyrus``): rules spec ``shared/rules/papyrus.md``.

Standard game (2-5 seats on the board of section 2.6 or a client map) and the solo variant
(section 10: 1 seat, or its 2-5 seat form). Data (alphabet and bag, God cards, Event cards,
movement cards, the built-in board) lives in ``data/*.json`` and is validated at import by
:mod:`.data`.

Canonical orders (every shuffle starts from one of these; ``rng.shuffle`` is the engine's
Fisher-Yates from the top index down; index 0 is the top of a deck / the next tile of the bag):

* movement deck: the kinds in card order light, darkness, nature, water, eye, each repeated as
  often as its count (24, 24, 24, 24, 14);
* God deck: the 36 god ids in the order of table 2.4 (amon-ra, hathor, ..., ptah);
* event deck: the event ids in the order of table 2.5, each repeated count times;
* bag: the glyph ids in the order of table 2.3, each repeated ``tiles`` times.

Reshuffles list the pile in the same canonical order (restricted to its contents) first: the
movement discard pile, the glyph discard pile (into the bag), the event discard pile.

Exact sequence of rng calls:

1. ``create``, standard variant: ``rng.shuffle`` of the movement deck, then of the God deck, then
   of the event deck, then of the bag, each skipped when ``options.setup`` gives that order
   (``setup.god_deck`` is a permutation of all 36 ids; the first ``god_deck_size`` are in play,
   the shuffle likewise shuffles all 36 and keeps the first ``god_deck_size``). Solo variant:
   only the God deck, then the bag (same skipping rule). Dealing, seat 0 first, is from the tops
   and uses no randomness.
2. During play the only rng calls are reshuffles, each one ``rng.shuffle`` of the canonical
   listing of the discard pile, made at the moment a draw finds its pile empty and the discard
   pile non-empty: movement (draw_movement, Gift of the Nile), bag (exchange from the bag,
   conquest refill, Scribe's Gift, Temple Offering on an empty market, Wisdom of Thoth, solo
   purchase), event deck (arrival on an Event space). The reshuffled order is written into the
   ``MovementReshuffled`` / ``BagRefilled`` / ``EventDeckReshuffled`` event.

Events are fine grained (see :meth:`Papyrus.apply`); every random outcome is in them.

Turn limit (spec 12.1, ``turn_limit``; not part of the source rules): after that many turns in
total (every seat's, skipped and interrupted turns included) the game ends as if the final round
had just finished (``GameEnded{reason: "turn_limit"}``, ranked by the usual section 9 key). In
the solo variant a win is scored after the last God card is formed (spec 10.1), so a game the
limit cut short has no winner: a low limit is not a way to beat the Pharaoh.
The default, :data:`DEFAULT_TURN_LIMIT` = 2,000 turns, is 3 times the longest game the built-in
bots were measured to play (``bench/game_lengths.py``, 2026-12-02: 100 of 102 heuristic games of
1-5 seats, standard and solo, ended after 298-600 turns, 2 two-seat ones looped past 3,900; 2
two-seat mcts games at 50 iterations a decision ended after 498 and 670). Without a cap a table
of ``random`` bots never ends (random play never conquers). 0 (no cap) is refused when a seat
is a bot's (``invalid_option``, ``details.reason`` ``bots_need_a_turn_limit``). At 2,000 turns
a game of random bots logs about 8,000 events (standard) or 13,800 (solo), under the server's
default event cap (``CARTOUCHE_MAX_EVENTS_PER_GAME``, 20,000).

Resignation (spec 12.4; :meth:`Papyrus.resign`, called by the shell when a seat forfeits):

* one ``PlayerResigned`` event (seat = the resigner, data ``gods`` / ``movement`` / ``glyphs`` /
  ``dropped``): the seat gets ``resigned = True`` and leaves the turn order; its God cards in hand
  join ``gods_out`` (out of the game, never reshuffled, unseen like the cards left out at
  setup), its movement cards go to the movement discard pile, its tiles to the glyph discard
  pile, its pawn is removed (``pawn = None``), a pending skip is cleared, it leaves the
  final-round list, and a pending decision of the seat (event decision or capacity discard) is
  dropped (``dropped`` names its kind). Conquests stay (score, scarabs, owners).
* ``visible``: other seats and spectators see ``gods`` as a count only (God cards in hand are
  secret, section 11); the movement cards and tiles land on public discard piles, so their
  counts stay visible.
* resigning on one's turn: an Event card still in play goes to the event discard pile
  (``EventDiscarded``), then ``TurnEnded`` (the interrupted turn counts for ``turn_limit``) and
  the turn passes to the next non-resigned seat (or the next final-round seat, or the game ends
  when the final round or the turn limit is done). Off turn, the current turn goes on.
* standard game: when one non-resigned seat is left, ``GameEnded{reason: "resignation"}`` follows
  at once and that seat wins.
* solo variant, 2-5 seats (10.2): every player plays alone against the Pharaoh, so the others
  go on even when a single one is left; the game ends (``GameEnded{reason: "resignation"}``)
  only when nobody is left. Resigning is a loss (10.1): a resigned seat is never a winner.
  A 1-seat solo game returns None (the shell ends it).
* ``result``: the non-resigned seats are ranked as before (competition ranking on the section 9
  key, or the solo margin key); the resigned seats come after them, ordered among themselves by
  the same key (score first) with competition ranking.

No randomness is used (``resign`` has no rng): nothing is drawn or reshuffled.
"""

from __future__ import annotations

import math
from typing import Any, Sequence

from ...engine import (ALL, Game, InvalidOptions, Outcome, clone,
                       competition_ranks, illegal, is_int, redact, sees)
from ...engine.actions import action_type, check_fields, invalid_field
from ...engine.options import invalid
from . import data as D
from . import schemas
from .data import (BAG_COUNTS, CAPACITY, COLOURS, DRAW_MOVEMENT, EVENT, EVENT_COUNTS, EVENTS,
                   GLYPH_INDEX, GLYPHS, GOD, GODS, KINDS, MOVEMENT_COUNTS, SCARAB_POINTS, SONS,
                   SONS_BONUS, SPELLING, START, TIEBREAK_GOD, BOARD_SCHEMA, Board,
                   canonical_events, canonical_glyphs, canonical_movement, validate_board)

__all__ = ["GAME", "Papyrus"]

BUILTIN_BOARD_ID = D.BUILTIN_BOARD.id
MAX_TURN_LIMIT = 1_000_000
#: ``turn_limit``'s default: every game ends (see the module docstring, "Turn limit").
DEFAULT_TURN_LIMIT = 2_000
_board_cache: dict[str, Board] = {}


def _zero(keys: Sequence[str]) -> dict[str, int]:
    return {k: 0 for k in keys}


def _glyph_list(ms: dict[str, int]) -> list[str]:
    return [g for g in GLYPHS for _ in range(ms.get(g, 0))]


def _count(items: list[str], keys: Sequence[str]) -> dict[str, int]:
    out = _zero(keys)
    for x in items:
        out[x] += 1
    return out


def _multisets(counts: list[tuple[str, int]], k: int) -> list[list[str]]:
    """Every multiset of size ``k`` drawn from ``counts`` (in the given key order)."""
    out: list[list[str]] = []

    def rec(i: int, left: int, acc: list[str]) -> None:
        if left == 0:
            out.append(list(acc))
            return
        if i == len(counts):
            return
        key, have = counts[i]
        for take in range(min(have, left), -1, -1):
            rec(i + 1, left - take, acc + [key] * take)

    rec(0, k, [])
    out.sort(key=lambda ms: [GLYPH_INDEX.get(x, KINDS.index(x) if x in KINDS else 0)
                             for x in ms])
    return out


GLYPH_SCHEMA = {"type": "string", "enum": list(GLYPHS)}
CARDS_SCHEMA = {"type": "object", "additionalProperties": False,
                "properties": {k: {"type": "integer", "minimum": 0} for k in KINDS}}


#: The pending decisions whose options are the seat's hidden cards (Sandstorm) or tiles.
HIDDEN_CHOICES = frozenset({"sandstorm", "capacity", "wisdom-of-thoth", "tomb-robbers"})


class Papyrus(Game):
    type_id = "papyrus"
    catalog_position = 5
    name = "Papyrus The Game"
    min_players = 1
    max_players = 5
    options_schema = {
        "type": "object",
        "properties": {
            "variant": {"type": "string", "enum": ["standard", "solo"], "default": "standard"},
            "first_player": {"type": "integer", "minimum": 0, "maximum": 4, "default": 0},
            "god_deck_size": {"type": "integer", "minimum": 3, "maximum": 36, "default": 36,
                              "description": "at least 3 x players"},
            "board": {"type": ["string", "object"], "x-error": {"code": "invalid_board"},
                      "description": "the id of the built-in board, or a map document",
                      "if": {"type": "string"}, "then": {"enum": [BUILTIN_BOARD_ID]},
                      "else": BOARD_SCHEMA, "default": BUILTIN_BOARD_ID},
            "turn_limit": {"type": "integer", "minimum": 0, "maximum": MAX_TURN_LIMIT,
                           "default": DEFAULT_TURN_LIMIT,
                           "description": "the game ends after this many turns (0: never)"},
            "setup": {"type": ["object", "null"], "x-error": {"code": "invalid_setup"},
                      "additionalProperties": False, "properties": {
                          "movement_deck": {
                              "type": "array", "items": {"type": "string", "enum": list(KINDS)},
                              "minItems": 110, "maxItems": 110,
                              "description": "the 110 movement cards by kind, top first"},
                          "god_deck": {
                              "type": "array", "items": {"type": "string", "enum": list(GODS)},
                              "minItems": 36, "maxItems": 36, "uniqueItems": True,
                              "description": "the 36 god ids, top first"},
                          "event_deck": {
                              "type": "array", "items": {"type": "string", "enum": list(EVENTS)},
                              "minItems": 40, "maxItems": 40,
                              "description": "the 40 event cards by id, top first"},
                          "bag": {"type": "array", "items": GLYPH_SCHEMA, "minItems": 300,
                                  "maxItems": 300,
                                  "description": "the 300 glyphs, first drawn first"}}},
        },
        "additionalProperties": False,
    }
    #: A game cut short (a turn limit under the default, fewer God cards) or on a map of the
    #: creator's is not comparable with the others: not rated.
    unrated_options = {"anyOf": [
        {"required": ["turn_limit"],
         "properties": {"turn_limit": {"minimum": 1, "maximum": DEFAULT_TURN_LIMIT - 1}}},
        {"required": ["god_deck_size"], "properties": {"god_deck_size": {"maximum": 35}}},
        {"required": ["board"], "properties": {"board": {"type": "object"}}},
    ]}
    variants = [
        {"id": "standard", "name": "Standard game (2-5 players)",
         "options": {"variant": "standard"}},
        {"id": "solo", "name": "Solo variant (1 player, or 2-5 each against the Pharaoh)",
         "options": {"variant": "solo"}},
    ]
    action_schemas = {
        "draw_movement": {"type": "object", "required": ["type"], "additionalProperties": False,
                          "properties": {"type": {"const": "draw_movement"}}},
        "move": {"type": "object", "required": ["type", "path", "cards"],
                 "additionalProperties": False,
                 "properties": {"type": {"const": "move"}, "path": {"type": "string"},
                                "cards": CARDS_SCHEMA}},
        "exchange": {"type": "object", "required": ["type", "pay", "take"],
                     "additionalProperties": False,
                     "properties": {"type": {"const": "exchange"}, "pay": GLYPH_SCHEMA,
                                    "take": {"type": "string",
                                             "enum": ["bag"] + list(GLYPHS)}}},
        "event_choice": {"type": "object", "required": ["type"], "additionalProperties": False,
                         "maxProperties": 2, "minProperties": 2,
                         "properties": {
                             "type": {"const": "event_choice"},
                             "take": GLYPH_SCHEMA,
                             "return": {"oneOf": [GLYPH_SCHEMA,
                                                  {"type": "array", "items": GLYPH_SCHEMA,
                                                   "minItems": 1, "maxItems": 2}]},
                             "path": {"type": ["string", "null"]},
                             "discard": CARDS_SCHEMA,
                             "god": {"type": ["string", "null"]}}},
        "discard_excess": {"type": "object", "required": ["type", "glyphs"],
                           "additionalProperties": False,
                           "properties": {"type": {"const": "discard_excess"},
                                          "glyphs": {"type": "array", "items": GLYPH_SCHEMA}}},
        "form_god": {"type": "object", "required": ["type", "god"], "additionalProperties": False,
                     "properties": {"type": {"const": "form_god"},
                                    "god": {"type": "string", "enum": list(GODS)}}},
        "buy_glyph": {"type": "object", "required": ["type"], "additionalProperties": False,
                      "properties": {"type": {"const": "buy_glyph"}}},
        "discard_glyph": {"type": "object", "required": ["type", "glyph"],
                          "additionalProperties": False,
                          "properties": {"type": {"const": "discard_glyph"},
                                         "glyph": GLYPH_SCHEMA}},
    }

    state_schema = schemas.STATE
    event_schemas = schemas.EVENTS

    STANDARD_ACTIONS = ("draw_movement", "move", "exchange", "event_choice", "discard_excess")
    SOLO_ACTIONS = ("form_god", "buy_glyph", "discard_glyph")

    # ------------------------------------------------------------------------------------
    # options

    def normalize_options(self, options: dict, players: Sequence[dict]) -> dict:
        checked = self.checked_options(options)
        n = len(players)
        variant = checked["variant"]
        low = 1 if variant == "solo" else 2
        if not low <= n <= 5:
            raise InvalidOptions("invalid_player_count",
                                 f"the {variant} variant takes {low}-5 players",
                                 {"option": "variant", "players": n, "min": low, "max": 5})
        first, size = checked["first_player"], checked["god_deck_size"]
        if first >= n:
            raise invalid("invalid_option", "first_player", "must be a seat", reason="not_a_seat",
                          max=n - 1)
        if size < 3 * n:
            raise invalid("invalid_option", "god_deck_size", "must be at least 3 x players",
                          reason="too_few_for_players", min=3 * n)
        if checked["turn_limit"] == 0 and any(p.get("bot") for p in players):
            raise invalid("invalid_option", "turn_limit", "0 (no cap) only when every seat is "
                          "human", reason="bots_need_a_turn_limit", min=1)
        setup = checked.get("setup") or {}
        for key, counts in (("movement_deck", MOVEMENT_COUNTS), ("event_deck", EVENT_COUNTS),
                            ("bag", BAG_COUNTS)):
            if key in setup and _count(setup[key], list(counts)) != counts:
                raise invalid("invalid_setup", f"setup.{key}",
                              "is not a permutation of the components",
                              reason="not_a_permutation")
        in_play = setup["god_deck"][:size] if "god_deck" in setup else list(GODS)
        board = checked["board"]
        out = {"variant": variant, "first_player": first, "god_deck_size": size,
               "board": board if isinstance(board, str) else validate_board(board, in_play),
               "turn_limit": checked["turn_limit"]}
        if setup:
            out["setup"] = {key: list(value) for key, value in setup.items()}
        return out

    # ------------------------------------------------------------------------------------
    # creation

    def initial(self, players: Sequence[dict], options: dict) -> dict:
        n = len(players)
        solo = options["variant"] == "solo"
        board = None if options["board"] == BUILTIN_BOARD_ID else options["board"]
        start = None if solo else self._board_from(board).start
        return {
            "variant": options["variant"],
            "n": n,
            "names": [p.get("name") for p in players],
            "first_player": options["first_player"],
            "god_deck_size": options["god_deck_size"],
            "turn_limit": options["turn_limit"],
            "setup": "custom" if options.get("setup") else "standard",
            "board": board,
            "seats": [{"pawn": start, "movement": _zero(KINDS), "gods": [],
                       "holder": _zero(GLYPHS), "score": 0, "scarabs": 0, "conquered": [],
                       "skip": False, "paid": 0, "resigned": False} for _ in range(n)],
            "movement_deck": [], "movement_discard": _zero(KINDS),
            "god_deck": [], "gods_out": [],
            "event_deck": [], "event_discard": _zero(EVENTS), "event_card": None,
            "bag": [], "glyph_discard": _zero(GLYPHS), "market": _zero(GLYPHS),
            "owners": {}, "current": None, "pending": None, "final": None, "turns": 0,
            "over": False, "end_reason": None, "options_setup": options.get("setup") or {},
        }

    def create(self, state: dict, rng) -> tuple[list[dict], dict]:
        setup = state.get("options_setup") or {}
        solo = state["variant"] == "solo"
        ctx = Outcome(self, state, rng)

        def order(key: str, canonical: list[str]) -> list[str]:
            if key in setup:
                return list(setup[key])
            return rng.shuffled(canonical)

        movement = [] if solo else order("movement_deck", canonical_movement())
        gods = order("god_deck", list(GODS))
        events = [] if solo else order("event_deck", canonical_events())
        bag = order("bag", canonical_glyphs())
        size = state["god_deck_size"]
        ctx.emit("DecksShuffled", {"movement_deck": movement, "god_deck": gods[:size],
                                   "gods_out": gods[size:], "event_deck": events, "bag": bag})
        m, g, t = START["movement"], START["gods"], START["glyphs"]
        for seat in range(state["n"]):
            s = ctx.state
            ctx.emit("HandDealt", {"movement": [] if solo else s["movement_deck"][:m],
                                   "gods": s["god_deck"][:g], "glyphs": s["bag"][:t]}, seat)
        ctx.emit("TurnStarted", {}, state["first_player"])
        return ctx.done()

    # ------------------------------------------------------------------------------------
    # helpers on states

    def _board_from(self, doc: dict | None) -> Board:
        if doc is None:
            return D.BUILTIN_BOARD
        key = repr(doc)
        board = _board_cache.get(key)
        if board is None:
            if len(_board_cache) > 64:
                _board_cache.clear()
            board = _board_cache[key] = Board(doc)
        return board

    def board(self, state: dict) -> Board:
        return self._board_from(state["board"])

    @staticmethod
    def _resigned(state: dict, i: int) -> bool:
        """Seat ``i`` has resigned (states built without the flag, e.g. by a bot's
        determinization, still mark a standard-game resigner by its removed pawn)."""
        p = state["seats"][i]
        return bool(p.get("resigned")) or (state["variant"] != "solo" and p["pawn"] is None)

    def _next_active(self, state: dict, cur: int) -> int | None:
        n = state["n"]
        for i in range(1, n + 1):
            c = (cur + i) % n
            if not self._resigned(state, c):
                return c
        return None

    @staticmethod
    def _has_spelling(holder: dict[str, int], god: str) -> bool:
        return all(holder[g] >= k for g, k in SPELLING[god].items())

    # ------------------------------------------------------------------------------------
    # apply

    def apply(self, state: dict, ev: dict) -> None:
        t, d, seat = ev["type"], ev["data"], ev.get("seat")
        s = state
        p = s["seats"][seat] if isinstance(seat, int) else None
        if t == "DecksShuffled":
            s["movement_deck"] = list(d["movement_deck"])
            s["god_deck"] = list(d["god_deck"])
            s["gods_out"] = list(d["gods_out"])
            s["event_deck"] = list(d["event_deck"])
            s["bag"] = list(d["bag"])
            s["options_setup"] = None
        elif t == "HandDealt":
            del s["movement_deck"][:len(d["movement"])]
            del s["god_deck"][:len(d["gods"])]
            del s["bag"][:len(d["glyphs"])]
            for k in d["movement"]:
                p["movement"][k] += 1
            p["gods"].extend(d["gods"])
            for x in d["glyphs"]:
                p["holder"][x] += 1
        elif t == "TurnStarted":
            s["current"] = seat
            if s["final"] and seat in s["final"]["remaining"]:
                s["final"]["remaining"].remove(seat)
        elif t == "TurnSkipped":
            s["current"] = seat
            p["skip"] = False
            s["turns"] += 1
            if s["final"] and seat in s["final"]["remaining"]:
                s["final"]["remaining"].remove(seat)
        elif t == "TurnEnded":
            s["turns"] += 1
        elif t == "MovementDrawn":
            del s["movement_deck"][:len(d["cards"])]
            for k in d["cards"]:
                p["movement"][k] += 1
        elif t == "MovementReshuffled":
            s["movement_deck"] = list(d["deck"])
            s["movement_discard"] = _zero(KINDS)
        elif t in ("PawnMoved", "MovementDiscarded"):
            for k, v in d["cards"].items():
                p["movement"][k] -= v
                s["movement_discard"][k] += v
            if t == "PawnMoved":
                p["pawn"] = d["to"]
        elif t in ("GodConquered", "GodFormed"):
            god = d["god"]
            s["owners"][god] = seat
            p["score"] += d["value"]
            p["scarabs"] += 1
            p["conquered"].append(god)
            p["gods"].remove(god)
            for x in d["spelling"]:
                p["holder"][x] -= 1
                s["glyph_discard"][x] += 1
        elif t == "GodDrawn":
            p["gods"].append(s["god_deck"].pop(0))
        elif t == "GodSwapped":
            p["gods"].remove(d["put"])
            s["god_deck"].append(d["put"])
            p["gods"].append(s["god_deck"].pop(0))
        elif t == "GlyphsDrawn":
            del s["bag"][:len(d["glyphs"])]
            for x in d["glyphs"]:
                p["holder"][x] += 1
        elif t == "BagRefilled":
            s["bag"] = list(d["bag"])
            s["glyph_discard"] = _zero(GLYPHS)
        elif t == "GlyphsToMarket":
            for x in d["glyphs"]:
                p["holder"][x] -= 1
                s["market"][x] += 1
        elif t == "GlyphsDiscarded":
            for x in d["glyphs"]:
                p["holder"][x] -= 1
                s["glyph_discard"][x] += 1
        elif t == "GlyphTakenFromMarket":
            s["market"][d["glyph"]] -= 1
            p["holder"][d["glyph"]] += 1
        elif t == "GlyphBought":
            p["paid"] += 1
        elif t == "EventDrawn":
            s["event_deck"].pop(0)
            s["event_card"] = d["card"]
        elif t == "EventDeckReshuffled":
            s["event_deck"] = list(d["deck"])
            s["event_discard"] = _zero(EVENTS)
        elif t == "EventDiscarded":
            s["event_discard"][d["card"]] += 1
            s["event_card"] = None
        elif t == "SkipNextTurn":
            p["skip"] = True
        elif t == "DecisionPending":
            s["pending"] = {"seat": seat, **d}
        elif t == "DecisionResolved":
            s["pending"] = None
        elif t == "FinalRoundStarted":
            s["final"] = {"trigger": seat, "remaining": list(d["seats"])}
        elif t == "PlayerResigned":
            p["resigned"] = True
            s["gods_out"].extend(p["gods"])
            p["gods"] = []
            for k, v in p["movement"].items():
                s["movement_discard"][k] += v
            p["movement"] = _zero(KINDS)
            for x, v in p["holder"].items():
                s["glyph_discard"][x] += v
            p["holder"] = _zero(GLYPHS)
            p["pawn"] = None
            p["skip"] = False
            if s["pending"] is not None and s["pending"]["seat"] == seat:
                s["pending"] = None
            if s["final"] and seat in s["final"]["remaining"]:
                s["final"]["remaining"].remove(seat)
        elif t == "GameEnded":
            s["over"] = True
            s["end_reason"] = d["reason"]
            s["pending"] = None
        else:  # pragma: no cover - decide never emits anything else
            raise ValueError(f"unknown event {t}")

    # ------------------------------------------------------------------------------------
    # questions

    def is_over(self, state: dict) -> bool:
        return bool(state["over"])

    def awaiting(self, state: dict) -> list[int]:
        if state["over"] or state["current"] is None:
            return []
        seat = state["pending"]["seat"] if state["pending"] is not None else state["current"]
        if self._resigned(state, seat):  # pragma: no cover - resign passes the turn on
            return []
        return [seat]

    def not_awaited_reason(self, state: dict, seat: int) -> str:
        if state["over"]:
            return "game_over"
        return "not_your_turn"

    # ------------------------------------------------------------------------------------
    # legal actions

    def legal_actions(self, state: dict, seat: int) -> list[dict]:
        if seat not in self.awaiting(state):
            return []
        if state["variant"] == "solo":
            return self._legal_solo(state, seat)
        pend = state["pending"]
        if pend is not None:
            return self._legal_pending(state, seat, pend)
        p = state["seats"][seat]
        out: list[dict] = [{"type": "draw_movement"}]
        board = self.board(state)
        for pid in board.adjacent[p["pawn"]]:
            for cards in self._payments(board.paths[pid]["squares"], p["movement"]):
                out.append({"type": "move", "path": pid, "cards": cards})
        out += self._legal_exchanges(state, p)
        return out

    def only_action(self, state: dict, seat: int) -> dict | None:
        """The seat's one legal action, played at once, only where the other seats can tell it
        is the only one: a forced move is flagged and timed with the move before it, so one
        forced by the seat's hidden cards or tiles would show them (a Sandstorm forced because
        the whole hand is of one kind). Where only the seat's hidden holdings make the choice
        single, the seat is awaited like any other, with that one legal action."""
        if state["n"] == 1:  # nobody plays against the seat (a spectator can tell: the guide)
            return super().only_action(state, seat)
        p = state["seats"][seat]
        pend = state["pending"]
        if state["variant"] == "solo":  # each against the Pharaoh, hands and holders hidden
            if pend is None and not p["gods"]:
                return {"type": "buy_glyph"}  # nothing to form: the others see no God card
            return None if sum(p["holder"].values()) != 1 else super().only_action(state, seat)
        if pend is not None:
            kind = pend["kind"]
            if kind in HIDDEN_CHOICES:
                held = p["movement"] if kind == "sandstorm" else p["holder"]
                # single for every hand of this size only when all of it goes
                if sum(held.values()) != (1 if kind == "tomb-robbers" else pend["count"]):
                    return None
            return super().only_action(state, seat)
        # a main turn offers drawing a movement card, and it is the only action when no
        # adjacent path can be paid (colours up to what the path needs, eyes for the rest) and
        # no exchange can be made (no glyph on the holder, or nothing to take); the others can
        # tell only when the hand is smaller than every adjacent path and the holder is empty
        # or has nothing to take
        hand = p["movement"]
        board = self.board(state)
        paths = [board.paths[pid]["squares"] for pid in board.adjacent[p["pawn"]]]
        if sum(hand.values()) >= min((sum(need.values()) for need in paths), default=math.inf):
            return None
        if any(p["holder"][g] for g in GLYPHS) and (
                self._bag_available(state) or any(state["market"][g] for g in GLYPHS)):
            return None
        return {"type": "draw_movement"}

    @staticmethod
    def _payments(need: dict[str, int], hand: dict[str, int]) -> list[dict[str, int]]:
        total = sum(need.values())
        colours = [c for c in COLOURS if need.get(c, 0)]
        out: list[dict[str, int]] = []

        def rec(i: int, acc: dict[str, int], paid: int) -> None:
            if i == len(colours):
                eye = total - paid
                if eye <= hand["eye"]:
                    cards = {k: v for k, v in acc.items() if v}
                    if eye:
                        cards["eye"] = eye
                    out.append(cards)
                return
            c = colours[i]
            for k in range(min(need[c], hand[c]), -1, -1):
                acc[c] = k
                rec(i + 1, acc, paid + k)
            acc[c] = 0

        rec(0, {c: 0 for c in colours}, 0)
        return out

    @staticmethod
    def _bag_available(state: dict) -> bool:
        return bool(state["bag"]) or any(state["glyph_discard"].values())

    def _legal_exchanges(self, state: dict, p: dict) -> list[dict]:
        out = []
        bag = self._bag_available(state)
        market = [g for g in GLYPHS if state["market"][g]]
        for pay in GLYPHS:
            if not p["holder"][pay]:
                continue
            if bag:
                out.append({"type": "exchange", "pay": pay, "take": "bag"})
            for take in market:
                out.append({"type": "exchange", "pay": pay, "take": take})
        return out

    def _legal_pending(self, state: dict, seat: int, pend: dict) -> list[dict]:
        p = state["seats"][seat]
        kind = pend["kind"]
        held = [(g, p["holder"][g]) for g in GLYPHS if p["holder"][g]]
        if kind == "capacity":
            return [{"type": "discard_excess", "glyphs": ms}
                    for ms in _multisets(held, pend["count"])]
        if kind == "temple-offering":
            return [{"type": "event_choice", "take": g} for g in GLYPHS if state["market"][g]]
        if kind == "wisdom-of-thoth":
            return [{"type": "event_choice", "return": ms}
                    for ms in _multisets(held, pend["count"])]
        if kind == "tomb-robbers":
            return [{"type": "event_choice", "return": g} for g, _ in held]
        if kind == "sacred-barque":
            board = self.board(state)
            return ([{"type": "event_choice", "path": pid} for pid in board.adjacent[p["pawn"]]]
                    + [{"type": "event_choice", "path": None}])
        if kind == "sandstorm":
            hand = [(k, p["movement"][k]) for k in KINDS if p["movement"][k]]
            return [{"type": "event_choice",
                     "discard": {k: v for k, v in _count(ms, KINDS).items() if v}}
                    for ms in _multisets(hand, pend["count"])]
        if kind == "divine-revelation":
            return ([{"type": "event_choice", "god": g} for g in p["gods"]]
                    + [{"type": "event_choice", "god": None}])
        return []  # pragma: no cover

    def _legal_solo(self, state: dict, seat: int) -> list[dict]:
        p = state["seats"][seat]
        pend = state["pending"]
        if pend is not None:
            return [{"type": "discard_glyph", "glyph": g} for g in GLYPHS if p["holder"][g]]
        out = [{"type": "form_god", "god": g} for g in p["gods"]
               if self._has_spelling(p["holder"], g)]
        out.append({"type": "buy_glyph"})
        return out

    def timeout_action(self, state: dict, seat: int) -> dict:
        p = state["seats"][seat]
        last_held = [g for g in GLYPHS if p["holder"][g]]
        pend = state["pending"]
        if state["variant"] == "solo":
            if pend is not None:
                return {"type": "discard_glyph", "glyph": last_held[-1]}
            return {"type": "buy_glyph"}
        if pend is None:
            return {"type": "draw_movement"}
        kind = pend["kind"]

        def give_up(k: int) -> list[str]:
            hold = dict(p["holder"])
            out = []
            for _ in range(k):
                g = [x for x in GLYPHS if hold[x]][-1]
                hold[g] -= 1
                out.append(g)
            return sorted(out, key=GLYPH_INDEX.__getitem__)

        if kind == "capacity":
            return {"type": "discard_excess", "glyphs": give_up(pend["count"])}
        if kind == "temple-offering":
            return {"type": "event_choice",
                    "take": next(g for g in GLYPHS if state["market"][g])}
        if kind == "wisdom-of-thoth":
            return {"type": "event_choice", "return": give_up(pend["count"])}
        if kind == "tomb-robbers":
            return {"type": "event_choice", "return": last_held[-1]}
        if kind == "sacred-barque":
            return {"type": "event_choice", "path": None}
        if kind == "divine-revelation":
            return {"type": "event_choice", "god": None}
        if kind == "sandstorm":
            hand = dict(p["movement"])
            out: dict[str, int] = {}
            for _ in range(pend["count"]):
                k = next(x for x in KINDS if hand[x])
                hand[k] -= 1
                out[k] = out.get(k, 0) + 1
            return {"type": "event_choice", "discard": {k: out[k] for k in KINDS if k in out}}
        return self.legal_actions(state, seat)[0]  # pragma: no cover

    # ------------------------------------------------------------------------------------
    # decide

    def decide(self, state: dict, seat: int, action: dict, rng) -> tuple[list[dict], dict]:
        action_type(action)
        if state["over"]:
            raise illegal("game_over", "the game is over")
        if seat not in self.awaiting(state):
            raise illegal("not_your_turn", "the game is not waiting for this seat")
        ctx = Outcome(self, state, rng)
        if state["variant"] == "solo":
            self._decide_solo(ctx, seat, action)
        else:
            self._decide_standard(ctx, seat, action)
        return ctx.done()

    # -- payload parsing --------------------------------------------------------------------

    @staticmethod
    def _glyph(value: Any, field: str) -> str:
        if not isinstance(value, str):
            raise invalid_field(field, "a glyph id is a string")
        if value not in GLYPH_INDEX:
            raise illegal("unknown_glyph", "unknown glyph id", field=field)
        return value

    def _glyphs(self, value: Any, field: str, count: int) -> list[str]:
        if not isinstance(value, list):
            raise invalid_field(field, "a list of glyph ids is expected")
        if len(value) != count:
            raise illegal("wrong_glyph_count", "wrong number of glyphs", field=field,
                           expected=count)
        return [self._glyph(v, field) for v in value]

    @staticmethod
    def _cards(value: Any, field: str) -> dict[str, int]:
        if not isinstance(value, dict):
            raise invalid_field(field, "cards are an object kind -> count")
        out = _zero(KINDS)
        for k, v in value.items():
            if k not in KINDS:
                raise illegal("unknown_card_kind", "unknown movement card kind", field=field)
            if not is_int(v) or v < 0:
                raise invalid_field(field, "card counts are integers >= 0")
            out[k] = v
        return out

    @staticmethod
    def _need_in_holder(p: dict, glyphs: list[str]) -> None:
        need = _count(glyphs, GLYPHS)
        for g in GLYPHS:
            if need[g] > p["holder"][g]:
                raise illegal("glyph_not_in_holder", "you do not hold these glyphs", glyph=g)

    # -- standard -----------------------------------------------------------------------------

    def _decide_standard(self, ctx: Outcome, seat: int, action: dict) -> None:
        s = ctx.state
        t = action_type(action, self.STANDARD_ACTIONS)
        pend = s["pending"]
        p = s["seats"][seat]
        if pend is not None:
            if pend["kind"] == "capacity":
                if t != "discard_excess":
                    raise illegal("capacity_exceeded",
                                   "your holder is above capacity: discard_excess first",
                                   excess=pend["count"])
                check_fields(action, ("glyphs",))
                glyphs = self._glyphs(action["glyphs"], "glyphs", pend["count"])
                self._need_in_holder(p, glyphs)
                ctx.emit("DecisionResolved", {"kind": "capacity"}, seat)
                ctx.emit("GlyphsToMarket", {"glyphs": sorted(glyphs, key=GLYPH_INDEX.get),
                                            "reason": "capacity"}, seat)
            else:
                if t != "event_choice":
                    raise illegal("decision_pending", "an event decision is pending",
                                   kind=pend["kind"])
                self._event_choice(ctx, seat, pend, action)
        else:
            if t in ("event_choice", "discard_excess"):
                raise illegal("nothing_pending", "there is no pending decision")
            if t == "draw_movement":
                check_fields(action, ())
                self._draw_movement(ctx, seat, DRAW_MOVEMENT)
            elif t == "move":
                self._move(ctx, seat, action)
            else:
                self._exchange(ctx, seat, action)
        self._settle(ctx)

    def _move(self, ctx: Outcome, seat: int, action: dict) -> None:
        s = ctx.state
        p = s["seats"][seat]
        check_fields(action, ("path", "cards"))
        pid = action["path"]
        board = self.board(s)
        if not isinstance(pid, str):
            raise invalid_field("path", "path is a path id")
        if pid not in board.paths:
            raise illegal("unknown_path", "no such path", field="path")
        if pid not in board.adjacent[p["pawn"]]:
            raise illegal("path_not_adjacent", "the path does not touch your space", path=pid)
        pay = self._cards(action["cards"], "cards")
        need = board.paths[pid]["squares"]
        for c in COLOURS:
            if pay[c] and not need.get(c, 0):
                raise illegal("colour_not_on_path", "this colour is not on the path", colour=c)
        for c in COLOURS:
            if pay[c] > need.get(c, 0):
                raise illegal("too_many_of_colour", "more cards than squares of a colour",
                               colour=c, squares=need.get(c, 0))
        if sum(pay.values()) != sum(need.values()):
            raise illegal("wrong_card_count", "play exactly one card per square",
                           squares=sum(need.values()))
        for k in KINDS:
            if pay[k] > p["movement"][k]:
                raise illegal("card_not_in_hand", "you do not hold these cards", kind=k)
        frm = p["pawn"]
        to = board.other_end(pid, frm)
        ctx.emit("PawnMoved", {"path": pid, "from": frm, "to": to,
                               "cards": {k: pay[k] for k in KINDS if pay[k]}}, seat)
        self._arrive(ctx, seat, to)

    def _exchange(self, ctx: Outcome, seat: int, action: dict) -> None:
        s = ctx.state
        p = s["seats"][seat]
        check_fields(action, ("pay", "take"))
        pay = self._glyph(action["pay"], "pay")
        take = action["take"]
        if take != "bag":
            take = self._glyph(take, "take")
        if not p["holder"][pay]:
            raise illegal("glyph_not_in_holder", "you do not hold this glyph", glyph=pay)
        if take == "bag":
            if not self._bag_available(s):
                raise illegal("no_glyph_source", "the bag and the glyph discard pile are empty")
        elif not s["market"][take]:
            raise illegal("glyph_not_in_market", "this glyph was not face up in the market",
                           glyph=take)
        ctx.emit("GlyphsToMarket", {"glyphs": [pay], "reason": "exchange"}, seat)
        if take == "bag":
            self._draw_glyphs(ctx, seat, 1)
        else:
            ctx.emit("GlyphTakenFromMarket", {"glyph": take, "reason": "exchange"}, seat)

    # -- drawing ----------------------------------------------------------------------------

    def _draw_movement(self, ctx: Outcome, seat: int, n: int) -> None:
        s = ctx.state
        while n > 0:
            if not s["movement_deck"]:
                if not any(s["movement_discard"].values()):
                    return
                deck = ctx.rng.shuffled(canonical_movement(s["movement_discard"]))
                ctx.emit("MovementReshuffled", {"deck": deck})
            cards = s["movement_deck"][:n]
            ctx.emit("MovementDrawn", {"cards": cards}, seat)
            n -= len(cards)

    def _draw_glyphs(self, ctx: Outcome, seat: int, n: int) -> int:
        s = ctx.state
        drawn = 0
        while n > drawn:
            if not s["bag"]:
                if not any(s["glyph_discard"].values()):
                    break
                bag = ctx.rng.shuffled(canonical_glyphs(s["glyph_discard"]))
                ctx.emit("BagRefilled", {"bag": bag})
            glyphs = s["bag"][:n - drawn]
            ctx.emit("GlyphsDrawn", {"glyphs": glyphs}, seat)
            drawn += len(glyphs)
        return drawn

    # -- arrival, conquest, events -------------------------------------------------------------

    def _arrive(self, ctx: Outcome, seat: int, space: str) -> None:
        s = ctx.state
        p = s["seats"][seat]
        node = self.board(s).nodes[space]
        if node["kind"] == "pyramid":
            god = node["god"]
            if god in p["gods"] and self._has_spelling(p["holder"], god):
                self._conquer(ctx, seat, god, "GodConquered")
        elif node["kind"] == "event":
            if not s["event_deck"]:
                if not any(s["event_discard"].values()):
                    return
                deck = ctx.rng.shuffled(canonical_events(s["event_discard"]))
                ctx.emit("EventDeckReshuffled", {"deck": deck})
            card = s["event_deck"][0]
            ctx.emit("EventDrawn", {"card": card, "space": space}, seat)
            self._resolve_event(ctx, seat, card)

    def _conquer(self, ctx: Outcome, seat: int, god: str, type_: str) -> None:
        s = ctx.state
        p = s["seats"][seat]
        spelling = _glyph_list(SPELLING[god])
        ctx.emit(type_, {"god": god, "value": GOD[god]["value"], "spelling": spelling}, seat)
        if s["god_deck"]:
            ctx.emit("GodDrawn", {"god": s["god_deck"][0]}, seat)
        if type_ == "GodConquered":
            self._draw_glyphs(ctx, seat, len(spelling))
        if not s["god_deck"] and not p["gods"] and s["final"] is None:
            n = s["n"]
            ctx.emit("FinalRoundStarted",
                     {"seats": [(seat + i) % n for i in range(1, n)
                                if not self._resigned(s, (seat + i) % n)]}, seat)

    def _resolve_event(self, ctx: Outcome, seat: int, card: str) -> None:
        s = ctx.state
        p = s["seats"][seat]
        eff = EVENT[card]["effect"]
        kind, n = eff["kind"], eff["n"]
        if kind == "draw_movement":
            self._draw_movement(ctx, seat, n)
        elif kind == "draw_glyphs":
            self._draw_glyphs(ctx, seat, n)
        elif kind == "take_market":
            if any(s["market"].values()):
                ctx.emit("DecisionPending", {"kind": card, "count": 1, "card": card}, seat)
                return
            self._draw_glyphs(ctx, seat, n)
        elif kind == "draw_and_return":
            got = self._draw_glyphs(ctx, seat, n)
            if got:
                ctx.emit("DecisionPending", {"kind": card, "count": got, "card": card}, seat)
                return
        elif kind == "free_move":
            ctx.emit("DecisionPending", {"kind": card, "count": 1, "card": card}, seat)
            return
        elif kind == "discard_movement":
            total = sum(p["movement"].values())
            if total > n:
                ctx.emit("DecisionPending", {"kind": card, "count": n, "card": card}, seat)
                return
            if total:
                ctx.emit("MovementDiscarded",
                         {"cards": {k: v for k, v in p["movement"].items() if v}}, seat)
        elif kind == "return_glyph":
            if any(p["holder"].values()):
                ctx.emit("DecisionPending", {"kind": card, "count": n, "card": card}, seat)
                return
        elif kind == "swap_god":
            if s["god_deck"] and p["gods"]:
                ctx.emit("DecisionPending", {"kind": card, "count": 1, "card": card}, seat)
                return
        elif kind == "skip_turn":
            ctx.emit("SkipNextTurn", {}, seat)
        self._finish_event(ctx, seat, card)

    def _finish_event(self, ctx: Outcome, seat: int, card: str) -> None:
        ctx.emit("EventDiscarded", {"card": card})
        self._capacity(ctx, seat)

    def _capacity(self, ctx: Outcome, seat: int) -> None:
        excess = sum(ctx.state["seats"][seat]["holder"].values()) - CAPACITY
        if excess > 0:
            ctx.emit("DecisionPending", {"kind": "capacity", "count": excess, "card": None},
                     seat)

    def _event_choice(self, ctx: Outcome, seat: int, pend: dict, action: dict) -> None:
        s = ctx.state
        p = s["seats"][seat]
        kind = pend["kind"]
        card = pend["card"]
        if kind == "temple-offering":
            check_fields(action, ("take",))
            g = self._glyph(action["take"], "take")
            if not s["market"][g]:
                raise illegal("glyph_not_in_market", "this glyph is not in the market", glyph=g)
            ctx.emit("DecisionResolved", {"kind": kind}, seat)
            ctx.emit("GlyphTakenFromMarket", {"glyph": g, "reason": kind}, seat)
        elif kind == "wisdom-of-thoth":
            check_fields(action, ("return",))
            glyphs = self._glyphs(action["return"], "return", pend["count"])
            self._need_in_holder(p, glyphs)
            ctx.emit("DecisionResolved", {"kind": kind}, seat)
            ctx.emit("GlyphsToMarket", {"glyphs": sorted(glyphs, key=GLYPH_INDEX.get),
                                        "reason": kind}, seat)
        elif kind == "tomb-robbers":
            check_fields(action, ("return",))
            g = self._glyph(action["return"], "return")
            self._need_in_holder(p, [g])
            ctx.emit("DecisionResolved", {"kind": kind}, seat)
            ctx.emit("GlyphsToMarket", {"glyphs": [g], "reason": kind}, seat)
        elif kind == "sandstorm":
            check_fields(action, ("discard",))
            cards = self._cards(action["discard"], "discard")
            if sum(cards.values()) != pend["count"]:
                raise illegal("wrong_card_count", "discard exactly this many cards",
                               expected=pend["count"])
            for k in KINDS:
                if cards[k] > p["movement"][k]:
                    raise illegal("card_not_in_hand", "you do not hold these cards", kind=k)
            ctx.emit("DecisionResolved", {"kind": kind}, seat)
            ctx.emit("MovementDiscarded", {"cards": {k: cards[k] for k in KINDS if cards[k]}},
                     seat)
        elif kind == "divine-revelation":
            check_fields(action, ("god",))
            god = action["god"]
            if god is not None:
                if not isinstance(god, str):
                    raise invalid_field("god", "god is a god id or null")
                if god not in p["gods"]:
                    raise illegal("card_not_in_hand", "this God card is not in your hand")
            ctx.emit("DecisionResolved", {"kind": kind, "declined": god is None}, seat)
            if god is not None:
                ctx.emit("GodSwapped", {"put": god, "drew": s["god_deck"][0]
                                        if s["god_deck"] else god}, seat)
        elif kind == "sacred-barque":
            check_fields(action, ("path",))
            pid = action["path"]
            board = self.board(s)
            if pid is not None:
                if not isinstance(pid, str):
                    raise invalid_field("path", "path is a path id or null")
                if pid not in board.paths:
                    raise illegal("unknown_path", "no such path", field="path")
                if pid not in board.adjacent[p["pawn"]]:
                    raise illegal("path_not_adjacent", "the path does not touch your space",
                                   path=pid)
            ctx.emit("DecisionResolved", {"kind": kind, "declined": pid is None}, seat)
            ctx.emit("EventDiscarded", {"card": card})
            if pid is not None:
                frm = p["pawn"]
                to = board.other_end(pid, frm)
                ctx.emit("PawnMoved", {"path": pid, "from": frm, "to": to, "cards": {},
                                       "reason": kind}, seat)
                self._arrive(ctx, seat, to)
            return
        self._finish_event(ctx, seat, card)

    # -- turn flow --------------------------------------------------------------------------

    def _settle(self, ctx: Outcome) -> None:
        s = ctx.state
        if s["over"] or s["pending"] is not None:
            return
        self._end_turn(ctx)

    def _end_turn(self, ctx: Outcome) -> None:
        s = ctx.state
        ctx.emit("TurnEnded", {}, s["current"])
        while True:
            if s["turn_limit"] and s["turns"] >= s["turn_limit"]:
                ctx.emit("GameEnded", {"reason": "turn_limit"})
                return
            if s["final"] is not None:
                if not s["final"]["remaining"]:
                    ctx.emit("GameEnded", {"reason": "final_round"})
                    return
                nxt = s["final"]["remaining"][0]
            else:
                nxt = self._next_active(s, s["current"])
                if nxt is None:  # pragma: no cover - resign ends the game before that
                    ctx.emit("GameEnded", {"reason": "resignation"})
                    return
            if s["seats"][nxt]["skip"]:
                ctx.emit("TurnSkipped", {}, nxt)
                continue
            ctx.emit("TurnStarted", {}, nxt)
            return

    # -- solo -------------------------------------------------------------------------------

    def _decide_solo(self, ctx: Outcome, seat: int, action: dict) -> None:
        s = ctx.state
        p = s["seats"][seat]
        t = action_type(action, self.SOLO_ACTIONS)
        pend = s["pending"]
        if pend is not None and t != "discard_glyph":
            raise illegal("capacity_exceeded",
                           "your holder is above capacity: discard_glyph first",
                           excess=pend["count"])
        if t == "discard_glyph":
            if pend is None:
                raise illegal("nothing_pending", "there is no pending discard")
            check_fields(action, ("glyph",))
            g = self._glyph(action["glyph"], "glyph")
            self._need_in_holder(p, [g])
            ctx.emit("DecisionResolved", {"kind": "capacity"}, seat)
            ctx.emit("GlyphsDiscarded", {"glyphs": [g], "reason": "capacity"}, seat)
            if sum(p["holder"].values()) > CAPACITY:  # pragma: no cover - one tile at a time
                ctx.emit("DecisionPending", {"kind": "capacity", "count": 1, "card": None},
                         seat)
                return
            self._end_turn(ctx)
        elif t == "form_god":
            check_fields(action, ("god",))
            god = action["god"]
            if not isinstance(god, str):
                raise invalid_field("god", "god is a god id")
            if god not in p["gods"]:
                raise illegal("card_not_in_hand", "this God card is not in your hand")
            if not self._has_spelling(p["holder"], god):
                raise illegal("not_formable", "your holder lacks glyphs of this name")
            self._conquer(ctx, seat, god, "GodFormed")
            if not s["god_deck"] and not p["gods"]:
                self._end_turn(ctx)
        else:
            check_fields(action, ())
            ctx.emit("GlyphBought", {}, seat)
            self._draw_glyphs(ctx, seat, 1)
            excess = sum(p["holder"].values()) - CAPACITY
            if excess > 0:
                ctx.emit("DecisionPending", {"kind": "capacity", "count": excess,
                                             "card": None}, seat)
                return
            self._end_turn(ctx)

    # ------------------------------------------------------------------------------------
    # resignation (spec 12.4; see the module docstring)

    def resign(self, state: dict, seat: int) -> tuple[list[dict], dict] | None:
        if (state["over"] or not is_int(seat) or not 0 <= seat < state["n"]
                or self._resigned(state, seat)):
            return None  # nothing the rules can do: the shell ends the game for the seat
        solo = state["variant"] == "solo"
        if solo and state["n"] == 1:
            return None  # solo (10.1): resigning is a loss and ends the game
        ctx = Outcome(self, state, None)
        s = ctx.state
        p = s["seats"][seat]
        on_turn = s["current"] == seat
        pend = s["pending"]
        ctx.emit("PlayerResigned", {
            "gods": list(p["gods"]),
            "movement": {k: p["movement"][k] for k in KINDS if p["movement"][k]},
            "glyphs": {g: p["holder"][g] for g in GLYPHS if p["holder"][g]},
            "dropped": pend["kind"] if pend is not None and pend["seat"] == seat else None,
        }, seat)
        if on_turn and s["event_card"] is not None:
            ctx.emit("EventDiscarded", {"card": s["event_card"]})
        active = [i for i in range(s["n"]) if not self._resigned(s, i)]
        if (not solo and len(active) <= 1) or not active:
            ctx.emit("GameEnded", {"reason": "resignation"})
            return ctx.done()
        if on_turn:
            self._end_turn(ctx)
        return ctx.done()

    # ------------------------------------------------------------------------------------
    # results

    def _final_scores(self, state: dict) -> tuple[list[int], list[dict]]:
        solo = state["variant"] == "solo"
        scores, details = [], []
        for p in state["seats"]:
            sons = sum(1 for g in p["conquered"] if g in SONS)
            bonus = 0 if solo else SONS_BONUS.get(min(sons, 4), 0)
            total = p["score"] + SCARAB_POINTS * p["scarabs"] + bonus
            d = {"track": p["score"], "scarabs": p["scarabs"],
                 "scarab_points": SCARAB_POINTS * p["scarabs"], "sons_of_horus": sons,
                 "sons_bonus": bonus, "amon_ra": TIEBREAK_GOD in p["conquered"],
                 "conquered": [{"god": g, "value": GOD[g]["value"]} for g in p["conquered"]],
                 "total": total}
            if solo:
                d["paid"] = p["paid"]
                d["margin"] = total - p["paid"]
                # a win is scored once the last God card is formed (spec 10.1): a game cut
                # short by the turn limit leaves gods unformed, and no seat beats the Pharaoh
                d["beats_pharaoh"] = (total > p["paid"]
                                      and state["end_reason"] != "turn_limit")
            scores.append(total)
            details.append(d)
        return scores, details

    def result(self, state: dict) -> dict | None:
        if not state["over"]:
            return None
        scores, details = self._final_scores(state)
        solo = state["variant"] == "solo"
        resigned = [i for i in range(state["n"]) if self._resigned(state, i)]
        active = [i for i in range(state["n"]) if i not in resigned]
        for i, d in enumerate(details):
            d["resigned"] = i in resigned
        if solo:
            keys = [(d["margin"], d["sons_of_horus"], int(d["amon_ra"])) for d in details]
        else:
            keys = [(sc, d["sons_of_horus"], int(d["amon_ra"]))
                    for sc, d in zip(scores, details)]
        ranks = [0] * state["n"]
        for i, r in zip(active, competition_ranks([keys[i] for i in active])):
            ranks[i] = r
        for i, r in zip(resigned, competition_ranks([keys[i] for i in resigned])):
            ranks[i] = len(active) + r
        if solo:
            winners = [i for i in active if details[i]["beats_pharaoh"]]
        else:
            winners = [i for i in active if ranks[i] == 1]
        return {"scores": scores, "ranks": ranks, "winners": winners,
                "details": {"seats": details, "end_reason": state["end_reason"],
                            "turns": state["turns"], "resigned": resigned}}

    # ------------------------------------------------------------------------------------
    # information

    def view(self, state: dict, viewer) -> dict:
        over = state["over"]
        solo = state["variant"] == "solo"
        seats = []
        for i, p in enumerate(state["seats"]):
            mine = over or sees(viewer, i)
            sons = sum(1 for g in p["conquered"] if g in SONS)
            v = {"seat": i, "name": state["names"][i], "score": p["score"],
                 "scarabs": p["scarabs"], "conquered": list(p["conquered"]),
                 "sons_of_horus": sons,
                 "movement_count": sum(p["movement"].values()),
                 "gods_count": len(p["gods"]), "holder_count": sum(p["holder"].values()),
                 "skip_next_turn": p["skip"], "resigned": self._resigned(state, i)}
            if solo:
                v["paid"] = p["paid"]
            else:
                v["pawn"] = p["pawn"]
            if mine:
                if not solo:
                    v["movement"] = dict(p["movement"])
                v["gods"] = list(p["gods"])
                v["holder"] = dict(p["holder"])
            seats.append(v)
        pend = state["pending"]
        out: dict = {
            "variant": state["variant"],
            "phase": "over" if over else ("decision" if pend else "turn"),
            "turn": state["turns"] + (0 if over else 1),
            "round": state["turns"] // state["n"] + (0 if over else 1),
            "turns_played": state["turns"],
            "turn_limit": state["turn_limit"],
            "current": None if over else state["current"],
            "first_player": state["first_player"],
            "god_deck_size": state["god_deck_size"],
            "setup": state["setup"],
            "seats": seats,
            "resigned": [i for i in range(state["n"]) if self._resigned(state, i)],
            "scores": self._final_scores(state)[0],
            "god_deck_count": len(state["god_deck"]),
            "bag_count": len(state["bag"]),
            "glyph_discard": dict(state["glyph_discard"]),
            "owners": dict(state["owners"]),
            "pending": dict(pend) if pend else None,
            "final_round": ({"trigger": state["final"]["trigger"],
                             "remaining": list(state["final"]["remaining"])}
                            if state["final"] else None),
            "end_reason": state["end_reason"],
        }
        if not solo:
            out.update({
                "board": clone(self.board(state).doc),
                "market": dict(state["market"]),
                "movement_deck_count": len(state["movement_deck"]),
                "movement_discard": dict(state["movement_discard"]),
                "event_deck_count": len(state["event_deck"]),
                "event_discard": dict(state["event_discard"]),
                "event_card": state["event_card"],
            })
        if over or viewer == ALL:
            out["hidden"] = {"movement_deck": list(state["movement_deck"]),
                             "god_deck": list(state["god_deck"]),
                             "gods_out": list(state["gods_out"]),
                             "event_deck": list(state["event_deck"]),
                             "bag": list(state["bag"])}
            if viewer == ALL and not over:
                for i, p in enumerate(state["seats"]):
                    seats[i]["movement"] = dict(p["movement"])
                    seats[i]["gods"] = list(p["gods"])
                    seats[i]["holder"] = dict(p["holder"])
        if over:
            out["result"] = self.result(state)
        return out

    def visible(self, ev: dict, viewer) -> dict | None:
        t = ev["type"]
        d = ev["data"]
        seat = ev.get("seat")
        if viewer == ALL:
            return ev
        if t == "DecksShuffled":
            return redact(ev, replace={k: len(d[k]) for k in
                                       ("movement_deck", "god_deck", "gods_out", "event_deck",
                                        "bag")})
        if t in ("MovementReshuffled", "EventDeckReshuffled"):
            return redact(ev, replace={"deck": len(d["deck"])})
        if t == "BagRefilled":
            return redact(ev, replace={"bag": len(d["bag"])})
        if isinstance(seat, int) and sees(viewer, seat):
            return ev
        if t == "PlayerResigned":
            return redact(ev, replace={"gods": len(d["gods"])})
        if t == "HandDealt":
            return redact(ev, replace={k: len(d[k]) for k in ("movement", "gods", "glyphs")})
        if t == "MovementDrawn":
            return redact(ev, replace={"cards": len(d["cards"])})
        if t == "GlyphsDrawn":
            return redact(ev, replace={"glyphs": len(d["glyphs"])})
        if t == "GodDrawn":
            return redact(ev, drop=("god",))
        if t == "GodSwapped":
            return redact(ev, drop=("put", "drew"))
        return ev


GAME = Papyrus()
