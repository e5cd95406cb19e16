"""Ratings in Redis: one ledger per rating type (a game type, or ``scarabya-duel``).

Every key of one rating type carries the hash tag ``{r:<rating type>}`` (one Cluster slot), so
one script records a game's update atomically:

- ``cartouche:{r:<t>}:events`` — the ledger, a stream: one entry per rated game (field ``e``,
  the JSON update ``{"game_id", "players", "ranks", "before", "after"}``); replaying it from
  empty gives every rating again;
- ``cartouche:{r:<t>}:current`` — hash: player id -> JSON ``{"mu", "sigma", "games"}``;
- ``cartouche:{r:<t>}:rated`` — hash: game id -> the ledger entry's id (a game is rated once);
- ``cartouche:{r:<t>}:board`` and ``:provisional`` — sorted sets of players by ordinal
  (``mu - 3 sigma``), the provisional ones (fewer than ``min_games``) apart.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass
from importlib import resources

import orjson
import redis

from . import connect

PREFIX = "cartouche"


def _key(rating_type: str, name: str) -> str:
    return f"{PREFIX}:{{r:{rating_type}}}:{name}"


def ledger(rating_type: str) -> str:
    return _key(rating_type, "events")


class Recorded(enum.StrEnum):
    OK = "ok"  # recorded now
    DONE = "done"  # the game was rated before: nothing changed
    STALE = "stale"  # a player's rating moved since it was read: read again and retry


@dataclass(frozen=True)
class Standing:
    player: str
    mu: float
    sigma: float
    ordinal: float
    games: int


class RatingStore:
    def __init__(self, client: redis.Redis, *, min_games: int = 5) -> None:
        self.r = client
        self.min_games = min_games
        self._record = connect.script(
            client, resources.files(__package__).joinpath("lua/rate.lua").read_text())

    def current(self, rating_type: str, players: list[str]) -> list[bytes | None]:
        """The stored JSON of each player's rating (None: unrated), as read — pass it back to
        :meth:`record` as what the update was computed from."""
        if not players:
            return []
        return self.r.hmget(_key(rating_type, "current"), players)

    def record(self, rating_type: str, game_id: str, update: dict, read: list[bytes | None],
               after: list[dict]) -> Recorded:
        """Append ``update`` to the ledger and set the players' ratings to ``after``, iff the
        game is not rated yet and every player's rating is still what was ``read``."""
        players = update["players"]
        args = [game_id, orjson.dumps(update), self.min_games, len(players)]
        for player, was, now in zip(players, read, after):
            args += [player, was if was is not None else b"", orjson.dumps(now),
                     repr(now["mu"] - 3 * now["sigma"]), now["games"]]
        outcome = self._record(keys=[_key(rating_type, k) for k in
                                     ("events", "current", "rated", "board", "provisional")],
                               args=args)
        return Recorded(outcome.decode())

    def of_player(self, player: str, rating_types: list[str]) -> list[bytes | None]:
        """The player's stored rating in each rating type (None: unrated), in one round
        trip."""
        pipe = self.r.pipeline(transaction=False)
        for rating_type in rating_types:
            pipe.hget(_key(rating_type, "current"), player)
        return pipe.execute()

    def is_rated(self, rating_type: str, game_id: str) -> bool:
        return bool(self.r.hexists(_key(rating_type, "rated"), game_id))

    def updates(self, rating_type: str, after: str = "-",
                count: int = 1000) -> list[tuple[str, dict]]:
        """Ledger entries after stream id ``after`` (``"-"``: from the first), oldest first."""
        start = after if after == "-" else f"({after}"
        rows = self.r.xrange(ledger(rating_type), start, "+", count=count)
        return [(rid.decode(), orjson.loads(f[b"e"])) for rid, f in rows]

    def board(self, rating_type: str, offset: int, limit: int, *,
              provisional: bool = False) -> tuple[list[Standing], int]:
        """Players by ordinal, best first, and how many there are."""
        key = _key(rating_type, "provisional" if provisional else "board")
        pipe = self.r.pipeline(transaction=False)
        pipe.zrevrange(key, offset, offset + limit - 1)
        pipe.zcard(key)
        ids, total = pipe.execute()
        players = [i.decode() for i in ids]
        out = []
        for player, raw in zip(players, self.current(rating_type, players)):
            if raw is None:
                continue
            r = orjson.loads(raw)
            out.append(Standing(player, r["mu"], r["sigma"], r["mu"] - 3 * r["sigma"],
                                r["games"]))
        return out, total
