"""The application layer: games as event streams. Loads state (snapshot + cache + replay), runs
commands through the engine, appends atomically, serves redacted views and logs.

No HTTP here (that is ``service.api``) and no rules (that is ``service.games``).
"""

from __future__ import annotations

import hashlib
import hmac
import logging
import random
import re
import secrets
import threading
import time
import uuid
from collections import OrderedDict
from dataclasses import dataclass
from datetime import datetime, timezone
from typing import Any, Callable, Sequence

import orjson

from .engine import ALL, Game, IllegalAction, InvalidOptions, NotYourTurn, Rng, Viewer
from .engine import clone, command, commitment, event, forfeit, start, visible
from .engine.local import creation_event
from .games import GAMES
from . import clock as clock_mod
from .replay import SHELL_EVENTS
from .store.events import EventStore, Loaded, StoredEvent
from .store.quota import Quota, QuotaExceeded

log = logging.getLogger("cartouche.gameplay")

#: How many times a command without ``expected_version`` is re-decided after losing a race.
MAX_RETRIES = 50


class NotFound(Exception):
    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message


class VersionConflict(Exception):
    def __init__(self, current: int) -> None:
        super().__init__(f"the game is at version {current}")
        self.current = current


class IdempotencyKeyReused(Exception):
    pass


class InvalidRequest(Exception):
    """A well-formed request the service refuses (HTTP 422 with ``code``)."""

    def __init__(self, code: str, message: str, details: dict | None = None) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.details = details or {}


_last_second: tuple[int | None, str] = (None, "")  # the last whole second, formatted


def rfc3339(ms: int) -> str:
    """``ms`` (Unix epoch milliseconds) as ``2026-01-02T03:04:05.678Z``."""
    global _last_second
    second, milli = divmod(ms, 1000)
    cached = _last_second  # a tuple, replaced whole: safe to share between threads
    if cached[0] != second:
        cached = _last_second = (
            second, datetime.fromtimestamp(second, timezone.utc).strftime("%Y-%m-%dT%H:%M:%S"))
    return f"{cached[1]}.{milli:03d}Z"


def token_digest(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()




class DeadlinePassed(Exception):
    """The acting seat's clock had run out; its timeout was applied first (HTTP 409)."""


class SeatNotHuman(Exception):
    """The seat is played by a bot (or has left); its token may watch but not act (HTTP 403)."""


class CannotAbort(Exception):
    pass


@dataclass
class Table:
    """One game as loaded: immutable facts, the rules' state at ``version``, and the shell's
    state (seat controllers, clock, how the table ended) at the same version."""

    id: str
    game: Game
    meta: dict
    state: dict
    version: int
    shell: dict
    #: False when taken from this process's cache without asking the store whether the game
    #: has moved on (:meth:`GameService.load_for_command`): fine to decide an append on, since
    #: the append is conditional on ``version``, but never to answer an error from.
    checked: bool = True

    @property
    def over(self) -> bool:
        return (self.game.is_over(self.state) or self.shell["ended"] is not None
                or self.shell["aborted"])

    @property
    def status(self) -> str:
        if self.shell["aborted"]:
            return "aborted"
        return "finished" if self.over else "active"

    @property
    def created(self) -> dict:
        return self.meta["created"]

    @property
    def clock(self) -> dict | None:
        return self.created["data"].get("clock")

    def awaiting(self) -> list[int]:
        return [] if self.over else self.game.awaiting(self.state)

    def result(self) -> dict | None:
        ended = self.shell["ended"]
        if ended is not None:  # a seat forfeited a game that cannot go on without it
            n = len(self.shell["controllers"])
            out = [s for s in ended["seats"]]
            ranks = [n if s in out else 1 for s in range(n)]
            return {"scores": [0] * n, "ranks": ranks,
                    "winners": [s for s in range(n) if s not in out],
                    "details": {"ended_by": ended["reason"], "forfeited": out}}
        return self.game.result(self.state) if self.game.is_over(self.state) else None


def initial_shell(created: dict) -> dict:
    """The shell state before the first command, from the creation event's data."""
    clock = created.get("clock")
    n = len(created["players"])
    return {
        "controllers": [f"bot:{p['bot']['level']}" if p.get("bot") else "human"
                        for p in created["players"]],
        "clock": clock_mod.initial(clock, n) if clock else None,
        "ended": None,
        "aborted": False,
    }


class _StateCache:
    """Latest known (version, state) per game, per process. States in it are never mutated."""

    def __init__(self, size: int) -> None:
        self.size = size
        self._data: OrderedDict[str, tuple[int, dict, dict]] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, game_id: str) -> tuple[int, dict, dict] | None:
        with self._lock:
            hit = self._data.get(game_id)
            if hit is not None:
                self._data.move_to_end(game_id)
            return hit

    def put(self, game_id: str, version: int, state: dict, shell: dict) -> None:
        with self._lock:
            old = self._data.get(game_id)
            if old is None or old[0] < version:
                self._data[game_id] = (version, state, shell)
                self._data.move_to_end(game_id)
            while len(self._data) > self.size:
                self._data.popitem(last=False)

    def clear(self) -> None:
        with self._lock:
            self._data.clear()


class NullScheduler:
    """Schedules nothing (tests of the API alone; the RQ scheduler is in service.jobs)."""

    def changed(self, table: "Table") -> None:
        pass


class GameService:
    def __init__(self, store: EventStore, *, snapshot_every: int = 100, cache_size: int = 2048,
                 platform_key_digests: Sequence[str] = (), scheduler=None,
                 now_ms: Callable[[], int] | None = None) -> None:
        self.store = store
        self.snapshot_every = snapshot_every
        self.cache = _StateCache(cache_size)
        self._meta: OrderedDict[str, dict] = OrderedDict()
        self._meta_lock = threading.Lock()
        self._seeds: OrderedDict[str, str] = OrderedDict()
        self._load_stripes = [threading.Lock() for _ in range(64)]
        self.platform_key_digests = tuple(platform_key_digests)
        self.scheduler = scheduler or NullScheduler()
        self.now_ms = now_ms or (lambda: int(time.time() * 1000))
        #: Called after every successful append as ``listener(table_after, first_version,
        #: envelopes)`` (webhooks, metrics). A listener must not raise; errors are logged.
        #: A listener with a ``reads_after_append()`` method (a list of read-only Redis
        #: commands) gets their replies as ``reads=`` (a reply is None if its read failed): the
        #: reads ride in the append's round trip (:meth:`EventStore.append`).
        self.listeners: list[Callable[..., None]] = []

    # -- identity -------------------------------------------------------------------------
    def is_platform_key(self, token: str, digest: str | None = None) -> bool:
        if not self.platform_key_digests:
            return False
        digest = digest or token_digest(token)
        return any(hmac.compare_digest(digest, d) for d in self.platform_key_digests)

    def viewer_for(self, table: Table, token: str | None) -> Viewer:
        """The seat a bearer token acts as, ALL for a platform key, None without a token."""
        if token is None:
            return None
        digest = token_digest(token)
        if self.is_platform_key(token, digest):
            return ALL
        seat = None
        for i, d in enumerate(table.meta["tokens"]):
            if hmac.compare_digest(digest, d):  # constant time, and no early exit
                seat = i
        if seat is None:
            raise PermissionError("invalid_token")
        return seat

    # -- creation -------------------------------------------------------------------------
    def create(self, game_type: str, players: list[dict], options: dict,
               seed_hex: str | None) -> dict:
        return self.create_many([(game_type, players, options, seed_hex)])[0]

    def create_many(self, specs: Sequence[tuple[str, list[dict], dict, str | None]]) -> list:
        """Create every game or none: all are validated and set up first, then written in one
        transaction. Raises InvalidRequest (with ``details.index`` for bulk requests)."""
        prepared = []
        for index, spec in enumerate(specs):
            try:
                prepared.append(self._prepare(*spec))
            except InvalidRequest as exc:
                if len(specs) > 1:
                    exc.details = {"index": index, **exc.details}
                raise
        self.store.create_many([(p["id"], p["meta"], p["seed"], p["envelopes"])
                                for p in prepared])
        out = []
        for p in prepared:
            self.store.index(p["id"], p["game"].type_id, p["meta"]["status"], p["now"])
            self.cache.put(p["id"], len(p["envelopes"]), p["state"], p["shell"])
            table = self.load(p["id"])
            self.scheduler.changed(table)
            self._notify(table, 1, p["envelopes"])
            out.append(p["response"])
        return out

    def _prepare(self, game_type: str, players: list[dict], options: dict,
                 seed_hex: str | None) -> dict:
        game = GAMES.get(game_type)
        if game is None:
            raise InvalidRequest("unknown_game_type", f"no game type {game_type!r}",
                                 {"known": sorted(GAMES)})
        if not game.min_players <= len(players) <= game.max_players:
            raise InvalidRequest("invalid_player_count",
                                 f"{game.name} takes {game.min_players} to {game.max_players} "
                                 f"players, not {len(players)}",
                                 {"min": game.min_players, "max": game.max_players})
        from .engine.bots import available

        for seat, p in enumerate(players):
            if p.get("bot") and not available(game, p["bot"]["level"]):
                raise InvalidRequest("bot_level_unavailable",
                                     f"no {p['bot']['level']} bot for {game.name} yet",
                                     {"seat": seat})
        options = dict(options)
        try:
            clock = clock_mod.normalize(options.pop("clock", None))
        except clock_mod.ClockError as exc:
            raise InvalidRequest("invalid_options", exc.message, {"code": exc.code}) from None
        try:
            normalized = game.normalize_options(options, players)
        except InvalidOptions as exc:
            raise InvalidRequest("invalid_options", exc.message,
                                 {"code": exc.code, **exc.details}) from None
        seed = bytes.fromhex(seed_hex) if seed_hex else secrets.token_bytes(32)
        game_id = uuid.uuid4().hex[:20]
        first = creation_event(game, players, normalized, seed,
                               "supplied" if seed_hex else "server")
        first["data"]["clock"] = clock
        setup, state = start(game, game.initial(first["data"]["players"], normalized),
                             Rng(seed, 1))
        events = [first] + setup
        tokens = [secrets.token_urlsafe(32) for _ in players]
        now = self.now_ms()
        at = rfc3339(now)
        shell = initial_shell(first["data"])
        over = game.is_over(state)
        if shell["clock"]:
            shell["clock"] = clock_mod.advance(clock, shell["clock"], now, (),
                                               [] if over else game.awaiting(state), ())
        envelopes = [self._envelope(game, e, at) for e in events]
        envelopes[-1]["shell"] = shell
        meta = {
            "type": game.type_id,
            "created_ms": str(now),
            "tokens": orjson.dumps([token_digest(t) for t in tokens]).decode(),
            "status": "finished" if over else "active",
            "created_version": str(len(envelopes)),
        }
        return {"id": game_id, "game": game, "meta": meta, "seed": seed.hex(),
                "envelopes": envelopes, "state": state, "shell": shell, "now": now,
                "response": {
                    "id": game_id,
                    "version": len(envelopes),
                    "seats": [{"seat": i, "name": p["name"], "token": tokens[i]}
                              for i, p in enumerate(players)],
                    "seed_commitment": first["data"]["seed_commitment"],
                }}

    @staticmethod
    def _envelope(game: Game, ev: dict, at: str) -> dict:
        out = {"type": ev["type"], "seat": ev.get("seat"), "data": ev.get("data", {}),
               "at": at, "schema": game.event_schema}
        for flag in ("forced", "timeout"):
            if ev.get(flag):
                out[flag] = True
        return out

    # -- loading --------------------------------------------------------------------------
    def _load_meta(self, game_id: str) -> dict:
        meta = self._meta_hit(game_id)
        if meta is None:
            meta = self._remember(game_id, self.store.load(game_id, upto=1, after=1,
                                                           with_meta=True))
        return meta

    def _meta_hit(self, game_id: str) -> dict | None:
        with self._meta_lock:
            return self._meta.get(game_id)

    def _remember(self, game_id: str, loaded: Loaded) -> dict:
        """Keep the game's meta and seed (both never change once created) from a load made
        ``with_meta``; NotFound when there is no such game."""
        raw = loaded.meta
        if raw is None or loaded.first is None or loaded.seed is None:
            raise NotFound("game_not_found", f"no game {game_id!r}")
        meta = {"type": raw["type"], "created_ms": int(raw["created_ms"]),
                "created_version": int(raw["created_version"]),
                "tokens": orjson.loads(raw["tokens"]), "created": loaded.first.envelope}
        with self._meta_lock:
            self._keep(self._meta, game_id, meta)
            self._keep(self._seeds, game_id, loaded.seed)
        return meta

    def _keep(self, kept: OrderedDict, game_id: str, value) -> None:
        """Keep ``value`` in one of the per-game memos (meta, seed), bounded like the state
        cache, oldest out first. The caller holds ``_meta_lock``."""
        kept[game_id] = value
        while len(kept) > self.cache.size:
            kept.popitem(last=False)

    def _event(self, game: Game, stored: StoredEvent) -> dict:
        env = stored.envelope
        ev = {"type": env["type"], "seat": env.get("seat"), "data": env.get("data", {})}
        if env.get("forced"):
            ev["forced"] = True
        schema = env.get("schema", 1)
        if schema < game.event_schema:
            ev = game.upcast(ev, schema)
        return ev

    def _initial(self, game: Game, meta: dict) -> dict:
        data = meta["created"]["data"]
        return game.initial(data["players"], data["options"])

    def load(self, game_id: str, version: int | None = None) -> Table:
        """The game at ``version`` (latest when None), from cache or snapshot plus replay."""
        if not _valid_id(game_id):
            raise NotFound("game_not_found", f"no game {game_id!r}")
        meta = self._meta_hit(game_id)
        cached = self.cache.get(game_id)
        base_version, base, shell = 1, None, None
        if cached is not None and (version is None or cached[0] <= version):
            base_version, base, shell = cached
            if version == base_version and meta is not None:
                return Table(game_id, GAMES[meta["type"]], meta, base, base_version, shell)
        # one round trip: the meta and seed if this process has not kept them, then the
        # events after the cached state, or else after the newest snapshot
        loaded = self.store.load(game_id, upto=version,
                                 after=base_version if base is not None else None,
                                 with_meta=meta is None)
        if meta is None:
            meta = self._remember(game_id, loaded)
        game = GAMES[meta["type"]]
        if base is None and loaded.snapshot is not None:
            base_version, snap = loaded.snapshot
            base, shell = snap["state"], snap["shell"]
        stored = loaded.events
        if base is None:
            base = self._initial(game, meta)
            shell = initial_shell(meta["created"]["data"])
        state, current = base, base_version
        if stored:
            state = clone(base)
            for s in stored:
                if s.envelope["type"] not in SHELL_EVENTS:
                    game.apply(state, self._event(game, s))
                if "shell" in s.envelope:
                    shell = s.envelope["shell"]
            current = stored[-1].version
        if version is not None and current != version:
            raise NotFound("version_not_found", f"version {version} does not exist")
        if version is None or version == current:
            self.cache.put(game_id, current, state, shell)
        return Table(game_id, game, meta, state, current, shell)

    def load_for_command(self, game_id: str) -> Table:
        """The game to run a command against: this process's latest cached table as is (no
        Redis call; ``checked`` False), else :meth:`load`. Optimistic: the command's append is
        conditional on the version, so a table another process has moved past only costs a
        conflict and a reload, and :meth:`act` re-checks any refusal against a fresh load.
        Games with a clock are always loaded (their deadlines are settled on the fresh game)."""
        hit = self.cache.get(game_id) if _valid_id(game_id) else None
        if hit is None:
            return self.load(game_id)
        meta = self._load_meta(game_id)
        if meta["created"]["data"].get("clock"):
            return self.load(game_id)
        return Table(game_id, GAMES[meta["type"]], meta, hit[1], hit[0], hit[2], checked=False)

    def load_recent(self, game_id: str, at_least: int) -> Table:
        """The latest game this process knows if it is at version ``at_least`` or later (no
        Redis call), else :meth:`load`. For event streams: many subscribers of one game wake
        together on each append; one of them loads (per stripe lock, cooperative under gevent)
        while the others wait and then find the cache fresh, instead of every subscriber reading
        and replaying the same events."""
        hit = self.cache.get(game_id)
        if hit is None or hit[0] < at_least:
            with self._load_stripes[hash(game_id) % len(self._load_stripes)]:
                hit = self.cache.get(game_id)
                if hit is None or hit[0] < at_least:
                    return self.load(game_id)
        if not _valid_id(game_id):
            raise NotFound("game_not_found", f"no game {game_id!r}")
        meta = self._load_meta(game_id)
        return Table(game_id, GAMES[meta["type"]], meta, hit[1], hit[0], hit[2])

    # -- commands -------------------------------------------------------------------------
    def act(self, game_id: str, seat: int, action: Any, expected_version: int | None,
            idempotency_key: str | None, body_digest: str, *, loaded: Table | None = None,
            quota: Quota | None = None) -> tuple[Table, int, list[dict]]:
        """Run one command of a human seat; returns (table after, first version, envelopes).

        A replay of the same Idempotency-Key and body returns the original outcome. Overdue
        clocks are settled first; if the acting seat was overdue its timeout stands and
        :class:`DeadlinePassed` is raised.

        ``loaded``: the game as the caller just loaded it (the API does, to authenticate, with
        :meth:`load_for_command`). The first attempt decides against it instead of reading the
        game again; that is safe because the append is conditional on the stream still being at
        ``loaded.version`` (else the command is re-decided against a fresh load, as for any lost
        race). A refusal decided on a table that was not ``checked`` against the store is
        decided again on a fresh load before it is raised. ``loaded`` is ignored when a timeout
        was just settled.

        ``quota``: the caller's rate-limit counters, charged by the command's first append (in
        the same script: :meth:`EventStore.append`); over the limit nothing is appended and
        :class:`QuotaExceeded` is raised. A command that never reaches an append leaves the
        quota uncharged (``quota.charged`` False) for the caller to charge.
        """
        idem = None
        if idempotency_key is not None:
            key_digest = hashlib.sha256(f"{seat}\x00{idempotency_key}".encode()).hexdigest()
            idem = (key_digest, body_digest)
            record = self.store.idempotency_record(game_id, key_digest)
            if record is not None:
                return self._replayed(game_id, record, body_digest)
        try:
            return self._act(game_id, seat, action, expected_version, idem, body_digest, loaded,
                             quota)
        except (NotYourTurn, IllegalAction, VersionConflict, DeadlinePassed, SeatNotHuman):
            # A retry that raced its own original (same key) must get the original answer,
            # not the error that deciding it again against the moved-on game gives.
            if idem is not None:
                record = self.store.idempotency_record(game_id, idem[0])
                if record is not None:
                    return self._replayed(game_id, record, body_digest)
            raise

    def _act(self, game_id, seat, action, expected_version, idem, body_digest, loaded, quota):
        timed_out = self.settle_timeouts(game_id)
        if seat in timed_out:
            raise DeadlinePassed()
        if timed_out or (loaded is not None and loaded.id != game_id):
            loaded = None
        for _ in range(MAX_RETRIES):
            table, loaded = (loaded, None) if loaded is not None else (self.load(game_id), None)
            try:
                if table.over:
                    raise NotYourTurn("game_over", "the game is over")
                if table.shell["controllers"][seat] != "human":
                    raise SeatNotHuman()
                if expected_version is not None and expected_version != table.version:
                    raise VersionConflict(table.version)
                if table.clock and seat in clock_mod.overdue(
                        table.clock, table.shell["clock"], self.now_ms(), table.awaiting()):
                    self.settle_timeouts(game_id)
                    raise DeadlinePassed()
                outcome = self._run(table, seat, action, idem=idem, quota=quota)
            except (NotYourTurn, IllegalAction, VersionConflict, SeatNotHuman):
                if table.checked:
                    raise
                continue  # decided on a cached table: decide again on the game as stored
            if outcome[0] == "ok":
                return outcome[1]
            if outcome[0] == "idem":
                return self._replayed(game_id, outcome[1], body_digest)
            if expected_version is not None:
                raise VersionConflict(outcome[1])
        raise VersionConflict(self.store.version(game_id))

    def _run(self, table: Table, seat: int, action: Any, *, idem=None, flag: str | None = None,
             quota: Quota | None = None):
        """Decide and append one command for ``seat`` against ``table``.

        Returns ("ok", (table after, first version, envelopes)) | ("conflict", current) |
        ("idem", record). Raises NotYourTurn / IllegalAction / NotFound.
        """
        rng = Rng(bytes.fromhex(self._seed(table.id)), table.version + 1)
        events, after = command(table.game, table.state, seat, action, rng)
        if flag:
            for ev in events:
                ev[flag] = True
        actors = {seat} | {ev["seat"] for ev in events if ev.get("forced")
                           and isinstance(ev.get("seat"), int)}
        cmd = {"seat": seat, "action": action}
        if flag == "timeout":
            cmd["timeout"] = True
        return self._append(table, events, after, self._next_shell(table, after, actors),
                            idem=idem, cmd=cmd, quota=quota)

    def _next_shell(self, table: Table, after: dict, actors, **changes) -> dict:
        shell = {**table.shell, **changes}
        if table.clock:
            over = table.game.is_over(after) or shell["ended"] is not None or shell["aborted"]
            shell["clock"] = clock_mod.advance(
                table.clock, table.shell["clock"], self.now_ms(), table.awaiting(),
                [] if over else table.game.awaiting(after), actors)
        return shell

    def _append(self, table: Table, events: list[dict], after: dict, shell: dict, *, idem=None,
                cmd: dict, quota: Quota | None = None):
        """Append one command's events. ``cmd`` (stored on the first envelope, never served
        while the game runs) records what caused them, so an export can be re-derived."""
        at = rfc3339(self.now_ms())
        envelopes = [self._envelope(table.game, e, at) for e in events]
        envelopes[0]["cmd"] = cmd
        envelopes[-1]["shell"] = shell
        new = Table(table.id, table.game, table.meta, after, table.version + len(events), shell)
        reads = self._listener_reads()
        result = self.store.append(table.id, table.version, envelopes,
                                   status=new.status if new.over else None, idempotency=idem,
                                   reads=[cmd for _, cmds in reads for cmd in cmds],
                                   quota=quota)
        if result.outcome == "limited":
            raise QuotaExceeded(quota, result.charged)
        if result.outcome == "ok":
            self.cache.put(table.id, new.version, after, shell)
            k = self.snapshot_every
            if k and new.version // k > table.version // k:
                self.store.save_snapshot(table.id, new.version, {"state": after, "shell": shell})
            if new.over:
                self.store.index(table.id, table.game.type_id, new.status,
                                 table.meta["created_ms"])
            self.scheduler.changed(new)
            self._notify(new, table.version + 1, envelopes, reads, result.reads)
            return "ok", (new, table.version + 1, envelopes)
        if result.outcome == "idem":
            return "idem", result.record
        if result.outcome == "missing":
            raise NotFound("game_not_found", f"no game {table.id!r}")
        return "conflict", result.version

    def _listener_reads(self) -> list[tuple[Any, list]]:
        """(listener, its reads) for the listeners that want reads with the append."""
        out = []
        for listener in self.listeners:
            wanted = getattr(listener, "reads_after_append", None)
            if wanted is not None:
                try:
                    out.append((listener, list(wanted())))
                except Exception:
                    log.exception("listener %r: reads_after_append failed", listener)
        return out

    def _notify(self, table: Table, first_version: int, envelopes: list[dict],
                reads: list[tuple[Any, list]] = (), replies: Sequence = ()) -> None:
        given, at = {}, 0
        for listener, cmds in reads:
            given[id(listener)] = list(replies[at:at + len(cmds)])
            at += len(cmds)
        for listener in self.listeners:
            try:
                if id(listener) in given:
                    listener(table, first_version, envelopes, reads=given[id(listener)])
                else:
                    listener(table, first_version, envelopes)
            except Exception:  # a listener never fails a command that is already stored
                log.exception("listener %r failed for game %s", listener, table.id)

    # -- what happens without a request: clocks and bots ----------------------------------
    def settle_timeouts(self, game_id: str, version: int | None = None) -> list[int]:
        """Apply the timeout of every awaited seat whose deadline has passed; returns them.

        With ``version``, does nothing unless the game is still at that version (clock jobs
        carry the version they were scheduled for).
        """
        timed_out: list[int] = []
        if not _valid_id(game_id):
            raise NotFound("game_not_found", f"no game {game_id!r}")
        if not self._load_meta(game_id)["created"]["data"].get("clock"):
            return timed_out  # no clock, no deadline: the same answer, without loading the game
        for _ in range(MAX_RETRIES * 4):
            table = self.load(game_id)
            if version is not None and table.version != version and not timed_out:
                return timed_out
            if not table.clock or table.over:
                return timed_out
            due = clock_mod.overdue(table.clock, table.shell["clock"], self.now_ms(),
                                    table.awaiting())
            if not due:
                return timed_out
            seat = due[0]
            outcome = self._timeout(table, seat)
            if outcome[0] == "ok":
                timed_out.append(seat)
        return timed_out

    def _timeout(self, table: Table, seat: int):
        policy = table.clock["timeout"]
        if policy == "forfeit":
            return self._forfeit(table, seat, "timeout")
        if policy == "bot" or table.shell["controllers"][seat].startswith("bot:"):
            level = table.clock.get("bot_level", "heuristic")
            action = self._bot_action(table, seat, level, budget_ms=200)
        else:
            action = table.game.timeout_action(table.state, seat)
        return self._run(table, seat, action, flag="timeout")

    def _forfeit(self, table: Table, seat: int, reason: str):
        """The rules' consequence of leaving, or (for games that cannot go on without the
        seat) the end of the game with that seat last."""
        controllers = list(table.shell["controllers"])
        controllers[seat] = "left"
        left = forfeit(table.game, table.state, seat,
                       Rng(bytes.fromhex(self._seed(table.id)), table.version + 1))
        if left is not None:
            events, after = left
            marker = event("SeatForfeited", {"reason": reason, "game_continues": True}, seat)
            return self._append(table, [marker] + events, after,
                                self._next_shell(table, after, {seat}, controllers=controllers),
                                cmd={"shell": "forfeit", "seat": seat})
        marker = event("SeatForfeited", {"reason": reason, "game_continues": False}, seat)
        ended = {"reason": f"forfeit_{reason}", "seats": [seat]}
        return self._append(table, [marker], table.state,
                            self._next_shell(table, table.state, {seat}, ended=ended,
                                             controllers=controllers),
                            cmd={"shell": "forfeit", "seat": seat})

    def play_bot(self, game_id: str, seat: int, version: int) -> bool:
        """The bot job: play ``seat``'s decision if the game still awaits it at ``version``."""
        table = self.load(game_id)
        if table.version != version or seat not in table.awaiting():
            return False
        controller = table.shell["controllers"][seat]
        if controller == "human":
            return False
        if controller == "auto" or controller == "left":
            action = table.game.timeout_action(table.state, seat)
        else:
            bot = table.created["data"]["players"][seat].get("bot") or {}
            action = self._bot_action(table, seat, controller.split(":", 1)[1],
                                      bot.get("budget_ms"))
        return self._run(table, seat, action)[0] == "ok"

    def _bot_action(self, table: Table, seat: int, level: str, budget_ms: int | None):
        from .engine.bots import choose, observe

        rnd = random.Random(f"{table.id}:{table.version}:{seat}")
        if level == "random":  # needs nothing but the seat's own legal actions
            return rnd.choice(table.game.legal_actions(table.state, seat))

        events = [self._event(table.game, s) for s in self.store.read(table.id, 1, table.version)
                  if s.envelope["type"] not in SHELL_EVENTS]
        obs = observe(table.game, table.created["data"], events, table.state, seat,
                      table.version)
        return choose(level, obs, rnd, budget_ms)

    # -- leaving ----------------------------------------------------------------------------
    def resign(self, game_id: str, seat: int) -> Table:
        """The seat leaves: the rules' forfeit when its clock says so, else a bot (or the
        clock's automatic move) plays it from now on. Overdue clocks are settled first, as
        for any command."""
        self.settle_timeouts(game_id)
        for _ in range(MAX_RETRIES):
            table = self.load(game_id)
            if table.over:
                raise NotYourTurn("game_over", "the game is over")
            if table.shell["controllers"][seat] != "human":
                raise SeatNotHuman()
            clock = table.clock
            if clock and clock["timeout"] == "forfeit":
                outcome = self._forfeit(table, seat, "resigned")
            else:
                level = clock["bot_level"] if clock else "heuristic"
                replacement = "auto" if clock and clock["timeout"] == "auto" else f"bot:{level}"
                controllers = list(table.shell["controllers"])
                controllers[seat] = replacement
                marker = event("SeatResigned", {"replaced_by": replacement}, seat)
                outcome = self._append(table, [marker], table.state,
                                       self._next_shell(table, table.state, set(),
                                                        controllers=controllers),
                                       cmd={"shell": "resign", "seat": seat})
            if outcome[0] == "ok":
                return outcome[1][0]
        raise VersionConflict(self.store.version(game_id))

    def abort(self, game_id: str, by: Viewer) -> Table:
        """End a game before anybody has moved (status ``aborted``)."""
        table = self.load(game_id)
        if table.over:
            raise CannotAbort("the game is already over")
        if table.version != table.meta["created_version"]:
            raise CannotAbort("the game has started: a move was made")
        marker = event("GameAborted", {"by": by if isinstance(by, int) else "platform"})
        outcome = self._append(table, [marker], table.state,
                               self._next_shell(table, table.state, set(), aborted=True),
                               cmd={"shell": "abort"})
        if outcome[0] != "ok":
            raise CannotAbort("the game has started: a move was made")
        return outcome[1][0]

    # -- exports and forks ------------------------------------------------------------------
    def export(self, game_id: str) -> dict:
        """The self-contained record of a finished (or aborted) game, seed revealed."""
        from .replay import export_document

        table = self.load(game_id)
        if not table.over:
            raise NotYourTurn("game_not_finished", "only finished games can be exported")
        stored = self.store.read(game_id, 0, table.version)
        return export_document(table.meta, self._seed(game_id),
                               [(s.version, s.envelope) for s in stored], game_id,
                               table.status, table.result())

    def fork(self, game_id: str, at: int) -> dict:
        """A new game continuing from version ``at`` of this one, with new seat tokens and a
        new seed for every draw after ``at`` (the copied events keep their parent's draws)."""
        parent = self.load(game_id)
        if not 1 <= at <= parent.version:
            raise NotFound("version_not_found", f"version {at} does not exist")
        stored = self.store.read(game_id, 0, min(at + 1, parent.version))
        boundary = (at == parent.version or at == parent.meta["created_version"]
                    or "cmd" in stored[at].envelope)
        if not boundary:
            raise InvalidRequest("not_a_command_boundary",
                                 f"version {at} is inside a command; fork at a version that "
                                 "ends one", {"at": at})
        table = self.load(game_id, at)
        seed = secrets.token_bytes(32)
        now = self.now_ms()
        created = dict(parent.created)
        data = dict(created["data"])
        data.update({"seed_commitment": commitment(seed), "seed": "server", "setup": "custom",
                     "forked_from": {"id": game_id, "version": at}})
        envelopes = [{**created, "data": data, "at": rfc3339(now)}]
        envelopes += [dict(s.envelope) for s in stored[1:at]]
        shell = dict(table.shell)
        if table.clock:
            awaiting = table.awaiting()
            shell["clock"] = {"bank": list(table.shell["clock"]["bank"]),
                              "since": [now if s in awaiting else None
                                        for s in range(len(shell["controllers"]))]}
        envelopes[-1]["shell"] = shell
        new_id = uuid.uuid4().hex[:20]
        tokens = [secrets.token_urlsafe(32) for _ in data["players"]]
        meta = {"type": parent.game.type_id, "created_ms": str(now),
                "tokens": orjson.dumps([token_digest(t) for t in tokens]).decode(),
                "status": table.status, "created_version": str(at)}
        self.store.create(new_id, meta, seed.hex(), envelopes)
        self.store.index(new_id, parent.game.type_id, table.status, now)
        fork = self.load(new_id)
        self.scheduler.changed(fork)
        return {"id": new_id, "version": fork.version,
                "seats": [{"seat": i, "name": p["name"], "token": tokens[i]}
                          for i, p in enumerate(data["players"])],
                "seed_commitment": data["seed_commitment"]}

    def _replayed(self, game_id: str, record: str, body_digest: str):
        digest, first, last = record.rsplit("|", 2)
        if not hmac.compare_digest(digest, body_digest):
            raise IdempotencyKeyReused()
        first_v, last_v = int(first), int(last)
        table = self.load(game_id)
        stored = self.store.read(game_id, first_v - 1, last_v)
        return table, first_v, [s.envelope for s in stored]

    def _seed(self, game_id: str) -> str:
        # The seed never changes once the creation script wrote it (ids are never reused), so
        # each process keeps it (bounded like the meta cache, never served): one GET per game
        # per process, not one per command.
        with self._meta_lock:
            seed = self._seeds.get(game_id)
        if seed is not None:
            return seed
        seed = self.store.seed(game_id)
        if seed is None:
            raise NotFound("game_not_found", f"no game {game_id!r}")
        with self._meta_lock:
            self._keep(self._seeds, game_id, seed)
        return seed

    # -- reads ----------------------------------------------------------------------------
    def served_events(self, table: Table, envelopes: Sequence[dict], first_version: int,
                      viewer: Viewer) -> list[dict]:
        """Envelopes numbered from ``first_version`` as ``viewer`` may see them now."""
        out = []
        over = table.over
        for offset, env in enumerate(envelopes):
            ev = {"type": env["type"], "seat": env.get("seat"), "data": env.get("data", {})}
            if env["type"] in SHELL_EVENTS:
                shown = ev  # about seats and the table: public
            else:
                shown = visible(table.game, ev, viewer, over)
            if shown is None:
                continue
            served = {"version": first_version + offset, "type": shown["type"],
                      "at": env.get("at"), "seat": shown.get("seat"),
                      "data": shown.get("data", {})}
            for flag in ("forced", "timeout"):
                if env.get(flag):
                    served[flag] = True
            out.append(served)
        return out

    def events(self, table: Table, viewer: Viewer, after: int,
               limit: int) -> tuple[list[dict], int]:
        """Up to ``limit`` log entries after ``after`` as ``viewer`` may see them, and the last
        version read (private events are skipped, so fewer may be served)."""
        stored = self.store.read(table.id, after, table.version, count=limit)
        if not stored:
            return [], after
        served = self.served_events(table, [s.envelope for s in stored], stored[0].version,
                                    viewer)
        return served, stored[-1].version

    def view(self, table: Table, viewer: Viewer, now_ms: int | None = None) -> dict:
        game, state = table.game, table.state
        over = table.over
        created = table.created["data"]
        clock, clock_state = table.clock, table.shell["clock"]
        now = self.now_ms() if now_ms is None else now_ms

        def deadline(seat):
            if not clock:
                return None
            at = clock_mod.deadline(clock, clock_state, seat)
            return rfc3339(at) if at is not None else None

        options = created["options"] if over or viewer == ALL else _public_options(created)
        return {
            "id": table.id,
            "type": game.type_id,
            "status": table.status,
            "version": table.version,
            "created_at": table.created.get("at"),
            "players": [{"seat": i, "name": p["name"], "bot": p.get("bot"),
                         "controller": table.shell["controllers"][i].split(":", 1)[0]}
                        for i, p in enumerate(created["players"])],
            "you": viewer if isinstance(viewer, int) else None,
            "options": {**options, "clock": clock} if clock else options,
            "seed": created["seed"],
            "seed_commitment": created["seed_commitment"],
            "setup": created["setup"],
            "awaiting": [{"seat": s, "deadline": deadline(s)} for s in table.awaiting()],
            "clock": None if not clock else {
                "remaining_ms": clock_mod.remaining(clock, clock_state, now),
                "per_decision_ms": clock["per_decision_ms"],
                "increment_ms": clock["increment_ms"], "timeout": clock["timeout"]},
            "state": game.view(state, viewer),
            "result": table.result() if over else None,
        }

    def legal_actions(self, table: Table, viewer: Viewer) -> list[dict]:
        if not isinstance(viewer, int) or viewer not in table.awaiting():
            return []
        return table.game.legal_actions(table.state, viewer)

    def list_games(self, game_type: str | None, status: str | None, page: int,
                   per_page: int) -> dict:
        ids, total = self.store.list_ids(game_type, status, (page - 1) * per_page, per_page)
        games = []
        for game_id in ids:
            meta = self.store.meta(game_id)
            if meta is None:
                continue
            games.append({"id": game_id, "type": meta["type"], "status": meta["status"],
                          "version": int(meta["version"]),
                          "created_ms": int(meta["created_ms"])})
        return {"games": games, "page": page, "per_page": per_page, "total": total}


def _public_options(created: dict) -> dict:
    """Options without the setup overrides (they fix hidden orders until the end)."""
    return {k: v for k, v in created["options"].items() if k != "setup"}


_GAME_ID = re.compile("[0-9a-f]{1,64}")


def _valid_id(game_id: str) -> bool:
    return isinstance(game_id, str) and _GAME_ID.fullmatch(game_id) is not None


def body_digest(payload: Any) -> str:
    return hashlib.sha256(orjson.dumps(payload, option=orjson.OPT_SORT_KEYS)).hexdigest()


__all__ = ["GameService", "Table", "NotFound", "VersionConflict", "IdempotencyKeyReused",
           "InvalidRequest", "IllegalAction", "NotYourTurn", "body_digest"]
