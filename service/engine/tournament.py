"""Tournaments as a small pure decider: pairing (round robin and Swiss, any seat count, byes for
counts that do not fill the tables), duplicate deals and standings, over the tournament's own
event stream. Shared by the server (``service.application.tournaments``) and offline
verification (``service.replay``). No I/O, no clock, no randomness: the game ids a round is
played in come from the caller.

Events:

- ``TournamentCreated {"name", "type", "options", "format", "rounds", "seats_per_game",
  "participants": [{"player", "name", "rating"}], "duplicate", "rated", "quitters",
  "rematches"}`` — ``rating`` is the participant's ordinal when the tournament was created (the
  last tie-break, and the Swiss order before any points); ``rounds`` is the round robin's
  schedule length or the Swiss's count; ``quitters: "last"``: a game's recorded ranks put a
  seat that resigned or forfeited last (:func:`quitters_last`; absent, in tournaments created
  before it: the rules' ranks); ``rematches: "fewest"`` (a Swiss): see the pairing below;
- ``RoundPaired {"number", "games": [{"id", "seats": [player ids], "deal"}], "byes": [ids]}``
  — the games of a deal (``deal`` numbers the groups of the round) are one group of players;
  with ``duplicate`` the group plays one game per seat rotation, every one with the same seed
  and setup;
- ``GameRecorded {"id", "ranks": [rank per seat] | null}`` — a game of the round over; no ranks
  (an aborted game) scores nothing for anybody;
- ``TournamentFinished {"standings": [...]}`` once the last round's last game is recorded.

Points per game come from its ranks: with ``n`` seats the places ``1 .. n`` are worth ``n - 1
.. 0`` and seats that share a rank share the places they cover (the mean). A Swiss bye is worth
a win in every game of the round the participant sits out (``seats - 1`` each); a round robin
bye is worth nothing (its schedule hands them out as evenly as its groups allow). Standings
order by points, then the tie-break — Buchholz for Swiss (the sum over rounds of the points of
each opponent met in the round), head-to-head for round robin (the points scored in games where
every other seat is held by a participant of the same points) — then the rating, then the
player id.

Pairing is a function of the events so far, so verification pairs every round again and
compares. Round robin: with two seats the circle method (``n - 1`` rounds, ``n`` for an odd
count, one bye per round); with more, every group of ``seats_per_game`` participants plays
once, each round the earliest unplayed groups that share nobody. Swiss: participants ordered by
points, rating, id; byes to the lowest ranked who have had the fewest; then each table takes the
first participant left and the first others that meet nobody at the table again, backtracking
(:data:`SEARCH_BUDGET` steps). When that finds no pairing, a Swiss created with ``"rematches":
"fewest"`` (every one since it was recorded) takes the pairing with the fewest rematches a
branch and bound finds in as many steps, the earliest in that order among equals; one created
before takes a greedy pass's (each table the first left and those adding the fewest rematches
to it), as it was paired then.
"""

from __future__ import annotations

import itertools
from fractions import Fraction
from typing import Collection, Sequence

from .game import CodedError, Event, event

FORMATS = ("round_robin", "swiss")
#: Steps of the Swiss search for a pairing without rematches before it settles for fewer.
SEARCH_BUDGET = 20_000


class TournamentRefused(CodedError):
    """A tournament event or command that does not fit the tournament as it is:
    ``round_not_finished``, ``tournament_finished``, ``game_not_in_round``,
    ``game_recorded``, ``pairing_differs``, ``not_a_tournament_event``."""


def quitters_last(ranks: Sequence[int], quit_seats: Collection[int]) -> list[int]:
    """``ranks`` with every seat of ``quit_seats`` (it resigned or forfeited) ranked last,
    together, below every seat that played on: a bot that won a seat its player left does
    not win it for that player (ratings, and a tournament created with ``"quitters":
    "last"``)."""
    if not quit_seats:
        return list(ranks)
    stayed = [r for s, r in enumerate(ranks) if s not in quit_seats]
    # the others ranked again among themselves (1 + how many did better), the quitters after
    return [1 + sum(o < r for o in stayed) if s not in quit_seats else len(stayed) + 1
            for s, r in enumerate(ranks)]


def quitters_in_order(ranks: Sequence[int],
                      groups: Sequence[Sequence[int]]) -> list[int]:
    """``ranks`` with the seats of ``groups`` (the seats that resigned or forfeited, one group
    a command, in the order they left) ranked below every seat that played on, as
    :func:`quitters_last` ranks them, and among themselves by when they left: a seat that left
    later ranks above one that left earlier, the seats of one group alike (ratings)."""
    gone = {s for group in groups for s in group}
    out = quitters_last(ranks, gone)
    below = len(gone)
    for group in groups:  # the first to leave ranks last
        below -= len(group)
        for s in group:
            out[s] = len(ranks) - len(gone) + 1 + below
    return out


def game_points(ranks: Sequence[int] | None) -> list[Fraction]:
    """Each seat's points: places ``1..n`` worth ``n-1..0``, tied seats share their places."""
    if ranks is None:
        return []
    n = len(ranks)
    out = []
    for rank in ranks:
        tied = sum(1 for r in ranks if r == rank)
        out.append(Fraction(sum(n - place for place in range(rank, rank + tied)), tied))
    return out


def rotations(group: Sequence[str], duplicate: bool) -> list[list[str]]:
    """The seatings a deal is played in: every rotation of the group with ``duplicate``, else
    the group as it is."""
    group = list(group)
    if not duplicate:
        return [group]
    return [group[r:] + group[:r] for r in range(len(group))]


def round_robin_schedule(players: Sequence[str], k: int) -> list[tuple[list[list[str]],
                                                                       list[str]]]:
    """Every round of a round robin: its groups (seat order) and its byes."""
    players = list(players)
    rounds = []
    if k == 2:
        ring: list[str | None] = players + ([None] if len(players) % 2 else [])
        n = len(ring)
        for r in range(n - 1):
            groups, byes = [], []
            for i in range(n // 2):
                a, b = ring[i], ring[n - 1 - i]
                if a is None or b is None:
                    byes.append(a if b is None else b)
                    continue
                groups.append([a, b] if (r + i) % 2 == 0 else [b, a])
            rounds.append((groups, byes))
            ring = [ring[0], ring[-1], *ring[1:-1]]
        return rounds
    left = [list(c) for c in itertools.combinations(players, k)]
    while left:
        taken: set[str] = set()
        groups = []
        for group in left:
            if taken.isdisjoint(group):
                groups.append(group)
                taken.update(group)
        left = [g for g in left if g not in groups]
        rounds.append((groups, [p for p in players if p not in taken]))
    return rounds


def games_count(fmt: str, n: int, k: int, rounds: int, duplicate: bool) -> int:
    """How many games a tournament plays (for its limit), before it is created."""
    per_deal = k if duplicate else 1
    if fmt == "swiss":
        return rounds * (n // k) * per_deal
    if k == 2:
        return (n * (n - 1) // 2) * per_deal
    count = 1
    for i in range(k):
        count = count * (n - i) // (i + 1)
    return count * per_deal


class Tournament:
    """A tournament folded from its events."""

    def __init__(self) -> None:
        self.config: dict = {}
        self.players: list[str] = []
        self.rating: dict[str, float] = {}
        #: each round: {"number", "games": [...], "byes": [...]}
        self.rounds: list[dict] = []
        #: game id -> ranks (None: aborted)
        self.results: dict[str, list[int] | None] = {}
        self.finished = False

    @classmethod
    def of(cls, events: Sequence[Event]) -> Tournament:
        t = cls()
        for ev in events:
            t.apply(ev)
        return t

    # -- reading --------------------------------------------------------------------------
    @property
    def k(self) -> int:
        return self.config["seats_per_game"]

    @property
    def total_rounds(self) -> int:
        return self.config["rounds"]

    def current(self) -> dict | None:
        return self.rounds[-1] if self.rounds else None

    def round_over(self) -> bool:
        """The current round's every game is recorded (True before the first round)."""
        now = self.current()
        return now is None or all(g["id"] in self.results for g in now["games"])

    def game_ranks(self, ranks: Sequence[int], quit_seats: Collection[int]) -> list[int]:
        """A finished game's ranks as this tournament records them: the rules' ``ranks``,
        with ``quit_seats`` (resigned or forfeited) last where it was created with
        ``"quitters": "last"``."""
        if self.config.get("quitters") == "last":
            return quitters_last(ranks, quit_seats)
        return list(ranks)

    def ends(self) -> bool:
        """The last round's last game is recorded: ``TournamentFinished`` is what comes next."""
        return self.round_over() and len(self.rounds) >= self.total_rounds

    def pending(self) -> list[str]:
        """The ids of the current round's games not recorded yet."""
        now = self.current()
        return [] if now is None else [g["id"] for g in now["games"]
                                       if g["id"] not in self.results]

    def recordable(self, over: Collection[str]) -> list[str]:
        """Of the current round's pending games, those of ``over`` (the games over) whose
        result is recorded now. With duplicate deals a game waits until every game of its deal
        is over: its ranks would tell the seats still playing the deal how it went."""
        pending = self.pending()
        if not self.config["duplicate"]:
            return [g for g in pending if g in over]
        return [g for g in pending if all(o in over or o in self.results
                                          for o in self.deal_of(g))]

    def deal_of(self, game_id: str) -> list[str]:
        """The ids of the games of ``game_id``'s deal: its round's games with its deal number
        (with duplicate deals, the same seed played once per seat rotation)."""
        for rnd in self.rounds:
            for g in rnd["games"]:
                if g["id"] == game_id:
                    return [o["id"] for o in rnd["games"] if o["deal"] == g["deal"]]
        return []

    def round_of(self, game_id: str) -> dict | None:
        for rnd in self.rounds:
            for g in rnd["games"]:
                if g["id"] == game_id:
                    return g
        return None

    def _points(self) -> tuple[dict[str, Fraction], dict[str, list[tuple[list[str],
                                                                          Fraction]]]]:
        """Each participant's points, and per participant each game's (seats, points)."""
        points = {p: Fraction(0) for p in self.players}
        games: dict[str, list[tuple[list[str], Fraction]]] = {p: [] for p in self.players}
        win = Fraction(self.k - 1)
        for rnd in self.rounds:
            if self.config["format"] == "swiss":
                per_deal = self.k if self.config["duplicate"] else 1
                for p in rnd["byes"]:
                    points[p] += win * per_deal
            for g in rnd["games"]:
                if g["id"] not in self.results:
                    continue
                earned = game_points(self.results[g["id"]])
                for seat, p in enumerate(g["seats"]):
                    got = earned[seat] if earned else Fraction(0)
                    points[p] += got
                    games[p].append((g["seats"], got))
        return points, games

    def met(self) -> set[frozenset[str]]:
        """Every pair of participants who have shared a table."""
        pairs = set()
        for rnd in self.rounds:
            for g in rnd["games"]:
                pairs.update(frozenset(c) for c in itertools.combinations(g["seats"], 2))
        return pairs

    def standings(self) -> list[dict]:
        """``[{"rank", "player", "points", "tiebreak", "rating", "games"}]``, best first;
        points as numbers (halves and thirds where seats tied)."""
        points, games = self._points()
        tiebreak: dict[str, Fraction] = {}
        if self.config["format"] == "swiss":
            for p in self.players:
                opponents = [o for rnd in self.rounds for g in rnd["games"] if p in g["seats"]
                             and g is self._first_of_deal(rnd, g, p) for o in g["seats"]
                             if o != p]
                tiebreak[p] = sum((points[o] for o in opponents), Fraction(0))
        else:
            for p in self.players:
                tiebreak[p] = sum((got for seats, got in games[p]
                                   if all(points[o] == points[p] for o in seats)),
                                  Fraction(0))
        order = sorted(self.players, key=lambda p: (-points[p], -tiebreak[p],
                                                    -self.rating[p], p))
        return [{"rank": i + 1, "player": p, "points": _num(points[p]),
                 "tiebreak": _num(tiebreak[p]), "rating": self.rating[p],
                 "games": len(games[p])} for i, p in enumerate(order)]

    @staticmethod
    def _first_of_deal(rnd: dict, game: dict, player: str) -> dict:
        """The first game of ``game``'s deal that ``player`` sat in (an opponent counts once
        per round, whatever the rotations)."""
        for g in rnd["games"]:
            if g["deal"] == game["deal"] and player in g["seats"]:
                return g
        return game

    # -- deciding -------------------------------------------------------------------------
    def plan(self) -> tuple[list[list[str]], list[str]] | None:
        """The next round's groups (seat order of the deal's first game) and byes; None when
        the tournament has no round left (it finishes)."""
        if self.finished:
            raise TournamentRefused("tournament_finished", "the tournament has finished")
        if not self.round_over():
            raise TournamentRefused("round_not_finished", "the current round is being played",
                                    {"pending": self.pending()})
        number = len(self.rounds)
        if number >= self.total_rounds:
            return None
        if self.config["format"] == "round_robin":
            return round_robin_schedule(self.players, self.k)[number]
        return self._swiss()

    def _swiss(self) -> tuple[list[list[str]], list[str]]:
        points, _ = self._points()
        order = sorted(self.players, key=lambda p: (-points[p], -self.rating[p], p))
        byes_had = {p: sum(p in rnd["byes"] for rnd in self.rounds) for p in self.players}
        spare = len(order) % self.k
        byes: list[str] = []
        if spare:
            # the lowest ranked among those with the fewest byes
            ranked = list(reversed(order))
            byes = sorted(ranked, key=lambda p: byes_had[p])[:spare]
        left = [p for p in order if p not in byes]
        met = self.met()
        groups = _pair(left, self.k, met, strict=True)
        if groups is None:
            groups = _pair(left, self.k, met, strict=False)
            if self.config.get("rematches") == "fewest":
                groups = _fewest_rematches(left, self.k, met, groups)
        return groups, [p for p in order if p in byes]

    def next_round(self, game_ids: Sequence[Sequence[str]]) -> list[Event]:
        """The next round's events given the ids of each group's games (one per rotation), or
        ``TournamentFinished`` when no round is left."""
        planned = self.plan()
        if planned is None:
            return [event("TournamentFinished", {"standings": self.standings()})]
        groups, byes = planned
        games = []
        for deal, (group, ids) in enumerate(zip(groups, game_ids, strict=True)):
            seatings = rotations(group, self.config["duplicate"])
            for seats, game_id in zip(seatings, ids, strict=True):
                games.append({"id": game_id, "seats": seats, "deal": deal})
        return [event("RoundPaired", {"number": len(self.rounds) + 1, "games": games,
                                      "byes": byes})]

    def record(self, game_id: str, ranks: Sequence[int] | None) -> list[Event]:
        """A game of the current round over (``ranks`` None: aborted); the tournament's end
        follows when it was the last round's last game."""
        if self.finished:
            raise TournamentRefused("tournament_finished", "the tournament has finished")
        if game_id not in self.pending():
            code = "game_recorded" if game_id in self.results else "game_not_in_round"
            raise TournamentRefused(code, f"game {game_id} is not pending in this round",
                                    {"game": game_id})
        events = [event("GameRecorded", {"id": game_id,
                                         "ranks": list(ranks) if ranks is not None else None})]
        after = Tournament.of([])
        after.__dict__.update({**self.__dict__, "results": dict(self.results)})
        after.apply(events[0])
        if after.ends():
            events.append(event("TournamentFinished", {"standings": after.standings()}))
        return events

    def check(self, ev: Event) -> None:
        """Verification: ``ev`` is what this tournament decides next (the game ids and a
        game's ranks are the caller's to check against the games)."""
        kind, data = ev["type"], ev["data"]
        if kind == "RoundPaired":
            ids = _ids_by_deal(data["games"])
            expected = self.next_round(ids)
        elif kind == "GameRecorded":
            expected = self.record(data["id"], data["ranks"])[:1]
        elif kind == "TournamentFinished":
            if self.ends():
                expected = [event("TournamentFinished", {"standings": self.standings()})]
            else:
                expected = []
        else:
            raise TournamentRefused("not_a_tournament_event", f"{kind!r} is out of place")
        if not expected or expected[0] != {"type": kind, "seat": ev.get("seat"), "data": data}:
            raise TournamentRefused("pairing_differs", f"{kind} differs from what the "
                                    "tournament decides", {"event": kind})

    # -- evolving -------------------------------------------------------------------------
    def apply(self, ev: Event) -> None:
        kind, data = ev["type"], ev["data"]
        if kind == "TournamentCreated":
            self.config = {k: v for k, v in data.items() if k != "participants"}
            self.players = [p["player"] for p in data["participants"]]
            self.rating = {p["player"]: p["rating"] for p in data["participants"]}
        elif kind == "RoundPaired":
            self.rounds.append({"number": data["number"], "games": data["games"],
                                "byes": data["byes"]})
        elif kind == "GameRecorded":
            self.results[data["id"]] = data["ranks"]
        elif kind == "TournamentFinished":
            self.finished = True


def created(name: str, game_type: str, options: dict, fmt: str, rounds: int | None,
            seats_per_game: int, participants: Sequence[dict], duplicate: bool,
            rated: bool) -> Event:
    """The first event; ``rounds`` is computed for a round robin. The caller checks the game
    type, options, seat count and limits."""
    if fmt == "round_robin":
        rounds = len(round_robin_schedule([p["player"] for p in participants], seats_per_game))
    data = {"name": name, "type": game_type, "options": options, "format": fmt,
            "rounds": rounds, "seats_per_game": seats_per_game,
            "participants": [dict(p) for p in participants], "duplicate": duplicate,
            "rated": rated}
    if fmt == "swiss":
        data["rematches"] = "fewest"  # how its rounds are paired when some rematch is forced
    data["quitters"] = "last"  # a game's seat that resigned or forfeited scores as last
    return event("TournamentCreated", data)


def _ids_by_deal(games: Sequence[dict]) -> list[list[str]]:
    deals: dict[int, list[str]] = {}
    for g in games:
        deals.setdefault(g["deal"], []).append(g["id"])
    return [deals[d] for d in sorted(deals)]


def _num(x: Fraction) -> float | int:
    return int(x) if x.denominator == 1 else round(float(x), 6)


def _pair(players: list[str], k: int, met: set[frozenset[str]],
          strict: bool) -> list[list[str]] | None:
    """Tables of ``k`` from ``players`` in order: each takes the first one left and the first
    others that meet nobody at it again (``strict``; None when the search runs out), or that
    add the fewest rematches (not ``strict``: a greedy pass)."""
    if not strict:
        left, groups = list(players), []
        while left:
            group = [left.pop(0)]
            while len(group) < k:
                best = min(left, key=lambda p: sum(frozenset((p, g)) in met for g in group))
                left.remove(best)
                group.append(best)
            groups.append(group)
        return groups
    budget = [SEARCH_BUDGET]

    def fill(left: list[str], group: list[str]) -> list[list[str]] | None:
        budget[0] -= 1
        if budget[0] < 0:
            return None
        if len(group) == k:
            rest = search(left)
            return None if rest is None else [group, *rest]
        for i, p in enumerate(left):
            if all(frozenset((p, g)) not in met for g in group):
                found = fill(left[:i] + left[i + 1:], group + [p])
                if found is not None:
                    return found
            if budget[0] < 0:
                return None
        return None

    def search(left: list[str]) -> list[list[str]] | None:
        if not left:
            return []
        return fill(left[1:], [left[0]])

    return search(list(players))


def _rematches(groups: Sequence[Sequence[str]], met: set[frozenset[str]]) -> int:
    return sum(frozenset(pair) in met for g in groups for pair in itertools.combinations(g, 2))


def _fewest_rematches(players: list[str], k: int, met: set[frozenset[str]],
                      start: list[list[str]]) -> list[list[str]]:
    """Tables of ``k`` from ``players`` with fewer rematches than ``start`` if a branch and
    bound finds some in :data:`SEARCH_BUDGET` steps (each table the first one left and others
    in order, a partial pairing dropped as soon as it has as many rematches as the best so
    far); the best found, ``start`` if none is better. Deterministic: verification pairs
    again."""
    best = [start, _rematches(start, met)]
    budget = [SEARCH_BUDGET]

    def fill(left: list[str], group: list[str], done: list[list[str]], cost: int) -> None:
        if len(group) == k:
            done = [*done, group]
            if not left:
                best[:] = [done, cost]
                return
            group, left = [left[0]], left[1:]
        for i, p in enumerate(left):
            budget[0] -= 1
            if budget[0] < 0:
                return
            added = cost + sum(frozenset((p, g)) in met for g in group)
            if added < best[1]:
                fill(left[:i] + left[i + 1:], group + [p], done, added)

    if best[1]:
        fill(players[1:], [players[0]], [], 0)
    return best[0]
