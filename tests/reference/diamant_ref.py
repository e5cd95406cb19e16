"""An independent reference implementation of Diamant (IELLO 2016), written from
``/work/shared/rules/diamant.md`` only, for cross-checking the production rules module.

Plain and deliberately naive: mutable attributes, no events, no cleverness. The caller owns the
random stream: it passes an ``Rng`` (``service.engine.rng.Rng``) to the constructor (round 1's
shuffle) and to every :meth:`DiamantRef.act` (the shuffle of the next round's deck happens inside
the command that ends a round; never after round 5).

Every shuffle starts from the canonical order of spec 2.4 restricted to the cards currently in
the deck (35 minus removed cards minus relics taken), followed by exactly one ``rng.shuffle``.
When ``round_decks[r-1]`` exists, round ``r``'s deck is that list restricted to the cards in the
deck and no draw is made.
"""

from __future__ import annotations

TREASURE_IDS = ["T1", "T2", "T3", "T4", "T5a", "T5b", "T7a", "T7b", "T9", "T11a", "T11b",
                "T13", "T14", "T15", "T17"]
TRAP_TYPES = ["SPIDER", "SNAKE", "LAVA", "BOULDER", "RAM"]
TRAP_IDS = [f"{t}{i}" for t in TRAP_TYPES for i in (1, 2, 3)]
RELIC_IDS = [f"R{i}" for i in range(1, 6)]
CANONICAL = TREASURE_IDS + TRAP_IDS + RELIC_IDS
assert len(CANONICAL) == 35

RELIC_VALUES = [5, 5, 5, 10, 10]  # by game-wide order of bringing back (spec 2.3)
ROUNDS = 5
CONTINUE = "continue"
RETURN = "return"


def is_treasure(card: str) -> bool:
    return card.startswith("T")


def is_relic(card: str) -> bool:
    return card.startswith("R") and card[1:].isdigit()


def is_trap(card: str) -> bool:
    return card in TRAP_IDS


def treasure_value(card: str) -> int:
    return int(card[1:].rstrip("ab"))


def trap_type(card: str) -> str:
    return card.rstrip("0123456789")


class DiamantRef:
    def __init__(self, n_players: int, rng, round_decks=None) -> None:
        if not 3 <= n_players <= 8:
            raise ValueError("3 to 8 players")
        self.n = n_players
        self.round_decks = list(round_decks or [])
        self.round = 1
        self.over = False
        self.chest = [0] * n_players
        self.pocket = [0] * n_players
        self.relics_taken = [[] for _ in range(n_players)]  # relic ids per seat
        self.in_cave = [True] * n_players
        self.choice = [None] * n_players  # committed, hidden choice per seat
        self.relics_brought_back = 0
        self.removed: list[str] = []  # ids removed from the game, in order of removal
        self.path: list[str] = []
        self.path_rubies = 0
        self.deck: list[str] = self._make_deck(rng)  # index 0 = top
        self._start_round()

    # -- deck ---------------------------------------------------------------------------------
    def _out_of_deck(self) -> set:
        out = set(self.removed)
        for taken in self.relics_taken:
            out.update(taken)
        return out

    def _make_deck(self, rng) -> list[str]:
        out = self._out_of_deck()
        if len(self.round_decks) >= self.round and self.round_decks[self.round - 1] is not None:
            return [c for c in self.round_decks[self.round - 1] if c not in out]
        deck = [c for c in CANONICAL if c not in out]
        rng.shuffle(deck)
        return deck

    # -- round procedure ----------------------------------------------------------------------
    def _start_round(self) -> None:
        self.in_cave = [True] * self.n
        self.pocket = [0] * self.n
        self.choice = [None] * self.n
        self.path = []
        self.path_rubies = 0
        self._reveal_until_decision(rng=None)

    def _reveal_until_decision(self, rng) -> None:
        """Reveal cards (5.1) until a decision phase is due or the round ends."""
        while True:
            inside = [s for s in range(self.n) if self.in_cave[s]]
            assert inside, "reveal with nobody in the cave"
            assert self.deck, "the deck ran out mid-round (spec 8 says impossible)"
            card = self.deck.pop(0)
            if is_treasure(card):
                v = treasure_value(card)
                for s in inside:
                    self.pocket[s] += v // len(inside)
                self.path_rubies += v % len(inside)
                self.path.append(card)
                return  # decision phase
            if is_relic(card):
                self.path.append(card)
                return
            t = trap_type(card)
            seen = sum(1 for c in self.path if is_trap(c) and trap_type(c) == t)
            self.path.append(card)
            if seen == 0:
                return
            # second trap of type t: everyone inside flees and loses the pocket
            for s in inside:
                self.pocket[s] = 0
                self.in_cave[s] = False
            self._end_round(rng, trap_card=card)
            return

    def _end_round(self, rng, trap_card=None) -> None:
        # 5.4.1 path rubies back to the bank
        self.path_rubies = 0
        # 5.4.2 relics still on the path are removed from the game
        for c in self.path:
            if is_relic(c):
                self.removed.append(c)
        # 5.4.3 exactly one card of the trap type: the one that ended the round
        if trap_card is not None:
            self.removed.append(trap_card)
        # 5.4.4 remaining path cards go back into the deck
        back = [c for c in self.path if c not in self.removed]
        self.deck = self.deck + back
        self.path = []
        self.choice = [None] * self.n
        self.in_cave = [False] * self.n
        self.pocket = [0] * self.n
        # 5.4.5
        if self.round == ROUNDS:
            self.over = True
            return
        self.round += 1
        self.deck = self._make_deck(rng)
        self._start_round()

    # -- questions ----------------------------------------------------------------------------
    def awaiting(self) -> list[int]:
        if self.over:
            return []
        return sorted(s for s in range(self.n) if self.in_cave[s] and self.choice[s] is None)

    def legal(self, seat) -> list[dict]:
        if seat in self.awaiting():
            return [{"type": "decide", "choice": CONTINUE}, {"type": "decide", "choice": RETURN}]
        return []

    # -- the command --------------------------------------------------------------------------
    def act(self, seat, action, rng) -> None:
        if action not in self.legal(seat):
            raise ValueError(f"illegal action {action!r} for seat {seat!r}")
        self.choice[seat] = action["choice"]
        inside = [s for s in range(self.n) if self.in_cave[s]]
        if any(self.choice[s] is None for s in inside):
            return
        # all chosen: reveal choices, resolve returns (5.3)
        leavers = [s for s in inside if self.choice[s] == RETURN]
        self.choice = [None] * self.n
        if leavers:
            k = len(leavers)
            share = self.path_rubies // k
            self.path_rubies = self.path_rubies % k
            relic_value = 0
            if k == 1:
                taken = [c for c in self.path if is_relic(c)]
                self.path = [c for c in self.path if not is_relic(c)]
                for c in taken:
                    relic_value += RELIC_VALUES[self.relics_brought_back]
                    self.relics_brought_back += 1
                    self.relics_taken[leavers[0]].append(c)
            for s in leavers:
                self.chest[s] += self.pocket[s] + share + (relic_value if k == 1 else 0)
                self.pocket[s] = 0
                self.in_cave[s] = False
            if not any(self.in_cave):
                self._end_round(rng)
                return
        self._reveal_until_decision(rng)

    # -- information --------------------------------------------------------------------------
    def view(self, viewer) -> dict:
        traps: dict[str, int] = {}
        for c in self.path:
            if is_trap(c):
                traps[trap_type(c)] = traps.get(trap_type(c), 0) + 1
        players = []
        for s in range(self.n):
            own = viewer == "all" or (viewer is not None and viewer == s)
            players.append({
                "seat": s,
                "in_cave": self.in_cave[s],
                "pocket": self.pocket[s],
                "chest": self.chest[s] if (own or self.over) else None,
                "relics": len(self.relics_taken[s]),
                "committed": self.choice[s] is not None,
                "choice": self.choice[s] if own else None,
            })
        return {
            "round": self.round,
            "phase": "game_over" if self.over else "decision",
            "path": list(self.path),
            "path_rubies": self.path_rubies,
            "deck_size": len(self.deck),
            "removed": list(self.removed),
            "relics_brought_back": self.relics_brought_back,
            "traps_on_path": traps,
            "players": players,
        }

    def result(self):
        if not self.over:
            return None
        scores = list(self.chest)
        ranks = [1 + sum(1 for o in scores if o > mine) for mine in scores]
        return {"scores": scores, "ranks": ranks,
                "winners": [s for s in range(self.n) if ranks[s] == 1]}
