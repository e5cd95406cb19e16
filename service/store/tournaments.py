"""Tournaments in Redis: each tournament's event stream and the index of those running.

- ``cartouche:{t:<id>}:events`` — stream: the tournament's events, the n-th as entry ``<n>-0``
  (field ``e``, JSON), so that positions are versions as in a game's stream and SSE hubs
  follow it with ``XREAD`` (at most the stream limit the caller gives: the tournament's games
  bound it);
- ``cartouche:{t:<id>}:meta`` — hash: ``status`` (``running`` or ``finished``);
- ``cartouche:tournaments:running`` — sorted set of the running tournaments by creation time
  (the running limit, and the sweep's backstop for lost pairing jobs);
- ``cartouche:tournaments:index`` — sorted set of tournaments by creation time, for
  ``GET /v1/tournaments`` (derived data, added after a creation's append succeeds): the newest
  :data:`INDEX_MAX` are kept, and a tournament whose stream has expired is dropped when a
  listing meets it.

Every write is ``lua/tournament_append.lua``: the events are appended iff the stream holds the
expected number of events, so two workers pairing the same round cannot both succeed. A
finished tournament's keys expire after the retention the caller gives. On a single server the
script also keeps the running index (the limit checked and the entry added at creation, removed
at the end); on a Redis Cluster that index lives in another slot than the tournament's keys, so
the store keeps it around the script: a creation is admitted into the index first (the limit
checked in the same step) and leaves it if its append fails, and an ending leaves it after its
append. What a process dies between leaves an entry too many, never one missing: an entry
without a stream (:meth:`TournamentStore.orphaned`) or of a finished tournament, which the
sweep removes (``Tournaments.advance``).
"""

from __future__ import annotations

import enum
from importlib import resources
from typing import Sequence

import orjson
import redis
from redis.cluster import RedisCluster

from . import connect

RUNNING_KEY = "cartouche:tournaments:running"
INDEX_KEY = "cartouche:tournaments:index"
#: Tournaments the listing index keeps (the newest; older ones stay readable by id).
INDEX_MAX = 10_000

#: A creation's entry in the running index on a cluster: iff fewer than ARGV[1] tournaments
#: run, ARGV[2] added with score ARGV[3]; returns 1, else 0.
_ADMIT = """
if redis.call('ZCARD', KEYS[1]) >= tonumber(ARGV[1]) then return 0 end
redis.call('ZADD', KEYS[1], ARGV[3], ARGV[2])
return 1
"""


def events_key(tid: str) -> str:
    return f"cartouche:{{t:{tid}}}:events"


def meta_key(tid: str) -> str:
    return f"cartouche:{{t:{tid}}}:meta"


class Written(enum.StrEnum):
    OK = "ok"
    CONFLICT = "conflict"  # the stream had moved on
    TOO_LONG = "too_long"  # the stream would hold more events than allowed
    FULL = "full"  # as many tournaments run as allowed (creation)


class TournamentStore:
    def __init__(self, client: redis.Redis) -> None:
        self.r = client
        self.cluster = isinstance(client, RedisCluster)
        lua = resources.files(__package__).joinpath("lua/tournament_append.lua").read_text()
        self._append = connect.script(client, lua)
        self._admit = connect.script(client, _ADMIT)

    def append(self, tid: str, expected: int, events: Sequence[dict], *, max_events: int,
               max_running: int = 0, now_ms: int = 0, status: str = "",
               keep_s: int = 0) -> Written:
        """Append ``events`` iff the stream holds ``expected`` events (0: create it, iff
        fewer than ``max_running`` tournaments run); ``status`` the tournament's status after
        (``finished``: out of the running index, its keys kept ``keep_s`` more)."""
        keys = [events_key(tid), meta_key(tid)]
        if not self.cluster:
            keys.append(RUNNING_KEY)
        elif expected == 0 and not self._admit(keys=[RUNNING_KEY],
                                               args=[max_running, tid, now_ms]):
            return Written.FULL
        reply = self._append(keys=keys, args=[expected, max_events, max_running, tid, now_ms,
                                              status, keep_s,
                                              *(orjson.dumps(e) for e in events)])
        written = Written(reply[0].decode())
        if self.cluster and ((expected == 0 and written is not Written.OK)
                             or (written is Written.OK and status == "finished")):
            self.r.zrem(RUNNING_KEY, tid)
        if expected == 0 and written is Written.OK:
            pipe = self.r.pipeline(transaction=False)
            pipe.zadd(INDEX_KEY, {tid: now_ms})
            pipe.zremrangebyrank(INDEX_KEY, 0, -INDEX_MAX - 1)
            pipe.execute()
        return written

    def events(self, tid: str) -> list[dict]:
        return [e for _, e in self.read(tid, 0)]

    def read(self, tid: str, after: int, upto: int | None = None,
             count: int | None = None) -> list[tuple[int, dict]]:
        """(version, event) of the events after version ``after`` (up to ``upto``)."""
        found = self.r.xrange(events_key(tid), f"{after}-1",
                              "+" if upto is None else f"{upto}-0", count=count)
        return entries(found)

    def length(self, tid: str) -> int:
        return self.r.xlen(events_key(tid))

    def listed(self, status: str | None, offset: int,
               limit: int) -> tuple[list[tuple[str, int, dict, str]], int]:
        """Newest first: (id, created ms, creation event, status) of a page of the indexed
        tournaments (``status`` ``running`` or ``finished``: only those), and how many there
        are. Ids whose stream has expired are dropped from the index on the way."""
        if status == "running":
            total = self.r.zcard(RUNNING_KEY)
            ids = self.r.zrevrange(RUNNING_KEY, offset, offset + limit - 1, withscores=True)
        elif status == "finished":
            # the index less the running ones (at most the running limit): a page of finished
            # ones lies within the first offset + limit + running entries
            running = self.r.zrange(RUNNING_KEY, 0, -1)
            skip = set(running)
            ids = [x for x in self.r.zrevrange(INDEX_KEY, 0, offset + limit + len(running) - 1,
                                               withscores=True) if x[0] not in skip]
            ids = ids[offset:offset + limit]
            listed_running = sum(1 for x in self.r.zmscore(INDEX_KEY, running) if x is not None) \
                if running else 0
            total = self.r.zcard(INDEX_KEY) - listed_running
        else:
            total = self.r.zcard(INDEX_KEY)
            ids = self.r.zrevrange(INDEX_KEY, offset, offset + limit - 1, withscores=True)
        pipe = self.r.pipeline(transaction=False)
        for i, _ in ids:
            pipe.xrange(events_key(i.decode()), "1-0", "1-0")
            pipe.hget(meta_key(i.decode()), "status")
        replies = pipe.execute()
        out, gone = [], []
        for (i, score), first, st in zip(ids, replies[0::2], replies[1::2]):
            if not first:
                gone.append(i)
                continue
            out.append((i.decode(), int(score), entries(first)[0][1],
                        st.decode() if st else "running"))
        if gone:
            self.r.zrem(INDEX_KEY, *gone)
        return out, total

    def running(self, limit: int) -> list[str]:
        """The running tournaments, the oldest first."""
        return [i.decode() for i in self.r.zrange(RUNNING_KEY, 0, limit - 1)]

    def not_running(self, tid: str) -> None:
        """Out of the running index (an entry without a stream)."""
        self.r.zrem(RUNNING_KEY, tid)

    def ended(self, tid: str) -> None:
        """A finished tournament: out of the running index. On a single server its ending's
        append did that; on a cluster the process that appended it may have died before."""
        if self.cluster:
            self.not_running(tid)

    def orphaned(self, tid: str, before_ms: int) -> bool:
        """Whether ``tid`` is in the running index since before ``before_ms`` without a
        stream: a creation on a cluster that died between its admission and its append."""
        score = self.r.zscore(RUNNING_KEY, tid)
        return score is not None and score < before_ms and not self.r.exists(events_key(tid))


def read_blocking(follower, tid: str, after: int, *, count: int,
                  block_ms: int) -> list[tuple[int, dict]]:
    """(version, event) of the events after ``after``, waiting up to ``block_ms`` for one on
    the connections of ``follower`` (``events.StreamFollower``: the hubs' blocking reads)."""
    found = follower.r.xread({events_key(tid): f"{after}-0"}, count=count, block=block_ms)
    return entries(found[0][1]) if found else []


def entries(found) -> list[tuple[int, dict]]:
    """(version, event) of stream entries as XRANGE and XREAD return them."""
    return [(int(i.split(b"-")[0]), orjson.loads(f[b"e"])) for i, f in found]
