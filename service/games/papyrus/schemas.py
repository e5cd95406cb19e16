"""JSON Schemas (2020-12) of what Papyrus serves: ``STATE``, the ``state`` of
:meth:`Papyrus.view` for every viewer, and ``EVENTS``, the ``data`` of each event type as every
viewer is served it (``Papyrus.visible``'s redacted forms included).

Meanings follow ``shared/rules/papyrus.md`` (section numbers below refer to it). Secrets (section
11): a seat's movement cards, God cards in hand and holder are served to that seat alone (and to
``ALL``, and to everybody once the game is over); other viewers get counts. Deck and bag orders
are served to ``ALL`` alone while the game runs (``hidden``); the events that carry them are
served to others with a count in place of the list. Codes are taken from the game data
(:mod:`.data`), never retyped.
"""

from __future__ import annotations

from ...engine.schemas import closed, nullable
from .data import (BAG_COUNTS, BOARD_SCHEMA, CAPACITY, COLOURS, EVENT, EVENT_COUNTS, EVENTS,
                   GLYPHS, GODS, KINDS, MAX_ID_LEN, MOVEMENT_COUNTS, SONS)

MAX_SEATS = 5
#: Event effects that stop for a choice of the drawer (``DecisionPending``, section 6).
DECISION_EFFECTS = ("take_market", "draw_and_return", "free_move", "discard_movement",
                    "return_glyph", "swap_god")
DECISION_KINDS = ["capacity"] + [e for e in EVENTS if EVENT[e]["effect"]["kind"]
                                 in DECISION_EFFECTS]
END_REASONS = ["final_round", "turn_limit", "resignation"]


def _object(description: str, properties: dict, optional: tuple[str, ...] = ()) -> dict:
    """An object with exactly these keys, all required but ``optional``."""
    return closed(description, [k for k in properties if k not in optional], **properties)


def _int(description: str, minimum: int = 0, maximum: int | None = None) -> dict:
    out = {"type": "integer", "description": description, "minimum": minimum}
    if maximum is not None:
        out["maximum"] = maximum
    return out


def _enum(codes: list[str], description: str) -> dict:
    return {"type": "string", "enum": list(codes), "description": description}


def _list(items: dict, description: str, **bounds: int) -> dict:
    return {"type": "array", "items": items, "description": description, **bounds}


def _counts(keys: list[str], what: str, every: bool) -> dict:
    """An object ``code -> count``: every code present (``every``, zeros included) or only the
    codes with a count of at least 1."""
    low = 0 if every else 1
    return {"type": "object", "description": what,
            "properties": {k: {"type": "integer", "minimum": low, "description": f"how many {k}"}
                           for k in keys},
            "required": list(keys) if every else [], "additionalProperties": False}


def _secret(listed: dict, what: str) -> dict:
    """A list served to the viewers allowed to see it, its length to the others."""
    return {"description": f"{what}: the list for a viewer allowed to see it, only its length "
                           "(an integer) for the others",
            "oneOf": [dict(listed, description=what),
                      _int(f"how many ({what} hidden from this viewer)")]}


SEAT = _int("a seat (0-based; clockwise is increasing seat index)", 0, MAX_SEATS - 1)
SEATS = _list(SEAT, "seats, in order", uniqueItems=True, maxItems=MAX_SEATS)
GLYPH = _enum(GLYPHS, "a hieroglyph type (table 2.3)")
GLYPH_LIST = _list(GLYPH, "hieroglyph tiles, one entry per tile")
GOD = _enum(GODS, "a God card id (table 2.4)")
GOD_LIST = _list(GOD, "God card ids", uniqueItems=True, maxItems=len(GODS))
KIND = _enum(list(KINDS), "a movement card kind (eye = Eye of Horus, the wild card)")
EVENT_CARD = _enum(EVENTS, "an Event card id (table 2.5)")
SPACE = {"type": "string", "minLength": 1, "maxLength": MAX_ID_LEN,
         "description": "a space (node id) of the board"}
PATH = {"type": "string", "minLength": 1, "maxLength": MAX_ID_LEN,
        "description": "a path (edge id) of the board"}
CARDS_PLAYED = _counts(list(KINDS), "movement cards by kind (only the kinds used, each >= 1)",
                       every=False)
GLYPH_COUNTS = _counts(GLYPHS, "tiles by hieroglyph type (only the types present, each >= 1)",
                       every=False)
N_MOVEMENT = sum(MOVEMENT_COUNTS.values())
N_EVENTS = sum(EVENT_COUNTS.values())
N_TILES = sum(BAG_COUNTS.values())
SCORE = _int("points")
EMPTY = _object("no data: the event's type, seat and version say it all", {})


def _described(schema: dict, descriptions: dict[str, str], **changes) -> dict:
    """A copy of the object schema ``schema`` whose properties carry ``descriptions``."""
    props = {k: {**v, "description": descriptions[k]} for k, v in schema["properties"].items()}
    return {**schema, "properties": props, **changes}


_NODE = BOARD_SCHEMA["properties"]["nodes"]["items"]
_PATH = BOARD_SCHEMA["properties"]["paths"]["items"]
BOARD = _described(
    {k: v for k, v in BOARD_SCHEMA.items() if k != "x-error"}, {
        "id": "the board's id",
        "name": "its display name",
        "colours": "the square colours it uses",
        "nodes": "its spaces",
        "paths": "its paths",
    }, required=["id", "name", "colours", "nodes", "paths"],
    description="the board played on (the built-in nile-rings-v1 or the map given at "
                "creation, normalised: names filled in, colours listed, empty square colours "
                "left out)")
BOARD["properties"]["nodes"]["items"] = _described(_NODE, {
    "id": "the space's id (what pawn, PawnMoved and EventDrawn name)",
    "name": "its display name",
    "kind": "start (where pawns begin), pyramid (a god's) or event (draws an Event card)",
    "god": "pyramid spaces only: the God card conquered there",
    "ring": "a drawing hint: the ring it lies on",
    "x": "a drawing hint: its x coordinate",
    "y": "a drawing hint: its y coordinate",
}, required=["id", "name", "kind"])
BOARD["properties"]["paths"]["items"] = _described(_PATH, {
    "id": "the path's id (what move and PawnMoved name)",
    "a": "one end (a space id)",
    "b": "the other end",
    "squares": "its squares by colour (the colours present): one movement card each to cross",
})
_PATH_FIELDS = BOARD["properties"]["paths"]["items"]["properties"]
_PATH_FIELDS["squares"] = _described(_PATH_FIELDS["squares"],
                                     {c: f"{c} squares" for c in COLOURS},
                                     description=_PATH_FIELDS["squares"]["description"])

PENDING = _object("the decision the game waits for before the turn goes on", {
    "seat": SEAT,
    "kind": _enum(DECISION_KINDS, f"capacity (holder above {CAPACITY} tiles: discard the "
                                  "excess) or the Event card whose choice is pending"),
    "count": _int("how many tiles / cards the choice involves (the excess for capacity)", 1),
    "card": nullable(EVENT_CARD, "the Event card being resolved (null for capacity)"),
})

SEAT_VIEW = _object("a seat as the viewer sees it", {
    "seat": SEAT,
    "name": {"type": ["string", "null"], "description": "the seat's display name"},
    "score": _int("the score track: values of the God cards conquered (scarabs and the sons of "
                  "Horus bonus come at the end)"),
    "scarabs": _int("scarabs won (one per conquest, 5 points each at the end)"),
    "conquered": {**GOD_LIST, "description": "God cards conquered, in order (public)"},
    "sons_of_horus": _int("how many of the four sons of Horus were conquered", 0, len(SONS)),
    "movement_count": _int("movement cards in hand (public count)", 0, N_MOVEMENT),
    "gods_count": _int("God cards in hand (public count)", 0, len(GODS)),
    "holder_count": _int(f"tiles in the holder (public count; at most {CAPACITY} but while "
                         "a capacity discard is pending)"),
    "skip_next_turn": {"type": "boolean",
                       "description": "Lost in the Desert: the seat skips its next turn"},
    "resigned": {"type": "boolean", "description": "the seat resigned (12.4)"},
    "pawn": nullable(SPACE, "standard variant only: the space of the seat's pawn (null once "
                            "resigned: the pawn is removed)"),
    "paid": _int("solo variant only: movement (element) cards paid to buy tiles"),
    "movement": _counts(list(KINDS), "standard variant: the movement cards in hand by kind; "
                                     "absent for other seats and spectators while the game runs "
                                     "(secret, section 11). ALL is also served it, all zeros, "
                                     "in a running solo game", every=True),
    "gods": {**GOD_LIST, "description": "the God cards in hand; absent for other seats and "
                                        "spectators while the game runs (secret)"},
    "holder": _counts(GLYPHS, "the holder's tiles by hieroglyph type (every type, zeros "
                              "included); absent for other seats and spectators while the game "
                              "runs (secret)", every=True),
}, optional=("pawn", "paid", "movement", "gods", "holder"))

HIDDEN = _object("the orders nobody sees while the game runs: served to ALL, and to everybody "
                 "once it is over", {
                     "movement_deck": _list(KIND, "the movement deck, top first",
                                            maxItems=N_MOVEMENT),
                     "god_deck": {**GOD_LIST, "description": "the God deck, top first"},
                     "gods_out": {**GOD_LIST, "description": "God cards out of the game (left "
                                                             "out at setup, or a resigner's hand)"},
                     "event_deck": _list(EVENT_CARD, "the event deck, top first",
                                         maxItems=N_EVENTS),
                     "bag": {**GLYPH_LIST, "description": "the bag, next tile first",
                             "maxItems": N_TILES},
                 })

RESULT_SEAT = _object("a seat's final score broken down (section 9, solo 10.1)", {
    "track": _int("the score track (values of the conquered God cards)"),
    "scarabs": _int("scarabs won"),
    "scarab_points": _int("5 points per scarab"),
    "sons_of_horus": _int("sons of Horus conquered", 0, len(SONS)),
    "sons_bonus": _int("the sons of Horus bonus (2: 5, 3: 8, 4: 10; 0 in the solo variant)"),
    "amon_ra": {"type": "boolean", "description": "conquered Amon-Ra (the last tie-break)"},
    "conquered": _list(_object("a conquered God card", {"god": GOD, "value": SCORE}),
                       "the God cards conquered, in order"),
    "total": {**SCORE, "description": "the final score"},
    "paid": _int("solo variant only: element cards paid"),
    "margin": {"type": "integer", "description": "solo variant only: total - paid (the "
                                                 "ranking key)"},
    "beats_pharaoh": {"type": "boolean",
                      "description": "solo variant only: total > paid and the "
                                      "game not cut short by its turn limit (the seat wins)"},
    "resigned": {"type": "boolean", "description": "the seat resigned (ranked after the others)"},
}, optional=("paid", "margin", "beats_pharaoh"))

RESULT = _object("the final result (once the game is over)", {
    "scores": _list(SCORE, "final scores by seat"),
    "ranks": _list(_int("rank (1 = best, competition ranking)", 1), "ranks by seat"),
    "winners": {**SEATS, "description": "the winning seats (solo: every seat that beat the "
                                        "Pharaoh)"},
    "details": _object("the breakdown", {
        "seats": _list(RESULT_SEAT, "by seat"),
        "end_reason": _enum(END_REASONS, "why the game ended"),
        "turns": _int("turns played in total"),
        "resigned": {**SEATS, "description": "the seats that resigned"},
    }),
})

#: fields of the standard variant only (no board, market or events in the solo variant)
STANDARD_ONLY = {
    "board": BOARD,
    "market": _counts(GLYPHS, "the face-up tiles of the market by type (every type, zeros "
                              "included)", every=True),
    "movement_deck_count": _int("movement cards left in the deck", 0, N_MOVEMENT),
    "movement_discard": _counts(list(KINDS), "the movement discard pile by kind (every kind)",
                                every=True),
    "event_deck_count": _int("Event cards left in the deck", 0, N_EVENTS),
    "event_discard": _counts(EVENTS, "the event discard pile by card (every card)", every=True),
    "event_card": nullable(EVENT_CARD, "the Event card being resolved now (null when none)"),
}

STATE = {
    **_object("A Papyrus game as the viewer sees it (rules 12.5). Standard-variant fields are "
              "absent in the solo variant; hidden is served to ALL and after the end, result "
              "after the end.", {
                  "variant": _enum(["standard", "solo"], "standard (board game, 2-5 seats) or "
                                                         "solo (section 10)"),
                  "phase": _enum(["turn", "decision", "over"],
                                 "turn: the current seat plays an action; decision: a pending "
                                 "choice (see pending); over: the game has ended"),
                  "turn": _int("the turn being played, from 1 (turns played once over)"),
                  "round": _int("turn // seats + 1 (turns // seats once over)"),
                  "turns_played": _int("turns played in total (skipped and interrupted ones "
                                       "included)"),
                  "turn_limit": _int("the game ends after this many turns (0: no cap)"),
                  "current": nullable(SEAT, "the seat whose turn it is (null once over)"),
                  "first_player": {**SEAT, "description": "the seat that played first"},
                  "god_deck_size": _int("God cards in play", 3, len(GODS)),
                  "setup": _enum(["standard", "custom"],
                                 "custom when options.setup fixed the orders"),
                  "seats": _list(SEAT_VIEW, "every seat", minItems=1, maxItems=MAX_SEATS),
                  "resigned": {**SEATS, "description": "the seats that resigned"},
                  "scores": _list(SCORE, "each seat's score if the game ended now (track + 5 per "
                                         "scarab + sons of Horus bonus; public)"),
                  "god_deck_count": _int("God cards left in the deck", 0, len(GODS)),
                  "bag_count": _int("tiles left in the bag", 0, N_TILES),
                  "glyph_discard": _counts(GLYPHS, "the glyph discard pile by type (every type)",
                                           every=True),
                  "owners": {"type": "object", "propertyNames": GOD, "additionalProperties": SEAT,
                             "description": "conquered God card -> the seat that conquered it"},
                  "pending": nullable(PENDING, "the pending decision, or null"),
                  "final_round": nullable(_object("the final round (section 8)", {
                      "trigger": {**SEAT, "description": "the seat whose conquest emptied the "
                                                         "God deck and its hand"},
                      "remaining": {**SEATS, "description": "seats still to play their last "
                                                            "turn, in order"}}),
                      "the final round once started, else null"),
                  "end_reason": nullable(_enum(END_REASONS, ""), "why the game ended (null "
                                                                 "while it runs)"),
                  **STANDARD_ONLY,
                  "hidden": HIDDEN,
                  "result": RESULT,
              }, optional=(*STANDARD_ONLY, "hidden", "result")),
    "allOf": [
        {"if": {"properties": {"variant": {"const": "standard"}}},
         "then": {"required": list(STANDARD_ONLY)},
         "else": {"properties": {k: False for k in STANDARD_ONLY}}},
        {"if": {"properties": {"phase": {"const": "over"}}},
         "then": {"required": ["hidden", "result"]},
         "else": {"properties": {"result": False}}},
    ],
}

EVENTS: dict[str, dict] = {
    "DecksShuffled": _object("setup (section 3): the shuffled orders; counts for everybody but "
                             "ALL while the game runs", {
                                 "movement_deck": _secret(_list(KIND, "", maxItems=N_MOVEMENT),
                                                          "the movement deck, top first (empty "
                                                          "in solo)"),
                                 "god_deck": _secret(GOD_LIST, "the God deck in play, top first"),
                                 "gods_out": _secret(GOD_LIST, "God cards left out of the game"),
                                 "event_deck": _secret(_list(EVENT_CARD, "", maxItems=N_EVENTS),
                                                       "the event deck, top first (empty in "
                                                       "solo)"),
                                 "bag": _secret({**GLYPH_LIST, "maxItems": N_TILES},
                                                "the bag, next tile first"),
                             }),
    "HandDealt": _object("the seat's starting hand (section 3); counts for other viewers", {
        "movement": _secret(_list(KIND, "", maxItems=N_MOVEMENT),
                            "movement cards dealt (none in solo)"),
        "gods": _secret(GOD_LIST, "God cards dealt"),
        "glyphs": _secret(GLYPH_LIST, "tiles dealt"),
    }),
    "TurnStarted": EMPTY,
    "TurnSkipped": {**EMPTY, "description": "the seat skips this turn (Lost in the Desert); it "
                                            "counts as a turn"},
    "TurnEnded": EMPTY,
    "MovementDrawn": _object("movement cards drawn (4.1, Gift of the Nile)", {
        "cards": _secret(_list(KIND, "", minItems=1), "the cards drawn")}),
    "MovementReshuffled": _object("the movement discard pile reshuffled into the deck", {
        "deck": _secret(_list(KIND, "", maxItems=N_MOVEMENT), "the new deck, top first")}),
    "PawnMoved": _object("the seat's pawn moved along a path (4.2)", {
        "path": PATH,
        "from": SPACE,
        "to": SPACE,
        "cards": {**CARDS_PLAYED, "description": "the cards paid (public; empty for Sacred "
                                                 "Barque)"},
        "reason": _enum(["sacred-barque"], "present when an Event card moved the pawn for free"),
    }, optional=("reason",)),
    "MovementDiscarded": _object("movement cards discarded from the seat's hand (Sandstorm)", {
        "cards": CARDS_PLAYED}),
    "GodDrawn": _object("a God card drawn after a conquest; the card is absent for other "
                        "viewers", {"god": GOD}, optional=("god",)),
    "GodSwapped": _object("Divine Revelation: a God card put under the deck and the top one "
                          "drawn; both absent for other viewers", {
                              "put": {**GOD, "description": "the card put under the deck"},
                              "drew": {**GOD, "description": "the card drawn"},
                          }, optional=("put", "drew")),
    "GlyphsDrawn": _object("tiles drawn from the bag", {
        "glyphs": _secret({**GLYPH_LIST, "minItems": 1}, "the tiles drawn")}),
    "BagRefilled": _object("the glyph discard pile reshuffled into the bag (section 7)", {
        "bag": _secret({**GLYPH_LIST, "maxItems": N_TILES}, "the new bag, next tile first")}),
    "GlyphsToMarket": _object("tiles put face up in the market (public)", {
        "glyphs": {**GLYPH_LIST, "minItems": 1},
        "reason": _enum(["exchange", "capacity", "wisdom-of-thoth", "tomb-robbers"],
                        "why: an exchange (4.3), a capacity discard or an Event card"),
    }),
    "GlyphsDiscarded": _object("solo: tiles put on the glyph discard pile (capacity)", {
        "glyphs": {**GLYPH_LIST, "minItems": 1},
        "reason": _enum(["capacity"], "a capacity discard"),
    }),
    "GlyphTakenFromMarket": _object("a face-up tile taken from the market (public)", {
        "glyph": GLYPH,
        "reason": _enum(["exchange", "temple-offering"], "an exchange or Temple Offering"),
    }),
    "GlyphBought": {**EMPTY, "description": "solo: one element card paid for a tile (the draw "
                                            "follows as GlyphsDrawn)"},
    "EventDrawn": _object("an Event card drawn on arrival at an Event space (public)", {
        "card": EVENT_CARD, "space": SPACE}),
    "EventDeckReshuffled": _object("the event discard pile reshuffled into the deck", {
        "deck": _secret(_list(EVENT_CARD, "", maxItems=N_EVENTS), "the new deck, top first")}),
    "EventDiscarded": _object("the Event card resolved and put on the discard pile", {
        "card": EVENT_CARD}),
    "SkipNextTurn": {**EMPTY, "description": "Lost in the Desert: the seat skips its next turn"},
    "DecisionPending": _object("the game waits for the seat's choice", {
        "kind": PENDING["properties"]["kind"],
        "count": PENDING["properties"]["count"],
        "card": PENDING["properties"]["card"],
    }),
    "DecisionResolved": _object("the pending choice was made (what follows says how)", {
        "kind": PENDING["properties"]["kind"],
        "declined": {"type": "boolean", "description": "Sacred Barque and Divine Revelation "
                                                       "only: the seat declined"},
    }, optional=("declined",)),
    "GodConquered": _object("a God card conquered at its pyramid (section 5; public)", {
        "god": GOD,
        "value": _int("the card's value (points on the track)", 1),
        "spelling": {**GLYPH_LIST, "description": "the tiles spent (its spelling)",
                     "minItems": 1},
    }),
    "FinalRoundStarted": _object("the God deck and the trigger's hand are empty: the final "
                                 "round (section 8)", {
                                     "seats": {**SEATS, "description": "the seats still to "
                                                                       "play, in order"}}),
    "PlayerResigned": _object("the seat resigned (12.4): its hand leaves the game, its cards "
                              "and tiles go to the discard piles", {
                                  "gods": _secret(GOD_LIST, "its God cards in hand (out of the "
                                                            "game)"),
                                  "movement": {**CARDS_PLAYED, "description": "its movement "
                                                "cards by kind, now on the discard pile"},
                                  "glyphs": {**GLYPH_COUNTS, "description": "its tiles by type, "
                                             "now on the glyph discard pile"},
                                  "dropped": nullable(PENDING["properties"]["kind"],
                                                      "the seat's pending decision dropped, "
                                                      "or null"),
                              }),
    "GameEnded": _object("the game ended", {"reason": _enum(END_REASONS, "why")}),
}
EVENTS["GodFormed"] = {**EVENTS["GodConquered"],
                       "description": "solo: a God card formed from the holder (10.1; public)"}
