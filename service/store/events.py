"""The event store: one Redis stream per game, atomic appends with optimistic concurrency.

Stream entry ids are ``<version>-0``, so a version range is an id range and versions double as
SSE ids. Each entry has one field ``e``: the JSON envelope
``{"type", "seat", "data", "at", "schema"[, "forced"]}``.

A game over may be archived (:meth:`EventStore.archive`, ``archive.py``): its stream, seed and
snapshots replaced by one compressed document. Every read here (``read``, ``load``,
``version``, ``seed``) then answers from the document exactly what it answered from the stream.
"""

from __future__ import annotations

import enum
import logging
from dataclasses import dataclass
from importlib import resources
from typing import Iterable, Sequence

import orjson
import redis
from redis.cluster import RedisCluster

from . import connect, keys
from .archive import OVER, Document, Documents, Files, decode, encode, resolve
from .errors import StoreError
from .players import StoredNotice, read_notices
from .quota import NO_QUOTA_ARGS, PROLOGUE, Charged, Counters, Quota, charge, pairs
from .quota import register as register_charge

log = logging.getLogger(__name__)

IDEMPOTENCY_TTL_SECONDS = 24 * 3600

#: the most events :meth:`EventStore.load` returns from its script (with snapshots every 100
#: events a load rarely needs more; longer ranges come faster from XRANGE itself)
LOAD_INLINE_EVENTS = 300
#: Games of one index read at a time when a listing filters by type and status without the
#: type-and-status index, and when that index is rebuilt on a cluster.
LIST_CHUNK = 2000
#: The least time between two rebuilds of the type-and-status index, across every process
#: (:meth:`EventStore.repair_type_status_index`).
REBUILD_EVERY_S = 600
#: Decoded archive documents kept per process (CARTOUCHE_ARCHIVE_CACHE; ~20-45 KB each)
ARCHIVE_CACHE = 256


#: Replies a script returns flat that redis-py's command methods shape (``reads=``).
_READ_SHAPES = {"HGETALL": lambda flat: dict(zip(flat[0::2], flat[1::2]))}


def _lua(name: str) -> str:
    return resources.files(__package__).joinpath(f"lua/{name}").read_text()


@dataclass(frozen=True)
class StoredEvent:
    version: int
    envelope: dict


class AppendStatus(enum.StrEnum):
    """What :meth:`EventStore.append` did (the append script's first reply)."""

    OK = "ok"  # appended
    CONFLICT = "conflict"  # the stream is not at the expected version
    IDEM = "idem"  # the Idempotency-Key already has a record: nothing appended
    MISSING = "missing"  # no such game
    LIMITED = "limited"  # the quota is over: nothing appended


_STATUS = {status.value.encode(): status for status in AppendStatus}


@dataclass(frozen=True)
class AppendResult:
    outcome: AppendStatus
    version: int = 0  # last version ("ok") or current version ("conflict")
    record: str = ""  # the stored idempotency record ("idem")
    reads: tuple = ()  # the replies to ``append(reads=...)``, in order
    charged: Charged | None = None  # "limited": the quota's counts


@dataclass(frozen=True)
class Loaded:
    """A game as :meth:`EventStore.load` reads it, in one round trip."""

    meta: dict[str, str] | None  # with_meta: the meta hash (None: there is no such game)
    seed: str | None  # with_meta
    first: StoredEvent | None  # with_meta: the creation event (version 1)
    snapshot: tuple[int, dict] | None  # after=None: the newest snapshot at or below ``upto``
    events: list[StoredEvent]  # from the snapshot (or ``after``, or version 1) to ``upto``


class EventStore:
    def __init__(self, client: redis.Redis, *, archive_cache: int = ARCHIVE_CACHE,
                 archive_dir: str | None = None, game_types: Sequence[str] = ()) -> None:
        self.r = client
        #: every game type the index may hold: the type-and-status index is checked against
        #: the status indexes with them (none: listings by type and status never use it)
        self.game_types = tuple(game_types)
        #: a Redis Cluster (redis-py's ``RedisCluster`` derives from a ``typing.Protocol``: an
        #: ``isinstance`` against it costs microseconds, so it is asked once)
        self.cluster = isinstance(client, RedisCluster)
        #: archived games' documents this process has read (they never change)
        self.documents = Documents(archive_cache)
        #: where documents are written as files (None: in their archive key)
        self.files = Files(archive_dir) if archive_dir else None
        # the quota prologue (a no-op without a quota) heads the append script
        self._append = connect.script(client, PROLOGUE + _lua("append.lua"))
        self._charge = register_charge(client)
        self._create = connect.script(client, _lua("create.lua"))
        self._load = connect.script(client, _lua("load.lua"))
        self._archive = connect.script(client, _lua("archive.lua"))

    # -- writes ---------------------------------------------------------------------------
    def create(self, game_id: str, meta: dict[str, str], seed_hex: str,
               envelopes: Iterable[dict], listing: tuple[str, int] | None = None) -> int:
        """Write a new game (KeyError when its id is taken); with ``listing`` = (game type,
        creation ms), list it in the game index under ``meta["status"]`` too
        (:meth:`index`). On a single server that is the creation's own script, so a game is
        never stored unlisted; on a cluster (the indexes live in other slots) :meth:`index`
        runs right after, and when it fails the game is deleted and the error raised."""
        outcome, version = self._create(**self._create_call(game_id, meta, seed_hex, envelopes,
                                                            listing))
        if outcome != b"ok":
            raise KeyError(f"game {game_id} exists")
        if listing is not None and self.cluster:
            try:
                self.index(game_id, listing[0], meta["status"], listing[1])
            except BaseException:
                self._forget(game_id, listing)
                raise
        return int(version)

    def _forget(self, game_id: str, listing: tuple[str, int] | None) -> None:
        """Delete a game this store has just written, and its listing."""
        self.r.delete(*keys.all_of_game(game_id))
        if listing is not None:
            self.unindex(game_id, listing[0])

    def _create_call(self, game_id: str, meta: dict[str, str], seed_hex: str,
                     envelopes: Iterable[dict], listing: tuple[str, int] | None) -> dict:
        """``create.lua``'s keys and arguments."""
        script_keys = [keys.events(game_id), keys.meta(game_id), keys.seed(game_id)]
        if listing is not None and not self.cluster:
            script_keys += _listing_keys(listing[0], meta["status"])[:JOINS]
        return {"keys": script_keys,
                "args": [seed_hex, game_id, listing[1] if listing is not None else 0,
                         len(meta), *(x for kv in meta.items() for x in kv),
                         *(orjson.dumps(e) for e in envelopes)]}

    def create_many(self, games: list[tuple[str, dict[str, str], str, list[dict],
                                            tuple[str, int] | None]],
                    reads: Sequence[tuple[str, str]] = ()) -> tuple:
        """Create several games (each as :meth:`create`'s arguments, ``listing`` included) in
        one MULTI/EXEC transaction: all are written and listed, or none. ``reads``: read-only
        commands of one key each, as :meth:`append`'s, run after the games are written (in
        the same round trip on a single server); their replies are returned, None for a read
        that failed.

        A Redis Cluster cannot run one transaction across slots: there the games are created
        one by one and the ones already written are deleted (and unlisted) if a later one
        fails, and the reads follow as separate calls.
        """
        if self.cluster:
            # No transaction spans slots: create one by one and undo on failure.
            done: list[tuple] = []
            try:
                for game in games:
                    self.create(*game)
                    done.append(game)
            except BaseException:
                for game_id, *_, listing in done:
                    self._forget(game_id, listing)
                raise
            return tuple(self._read_quietly(cmd) for cmd in reads)
        if len(games) == 1 and not reads:
            self.create(*games[0])
            return ()
        results = self._create_transaction(games, reads)
        created = results[:len(games)]
        for outcome in created:
            if isinstance(outcome, Exception):
                raise outcome
        if any(outcome != b"ok" for outcome, _ in created):
            raise KeyError("a game id was already taken")
        return tuple(None if isinstance(r, Exception) else r for r in results[len(games):])

    def _create_transaction(self, games: list, reads: Sequence[tuple[str, str]]) -> list:
        """One MULTI/EXEC of ``create.lua`` for each game, then ``reads``: its replies (errors
        as exceptions; a refusal while queueing, the store full, aborts it and is raised).
        ``EVALSHA`` straight, without redis-py's ``SCRIPT EXISTS`` round trip before every
        pipeline of scripts: a server that lost the script answers ``NOSCRIPT`` to every
        create alike, none is written, and the transaction runs again once loaded."""
        def run() -> list:
            pipe = self.r.pipeline(transaction=True)
            for game in games:
                pipe.execute_command(*connect.evalsha(self._create, **self._create_call(*game)))
            for cmd in reads:
                pipe.execute_command(*cmd)
            return pipe.execute(raise_on_error=False)

        results = run()
        if results and isinstance(results[0], redis.exceptions.NoScriptError):
            connect.reload(self._create)
            results = run()
        return results

    def append(self, game_id: str, expected: int, envelopes: Iterable[dict], *,
               status: str | None = None, meta: dict[str, str] | None = None,
               idempotency: tuple[str, str] | None = None,
               reads: Sequence[tuple[str, str]] = (), quota: Quota | None = None,
               listing: tuple[str, int] | None = None) -> AppendResult:
        """Append iff the stream is at ``expected``.

        ``status``, ``meta``: fields of the game's meta hash set with the append (its status
        once over; a table's seats as they change).

        ``listing`` = (game type, creation ms), with a ``status``: the game's index entries
        (:meth:`index`) move to that status with the append. On a single server they are
        written by the same script, so a stored command is never left listed under its old
        status; on a cluster (the indexes live in other slots) :meth:`index` writes them after
        an appended command, and a failure there is logged, not raised: the command stands.

        ``idempotency`` = (key digest, record prefix): the record ``prefix|first|last`` is stored
        in the same script, and an existing record wins over appending.

        ``reads``: read-only commands of one key each, e.g. ``("HGETALL", key)``, run right
        after the append whatever its outcome (they see everything written before it); their
        replies are ``result.reads`` (as redis-py would parse them), None for a read that
        failed. On a single server they run inside the append's script, on a cluster as
        separate calls.

        ``quota``: rate-limit counters charged first (unless already ``charged``), its budgets
        of bytes stored by the size of the envelopes (``quota.stored``); when one is over,
        nothing is appended or read and the outcome is ``"limited"`` (``result.charged``
        holds the counts). On a single server the charge is part of the same script: one
        round trip for everything; on a cluster (the counters live in other slots) it is a
        separate call before the append.
        """
        if quota is not None and quota.charged:
            quota = None
        payloads = [orjson.dumps(e) for e in envelopes]
        if quota is not None:  # what the budgets of bytes stored count
            quota.stored = sum(map(len, payloads))
        cluster = self.cluster
        if quota is not None and cluster:
            charged = charge(self._charge, quota, cluster=True)
            if charged.over:
                return AppendResult(AppendStatus.LIMITED, charged=charged)
            quota = None
        fused_reads = () if cluster else reads
        idem_key = keys.idempotency(game_id, idempotency[0]) if idempotency else None
        script_keys = [keys.events(game_id), keys.meta(game_id)]
        if quota is not None:
            script_keys[:0] = quota.keys()
            quota.charged = True
        if idem_key:
            script_keys.append(idem_key)
        listed = listing is not None and status is not None and not cluster
        index_keys = _listing_keys(listing[0], status) if listed else []
        script_keys += index_keys
        script_keys += [key for _, key in fused_reads]
        fields = dict(meta or {})
        if status:
            fields["status"] = status
        args = [*(quota.args() if quota is not None else NO_QUOTA_ARGS), expected,
                len(fields), *(x for kv in fields.items() for x in kv),
                idempotency[1] if idempotency else "", IDEMPOTENCY_TTL_SECONDS,
                len(index_keys), game_id, listing[1] if listed else 0,
                len(fused_reads), *(cmd for cmd, _ in fused_reads),
                *payloads]
        reply = self._append(keys=script_keys, args=args)
        outcome = _STATUS[reply[0]]
        if outcome is AppendStatus.LIMITED:
            return AppendResult(outcome, charged=Charged(True, pairs(reply[2:])))
        if cluster and listing is not None and status is not None \
                and outcome is AppendStatus.OK:
            try:
                self.index(game_id, listing[0], status, listing[1])
            except StoreError as exc:
                log.warning("game %s: index not written: %s", game_id, exc)
        if cluster:
            replies = tuple(self._read_quietly(cmd) for cmd in reads)
        else:
            replies = tuple(self._parsed(cmd, raw) for (cmd, _), raw in zip(reads, reply[2:]))
        if outcome is AppendStatus.IDEM:
            return AppendResult(outcome, record=reply[1].decode(), reads=replies)
        return AppendResult(outcome, version=int(reply[1]), reads=replies)

    @staticmethod
    def _parsed(command: str, raw):
        """A read's reply from inside the script, shaped as redis-py's command method's."""
        if raw is None:  # the read failed (the script answers false)
            return None
        shape = _READ_SHAPES.get(command.upper())
        return shape(raw) if shape else raw

    def _read_quietly(self, cmd: Sequence):
        try:
            return self.r.execute_command(*cmd)
        except redis.RedisError:
            return None

    def charges_in_append(self, counters: Counters) -> bool:
        """A quota on ``counters`` can be charged inside this store's append script: the same
        client, and a single server (a cluster keeps the counters in other slots)."""
        return counters.client is self.r and not counters.cluster

    # -- reads ----------------------------------------------------------------------------
    def readiness(self) -> str:
        """``"ready"``; ``"unreachable"`` when the store does not answer; ``"full"`` when it
        is at its memory limit (``used_memory >= maxmemory`` in ``INFO memory``) and so
        refuses writes. One call (on a cluster, to its default node only)."""
        try:
            info = self.r.info("memory")
        except Exception:  # any failure to reach the store means not reachable
            return "unreachable"
        limit = int(info.get("maxmemory", 0))
        return "full" if limit and int(info.get("used_memory", 0)) >= limit else "ready"

    def read(self, game_id: str, after: int = 0, upto: int | None = None,
             count: int | None = None) -> list[StoredEvent]:
        """Events with ``after < version <= upto`` (all later ones when ``upto`` is None)."""
        if upto is not None and upto <= after:
            return []
        doc = self.documents.get(game_id)
        if doc is None:
            rows = self.r.xrange(keys.events(game_id), f"{after + 1}-0",
                                 f"{upto}-0" if upto is not None else "+", count=count)
            if rows:
                return self.entries(rows)
            doc = self.document(game_id)  # none read: maybe no stream, an archived game
            if doc is None:
                return []
        return self._events(doc, after, upto, count)

    def read_archived(self, game_id: str, after: int, count: int) -> list[StoredEvent]:
        """Events after ``after`` (at most ``count``) if the game is archived, else []."""
        doc = self.document(game_id)
        return self._events(doc, after, None, count) if doc is not None else []

    @staticmethod
    def _events(doc: Document, after: int, upto: int | None = None,
                count: int | None = None) -> list[StoredEvent]:
        return [StoredEvent(v, orjson.loads(raw)) for v, raw in doc.rows(after, upto, count)]

    def load(self, game_id: str, *, upto: int | None = None, after: int | None = None,
             with_meta: bool = False) -> Loaded:
        """What rebuilding a game needs, in one read-only call: with ``with_meta``, its meta
        hash, seed and creation event; then either the events after ``after`` or, when
        ``after`` is None, the newest snapshot at or below ``upto`` and the events after it
        (after version 1 without one); events up to ``upto`` (None: the latest). More than
        :data:`LOAD_INLINE_EVENTS` events are read by a second call, a plain ``XRANGE``.
        An archived game is read from its document (no call when this process holds it and
        the meta is not asked for)."""
        doc = self.documents.get(game_id)
        if doc is not None:
            meta = self.meta(game_id) if with_meta else None
            return self._load_archived(doc, meta, upto, after, with_meta)
        reply = self._load(
            keys=[keys.meta(game_id), keys.seed(game_id), keys.snapshot_versions(game_id),
                  keys.snapshots(game_id), keys.events(game_id), keys.archive(game_id)],
            args=["1" if with_meta else "", "" if upto is None else upto,
                  "" if after is None else after, LOAD_INLINE_EVENTS])
        if reply[0] == b"archived":
            doc = decode(resolve(reply[2], self.files))
            self.documents.put(game_id, doc)
            meta = _text(reply[1]) if with_meta and reply[1] else None
            return self._load_archived(doc, meta, upto, after, with_meta)
        if with_meta and not reply[0]:
            return Loaded(None, None, None, None, [])
        meta = seed = first = snapshot = None
        if with_meta:
            meta = _text(reply[0])
            seed = reply[1].decode() if reply[1] else None
            first = StoredEvent(1, orjson.loads(reply[2])) if reply[2] else None
        base = after if after is not None else 1
        if reply[3]:
            snapshot = (int(reply[3]), orjson.loads(reply[4]))
            base = snapshot[0]
        if int(reply[5]):  # the envelopes of versions base+1, base+2, ...
            events = [StoredEvent(base + i, orjson.loads(raw))
                      for i, raw in enumerate(reply[6:], 1)]
        else:  # a long range: XRANGE's own reply is faster than one passed through Lua
            events = self.read(game_id, base, upto)
        return Loaded(meta, seed, first, snapshot, events)

    def _load_archived(self, doc: Document, meta: dict[str, str] | None, upto: int | None,
                       after: int | None, with_meta: bool) -> Loaded:
        """:meth:`load`'s answer from an archived game's document: its snapshot when ``after``
        is None and it is at or below ``upto``, and the events after it (or after ``after``,
        or version 1)."""
        if with_meta and meta is None:
            return Loaded(None, None, None, None, [])
        first = StoredEvent(1, orjson.loads(doc.envelopes[0])) if with_meta else None
        snapshot, base = None, after if after is not None else 1
        if after is None and doc.snapshot is not None and (upto is None
                                                           or doc.snapshot[0] <= upto):
            snapshot = (doc.snapshot[0], orjson.loads(doc.snapshot[1]))
            base = snapshot[0]
        events = self._events(doc, base, upto)
        return Loaded(meta, doc.seed if with_meta else None, first, snapshot, events)

    @staticmethod
    def entries(rows) -> list[StoredEvent]:
        """Stream entries (``XRANGE``/``XREAD`` rows) as events."""
        return [StoredEvent(int(rid.split(b"-", 1)[0]), orjson.loads(fields[b"e"]))
                for rid, fields in rows]

    def meta(self, game_id: str) -> dict[str, str] | None:
        raw = self.r.hgetall(keys.meta(game_id))
        if not raw:
            return None
        return {k.decode(): v.decode() for k, v in raw.items()}

    def meta_field(self, game_id: str, field: str) -> str | None:
        raw = self.r.hget(keys.meta(game_id), field)
        return raw.decode() if raw is not None else None

    def link_rematch(self, game_id: str, rematch_id: str) -> bool:
        """Record ``rematch_id`` as the rematch of ``game_id`` unless one is recorded already
        (True: this one is)."""
        return bool(self.r.hsetnx(keys.meta(game_id), "rematch", rematch_id))

    def delete_game(self, game_id: str) -> None:
        """Remove a game written but never announced (a rematch that lost its race)."""
        self.r.delete(*keys.all_of_game(game_id))

    def version(self, game_id: str) -> int:
        doc = self.documents.get(game_id)
        if doc is None:
            if n := self.r.xlen(keys.events(game_id)):
                return n
            doc = self.document(game_id)
        return doc.version if doc is not None else 0

    def stream_lengths(self, game_ids: Sequence[str]) -> list[int]:
        """Each game's version as its stream holds it, in one round trip (0: no stream, a game
        archived or gone; :meth:`version` knows those)."""
        pipe = self.r.pipeline(transaction=False)
        for game_id in game_ids:
            pipe.xlen(keys.events(game_id))
        return pipe.execute()

    def seed(self, game_id: str) -> str | None:
        doc = self.documents.get(game_id)
        if doc is None:
            raw = self.r.get(keys.seed(game_id))
            if raw:
                return raw.decode()
            doc = self.document(game_id)
        return doc.seed if doc is not None else None

    # -- archives ---------------------------------------------------------------------------
    def document(self, game_id: str) -> Document | None:
        """The archived game's document (None: the game is not archived)."""
        doc = self.documents.get(game_id)
        if doc is None:
            blob = self.r.get(keys.archive(game_id))
            if blob is None:
                return None
            doc = decode(resolve(blob, self.files))
            self.documents.put(game_id, doc)
        return doc

    def archive(self, game_id: str) -> str:
        """Replace a game that is over by one compressed document (``archive.py``). Returns
        ``"ok"`` (archived now), ``"done"`` (archived before), ``"missing"`` (no such game),
        ``"live"`` (not over) or ``"stale"`` (it changed while read: nothing done). Safe to
        run any number of times, concurrently or killed at any point: the swap is one
        script, conditional on the stream being at the version the document holds."""
        pipe = self.r.pipeline(transaction=False)
        pipe.hmget(keys.meta(game_id), "status", "version", "type")
        pipe.exists(keys.archive(game_id))
        pipe.xrange(keys.events(game_id))
        pipe.get(keys.seed(game_id))
        pipe.zrevrange(keys.snapshot_versions(game_id), 0, 0)
        (status, version, game_type), archived, rows, seed, newest = pipe.execute()
        if archived:
            return "done"
        if status is None:
            return "missing"
        if status.decode() not in OVER:
            return "live"
        if version is None or len(rows) != int(version) or seed is None:
            # another archive may have swapped it between these reads
            return "done" if self.r.exists(keys.archive(game_id)) else "stale"
        snapshot = None
        if newest and (raw := self.r.hget(keys.snapshots(game_id), newest[0])):
            snapshot = (int(newest[0]), raw)
        blob = encode(int(version), seed.decode(), [fields[b"e"] for _, fields in rows],
                      snapshot, game_type.decode() if game_type else None)
        if self.files is not None:  # the file first: a pointer never names a missing file
            blob = self.files.keep(game_id, blob)
        return self.swap(game_id, int(version), blob)

    def swap(self, game_id: str, version: int, blob: bytes) -> str:
        """The archive script alone: ``blob`` (the document, or a pointer to its file)
        replaces the game iff it is over and its stream is at ``version`` (see
        :meth:`archive` for the answers)."""
        return self._archive(
            keys=[keys.meta(game_id), keys.events(game_id), keys.seed(game_id),
                  keys.snapshots(game_id), keys.snapshot_versions(game_id),
                  keys.archive(game_id)], args=[version, blob]).decode()

    def idempotency_record(self, game_id: str, digest: str) -> str | None:
        raw = self.r.get(keys.idempotency(game_id, digest))
        return raw.decode() if raw else None

    # -- snapshots (an optimisation only: deleting them changes no answer) -----------------
    def save_snapshot(self, game_id: str, version: int, state: dict) -> None:
        # Not a transaction (cluster pipelines may not offer one): a snapshot whose index entry
        # is missing is never read, and an index entry without its snapshot is skipped.
        pipe = self.r.pipeline(transaction=False)
        pipe.hset(keys.snapshots(game_id), str(version), orjson.dumps(state))
        pipe.zadd(keys.snapshot_versions(game_id), {str(version): version})
        pipe.execute()

    def delete_snapshots(self, game_id: str) -> None:
        self.r.delete(keys.snapshots(game_id), keys.snapshot_versions(game_id))

    # -- the game index (derived data, updated after each successful write) ----------------
    def index(self, game_id: str, game_type: str, status: str, created_ms: int) -> None:
        """List a game under its type and status (and off the other statuses). One
        transaction on a single server, so a refusal (the store full) changes nothing; on a
        cluster, where the index keys live in other slots, a plain pipeline."""
        pipe = self.r.pipeline(transaction=not self.cluster)
        listing = _listing_keys(game_type, status)
        for key in listing[:JOINS]:
            pipe.zadd(key, {game_id: created_ms})
        for key in listing[JOINS:]:
            pipe.zrem(key, game_id)
        pipe.execute()

    def unindex(self, game_id: str, game_type: str) -> None:
        """Remove a game from the index (deletions are allowed at the memory limit)."""
        pipe = self.r.pipeline(transaction=False)
        pipe.zrem(keys.index_all(), game_id)
        pipe.zrem(keys.index_type(game_type), game_id)
        for s in STATUSES:
            pipe.zrem(keys.index_status(s), game_id)
            pipe.zrem(keys.index_type_status(game_type, s), game_id)
        pipe.execute()

    def list_ids(self, game_type: str | None, status: str | None, offset: int,
                 limit: int) -> tuple[list[str], int]:
        """Newest first, and how many match. With both filters, the page of the type-and-status
        index when it agrees with the type and status indexes (:meth:`_type_status_page`);
        else the smaller of those two is read newest first, :data:`LIST_CHUNK` games at a
        time, each chunk checked against the other in one ``ZMSCORE``, until the page is full,
        and the count is one ``ZINTERCARD`` on a single server (on a cluster the two indexes
        live in other slots, and every chunk is read)."""
        if game_type and status:
            page = self._type_status_page(game_type, status, offset, limit)
            if page is not None:
                return page
            a, b = keys.index_type(game_type), keys.index_status(status)
            if self.r.zcard(a) > self.r.zcard(b):
                a, b = b, a
            total = None if self.cluster else self.r.zintercard(2, [a, b])
            both: list[bytes] = []
            start = 0
            while total is None or len(both) < offset + limit:
                chunk = self.r.zrevrange(a, start, start + LIST_CHUNK - 1)
                if not chunk:
                    break
                both += [i for i, s in zip(chunk, self.r.zmscore(b, chunk)) if s is not None]
                start += LIST_CHUNK
            return [i.decode() for i in both[offset:offset + limit]], \
                len(both) if total is None else total
        key = (keys.index_type(game_type) if game_type
               else keys.index_status(status) if status else keys.index_all())
        total = self.r.zcard(key)
        ids = [i.decode() for i in self.r.zrevrange(key, offset, offset + limit - 1)]
        return ids, total

    # -- the type-and-status index ----------------------------------------------------------
    # Kept by every write with the other indexes (:func:`_listing_keys`), so that a listing by
    # type and status reads one page of one set. Games indexed by a version without it (or,
    # during an upgrade, by a process of that version still running) are not in it: a listing
    # uses it only when its counts agree with the type and status indexes, and the workers'
    # sweep rebuilds it when they do not (:meth:`repair_type_status_index`). Statuses only move
    # forward (waiting, active, finished or aborted), so a write of the older version always
    # leaves a count apart, but for a creation and the removal of a game of the same type and
    # status (a rematch that lost its race) made together.

    def _counted(self, pipe) -> None:
        """Queue the counts :meth:`_agree` compares: each type's and each status's index, then
        each (type, status) set."""
        for t in self.game_types:
            pipe.zcard(keys.index_type(t))
        for s in STATUSES:
            pipe.zcard(keys.index_status(s))
        for t in self.game_types:
            for s in STATUSES:
                pipe.zcard(keys.index_type_status(t, s))

    def _agree(self, counts: list[int]) -> bool:
        """Whether each type's games over its (type, status) sets, and each status's over
        its sets, are as many as that type's or status's own index holds."""
        n, k = len(self.game_types), len(STATUSES)
        by_type, by_status, cells = counts[:n], counts[n:n + k], counts[n + k:]
        return by_type == [sum(cells[i * k:(i + 1) * k]) for i in range(n)] and \
            by_status == [sum(cells[j::k]) for j in range(k)]

    def _type_status_page(self, game_type: str, status: str, offset: int,
                          limit: int) -> tuple[list[str], int] | None:
        """The page and count of ``game_type`` games with ``status`` from the type-and-status
        index, read with the counts that say it is exact (one round trip; one transaction on a
        single server); None when they do not agree (:meth:`_agree`)."""
        if game_type not in self.game_types:
            return None
        pipe = self.r.pipeline(transaction=not self.cluster)
        self._counted(pipe)
        pipe.zrevrange(keys.index_type_status(game_type, status), offset, offset + limit - 1)
        *counts, page = pipe.execute()
        if not self._agree(counts):
            return None
        cell = len(self.game_types) + len(STATUSES) + \
            self.game_types.index(game_type) * len(STATUSES) + STATUSES.index(status)
        return [i.decode() for i in page], counts[cell]

    def type_status_consistent(self) -> bool:
        """Whether the type-and-status index agrees with the type and status indexes
        (:meth:`_agree`; one round trip)."""
        if not self.game_types:
            return True
        pipe = self.r.pipeline(transaction=not self.cluster)
        self._counted(pipe)
        return self._agree(pipe.execute())

    def rebuild_type_status_index(self) -> None:
        """Write the type-and-status index from the type and status indexes. On a single
        server each (type, status) set is one ``ZINTERSTORE``, atomic: it is exact from then
        on, every write keeping it (the longest held the server 0.18-0.25 s with a million
        games indexed, once after an upgrade). On a cluster (the sets live in other slots) each
        type's sets are emptied and written again a chunk of :data:`LIST_CHUNK` games at a time
        (their statuses by one ``ZMSCORE`` a status); a game whose status changes meanwhile can
        be left in two sets, which the next :meth:`type_status_consistent` finds."""
        if not self.cluster:
            for t in self.game_types:  # one command at a time: other clients come in between
                for s in STATUSES:
                    self.r.zinterstore(keys.index_type_status(t, s),
                                       [keys.index_type(t), keys.index_status(s)],
                                       aggregate="MAX")
            return
        for t in self.game_types:
            self.r.delete(*(keys.index_type_status(t, s) for s in STATUSES))
            start = 0
            while chunk := self.r.zrange(keys.index_type(t), start, start + LIST_CHUNK - 1,
                                         withscores=True):
                ids = [i for i, _ in chunk]
                for s in STATUSES:
                    found = {i: score for (i, score), there in
                             zip(chunk, self.r.zmscore(keys.index_status(s), ids))
                             if there is not None}
                    if found:
                        self.r.zadd(keys.index_type_status(t, s), found)
                start += LIST_CHUNK

    def repair_type_status_index(self) -> bool:
        """Rebuild the type-and-status index if it disagrees with the type and status indexes
        (the first time after an upgrade to a version that keeps it, or after a process of
        an older version wrote to the index), at most once every :data:`REBUILD_EVERY_S`
        across every process; whether it did."""
        if self.type_status_consistent():
            return False
        if not self.r.set(keys.index_rebuild_lock(), "1", nx=True, ex=REBUILD_EVERY_S):
            return False
        self.rebuild_type_status_index()
        return True

    def created_before(self, status: str, before_ms: int, limit: int) -> list[str]:
        """The games of ``status`` created at ``before_ms`` or earlier, oldest first, at most
        ``limit`` (the index is scored by creation time)."""
        return [i.decode() for i in self.r.zrangebyscore(keys.index_status(status), "-inf",
                                                         before_ms, start=0, num=limit)]

    def sweep_page(self, count: int) -> list[tuple[str, int]]:
        """The next ``count`` active games of the sweep's rotation, with their creation times:
        newest first from where the last page ended, the newest again after the oldest. The
        cursor (``keys.sweep_cursor``) is the last game a page held and its creation time;
        games created in the same millisecond come in the index's order (reverse byte order
        of their ids), so every game active for a whole rotation is in one of its pages once,
        however many games are active, created together, ended or started meanwhile."""
        active = keys.index_status("active")
        cursor = self.r.get(keys.sweep_cursor())
        rows: list[tuple[bytes, float]] = []
        top = "+inf"
        if cursor is not None:
            at, last = cursor.split(b" ", 1)
            top = f"({at.decode()}"
            rows = [(game_id, float(at)) for game_id in
                    self.r.zrevrangebyscore(active, at, at) if game_id < last][:count]
        if len(rows) < count:
            rows += self.r.zrevrangebyscore(active, top, "-inf", start=0,
                                            num=count - len(rows), withscores=True)
        page = [(game_id.decode(), int(score)) for game_id, score in rows]
        if len(page) < count:
            self.r.delete(keys.sweep_cursor())  # the rotation is over: the newest next
        else:
            self.r.set(keys.sweep_cursor(), f"{page[-1][1]} {page[-1][0]}")
        return page

    def claim_sweep_window(self, every_s: float, now_s: float) -> bool:
        """Whether this caller is the one that sweeps the active games in the window of
        ``every_s`` seconds holding ``now_s`` (the first to ask, of every worker)."""
        window = int(now_s // every_s)
        return bool(self.r.set(keys.sweep_window(window), "1", nx=True,
                               ex=max(1, int(2 * every_s) + 1)))

    def lobby_deadlines(self, game_ids: list[str]) -> list[int | None]:
        """Per table, in one round trip, the moment it expires if still waiting (the meta
        hash's ``lobby_deadline_ms``); None for a table whose meta keeps none, or one gone."""
        pipe = self.r.pipeline(transaction=False)
        for game_id in game_ids:
            pipe.hget(keys.meta(game_id), "lobby_deadline_ms")
        return [int(raw) if raw is not None else None for raw in pipe.execute()]

    def last_activity(self, game_ids: list[str]) -> list[int | str | None]:
        """Per game, when its last append was written, in one round trip: the meta hash's
        ``last_ms`` (an int), else (a game last written before appends recorded it) its last
        event's ``at`` (RFC 3339 text); None for a game that is gone."""
        pipe = self.r.pipeline(transaction=False)
        for game_id in game_ids:
            pipe.hget(keys.meta(game_id), "last_ms")
            pipe.xrevrange(keys.events(game_id), count=1)
        replies = pipe.execute()
        out: list[int | str | None] = []
        for last_ms, rows in zip(replies[0::2], replies[1::2]):
            out.append(int(last_ms) if last_ms is not None else
                       orjson.loads(rows[0][1][b"e"]).get("at") if rows else None)
        return out


def _text(flat) -> dict[str, str]:
    """A flat field/value reply (``HGETALL`` through a script) as text."""
    return {flat[i].decode(): flat[i + 1].decode() for i in range(0, len(flat), 2)}


#: The statuses the game index keeps a set for (``GET /v1/games?status=``).
STATUSES = ("waiting", "active", "finished", "aborted")


#: How many of :func:`_listing_keys` a game is in (``create.lua`` and ``append.lua`` add it to
#: that many and remove it from the rest).
JOINS = 4


def _listing_keys(game_type: str, status: str) -> list[str]:
    """The indexes a game of ``game_type`` with ``status`` is in (every game's, its type's, its
    status's and its type-and-status's: :data:`JOINS`), then those of its other statuses, which
    it is not in."""
    others = [s for s in STATUSES if s != status]
    return [keys.index_all(), keys.index_type(game_type), keys.index_status(status),
            keys.index_type_status(game_type, status),
            *(keys.index_status(s) for s in others),
            *(keys.index_type_status(game_type, s) for s in others)]


class StreamFollower:
    """Blocking reads of game streams and player streams, on a client of their own (its read
    timeout is longer than a block), for the event streams' hubs."""

    def __init__(self, client: redis.Redis) -> None:
        self.r = client

    def read_after(self, game_id: str, after: int, *, count: int,
                   block_ms: int) -> tuple[list[StoredEvent], bool]:
        """The events after version ``after`` (at most ``count``), waiting up to ``block_ms``
        for one to arrive ([] when none did), and whether the game is archived (its stream gone:
        what is left is read from its document). One round trip: the archive check is
        pipelined behind the blocking read, and runs when it returns."""
        pipe = self.r.pipeline(transaction=False)
        pipe.xread({keys.events(game_id): f"{after}-0"}, count=count, block=block_ms)
        pipe.exists(keys.archive(game_id))
        found, archived = pipe.execute()
        return (EventStore.entries(found[0][1]) if found else []), bool(archived)

    def read_notices(self, player_id: str, after: str, *, count: int,
                     block_ms: int) -> list[StoredNotice]:
        """A player's notifications after stream id ``after`` (at most ``count``), waiting up
        to ``block_ms`` for one to arrive; [] when none did."""
        return read_notices(self.r, player_id, after, count=count, block_ms=block_ms)
