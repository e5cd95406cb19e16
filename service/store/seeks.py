"""Seeks in Redis: each seek's record and the indexes matchmaking reads.

Every key carries the hash tag ``{seeks}`` (one Cluster slot for all of them), so that one
script can end a whole group of seeks at once:

- ``cartouche:{seeks}:seek:<id>`` — hash: the seek (``player``, ``type``, ``created_ms``,
  ``expires_ms``, ``fill_ms``, ``pools``, ``rating_range`` and ``request`` as JSON,
  ``status``; once matched ``game_id`` and ``seat``; once ended ``ended_ms``). An ended record
  expires after :data:`ENDED_TTL_S`; a waiting one stays until it ends;
- ``cartouche:{seeks}:waiting`` — sorted set of the waiting seeks by expiry time (the total
  limit, listing, expiry), ``:fill`` — those with bots to fill in, by fill time, ``:untried``
  — those whose opening request has not tried to match them yet, by creation time (a request
  that dies in between leaves its seek there for the sweep);
- ``cartouche:{seeks}:player:<id>`` and ``:type:<type>`` — the waiting seeks of a player and of
  a game type, by creation time;
- ``cartouche:{seeks}:pool:<name>`` — the waiting seeks that may be matched together at one
  seat count (a pool's name says the game type, the seat count and the options' canonical
  form), by creation time, oldest first; ``:cards`` — hash: each waiting seek's *card*, what
  matching reads of the seeks of a pool (JSON ``[player, expires_ms, rating_range]``), so that
  a page of a pool is one read (``lua/seek_page.lua``).

A seek is written by ``lua/seek_open.lua`` (with the per-player and total limits checked in the
same call) and leaves ``waiting`` only through ``lua/seek_settle.lua``, which ends a group of
seeks together or not at all.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass
from importlib import resources

import orjson
import redis

from . import connect

PREFIX = "cartouche:{seeks}"
#: How long a matched, cancelled or expired seek can still be read.
ENDED_TTL_S = 24 * 3600
WAITING = "waiting"


def _key(*parts: str) -> str:
    return ":".join((PREFIX, *parts))


WAITING_KEY, FILL_KEY, UNTRIED_KEY = _key("waiting"), _key("fill"), _key("untried")
#: Every waiting seek, by creation time (the listing of all types; the waiting set is scored
#: by expiry, which a change of the seeks' time to live takes out of creation order).
LISTED_KEY = _key("listed")
CARDS_KEY = _key("cards")
#: The sets every waiting seek is in besides its own indexes, as the scripts take them.
EVERY_SEEK = (WAITING_KEY, FILL_KEY, UNTRIED_KEY, CARDS_KEY)


class Opened(enum.StrEnum):
    OK = "ok"
    PLAYER_FULL = "player_full"  # the player has as many waiting seeks as allowed
    FULL = "full"  # the server holds as many waiting seeks as allowed


@dataclass(frozen=True)
class Card:
    """What matching reads of each seek of a pool before it picks a group: who, until when,
    which ratings it accepts."""

    id: str
    player: str
    expires_ms: int
    #: [low, high] ordinals (None: anybody)
    rating_range: tuple[float, float] | None


@dataclass(frozen=True)
class Seek:
    """A seek as stored. The store reads ``player``, ``type``, the times, ``pools`` and the
    rating range; the ``request`` (the rest of what was asked, as JSON) means something to the
    application only."""

    id: str
    player: str
    type: str
    created_ms: int
    expires_ms: int
    #: when its bots are due (None: never)
    fill_ms: int | None
    #: seat count -> the name of the pool of seeks it may be matched with at that count
    pools: dict[int, str]
    rating_range: tuple[float, float] | None
    request: dict
    status: str = WAITING
    game_id: str | None = None
    seat: int | None = None
    ended_ms: int | None = None

    def index_keys(self) -> list[str]:
        """The keys of the indexes that list this seek while it waits (besides the waiting
        and fill sets)."""
        return [_key("player", self.player), _key("type", self.type), LISTED_KEY,
                *(_key("pool", name) for name in self.pools.values())]


@dataclass(frozen=True)
class Settled:
    ok: bool
    #: not ok: the first seek found not waiting (its index in the group) and its status
    #: (None: there is no such seek)
    busy: int | None = None
    status: str | None = None


def _decode(seek_id: str, raw: dict[bytes, bytes]) -> Seek | None:
    if not raw or b"player" not in raw:
        return None
    f = {k.decode(): v.decode() for k, v in raw.items()}
    limits = orjson.loads(f["rating_range"])
    return Seek(seek_id, f["player"], f["type"], int(f["created_ms"]), int(f["expires_ms"]),
                int(f["fill_ms"]) if f.get("fill_ms") else None,
                {int(n): name for n, name in orjson.loads(f["pools"]).items()},
                tuple(limits) if limits else None, orjson.loads(f["request"]), f["status"],
                f.get("game_id"), int(f["seat"]) if "seat" in f else None,
                int(f["ended_ms"]) if "ended_ms" in f else None)


def _card(seek_id: bytes, raw: bytes) -> Card:
    player, expires_ms, limits = orjson.loads(raw)
    return Card(seek_id.decode(), player, expires_ms, tuple(limits) if limits else None)


class SeekStore:
    def __init__(self, client: redis.Redis) -> None:
        self.r = client
        lua = resources.files(__package__).joinpath
        self._open = connect.script(client, lua("lua/seek_open.lua").read_text())
        self._settle = connect.script(client, lua("lua/seek_settle.lua").read_text())
        self._page = connect.script(client, lua("lua/seek_page.lua").read_text())

    def open(self, seek: Seek, per_player: int, total: int) -> Opened:
        """Write a waiting seek and index it, unless a limit is reached."""
        limits = orjson.dumps(seek.rating_range)
        fields = {"player": seek.player, "type": seek.type, "created_ms": seek.created_ms,
                  "expires_ms": seek.expires_ms, "fill_ms": seek.fill_ms or "",
                  "pools": orjson.dumps({str(n): p for n, p in seek.pools.items()}),
                  "rating_range": limits, "request": orjson.dumps(seek.request),
                  "status": WAITING}
        card = orjson.dumps([seek.player, seek.expires_ms, seek.rating_range])
        outcome = self._open(
            keys=[*EVERY_SEEK, _key("seek", seek.id), *seek.index_keys()],
            args=[seek.id, per_player, total, seek.created_ms, seek.expires_ms,
                  seek.fill_ms or "", card, *(x for kv in fields.items() for x in kv)])
        return Opened(outcome.decode())

    def settle(self, seeks: list[Seek], status: str, ended_ms: int, *,
               game_id: str | None = None, seats: list[int] | None = None) -> Settled:
        """End every one of ``seeks`` with ``status`` (with ``game_id``, each at its seat of
        ``seats``) iff every one is still waiting; else nothing changes."""
        keys = list(EVERY_SEEK)
        args: list = [status, game_id or "", ended_ms, ENDED_TTL_S, len(seeks)]
        for i, seek in enumerate(seeks):
            index = seek.index_keys()
            keys += [_key("seek", seek.id), *index]
            args += [seek.id, seats[i] if seats is not None else "", len(index)]
        reply = self._settle(keys=keys, args=args)
        if reply[0] == b"ok":
            return Settled(True)
        return Settled(False, int(reply[1]) - 1, reply[2].decode() or None)

    # -- reads ----------------------------------------------------------------------------
    def get(self, seek_id: str) -> Seek | None:
        return _decode(seek_id, self.r.hgetall(_key("seek", seek_id)))

    def get_many(self, seek_ids: list[str]) -> list[Seek | None]:
        pipe = self.r.pipeline(transaction=False)
        for seek_id in seek_ids:
            pipe.hgetall(_key("seek", seek_id))
        return [_decode(i, raw) for i, raw in zip(seek_ids, pipe.execute())]

    def pool(self, name: str, offset: int, limit: int) -> tuple[list[Card], int]:
        """The cards of the waiting seeks of a pool, oldest first, from ``offset``, ``limit``
        at most; and how many the pool holds. One read-only script."""
        reply = self._page(keys=[_key("pool", name), CARDS_KEY], args=[offset, limit])
        return [_card(i, raw) for i, raw in zip(reply[1::2], reply[2::2]) if raw], reply[0]

    def waiting(self, game_type: str | None, offset: int, limit: int) -> tuple[list[str], int]:
        """The ids of waiting seeks (of ``game_type``, or all), newest first (seeks of one
        millisecond by id, descending), and how many there are."""
        key = _key("type", game_type) if game_type else LISTED_KEY
        pipe = self.r.pipeline(transaction=False)
        pipe.zrevrange(key, offset, offset + limit - 1)
        pipe.zcard(key)
        ids, total = pipe.execute()
        return [i.decode() for i in ids], total

    def of_player(self, player: str, limit: int) -> list[str]:
        """The ids of a player's waiting seeks, newest first."""
        return [i.decode() for i in self.r.zrevrange(_key("player", player), 0, limit - 1)]

    def tried(self, seek_id: str) -> None:
        """The request that opened a seek has tried to match it."""
        self.r.zrem(UNTRIED_KEY, seek_id)

    def untried(self, before_ms: int, limit: int) -> list[str]:
        """Waiting seeks opened before ``before_ms`` that no request has tried to match,
        oldest first."""
        return self._due(UNTRIED_KEY, before_ms, limit)

    def expiring(self, now_ms: int, limit: int) -> list[str]:
        """Waiting seeks whose time is up at ``now_ms``, the oldest first."""
        return self._due(WAITING_KEY, now_ms, limit)

    def filling(self, now_ms: int, limit: int) -> list[str]:
        """Waiting seeks whose bots are due at ``now_ms``, the longest due first."""
        return self._due(FILL_KEY, now_ms, limit)

    def _due(self, key: str, now_ms: int, limit: int) -> list[str]:
        return [i.decode() for i in self.r.zrangebyscore(key, "-inf", now_ms, start=0,
                                                          num=limit)]
