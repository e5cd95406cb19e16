"""Diamant (IELLO edition, 2016): rules module. Normative spec: shared/rules/diamant.md.

Cards and canonical order (spec 2.4)
------------------------------------
``CANONICAL`` = the 15 treasures ``T1 T2 T3 T4 T5a T5b T7a T7b T9 T11a T11b T13 T14 T15 T17``,
then the 15 traps ``SPIDER1..3 SNAKE1..3 LAVA1..3 BOULDER1..3 RAM1..3``, then the relics
``R1..R5``.

Randomness (the only draws of the module)
-----------------------------------------
Every round's deck is built from ``CANONICAL`` restricted to the cards currently in the deck
(all 35 minus removed traps, minus relics taken or removed), then shuffled with exactly one
``rng.shuffle(list)`` call. Round 1 is shuffled in ``create``; the deck of round r+1 is shuffled
inside the command that ends round r (no shuffle after round 5). When
``options.setup.round_decks[r-1]`` exists, round r's deck is that list restricted to the cards in
the deck (top first) and no draw is made for that round. Nothing else draws.

State (JSON-plain)
------------------
``n``, ``options``, ``round`` (0 before the first RoundStarted), ``phase`` (``"decision"`` while
running, ``"game_over"`` at the end), ``deck`` (top first), ``path`` (cards revealed this round and
still on the path: relics taken by a lone returner leave the path), ``path_rubies``, ``removed``
(ids removed from the game, in removal order: at a round end first the unclaimed relics in path
order, then the trap card that ended the round), ``relics_brought_back``, and per seat lists
``in_cave``, ``pocket``, ``chest``, ``taken`` (relic ids taken), ``relic_points``, ``choice``
(pending committed choice or None).

Invariant: ``deck + path + removed + all taken`` is exactly the 35 ids (each once).

Events (apply is total for all of them)
---------------------------------------
* ``RoundStarted{round, deck, deck_size}`` — ``deck`` is the round's order, top first (secret to
  everybody while the game runs: ``visible`` drops it).
* ``CardRevealed{card, kind, value, share_each, remainder, path_rubies, recipients}`` — ``kind``
  is ``"treasure"``, ``"trap"`` or ``"relic"``; for a treasure ``value`` is its rubies,
  ``recipients`` the seats in the cave (ascending), ``share_each = value // len(recipients)``,
  ``remainder = value % len(recipients)``; for traps and relics ``value`` is None, ``share_each``
  and ``remainder`` are 0 and ``recipients`` is []. ``path_rubies`` is the total after the card.
* ``ChoiceCommitted`` (``seat`` set) ``{choice}`` — others see ``data == {}``.
* ``ChoicesRevealed{choices}`` — per seat, None for seats in camp.
* ``PlayersReturned{seats, share_each, remainder, relics_taken, relic_values}`` — only when at
  least one seat returns; ``remainder`` is what stays on the path; ``relics_taken`` (ids in path
  order) and ``relic_values`` are [] unless exactly one seat returns.
* ``RoundEndedByTrap{trap, card, lost_pockets}`` — ``lost_pockets`` per seat (0 for camp).
* ``RoundEnded{round, reason ("trap"|"all_returned"), removed_trap (id or None), removed_relics}``
  — cleanup: path rubies to the bank, unclaimed relics removed, the ending trap removed, the rest
  of the path back into the deck (the deck is then held in canonical order until shuffled).
* ``GameEnded{scores, winners}`` — after round 5's RoundEnded.

View after the end: ``round`` 5, ``phase`` ``"game_over"``, and path/pockets as they stand after
round 5's cleanup: ``path`` [], ``path_rubies`` 0, all pockets 0, nobody in the cave,
``deck_size`` = 35 - removed - taken relics; every chest and nothing else secret.
"""

from __future__ import annotations

from typing import Any, Sequence

from ...engine import (ALL, Game, IllegalAction, Outcome, clone, redact, sees,
                      standard_result)
from ...engine.actions import action_type, check_fields, invalid_field

from . import schemas
from .data import (ACTIONS, CANONICAL, CHOICES, MAX_PLAYERS, MIN_PLAYERS, RELIC_VALUES, ROUNDS,
                   TRAP_TYPE, TREASURE_VALUE)


def kind_of(card: str) -> str:
    if card in TREASURE_VALUE:
        return "treasure"
    if card in TRAP_TYPE:
        return "trap"
    return "relic"


def canonical_restricted(cards) -> list[str]:
    present = set(cards)
    return [c for c in CANONICAL if c in present]


class Diamant(Game):
    type_id = "diamant"
    catalog_position = 4
    name = "Diamant"
    min_players = MIN_PLAYERS
    max_players = MAX_PLAYERS
    options_schema = {
        "type": "object",
        "properties": {
            "setup": {
                "type": ["object", "null"],
                "x-error": {"code": "invalid_setup"},
                "properties": {
                    "round_decks": {
                        "type": "array",
                        "maxItems": ROUNDS,
                        "description": "one list per round, each a permutation of the 35 card "
                                       "ids, top first; rounds without a list are shuffled",
                        "items": {
                            "type": "array",
                            "minItems": len(CANONICAL),
                            "maxItems": len(CANONICAL),
                            "uniqueItems": True,
                            "items": {"type": "string", "enum": list(CANONICAL)},
                        },
                    },
                },
                "additionalProperties": False,
            },
        },
        "additionalProperties": False,
    }
    variants: list[dict] = []
    action_schemas = {
        "decide": {
            "type": "object",
            "properties": {
                "type": {"const": "decide"},
                "choice": {"enum": list(CHOICES)},
            },
            "required": ["type", "choice"],
            "additionalProperties": False,
        },
    }
    state_schema = schemas.STATE
    event_schemas = schemas.EVENTS

    # -- creation -------------------------------------------------------------------------
    def normalize_options(self, options: dict, players: Sequence[dict]) -> dict:
        # The schema says everything: 35 distinct ids of the 35 cards are a permutation.
        setup = self.checked_options(options).get("setup")
        if setup is None:
            return {}
        if "round_decks" not in setup:
            return {"setup": {}}
        return {"setup": {"round_decks": [list(deck) for deck in setup["round_decks"]]}}

    def initial(self, players: Sequence[dict], options: dict) -> dict:
        n = len(players)
        return {
            "n": n,
            "options": clone(options),
            "round": 0,
            "phase": "decision",
            "deck": list(CANONICAL),
            "path": [],
            "path_rubies": 0,
            "removed": [],
            "relics_brought_back": 0,
            "in_cave": [False] * n,
            "pocket": [0] * n,
            "chest": [0] * n,
            "taken": [[] for _ in range(n)],
            "relic_points": [0] * n,
            "choice": [None] * n,
        }

    def create(self, state: dict, rng) -> tuple[list[dict], dict]:
        out = Outcome(self, state, rng)
        self._start_round(out, 1)
        return out.done()

    # -- automatic consequences (on the outcome's working clone) --------------------------
    def _start_round(self, out: Outcome, rnd: int) -> None:
        work = out.state
        deck = canonical_restricted(work["deck"])
        decks = work["options"].get("setup", {}).get("round_decks", [])
        if rnd - 1 < len(decks):
            present = set(deck)
            deck = [c for c in decks[rnd - 1] if c in present]
        else:
            out.rng.shuffle(deck)
        out.emit("RoundStarted", {"round": rnd, "deck": deck, "deck_size": len(deck)})
        self._reveal(out)

    def _reveal(self, out: Outcome) -> None:
        work = out.state
        if not work["deck"]:  # impossible by spec 8; a bug if reached
            raise RuntimeError("Diamant: the deck ran out with players in the cave")
        card = work["deck"][0]
        kind = kind_of(card)
        data: dict[str, Any] = {"card": card, "kind": kind, "value": None, "share_each": 0,
                                "remainder": 0, "path_rubies": work["path_rubies"],
                                "recipients": []}
        repeat = False
        if kind == "treasure":
            value = TREASURE_VALUE[card]
            recipients = [s for s in range(work["n"]) if work["in_cave"][s]]
            share, rem = divmod(value, len(recipients))
            data.update(value=value, share_each=share, remainder=rem,
                        path_rubies=work["path_rubies"] + rem, recipients=recipients)
        elif kind == "trap":
            t = TRAP_TYPE[card]
            repeat = any(TRAP_TYPE.get(c) == t for c in work["path"])
        out.emit("CardRevealed", data)
        if repeat:
            lost = [work["pocket"][s] if work["in_cave"][s] else 0 for s in range(work["n"])]
            out.emit("RoundEndedByTrap", {"trap": TRAP_TYPE[card], "card": card,
                                          "lost_pockets": lost})
            self._end_round(out, "trap", card)

    def _end_round(self, out: Outcome, reason: str, trap_card: str | None) -> None:
        work = out.state
        rnd = work["round"]
        relics = [c for c in work["path"] if kind_of(c) == "relic"]
        out.emit("RoundEnded", {"round": rnd, "reason": reason, "removed_trap": trap_card,
                                "removed_relics": relics})
        if rnd >= ROUNDS:
            res = standard_result(work["chest"])
            out.emit("GameEnded", {"scores": res["scores"], "winners": res["winners"]})
        else:
            self._start_round(out, rnd + 1)

    # -- the decider ----------------------------------------------------------------------
    def _parse(self, action: Any) -> str:
        action_type(action, ACTIONS)
        check_fields(action, ("choice",))
        choice = action["choice"]
        if not isinstance(choice, str) or choice not in CHOICES:
            raise invalid_field("choice", "choice must be 'continue' or 'return'")
        return choice

    def decide(self, state: dict, seat: int, action: dict, rng) -> tuple[list[dict], dict]:
        choice = self._parse(action)
        if self.is_over(state) or seat not in self.awaiting(state):
            raise IllegalAction(self.not_awaited_reason(state, seat),
                                "this seat has no decision to make now")
        out = Outcome(self, state, rng)
        work = out.state
        out.emit("ChoiceCommitted", {"choice": choice}, seat)
        n = work["n"]
        if any(work["in_cave"][s] and work["choice"][s] is None for s in range(n)):
            return out.done()
        choices = [work["choice"][s] if work["in_cave"][s] else None for s in range(n)]
        out.emit("ChoicesRevealed", {"choices": choices})
        leavers = [s for s in range(n) if choices[s] == "return"]
        if leavers:
            share, rem = divmod(work["path_rubies"], len(leavers))
            taken: list[str] = []
            values: list[int] = []
            if len(leavers) == 1:
                taken = [c for c in work["path"] if kind_of(c) == "relic"]
                k = work["relics_brought_back"]
                values = [RELIC_VALUES[k + i] for i in range(len(taken))]
            out.emit("PlayersReturned", {"seats": leavers, "share_each": share, "remainder": rem,
                                         "relics_taken": taken, "relic_values": values})
        if any(work["in_cave"]):
            self._reveal(out)
        else:
            self._end_round(out, "all_returned", None)
        return out.done()

    def apply(self, state: dict, ev: dict) -> None:
        t = ev["type"]
        d = ev["data"]
        n = state["n"]
        if t == "RoundStarted":
            state["round"] = d["round"]
            state["phase"] = "decision"
            state["deck"] = list(d["deck"])
            state["path"] = []
            state["path_rubies"] = 0
            state["in_cave"] = [True] * n
            state["pocket"] = [0] * n
            state["choice"] = [None] * n
        elif t == "CardRevealed":
            card = d["card"]
            if card in state["deck"]:
                state["deck"].remove(card)
            state["path"].append(card)
            for s in d["recipients"]:
                state["pocket"][s] += d["share_each"]
            state["path_rubies"] = d["path_rubies"]
        elif t == "ChoiceCommitted":
            state["choice"][ev["seat"]] = d["choice"]
        elif t == "ChoicesRevealed":
            state["choice"] = [None] * n
        elif t == "PlayersReturned":
            share = d["share_each"]
            relic_total = sum(d["relic_values"])
            for s in d["seats"]:
                state["chest"][s] += state["pocket"][s] + share
                state["pocket"][s] = 0
                state["in_cave"][s] = False
            if len(d["seats"]) == 1 and d["relics_taken"]:
                s = d["seats"][0]
                state["chest"][s] += relic_total
                state["relic_points"][s] += relic_total
                state["taken"][s].extend(d["relics_taken"])
                state["relics_brought_back"] += len(d["relics_taken"])
                taken = set(d["relics_taken"])
                state["path"] = [c for c in state["path"] if c not in taken]
            state["path_rubies"] = d["remainder"]
        elif t == "RoundEndedByTrap":
            for s in range(n):
                if state["in_cave"][s]:
                    state["pocket"][s] = 0
                    state["in_cave"][s] = False
        elif t == "RoundEnded":
            gone = set(d["removed_relics"])
            state["removed"].extend(d["removed_relics"])
            if d["removed_trap"] is not None:
                gone.add(d["removed_trap"])
                state["removed"].append(d["removed_trap"])
            back = [c for c in state["path"] if c not in gone]
            state["deck"] = canonical_restricted(state["deck"] + back)
            state["path"] = []
            state["path_rubies"] = 0
            state["pocket"] = [0] * n
            state["in_cave"] = [False] * n
            state["choice"] = [None] * n
        elif t == "GameEnded":
            state["phase"] = "game_over"
        else:  # pragma: no cover - an event this module never writes
            raise ValueError(f"unknown Diamant event {t!r}")

    # -- questions about a state ----------------------------------------------------------
    def is_over(self, state: dict) -> bool:
        return state["phase"] == "game_over"

    def awaiting(self, state: dict) -> list[int]:
        if self.is_over(state):
            return []
        return [s for s in range(state["n"])
                if state["in_cave"][s] and state["choice"][s] is None]

    def not_awaited_reason(self, state: dict, seat: int) -> str:
        if self.is_over(state):
            return "game_over"
        if not isinstance(seat, int) or not 0 <= seat < state["n"]:
            return "not_a_seat"
        if state["in_cave"][seat]:
            return "already_committed"
        return "in_camp"

    def only_action(self, state: dict, seat: int) -> None:
        return None  # an awaited seat always chooses between its two CHOICES

    def legal_actions(self, state: dict, seat: int) -> list[dict]:
        if seat not in self.awaiting(state):
            return []
        return [{"type": "decide", "choice": c} for c in CHOICES]

    def timeout_action(self, state: dict, seat: int) -> dict:
        return {"type": "decide", "choice": "return"}

    def result(self, state: dict) -> dict | None:
        if not self.is_over(state):
            return None
        chests = list(state["chest"])
        return standard_result(chests, details={
            "chests": chests,
            "relics": [len(t) for t in state["taken"]],
            "relic_points": list(state["relic_points"]),
        })

    # -- information ----------------------------------------------------------------------
    def view(self, state: dict, viewer) -> dict:
        over = self.is_over(state)
        traps: dict[str, int] = {}
        for c in state["path"]:
            t = TRAP_TYPE.get(c)
            if t is not None:
                traps[t] = traps.get(t, 0) + 1
        players = []
        for s in range(state["n"]):
            committed = state["in_cave"][s] and state["choice"][s] is not None
            players.append({
                "seat": s,
                "in_cave": state["in_cave"][s],
                "pocket": state["pocket"][s],
                "chest": state["chest"][s] if (over or sees(viewer, s)) else None,
                "relics": len(state["taken"][s]),
                "committed": committed,
                "choice": state["choice"][s] if (committed and sees(viewer, s)) else None,
            })
        return {
            "round": max(1, state["round"]),
            "phase": "game_over" if over else "decision",
            "path": list(state["path"]),
            "path_rubies": state["path_rubies"],
            "deck_size": len(state["deck"]),
            "removed": list(state["removed"]),
            "relics_brought_back": state["relics_brought_back"],
            "traps_on_path": traps,
            "players": players,
        }

    def visible(self, ev: dict, viewer) -> dict | None:
        if viewer == ALL:
            return ev
        if ev["type"] == "RoundStarted":
            return redact(ev, drop=("deck",))
        if ev["type"] == "ChoiceCommitted" and not sees(viewer, ev["seat"]):
            return redact(ev, drop=("choice",))
        return ev


GAME = Diamant()
