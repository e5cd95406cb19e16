"""Players in Redis: profiles, token and external-id lookups, per-type counts, the games each
player is in, and one event stream per player.

Every key of one player carries the hash tag ``{p:<player_id>}`` (one Cluster slot per player);
the lookups by token digest and by external id are global keys of one entry each. Each method
touches one slot, so everything works on a Redis Cluster too.

The player stream (``cartouche:{p:<id>}:events``) holds notifications (``game_start``,
``your_turn``, ``game_finish``, ``invitation`` ...): entry ids are Redis stream ids, which double
as SSE ids, and each entry has two fields, ``t`` (the type) and ``d`` (its JSON data). It is
capped at ``stream_max`` entries (``XADD MAXLEN ~``: Redis trims whole nodes, so a few more may
stay).
"""

from __future__ import annotations

from dataclasses import dataclass

import orjson
import redis
from redis.exceptions import NoScriptError

from . import connect

PREFIX = "cartouche"

#: Notifications kept per player (CARTOUCHE_PLAYER_STREAM_MAX): a client that reconnects
#: within the last this-many notifications misses nothing.
STREAM_MAX = 1000
#: Games listed per player as waiting or running (the oldest drop out of the list first).
GAMES_MAX = 1000


def profile(player_id: str) -> str:
    return f"{PREFIX}:{{p:{player_id}}}:profile"


def stats(player_id: str) -> str:
    return f"{PREFIX}:{{p:{player_id}}}:stats"


def games(player_id: str) -> str:
    return f"{PREFIX}:{{p:{player_id}}}:games"


def stream(player_id: str) -> str:
    return f"{PREFIX}:{{p:{player_id}}}:events"


def turns(player_id: str) -> str:
    """Hash: ``<game id>:<seat>`` -> the version of the last ``your_turn`` written for it."""
    return f"{PREFIX}:{{p:{player_id}}}:turns"


#: How long a player's ``turns`` hash outlives its last write (its fields are deleted when
#: their game ends; this bounds those of games that never told it).
TURNS_TTL_MS = 30 * 24 * 3600 * 1000


def by_token(digest: str) -> str:
    return f"{PREFIX}:player-token:{digest}"


def by_external(platform: str, external_id: str) -> str:
    return f"{PREFIX}:player-ext:{platform}:{external_id}"


@dataclass(frozen=True)
class StoredNotice:
    """One entry of a player stream: its stream id (``"<ms>-<n>"``), type and data."""

    id: str
    type: str
    data: dict


@dataclass(frozen=True)
class NoticePage:
    """Notifications read after an id, and what the stream had dropped when they were read."""

    notices: list[StoredNotice]
    #: The oldest notification still kept if the stream had dropped older ones by then
    #: (``MAXLEN``: more entries added than kept); None while it has dropped none.
    oldest: str | None


#: A ``your_turn`` notification unless one of a later version was written for the same game
#: and seat (two commands' listeners may run out of order: the later one's is the current
#: decision). KEYS[1] the stream, KEYS[2] the player's ``turns``; ARGV: the field, the
#: version, the stream's MAXLEN, the data, the hash's TTL in ms. The entry's id, or nil.
_TURN = """
local last = tonumber(redis.call('HGET', KEYS[2], ARGV[1]) or '0')
if tonumber(ARGV[2]) < last then return false end
redis.call('HSET', KEYS[2], ARGV[1], ARGV[2])
redis.call('PEXPIRE', KEYS[2], ARGV[5])
return redis.call('XADD', KEYS[1], 'MAXLEN', '~', ARGV[3], '*', 't', 'your_turn', 'd', ARGV[4])
"""


def _notices(rows) -> list[StoredNotice]:
    return [StoredNotice(rid.decode(), f[b"t"].decode(), orjson.loads(f[b"d"]))
            for rid, f in rows]


#: A page of a player stream and, read in the same step, its oldest entry if it has dropped
#: some. KEYS[1] the stream; ARGV[1] the first id (``(<id>``: after it), ARGV[2] the last,
#: ARGV[3] the most entries. Returns {} without a stream, else {entries, the oldest entry's
#: id or '' while the stream has dropped none}. (A script, not a MULTI: a cluster client's
#: transactions answer unparsed replies.)
_PAGE = """
if redis.call('EXISTS', KEYS[1]) == 0 then return {} end
local rows = redis.call('XRANGE', KEYS[1], ARGV[1], ARGV[2], 'COUNT', ARGV[3])
local info = redis.call('XINFO', 'STREAM', KEYS[1])
local f = {}
for i = 1, #info, 2 do f[info[i]] = info[i + 1] end
local oldest = ''
if f['first-entry'] and f['entries-added'] > f['length'] then oldest = f['first-entry'][1] end
return {rows, oldest}
"""


class PlayerStore:
    def __init__(self, client: redis.Redis, *, stream_max: int = STREAM_MAX,
                 games_max: int = GAMES_MAX) -> None:
        self.r = client
        self.stream_max = stream_max
        self.games_max = games_max
        self._page = connect.script(client, _PAGE)
        self._turn = connect.script(client, _TURN)

    # -- profiles -------------------------------------------------------------------------
    def create(self, player_id: str, fields: dict[str, str], token_digest: str | None,
               external: tuple[str, str] | None = None) -> str | None:
        """Write a new player. With ``external`` (platform, external id) the id is claimed
        first: when the platform already has a player under that external id, nothing is
        written and that player's id is returned. None when the player was written."""
        if external is not None:
            claimed = self.r.set(by_external(*external), player_id, nx=True)
            if not claimed:
                existing = self.r.get(by_external(*external))
                return existing.decode() if existing else player_id
        written = [by_external(*external)] if external is not None else []
        try:
            if not self.r.hsetnx(profile(player_id), "id", player_id):
                return player_id  # an existing player (the built-in bots, written at each start)
            written.append(profile(player_id))
            self.r.hset(profile(player_id), mapping=fields)
            if token_digest is not None:
                self.r.set(by_token(token_digest), player_id)
        except redis.RedisError:
            # a step refused (the store full, say): what this call wrote is deleted, so no
            # half-written player stays and its external id is free again (deletions are
            # allowed at the memory limit)
            try:
                for key in written:
                    self.r.delete(key)  # one key per call: they live in different slots
            except redis.RedisError:
                pass  # unreachable now: the first error is the one raised
            raise
        return None

    def get(self, player_id: str) -> dict[str, str] | None:
        raw = self.r.hgetall(profile(player_id))
        if not raw or b"name" not in raw:
            return None
        return {k.decode(): v.decode() for k, v in raw.items()}

    def get_many(self, player_ids: list[str]) -> list[dict[str, str] | None]:
        pipe = self.r.pipeline(transaction=False)
        for pid in player_ids:
            pipe.hgetall(profile(pid))
        return [({k.decode(): v.decode() for k, v in raw.items()} if raw and b"name" in raw
                 else None) for raw in pipe.execute()]

    def id_for_token(self, token_digest: str) -> str | None:
        raw = self.r.get(by_token(token_digest))
        return raw.decode() if raw else None

    def id_for_external(self, platform: str, external_id: str) -> str | None:
        raw = self.r.get(by_external(platform, external_id))
        return raw.decode() if raw else None

    # -- writes of the notices listener, one round trip per append -------------------------
    def batch(self) -> Batch:
        """Writes collected and sent together (:meth:`Batch.send`): one pipeline, not a
        transaction (each write is about one player; a cluster spreads them over slots)."""
        return Batch(self)

    def notify(self, player_id: str, kind: str, data: dict) -> str:
        """Append one notification to a player's stream; its stream id."""
        batch = self.batch()
        batch.notify(player_id, kind, data)
        return batch.send()[0].decode()

    def stats(self, player_id: str) -> dict[str, int]:
        """Games and wins per game type: ``{"<type>:games": n, "<type>:wins": n}``."""
        return {k.decode(): int(v) for k, v in self.r.hgetall(stats(player_id)).items()}

    def game_ids(self, player_id: str, limit: int) -> list[str]:
        """The games a player is in, newest first, ``limit`` at most."""
        return [g.decode() for g in self.r.zrevrange(games(player_id), 0, limit - 1)]

    def remove_game(self, player_id: str, game_id: str) -> None:
        self.r.zrem(games(player_id), game_id)

    # -- the player stream ----------------------------------------------------------------
    def notices_after(self, player_id: str, after: str, count: int) -> list[StoredNotice]:
        """Notifications after stream id ``after`` (``"0-0"``: from the oldest kept)."""
        return _notices(self.r.xrange(stream(player_id), f"({after}", "+", count=count))

    def page(self, player_id: str, after: str, upto: str | None = None, *,
             count: int) -> NoticePage:
        """Notifications after stream id ``after`` (up to ``upto``), and the oldest one kept if
        the stream has dropped some, both as of one moment (one script): a reader whose last
        id is older than that oldest one may have missed notifications, one at or past it has
        not."""
        reply = self._page(keys=[stream(player_id)],
                           args=[f"({after}", upto or "+", count])
        if not reply:  # there is no such stream
            return NoticePage([], None)
        rows, oldest = reply
        return NoticePage(_notices((rid, dict(zip(flat[::2], flat[1::2])))
                                   for rid, flat in rows),
                          oldest.decode() if oldest else None)

    def first_kept(self, player_id: str) -> str | None:
        """The id of the oldest notification still kept (None: the stream is empty)."""
        rows = self.r.xrange(stream(player_id), "-", "+", count=1)
        return rows[0][0].decode() if rows else None

    def last_id(self, player_id: str) -> str:
        rows = self.r.xrevrange(stream(player_id), "+", "-", count=1)
        return rows[0][0].decode() if rows else "0-0"


def read_notices(client: redis.Redis, player_id: str, after: str, *, count: int,
                 block_ms: int) -> list[StoredNotice]:
    """A blocking read of a player stream (for the player-stream hubs, on a client whose read
    timeout is longer than ``block_ms``): the notifications after ``after``, waiting up to
    ``block_ms`` for one; [] when none came."""
    found = client.xread({stream(player_id): after}, count=count, block=block_ms)
    return _notices(found[0][1]) if found else []


class Batch:
    """Player writes sent in one pipeline: notifications, the games each player is in, and
    the counts of finished games."""

    def __init__(self, store: PlayerStore) -> None:
        self.store = store
        self._pipe = None
        self.size = 0
        #: the pipeline's index of each ``your_turn`` script call: its keys and arguments
        self._turns: dict[int, tuple[list, list]] = {}

    @property
    def pipe(self):
        """The pipeline, made at the first write (most commands write nothing here)."""
        if self._pipe is None:
            self._pipe = self.store.r.pipeline(transaction=False)
        return self._pipe

    def notify(self, player_id: str, kind: str, data: dict) -> None:
        self.pipe.xadd(stream(player_id), {"t": kind, "d": orjson.dumps(data)},
                       maxlen=self.store.stream_max, approximate=True)
        self.size += 1

    def notify_turn(self, player_id: str, game_id: str, seat: int, version: int,
                    data: dict) -> None:
        """A ``your_turn`` notification, unless the listener of a later command of the game
        has written one for this seat already (:data:`_TURN`)."""
        keys = [stream(player_id), turns(player_id)]
        args = [f"{game_id}:{seat}", version, self.store.stream_max, orjson.dumps(data),
                TURNS_TTL_MS]
        self._turns[len(self.pipe)] = keys, args
        self.pipe.execute_command(*connect.evalsha(self.store._turn, keys, args))
        self.size += 1

    def forget_turns(self, player_id: str, game_id: str, seats: list[int]) -> None:
        """The game is over: its seats' last ``your_turn`` versions are no longer needed."""
        self.pipe.hdel(turns(player_id), *(f"{game_id}:{seat}" for seat in seats))
        self.size += 1

    def add_game(self, player_id: str, game_id: str, created_ms: int) -> None:
        self.pipe.zadd(games(player_id), {game_id: created_ms})
        self.pipe.zremrangebyrank(games(player_id), 0, -self.store.games_max - 1)
        self.size += 1

    def remove_game(self, player_id: str, game_id: str) -> None:
        self.pipe.zrem(games(player_id), game_id)
        self.size += 1

    def count_finish(self, player_id: str, game_type: str, won: bool) -> None:
        self.pipe.hincrby(stats(player_id), f"{game_type}:games", 1)
        if won:
            self.pipe.hincrby(stats(player_id), f"{game_type}:wins", 1)
        self.size += 1

    def send(self) -> list:
        """Send what was collected; the replies, in order (the first error raised). A
        ``your_turn`` the server answered ``NOSCRIPT`` (restarted, flushed) is sent again on
        its own, loading the script."""
        if not self.size:
            return []
        replies = self.pipe.execute(raise_on_error=False)
        for at, (keys, args) in self._turns.items():
            if isinstance(replies[at], NoScriptError):
                replies[at] = self.store._turn(keys=keys, args=args)
        self.size, self._turns = 0, {}
        for reply in replies:
            if isinstance(reply, Exception):
                raise reply
        return replies
