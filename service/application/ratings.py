"""Ratings: a Weng-Lin (OpenSkill, Plackett-Luce) update per finished rated game, per rating
type (``Game.rating_type``: the game type, the Scarabya duel apart).

A game is rated when it finished with ``rated`` in its creation event and every seat held by a
distinct player (humans, third-party bots and the built-in bot players alike). The ranks are
the rules' final ranks (ties share a rank); a seat that resigned or forfeited (its controller is
no longer the one it started with) ranks below every seat that played on, and above the seats
that left before it (the shell's ``left``).

Each update is one entry of the rating type's ledger (``store.ratings``), written with the
players' new ratings by one script keyed by the game id: a duplicated or retried job changes
nothing, and :meth:`Ratings.rebuild` replays the ledger from empty to the same numbers.
"""

from __future__ import annotations

from typing import Callable

import orjson
from openskill.models import PlackettLuce

from ..engine import counts_for_ratings
from ..engine.tournament import quitters_in_order, quitters_last
from ..store.players import PlayerStore
from ..store.ratings import RatingStore, Recorded, Standing
from .errors import NotFound
from .model import Shell, Table
from .players import bot_level

#: The model and its parameters (openskill's defaults: mu 25, sigma 25/3, beta 25/6,
#: tau 25/300). Changing them changes every rating: the ledger replays with the model it names.
MODEL = PlackettLuce()
MODEL_NAME = "openskill-plackett-luce/mu=25,sigma=8.333,beta=4.167,tau=0.0833"
RETRIES = 20


def unrated() -> dict:
    return {"mu": MODEL.mu, "sigma": MODEL.sigma, "games": 0}


def ordinal(rating: dict) -> float:
    """``mu - 3 sigma``: what leaderboards sort by (99.7% sure the skill is above it)."""
    return rating["mu"] - 3 * rating["sigma"]


def updated(before: list[dict], ranks: list[int]) -> list[dict]:
    """The ratings after one game: ``before`` (one per seat) and the seats' ranks (1 is first,
    ties share a rank)."""
    teams = [[MODEL.rating(mu=b["mu"], sigma=b["sigma"])] for b in before]
    out = MODEL.rate(teams, ranks=ranks)
    return [{"mu": team[0].mu, "sigma": team[0].sigma, "games": b["games"] + 1}
            for team, b in zip(out, before)]


def quit_seats(table: Table) -> list[int]:
    """The seats that resigned or forfeited: their controller is no longer the one they
    started with."""
    started = Shell.initial({**table.created["data"], "players": table.players}).controllers
    return [s for s, c in enumerate(table.shell.controllers) if c != started[s]]


def final_ranks(table: Table) -> list[int]:
    """The rules' ranks, with every seat that resigned or forfeited ranked last, those that
    left later above those that left earlier (the shell's ``left``; alike for a game whose
    seats left before it kept the order)."""
    ranks, quit = table.result()["ranks"], quit_seats(table)
    order = table.shell.left
    if sorted(s for group in order for s in group) == sorted(quit):
        return quitters_in_order(ranks, order)
    return quitters_last(ranks, quit)


def rated_players(table: Table) -> list[str] | None:
    """The players of a finished game that counts for ratings, by seat; None when it does
    not (not ``rated``, not finished, a seat without a player, a player in two seats)."""
    if table.status != "finished" or not counts_for_ratings(
            bool(table.created["data"].get("rated")), table.players):
        return None
    return [p["player"] for p in table.players]


class Ratings:
    def __init__(self, store: RatingStore, players: PlayerStore,
                 rating_types: Callable[[], list[str]]) -> None:
        self.store = store
        self.players = players
        self.rating_types = rating_types

    def rate(self, table: Table) -> dict | None:
        """Rate a finished game once: the ledger entry written now, or None (not a rated
        game, or rated before)."""
        players = rated_players(table)
        if players is None:
            return None
        rating_type = table.game.rating_type(table.created["data"]["options"])
        ranks = final_ranks(table)
        for _ in range(RETRIES):
            read = self.store.current(rating_type, players)
            before = [orjson.loads(raw) if raw is not None else unrated() for raw in read]
            after = updated(before, ranks)
            update = {"game_id": table.id, "model": MODEL_NAME, "players": players,
                      "ranks": ranks, "before": before, "after": after}
            outcome = self.store.record(rating_type, table.id, update, read, after)
            if outcome is Recorded.DONE:
                return None
            if outcome is Recorded.OK:
                self._tell(rating_type, update)
                return update
        raise RuntimeError(f"the {rating_type} ratings of {players} kept moving; the job "
                           "is retried")

    def _tell(self, rating_type: str, update: dict) -> None:
        batch = self.players.batch()
        for player, before, after in zip(update["players"], update["before"], update["after"]):
            if bot_level(player) is None:
                batch.notify(player, "rating", {
                    "type": rating_type, "game_id": update["game_id"],
                    "before": shown(before), "after": shown(after)})
        batch.send()

    def of_player(self, player: str) -> dict[str, dict]:
        """The player's rating per rating type it has one in."""
        types = self.rating_types()
        return {t: orjson.loads(raw) for t, raw in zip(types, self.store.of_player(player, types))
                if raw is not None}

    def ordinals(self, rating_type: str, players: list[str]) -> list[float]:
        """Each player's current ordinal in ``rating_type`` (an unrated player's is that of
        :func:`unrated`, 0), in one round trip."""
        return [ordinal(orjson.loads(raw) if raw is not None else unrated())
                for raw in self.store.current(rating_type, players)]

    def leaderboard(self, rating_type: str, offset: int, limit: int,
                    names: Callable[[list[str]], list[dict | None]],
                    provisional_offset: int = 0) -> dict:
        """``limit`` established players from ``offset`` and ``limit`` provisional ones from
        ``provisional_offset``, each list ranked from its own first."""
        if rating_type not in self.rating_types():
            raise NotFound("unknown_rating_type", f"no ratings of type {rating_type!r}",
                           {"known": self.rating_types()})

        def rows(standings: list[Standing], first_rank: int) -> list[dict]:
            profiles = names([s.player for s in standings])
            return [{"rank": first_rank + i, "id": s.player,
                     "name": (p or {}).get("name"), "kind": (p or {}).get("kind"),
                     "mu": s.mu, "sigma": s.sigma, "ordinal": s.ordinal, "games": s.games}
                    for i, (s, p) in enumerate(zip(standings, profiles))]

        board, total = self.store.board(rating_type, offset, limit)
        provisional, ptotal = self.store.board(rating_type, provisional_offset, limit,
                                               provisional=True)
        return {"type": rating_type, "players": rows(board, offset + 1), "total": total,
                "provisional": rows(provisional, provisional_offset + 1),
                "provisional_total": ptotal,
                "min_games": self.store.min_games}

    def rebuild(self, rating_type: str) -> dict[str, dict]:
        """Every rating of ``rating_type`` replayed from an empty start through the ledger;
        raises ValueError where an entry does not follow from the ones before it."""
        ratings: dict[str, dict] = {}
        after_id = "-"
        while True:
            entries = self.store.updates(rating_type, after_id)
            if not entries:
                return ratings
            for entry_id, update in entries:
                before = [ratings.get(p, unrated()) for p in update["players"]]
                if before != update["before"]:
                    raise ValueError(f"ledger entry {entry_id}: ratings before differ")
                after = updated(before, update["ranks"])
                if after != update["after"]:
                    raise ValueError(f"ledger entry {entry_id}: ratings after differ")
                ratings.update(zip(update["players"], after))
                after_id = entry_id


def shown(rating: dict) -> dict:
    """A rating as the API serves it."""
    return {"mu": rating["mu"], "sigma": rating["sigma"], "ordinal": ordinal(rating),
            "games": rating["games"]}
