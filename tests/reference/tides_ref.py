"""An independent reference implementation of Tides of Time (Portal Games 2015), written from
``/work/shared/rules/tides-of-time.md`` only, for cross-checking the production rules module.

Plain and deliberately naive: mutable attributes, no events, no cleverness. The caller owns the
random stream: the constructor takes an ``Rng`` (``service.engine.rng.Rng``) and makes exactly
the 17 draws of spec section 3 (none with ``deck_order``); nothing later ever draws.

Forced moves are played the way the engine does (``service.engine.runner.forced_moves``): after
creation and after every :meth:`TidesRef.act`, while some awaited seat (in ``awaiting()`` order)
has exactly one legal action, the first such seat plays it; repeat. Every forced move is
appended to ``forced_log`` as ``(seat, action)``.
"""

from __future__ import annotations

SUITS = ("palace", "library", "garden", "temple", "stronghold")
P, L, G, T, S = SUITS

# number -> (id, suit or None, kind, params)   (spec table 2.2 / 2.3)
CARDS: dict[int, tuple[str, str | None, str, tuple]] = {
    1: ("kings_nest", P, "TIES", ()),
    2: ("ancient_divide", P, "MAJ", (S,)),
    3: ("eternal_palace", P, "EACH", (L,)),
    4: ("great_library", L, "MAJ", (T,)),
    5: ("mana_well", L, "SET", ((P, S, T), 9)),
    6: ("citadel_of_prophets", L, "EACH", (G,)),
    7: ("golden_ziggurat", G, "MAJ", (P,)),
    8: ("gods_baths", G, "EACH", (S,)),
    9: ("maze_of_the_damned", G, "SET", ((P, L, G, T, S), 13)),
    10: ("eye_of_the_north", S, "MISSING", ()),
    11: ("jinn_shackles", S, "EACH", (T,)),
    12: ("old_mans_pass", S, "MAJ", (L,)),
    13: ("blood_tear_spring", T, "MAJ", (G,)),
    14: ("sky_pillars", T, "SET", ((L, G), 5)),
    15: ("vestibule", T, "EACH", (P,)),
    16: ("molehill", None, "SINGLES", ()),
    17: ("roof_of_the_world", None, "DOUBLE", ()),
    18: ("sapphire_port", None, "BEST", ()),
}
KINGS_NEST, ROOF, SAPPHIRE = 1, 17, 18

DRAFT, RELIC, GAME_OVER = "DRAFT", "RELIC", "GAME_OVER"


class Illegal(ValueError):
    """An action the reference refuses. ``code``: the spec's code (section 11), or
    ``not_awaited`` / ``malformed`` for what the engine answers with 409 / a generic 422.
    ``already_committed`` is the 409 reason of a seat that has committed (docs/design/api.md)."""

    def __init__(self, code: str, message: str = "") -> None:
        super().__init__(f"{code}: {message}" if message else code)
        self.code = code


# ---------------------------------------------------------------------------------------------
# Scoring (spec section 6), usable on its own
# ---------------------------------------------------------------------------------------------

def raw_counts(kingdom) -> dict[str, int]:
    out = {s: 0 for s in SUITS}
    for c in kingdom:
        suit = CARDS[c][1]
        if suit is not None:
            out[suit] += 1
    return out


def effective_counts(kingdom) -> dict[str, int]:
    raw = raw_counts(kingdom)
    if ROOF not in kingdom:
        return raw
    m = max(raw.values())
    if m == 0:
        return raw
    return {s: (2 * m if raw[s] == m else raw[s]) for s in SUITS}


def beats(a: int, b: int, has_nest: bool, strict_zero_ties: bool) -> bool:
    if a > b:
        return True
    if a == b and has_nest:
        return a > 0 if strict_zero_ties else True
    return False


def score_kingdoms(kingdoms, strict_zero_ties: bool = False):
    """``kingdoms``: two lists of card numbers (relics included).

    Returns ``(per_card, totals, counts)``: ``per_card[p]`` maps each card of seat p's kingdom to
    its points, ``totals[p]`` the round score, ``counts[p]`` the effective counts.
    """
    counts = [effective_counts(k) for k in kingdoms]
    nest = [KINGS_NEST in k for k in kingdoms]
    singles = [sum(1 for s in SUITS if counts[p][s] == 1) for p in (0, 1)]
    per_card: list[dict[int, int]] = [{}, {}]
    for p in (0, 1):
        o = 1 - p
        n = counts[p]
        for c in kingdoms[p]:
            _, _, kind, params = CARDS[c]
            if kind == "EACH":
                pts = 3 * n[params[0]]
            elif kind == "MAJ":
                s = params[0]
                pts = 7 if beats(n[s], counts[o][s], nest[p], strict_zero_ties) else 0
            elif kind == "SET":
                suits, value = params
                pts = value * min(n[s] for s in suits)
            elif kind == "MISSING":
                pts = 3 * sum(1 for s in SUITS if n[s] == 0)
            elif kind == "SINGLES":
                pts = 8 if beats(singles[p], singles[o], nest[p], strict_zero_ties) else 0
            elif kind in ("TIES", "DOUBLE", "BEST"):
                pts = 0  # BEST is filled in below (step 4)
            else:  # pragma: no cover
                raise AssertionError(kind)
            per_card[p][c] = pts
    for p in (0, 1):
        if SAPPHIRE in kingdoms[p]:
            o = 1 - p
            best_mine = max([v for c, v in per_card[p].items() if c != SAPPHIRE], default=0)
            best_theirs = max(per_card[o].values(), default=0)
            per_card[p][SAPPHIRE] = (
                8 if beats(best_mine, best_theirs, nest[p], strict_zero_ties) else 0)
    totals = [sum(per_card[p].values()) for p in (0, 1)]
    return per_card, totals, counts


# ---------------------------------------------------------------------------------------------
# The game
# ---------------------------------------------------------------------------------------------

class TidesRef:
    def __init__(self, options: dict | None = None, rng=None, auto_forced: bool = True) -> None:
        options = options or {}
        self.strict = bool(options.get("strict_zero_ties", False))
        order = (options.get("setup") or {}).get("deck_order")
        if order is not None:
            if sorted(order) != list(range(1, 19)):
                raise ValueError("deck_order must be a permutation of 1..18")
            deck = list(order)
        else:
            deck = list(range(1, 19))
            for i in range(17, 0, -1):
                j = rng.below(i + 1)
                deck[i], deck[j] = deck[j], deck[i]
        self.deck = list(deck)  # the full order, for tests
        self.hands = [deck[0:5], deck[5:10]]
        self.pile = deck[10:]  # top first
        self.relics: list[list[int]] = [[], []]
        self.played: list[list[int]] = [[], []]  # this round's cards, in play order
        self.removed: list[int] = []
        self.round = 1
        self.pick = 1
        self.phase = DRAFT
        self.pending: list = [None, None]
        self.round_scores: list[list[int]] = [[], []]
        self.round_per_card: list[list[dict[int, int]]] = []  # per round: [seat0, seat1]
        self.round_counts: list[list[dict[str, int]]] = []
        self.forced_log: list[tuple[int, dict]] = []
        self.auto_forced = auto_forced
        if auto_forced:
            self.play_forced()

    # -- questions ----------------------------------------------------------------------------
    def kingdom(self, seat: int) -> list[int]:
        return self.relics[seat] + self.played[seat]

    @property
    def over(self) -> bool:
        return self.phase == GAME_OVER

    def awaiting(self) -> list[int]:
        if self.over:
            return []
        return [s for s in (0, 1) if self.pending[s] is None]

    def legal(self, seat: int) -> list[dict]:
        if seat not in self.awaiting():
            return []
        if self.phase == DRAFT:
            return [{"type": "pick", "card": c} for c in sorted(self.hands[seat])]
        cards = sorted(self.played[seat])
        return [{"type": "relic", "keep": k, "remove": r}
                for k in cards for r in cards if k != r]

    # -- commands -----------------------------------------------------------------------------
    def act(self, seat: int, action: dict) -> None:
        self._act(seat, action)
        if self.auto_forced:
            self.play_forced()

    def play_forced(self) -> None:
        for _ in range(100):
            if self.over:
                return
            for seat in self.awaiting():
                actions = self.legal(seat)
                if len(actions) == 1:
                    self.forced_log.append((seat, actions[0]))
                    self._act(seat, actions[0])
                    break
            else:
                return
        raise RuntimeError("forced moves did not settle")

    def _act(self, seat: int, action: dict) -> None:
        if self.over:
            raise Illegal("not_awaited", "game over")
        if seat in (0, 1) and self.pending[seat] is not None:
            raise Illegal("already_committed")  # served as 409 not_your_turn (docs/design/api.md)
        if seat not in (0, 1) or seat not in self.awaiting():
            raise Illegal("not_awaited", f"seat {seat}")
        if not isinstance(action, dict):
            raise Illegal("malformed")
        kind = action.get("type")
        if kind == "pick":
            if self.phase != DRAFT:
                raise Illegal("wrong_phase")
            card = action.get("card")
            if type(card) is not int:
                raise Illegal("malformed", "card")
            if card not in self.hands[seat]:
                raise Illegal("card_not_in_hand")
            self.pending[seat] = card
            if all(p is not None for p in self.pending):
                self._reveal_picks()
        elif kind == "relic":
            if self.phase != RELIC:
                raise Illegal("wrong_phase")
            keep, remove = action.get("keep"), action.get("remove")
            if type(keep) is not int or type(remove) is not int:
                raise Illegal("malformed", "keep/remove")
            if keep == remove:
                raise Illegal("same_card")
            if keep not in self.played[seat] or remove not in self.played[seat]:
                raise Illegal("not_played_this_round")
            self.pending[seat] = (keep, remove)
            if all(p is not None for p in self.pending):
                self._reveal_relics()
        else:
            raise Illegal("malformed", f"type {kind!r}")

    def _reveal_picks(self) -> None:
        for s in (0, 1):
            card = self.pending[s]
            self.hands[s].remove(card)
            self.played[s].append(card)
        self.pending = [None, None]
        if self.pick < 5:
            self.hands = [self.hands[1], self.hands[0]]
            self.pick += 1
            return
        # round scoring (5.2)
        per_card, totals, counts = score_kingdoms([self.kingdom(0), self.kingdom(1)],
                                                  self.strict)
        self.round_per_card.append(per_card)
        self.round_counts.append(counts)
        for s in (0, 1):
            self.round_scores[s].append(totals[s])
        if self.round == 3:
            self.phase = GAME_OVER
        else:
            self.phase = RELIC  # the 5 played cards go back to hand (5.3.1)

    def _reveal_relics(self) -> None:
        for s in (0, 1):
            keep, remove = self.pending[s]
            self.relics[s].append(keep)
            self.removed.append(remove)
            self.hands[s] = [c for c in self.played[s] if c not in (keep, remove)]
            self.played[s] = []
        self.pending = [None, None]
        for s in (0, 1):
            self.hands[s] += self.pile[:2]
            self.pile = self.pile[2:]
        self.round += 1
        self.pick = 1
        self.phase = DRAFT

    # -- results ------------------------------------------------------------------------------
    def totals(self) -> list[int]:
        return [sum(r) for r in self.round_scores]

    def result(self) -> dict | None:
        if not self.over:
            return None
        scores = self.totals()
        ranks = [1 + sum(1 for o in scores if o > mine) for mine in scores]
        return {"scores": scores, "ranks": ranks,
                "winners": [s for s in (0, 1) if ranks[s] == 1],
                "round_scores": [list(r) for r in self.round_scores]}
