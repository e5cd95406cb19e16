"""Tides of Time (Portal Games, 2015) for exactly two seats — rules spec ``tides-of-time.md``.

Shape of a game
---------------
``create`` deals; then three rounds of: five simultaneous hidden picks (``DRAFT``; the hands are
exchanged after picks 1-4; the fifth pick is the engine's ordinary forced move because each seat's
``legal_actions`` then has exactly one entry), automatic round scoring, and after rounds 1 and 2 a
simultaneous hidden relic choice (``RELIC``) followed by the draws. After round 3's scoring the
game ends (``GAME_OVER``); equal totals share the victory.

Randomness (the complete and exact sequence of RNG calls)
---------------------------------------------------------
* ``create`` starts from the canonical deck order ``[1, 2, ..., 18]`` (card numbers ascending,
  index 0 = top) and shuffles it with Fisher-Yates from the top index down
  (:func:`service.engine.rng.fisher_yates`, the engine's shuffle): for ``i = 17`` down to ``1``:
  ``j = rng.below(i + 1)``; swap ``deck[i]`` and ``deck[j]``. That is exactly 17 calls,
  ``below(18), below(17), ..., below(2)``, and nothing else. With ``options.setup.deck_order``
  the shuffle is skipped and no RNG call is made at all.
* ``decide`` never draws: every later event follows from the deck order fixed at creation (the
  draw pile is dealt from it, top first). The whole deck order is written into ``CardsDealt``
  (``hands`` + ``pile``) so replay never needs the RNG.

Deal: deck positions 1-5 (top first) form seat 0's hand, 6-10 seat 1's hand, the remaining 8 the
draw pile (top first). After each relic phase seat 0 draws the top 2, then seat 1 the next 2.

Cards and scoring
-----------------
``CARDS`` (``data.py``) is the one data table (number, id, English and Czech names, suit,
objective kind and its parameters). Scoring (:func:`score_kingdoms`) is written once per
objective kind: ``EACH``, ``MAJ``, ``SET``, ``MISSING``, ``SINGLES``, ``BEST``, ``TIES``,
``DOUBLE`` (spec sections 2.3, 6).

Events
------
``CardsDealt{hands, pile, pile_size}`` · ``PickCommitted{card}`` (seat) · ``PicksRevealed{round,
pick, cards}`` · ``HandsExchanged{pick, hands, hand_sizes}`` · ``RoundScored{round, per_card,
counts, raw_counts, totals, round_scores, running_totals}`` · ``RelicCommitted{keep, remove}``
(seat) · ``RelicsRevealed{round, kept, removed}`` · ``CardsDrawn{cards, count}`` (seat) ·
``RoundStarted{round}`` · ``GameEnded{totals, ranks, winners, round_scores}``.

Hidden information (``visible``/``view``): a hand only to its holder (other viewers get ``None``
and sizes); a committed pick or relic choice only to its committer until the reveal; the draw
pile order to nobody while the game runs (including ``options.setup.deck_order`` inside the
``GameCreated`` event). Everything is public after the end. In the relic phase a seat's hand in
the view is the 5 cards it played this round, taken back into hand (spec 5.3.1); they are public
all the same, and ``played_this_round`` and ``kingdom`` keep listing them until the reveal.
"""

from __future__ import annotations

from typing import Any, Sequence

from ...engine import (ALL, Action, Event, Game, IllegalAction, InvalidOptions, Outcome, State,
                      Viewer, clone, event, fields_detail, is_int, redact, sees,
                      standard_result)
from ...engine.actions import action_type, check_fields, invalid_field
from ...engine.rng import fisher_yates
from . import schemas
from .data import (CARDS, DRAFT, DRAW_AFTER_RELICS, GAME_OVER, HAND_SIZE, NUMBERS, PICKS_PER_ROUND,
                   RELIC, ROUNDS, SCORED, SETUP, SUITS)

# ---------------------------------------------------------------------------------------------
# Cards (the tables are data.py's)
# ---------------------------------------------------------------------------------------------

def objective(card: dict[str, Any]) -> str:
    """A card's scoring objective in a few words (section 2's table), for people reading it."""
    p = card["params"]
    kind = card["kind"]
    if kind == "MAJ":
        return f"most {p['suit']}: {p['points']}"
    if kind == "EACH":
        return f"{p['points']} per {p['suit']}"
    if kind == "SET":
        suits = "all five suits" if len(p["suits"]) == len(SUITS) else "+".join(p["suits"])
        return f"{p['points']} per set of {suits}"
    if kind == "MISSING":
        return f"{p['points']} per missing suit"
    if kind == "SINGLES":
        return f"more single suits: {p['points']}"
    if kind == "BEST":
        return f"another card beats their best: {p['points']}"
    return {"TIES": "wins every tie", "DOUBLE": "doubles your biggest suit"}[kind]


CANONICAL_DECK: tuple[int, ...] = NUMBERS  # 1..18, the order every shuffle starts from

#: Which card a rule refers to, by kind (each of these kinds exists on exactly one card).
KINGS_NEST = next(n for n, c in CARDS.items() if c["kind"] == "TIES")
ROOF = next(n for n, c in CARDS.items() if c["kind"] == "DOUBLE")


# ---------------------------------------------------------------------------------------------
# Scoring (spec section 6), pure functions on lists of card numbers
# ---------------------------------------------------------------------------------------------

def raw_counts(kingdom: Sequence[int]) -> dict[str, int]:
    counts = {s: 0 for s in SUITS}
    for card in kingdom:
        suit = CARDS[card]["suit"]
        if suit is not None:
            counts[suit] += 1
    return counts


def effective_counts(kingdom: Sequence[int]) -> dict[str, int]:
    """Step 1: raw counts, with every most numerous suit doubled when the Roof is present."""
    counts = raw_counts(kingdom)
    if any(CARDS[c]["kind"] == "DOUBLE" for c in kingdom):
        top = max(counts.values())
        if top > 0:
            counts = {s: (2 * v if v == top else v) for s, v in counts.items()}
    return counts


def _beats(mine: int, theirs: int, wins_ties: bool, strict_zero_ties: bool) -> tuple[bool, bool]:
    """(P beats O, the win came from The Kings Nest's tie rule)."""
    if mine > theirs:
        return True, False
    if mine == theirs and wins_ties and (mine > 0 or not strict_zero_ties):
        return True, True
    return False, False


def _score_card(card: int, n: dict[str, int], n_opp: dict[str, int], wins_ties: bool,
                strict: bool) -> dict[str, Any]:
    """Section 2.3 for every kind except BEST (which needs the others first)."""
    info = CARDS[card]
    kind, p = info["kind"], info["params"]
    line: dict[str, Any] = {"card": card, "id": info["id"], "kind": kind}
    if kind == "EACH":
        count = n[p["suit"]]
        line.update(points=p["points"] * count, suit=p["suit"], count=count, per=p["points"])
    elif kind == "MAJ":
        mine, theirs = n[p["suit"]], n_opp[p["suit"]]
        won, by_tie = _beats(mine, theirs, wins_ties, strict)
        line.update(points=p["points"] if won else 0, suit=p["suit"], mine=mine, theirs=theirs,
                    tie_won=by_tie)
    elif kind == "SET":
        sets = min(n[s] for s in p["suits"])
        line.update(points=p["points"] * sets, suits=list(p["suits"]), sets=sets,
                    per=p["points"])
    elif kind == "MISSING":
        missing = [s for s in SUITS if n[s] == 0]
        line.update(points=p["points"] * len(missing), missing=missing, per=p["points"])
    elif kind == "SINGLES":
        mine = sum(1 for s in SUITS if n[s] == 1)
        theirs = sum(1 for s in SUITS if n_opp[s] == 1)
        won, by_tie = _beats(mine, theirs, wins_ties, strict)
        line.update(points=p["points"] if won else 0, mine=mine, theirs=theirs, tie_won=by_tie)
    elif kind in ("TIES", "DOUBLE"):
        line.update(points=0)
    else:  # BEST is scored by the caller
        raise ValueError(kind)
    return line


def score_kingdoms(kingdoms: Sequence[Sequence[int]], strict_zero_ties: bool = False) -> dict:
    """Score both kingdoms (spec section 6).

    Returns ``{"per_card": [[line, ...] per seat], "counts", "raw_counts", "totals"}``; each line
    is ``{"card", "id", "kind", "points", ...why...}`` in kingdom order.
    """
    raws = [raw_counts(k) for k in kingdoms]
    counts = [effective_counts(k) for k in kingdoms]
    ties = [KINGS_NEST in k for k in kingdoms]
    per_card: list[list[dict]] = []
    for seat, kingdom in enumerate(kingdoms):
        opp = 1 - seat
        lines = []
        for card in kingdom:
            if CARDS[card]["kind"] == "BEST":
                lines.append({"card": card, "id": CARDS[card]["id"], "kind": "BEST",
                              "points": 0})
            else:
                lines.append(_score_card(card, counts[seat], counts[opp], ties[seat],
                                         strict_zero_ties))
        per_card.append(lines)
    # Step 4: the BEST card(s) last, against step-3 scores only (never their own points).
    step3 = [[ln["points"] for ln in lines if ln["kind"] != "BEST"] for lines in per_card]
    for seat, lines in enumerate(per_card):
        for line in lines:
            if line["kind"] != "BEST":
                continue
            p = CARDS[line["card"]]["params"]
            mine = max(step3[seat], default=0)
            theirs = max(step3[1 - seat], default=0)
            won, by_tie = _beats(mine, theirs, ties[seat], strict_zero_ties)
            line.update(points=p["points"] if won else 0, mine=mine, theirs=theirs,
                        tie_won=by_tie)
    totals = [sum(ln["points"] for ln in lines) for lines in per_card]
    return {"per_card": per_card, "counts": counts, "raw_counts": raws, "totals": totals}


def shuffled_deck(rng) -> list[int]:
    """The documented shuffle: Fisher-Yates over ``[1..18]`` from the top index down. It draws
    through ``rng.below`` alone, so that the spec's conformance vector (the reference Mulberry32
    generator, which has nothing but ``below``) checks this very function; with the engine's
    :class:`~service.engine.rng.Rng` the draws are those of ``rng.shuffled``."""
    deck = list(CANONICAL_DECK)
    fisher_yates(deck, rng.below)
    return deck


# ---------------------------------------------------------------------------------------------
# Action validation helpers
# ---------------------------------------------------------------------------------------------

def _card_fields(action: Action, fields: Sequence[str]) -> list[int]:
    """The card numbers of an action that takes exactly ``fields``, each a JSON integer."""
    check_fields(action, fields)
    cards = [action[name] for name in fields]
    for name, card in zip(fields, cards):
        if not is_int(card):
            raise invalid_field(name, f"'{name}' must be a card number (integer)")
    return cards


#: The action types (docs/design/api.md's action vocabulary).
ACTIONS = ("pick", "relic")

_CARD_SCHEMA = {"type": "integer", "minimum": 1, "maximum": 18}


class TidesOfTime(Game):
    type_id = "tides-of-time"
    catalog_position = 3
    name = "Tides of Time"
    min_players = 2
    max_players = 2
    event_schema = 1
    options_schema = {
        "type": "object",
        "properties": {
            "strict_zero_ties": {
                "type": "boolean", "default": False,
                "description": "The Kings Nest does not win a 0-0 tie (MAJ with neither player "
                               "holding the suit, SINGLES 0-0, BEST 0-0).",
            },
            "setup": {
                "type": ["object", "null"],
                "x-error": {"code": "invalid_setup"},
                "properties": {
                    "deck_order": {
                        "type": "array", "items": _CARD_SCHEMA, "minItems": 18, "maxItems": 18,
                        "uniqueItems": True,
                        "description": "The 18 card numbers, top first (replaces the shuffle).",
                    },
                },
                "additionalProperties": False,
            },
        },
        "additionalProperties": False,
    }
    variants = [
        {"id": "standard", "name": "Standard", "options": {"strict_zero_ties": False}},
        {"id": "strict-zero-ties", "name": "Strict zero ties",
         "options": {"strict_zero_ties": True}},
    ]
    action_schemas = {
        "pick": {
            "type": "object",
            "properties": {"type": {"const": "pick"}, "card": _CARD_SCHEMA},
            "required": ["type", "card"], "additionalProperties": False,
        },
        "relic": {
            "type": "object",
            "properties": {"type": {"const": "relic"}, "keep": _CARD_SCHEMA,
                           "remove": _CARD_SCHEMA},
            "required": ["type", "keep", "remove"], "additionalProperties": False,
        },
    }
    state_schema = schemas.STATE
    event_schemas = schemas.EVENTS

    # -- creation -------------------------------------------------------------------------
    def normalize_options(self, options: dict, players: Sequence[dict]) -> dict:
        if len(players) != 2:
            raise InvalidOptions("invalid_player_count", "Tides of Time needs exactly 2 players",
                                 {"option": "", "players": len(players)})
        # The schema says everything else: 18 distinct numbers from 1..18 are a permutation.
        out = self.checked_options(options)
        if out.get("setup"):
            out["setup"] = {"deck_order": list(out["setup"]["deck_order"])}
        else:
            out.pop("setup", None)
        return out

    def initial(self, players: Sequence[dict], options: dict) -> State:
        setup = options.get("setup") or {}
        return {
            "strict_zero_ties": bool(options.get("strict_zero_ties", False)),
            "deck_order": list(setup["deck_order"]) if "deck_order" in setup else None,
            "custom_setup": bool(options.get("setup")),
            "phase": SETUP,
            "round": 0,
            "pick": 0,
            "hands": [[], []],
            "relics": [[], []],
            "played": [[], []],
            "pile": [],
            "removed": [],
            "pending": [None, None],
            "round_scores": [[], []],
            "totals": [0, 0],
            "rounds": [],
            "result": None,
        }

    def create(self, state: State, rng) -> tuple[list[Event], State]:
        deck = list(state["deck_order"]) if state["deck_order"] is not None else shuffled_deck(rng)
        hands = [deck[0:HAND_SIZE], deck[HAND_SIZE:2 * HAND_SIZE]]
        pile = deck[2 * HAND_SIZE:]
        out = Outcome(self, state)
        out.emit("CardsDealt", {"hands": hands, "pile": pile, "pile_size": len(pile)})
        return out.done()

    # -- the decider ----------------------------------------------------------------------
    def decide(self, state: State, seat: int, action: Action,
               rng) -> tuple[list[Event], State]:
        kind = action_type(action, ACTIONS)
        phase = state["phase"]
        if phase == GAME_OVER:
            raise IllegalAction("wrong_phase", "the game is over", {"phase": phase})
        if (kind == "pick") != (phase == DRAFT) or phase not in (DRAFT, RELIC):
            raise IllegalAction("wrong_phase", f"'{kind}' is not possible in phase {phase}",
                                {"phase": phase})
        if not is_int(seat) or seat not in (0, 1):
            raise IllegalAction("not_a_seat", "no such seat")
        if state["pending"][seat] is not None:
            raise IllegalAction("already_committed", "you have already committed this step")
        if kind == "pick":
            (card,) = _card_fields(action, ("card",))
            if card not in state["hands"][seat]:
                raise IllegalAction("card_not_in_hand", f"card {card} is not in your hand",
                                    {"card": card})
        else:
            keep, remove = _card_fields(action, ("keep", "remove"))
            played = state["played"][seat]
            for name, card in (("keep", keep), ("remove", remove)):
                if card not in played:
                    message = f"{name}: card {card} is not one of your 5 cards of this round"
                    raise IllegalAction("not_played_this_round", message,
                                        {**fields_detail(name, message), "card": card})
            if keep == remove:
                raise IllegalAction("same_card", "keep and remove must be different cards",
                                    {"card": keep})
        committed = (event("PickCommitted", {"card": card}, seat) if kind == "pick" else
                     event("RelicCommitted", {"keep": keep, "remove": remove}, seat))
        if state["pending"][1 - seat] is None:
            # Performance shortcut (half of all commands, and of every simulated step): a commit
            # the other seat has yet to match changes only ``pending``, so the state after it
            # shares everything else with ``state``. That is safe because a built state is never
            # mutated: every decide works on a clone (Outcome), every replay on a fresh state.
            after = {**state, "pending": list(state["pending"])}
            self.apply(after, committed)
            return [committed], after
        out = Outcome(self, state)  # both committed: the step resolves
        out.emit(committed["type"], committed["data"], seat)
        if kind == "pick":
            self._resolve_picks(out)
        else:
            self._resolve_relics(out)
        return out.done()

    def _resolve_picks(self, out: Outcome) -> None:
        work = out.state
        pick = work["pick"]
        cards = list(work["pending"])
        out.emit("PicksRevealed", {"round": work["round"], "pick": pick, "cards": cards})
        if pick < PICKS_PER_ROUND:
            hands = [list(work["hands"][1]), list(work["hands"][0])]
            out.emit("HandsExchanged", {"pick": pick + 1, "hands": hands,
                                        "hand_sizes": [len(h) for h in hands]})
            return
        kingdoms = [work["relics"][s] + work["played"][s] for s in (0, 1)]
        scored = score_kingdoms(kingdoms, work["strict_zero_ties"])
        rnd = work["round"]
        round_scores = [work["round_scores"][s] + [scored["totals"][s]] for s in (0, 1)]
        out.emit("RoundScored", {
            "round": rnd,
            "kingdoms": kingdoms,
            "per_card": scored["per_card"],
            "counts": scored["counts"],
            "raw_counts": scored["raw_counts"],
            "totals": scored["totals"],
            "round_scores": round_scores,
            "running_totals": [sum(r) for r in round_scores],
        })
        if rnd >= ROUNDS:
            res = self._final(work)
            out.emit("GameEnded", {
                "totals": res["scores"], "ranks": res["ranks"], "winners": res["winners"],
                "round_scores": [list(r) for r in work["round_scores"]]})

    def _resolve_relics(self, out: Outcome) -> None:
        work = out.state
        kept = [p["keep"] for p in work["pending"]]
        removed = [p["remove"] for p in work["pending"]]
        out.emit("RelicsRevealed", {"round": work["round"], "kept": kept, "removed": removed})
        for seat in (0, 1):
            cards = work["pile"][:DRAW_AFTER_RELICS]
            out.emit("CardsDrawn", {"cards": cards, "count": len(cards)}, seat)
        out.emit("RoundStarted", {"round": work["round"] + 1})

    def apply(self, state: State, ev: Event) -> None:
        t, d, seat = ev["type"], ev["data"], ev.get("seat")
        if t == "CardsDealt":
            state["hands"] = [list(h) for h in d["hands"]]
            state["pile"] = list(d["pile"])
            state["phase"], state["round"], state["pick"] = DRAFT, 1, 1
        elif t == "PickCommitted":
            state["pending"][seat] = d["card"]
        elif t == "PicksRevealed":
            for s, card in enumerate(d["cards"]):
                state["hands"][s].remove(card)
                state["played"][s].append(card)
            state["pending"] = [None, None]
        elif t == "HandsExchanged":
            state["hands"] = [list(h) for h in d["hands"]]
            state["pick"] = d["pick"]
        elif t == "RoundScored":
            state["round_scores"] = [list(r) for r in d["round_scores"]]
            state["totals"] = list(d["running_totals"])
            if state["rounds"] is not None:  # None: a bot simulation's state keeps no breakdown
                state["rounds"].append(clone({k: d[k] for k in (
                    "round", "kingdoms", "per_card", "counts", "raw_counts", "totals")}))
            state["phase"] = RELIC if d["round"] < ROUNDS else SCORED
        elif t == "RelicCommitted":
            state["pending"][seat] = {"keep": d["keep"], "remove": d["remove"]}
        elif t == "RelicsRevealed":
            for s in (0, 1):
                keep, remove = d["kept"][s], d["removed"][s]
                state["relics"][s].append(keep)
                state["hands"][s] = [c for c in state["played"][s] if c not in (keep, remove)]
                state["played"][s] = []
            state["removed"].extend(d["removed"])
            state["pending"] = [None, None]
        elif t == "CardsDrawn":
            cards = d["cards"]
            assert state["pile"][:len(cards)] == cards, "draw does not match the pile"
            state["pile"] = state["pile"][len(cards):]
            state["hands"][seat].extend(cards)
        elif t == "RoundStarted":
            state["round"], state["pick"], state["phase"] = d["round"], 1, DRAFT
        elif t == "GameEnded":
            state["phase"] = GAME_OVER
            state["result"] = {"scores": list(d["totals"]), "ranks": list(d["ranks"]),
                               "winners": list(d["winners"])}
        else:
            raise ValueError(f"unknown event type {t!r}")

    # -- questions about a state ----------------------------------------------------------
    def is_over(self, state: State) -> bool:
        return state["phase"] == GAME_OVER

    def awaiting(self, state: State) -> list[int]:
        if state["phase"] not in (DRAFT, RELIC):
            return []
        return [s for s in (0, 1) if state["pending"][s] is None]

    def not_awaited_reason(self, state: State, seat: int) -> str:
        if state["phase"] == GAME_OVER:
            return "game_over"
        if seat not in (0, 1):
            return "not_a_seat"
        if state["phase"] in (DRAFT, RELIC) and state["pending"][seat] is not None:
            return "already_committed"
        return "wrong_phase"

    def legal_actions(self, state: State, seat: int) -> list[Action]:
        if seat not in self.awaiting(state):
            return []
        if state["phase"] == DRAFT:
            return [{"type": "pick", "card": c} for c in sorted(state["hands"][seat])]
        played = sorted(state["played"][seat])
        return [{"type": "relic", "keep": k, "remove": r}
                for k in played for r in played if k != r]

    def timeout_action(self, state: State, seat: int) -> Action:
        if state["phase"] == DRAFT:
            return {"type": "pick", "card": min(state["hands"][seat])}
        played = state["played"][seat]
        lines = state["rounds"][-1]["per_card"][seat]
        points = {ln["card"]: ln["points"] for ln in lines}
        keep = min(played, key=lambda c: (-points.get(c, 0), c))
        remove = min(c for c in played if c != keep)
        return {"type": "relic", "keep": keep, "remove": remove}

    def _final(self, state: State) -> dict:
        totals = [sum(r) for r in state["round_scores"]]
        return standard_result(totals)

    def result(self, state: State) -> dict | None:
        if state["phase"] != GAME_OVER:
            return None
        res = self._final(state)
        res["details"] = {
            "round_scores": [list(r) for r in state["round_scores"]],
            "totals": res["scores"],
            "rounds": clone(state["rounds"]),
            "kingdoms": [state["relics"][s] + state["played"][s] for s in (0, 1)],
            "relics": [list(r) for r in state["relics"]],
            "removed": list(state["removed"]),
            "shared_victory": len(res["winners"]) > 1,
        }
        return res

    # -- information ----------------------------------------------------------------------
    def public_tables(self) -> dict:
        return {"cards": {str(n): {"id": c["id"], "name": c["name"], "suit": c["suit"],
                                   "objective": objective(c)} for n, c in CARDS.items()}}

    def view(self, state: State, viewer: Viewer) -> dict:
        over = state["phase"] == GAME_OVER
        # Spec 5.3.1: in the relic phase each seat has taken this round's 5 cards back into
        # hand (the state keeps them in ``played``, where the relic choice reads them).
        relic = state["phase"] == RELIC
        seats = []
        for s in (0, 1):
            mine = over or sees(viewer, s)
            pending = state["pending"][s]
            hand = state["played"][s] if relic else state["hands"][s]
            seats.append({
                "seat": s,
                "hand": list(hand) if mine else None,
                "hand_size": len(hand),
                "kingdom": state["relics"][s] + state["played"][s],
                "relics": list(state["relics"][s]),
                "played_this_round": list(state["played"][s]),
                "committed": pending is not None,
                "pending": clone(pending) if (mine and pending is not None) else None,
                "round_scores": list(state["round_scores"][s]),
                "total": state["totals"][s],
            })
        out = {
            "phase": state["phase"],
            "round": state["round"],
            "pick": state["pick"] if state["phase"] == DRAFT else None,
            "seats": seats,
            "draw_pile_size": len(state["pile"]),
            "removed": list(state["removed"]),
            "rounds": clone(state["rounds"]),
            "strict_zero_ties": state["strict_zero_ties"],
            "setup": "custom" if state["custom_setup"] else "standard",
        }
        if over or viewer == ALL:
            out["draw_pile"] = list(state["pile"])
        return out

    def visible(self, ev: Event, viewer: Viewer) -> Event | None:
        if viewer == ALL:
            return ev
        t = ev["type"]
        if t in ("CardsDealt", "HandsExchanged"):
            hands = [h if sees(viewer, s) else None for s, h in enumerate(ev["data"]["hands"])]
            return redact(ev, drop=("pile",), replace={"hands": hands})
        if t in ("PickCommitted", "CardsDrawn"):
            if sees(viewer, ev["seat"]):
                return ev
            return redact(ev, drop=("card", "cards"))
        if t == "RelicCommitted":
            if sees(viewer, ev["seat"]):
                return ev
            return redact(ev, drop=("keep", "remove"))
        return ev


GAME = TidesOfTime()
