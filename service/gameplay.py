"""The application layer: games as event streams. Loads state (snapshot + cache + replay), runs
commands through the engine, appends atomically, serves redacted views and logs.

No HTTP here (that is ``service.api``) and no rules (that is ``service.games``).
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
import threading
import time
import uuid
from collections import OrderedDict
from dataclasses import dataclass
from datetime import datetime, timezone
from typing import Any, Sequence

import orjson

from .engine import ALL, Game, IllegalAction, InvalidOptions, NotYourTurn, Rng, Viewer
from .engine import clone, command, fold, visible
from .engine.local import creation_event
from .engine.fold import start
from .games import GAMES
from .store.events import EventStore, StoredEvent

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


def now_rfc3339() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def token_digest(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


@dataclass
class Table:
    """One game as loaded: immutable facts, the state at ``version``, and its rules."""

    id: str
    game: Game
    meta: dict
    state: dict
    version: int

    @property
    def over(self) -> bool:
        return self.game.is_over(self.state)

    @property
    def status(self) -> str:
        return "finished" if self.over else "active"

    @property
    def created(self) -> dict:
        return self.meta["created"]


class _StateCache:
    """Latest known (version, state) per game, per process. States in it are never mutated."""

    def __init__(self, size: int) -> None:
        self.size = size
        self._data: OrderedDict[str, tuple[int, dict]] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, game_id: str) -> tuple[int, dict] | None:
        with self._lock:
            hit = self._data.get(game_id)
            if hit is not None:
                self._data.move_to_end(game_id)
            return hit

    def put(self, game_id: str, version: int, state: dict) -> None:
        with self._lock:
            old = self._data.get(game_id)
            if old is None or old[0] < version:
                self._data[game_id] = (version, state)
                self._data.move_to_end(game_id)
            while len(self._data) > self.size:
                self._data.popitem(last=False)

    def clear(self) -> None:
        with self._lock:
            self._data.clear()


class GameService:
    def __init__(self, store: EventStore, *, snapshot_every: int = 100, cache_size: int = 2048,
                 platform_key_digests: Sequence[str] = ()) -> None:
        self.store = store
        self.snapshot_every = snapshot_every
        self.cache = _StateCache(cache_size)
        self._meta: OrderedDict[str, dict] = OrderedDict()
        self._meta_lock = threading.Lock()
        self.platform_key_digests = tuple(platform_key_digests)

    # -- identity -------------------------------------------------------------------------
    def is_platform_key(self, token: str) -> bool:
        digest = token_digest(token)
        return any(hmac.compare_digest(digest, d) for d in self.platform_key_digests)

    def viewer_for(self, table: Table, token: str | None) -> Viewer:
        """The seat a bearer token acts as, ALL for a platform key, None without a token."""
        if token is None:
            return None
        if self.is_platform_key(token):
            return ALL
        digest = token_digest(token)
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
        game = GAMES.get(game_type)
        if game is None:
            raise InvalidRequest("unknown_game_type", f"no game type {game_type!r}",
                                 {"known": sorted(GAMES)})
        if not game.min_players <= len(players) <= game.max_players:
            raise InvalidRequest("invalid_player_count",
                                 f"{game.name} takes {game.min_players} to {game.max_players} "
                                 f"players, not {len(players)}",
                                 {"min": game.min_players, "max": game.max_players})
        if any(p.get("bot") for p in players):
            raise InvalidRequest("bots_unavailable",
                                 "bot seats are not available on this server yet")
        if "clock" in options:
            raise InvalidRequest("clocks_unavailable",
                                 "options.clock is not available on this server yet")
        try:
            normalized = game.normalize_options(dict(options), players)
        except InvalidOptions as exc:
            raise InvalidRequest("invalid_options", exc.message,
                                 {"code": exc.code, **exc.details}) from None
        seed = bytes.fromhex(seed_hex) if seed_hex else secrets.token_bytes(32)
        game_id = uuid.uuid4().hex[:20]
        first = creation_event(game, players, normalized, seed,
                               "supplied" if seed_hex else "server")
        state = game.initial(players, normalized)
        events = [first] + start(game, state, Rng(seed, 1))
        tokens = [secrets.token_urlsafe(32) for _ in players]
        created_ms = int(time.time() * 1000)
        at = now_rfc3339()
        meta = {
            "type": game.type_id,
            "created_ms": str(created_ms),
            "tokens": orjson.dumps([token_digest(t) for t in tokens]).decode(),
            "status": "finished" if game.is_over(state) else "active",
        }
        version = self.store.create(game_id, meta, seed.hex(),
                                    [self._envelope(game, e, at) for e in events])
        self.store.index(game_id, game.type_id, meta["status"], created_ms)
        self.cache.put(game_id, version, state)
        return {
            "id": game_id,
            "version": version,
            "seats": [{"seat": i, "name": p["name"], "token": tokens[i]}
                      for i, p in enumerate(players)],
            "seed_commitment": first["data"]["seed_commitment"],
        }

    @staticmethod
    def _envelope(game: Game, ev: dict, at: str) -> dict:
        out = {"type": ev["type"], "seat": ev.get("seat"), "data": ev.get("data", {}),
               "at": at, "schema": game.event_schema}
        if ev.get("forced"):
            out["forced"] = True
        return out

    # -- loading --------------------------------------------------------------------------
    def _load_meta(self, game_id: str) -> dict:
        with self._meta_lock:
            hit = self._meta.get(game_id)
        if hit is not None:
            return hit
        raw = self.store.meta(game_id)
        if raw is None:
            raise NotFound("game_not_found", f"no game {game_id!r}")
        first = self.store.read(game_id, 0, 1)
        meta = {"type": raw["type"], "created_ms": int(raw["created_ms"]),
                "tokens": orjson.loads(raw["tokens"]), "created": first[0].envelope}
        with self._meta_lock:
            self._meta[game_id] = meta
            while len(self._meta) > self.cache.size:
                self._meta.popitem(last=False)
        return meta

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
        meta = self._load_meta(game_id)
        game = GAMES[meta["type"]]
        cached = self.cache.get(game_id)
        base_version, base = 1, None
        if cached is not None and (version is None or cached[0] <= version):
            base_version, base = cached
            if version == base_version:
                return Table(game_id, game, meta, base, base_version)
        if base is None:
            snap = self.store.load_snapshot(game_id, version if version is not None else 2**62)
            if snap is not None:
                base_version, base = snap
        stored = self.store.read(game_id, base_version, version)
        if base is None:
            base = self._initial(game, meta)
        if stored:
            state = fold(game, clone(base), (self._event(game, s) for s in stored))
            current = stored[-1].version
        else:
            state, current = base, base_version
        if version is not None and current != version:
            raise NotFound("version_not_found", f"version {version} does not exist")
        if version is None or version == current:
            self.cache.put(game_id, current, state)
        return Table(game_id, game, meta, state, current)

    # -- commands -------------------------------------------------------------------------
    def act(self, game_id: str, seat: int, action: Any, expected_version: int | None,
            idempotency_key: str | None, body_digest: str) -> tuple[Table, int, list[dict]]:
        """Run one command; returns (table after, first version, stored envelopes appended).

        A replay of the same Idempotency-Key and body returns the original outcome.
        """
        idem = None
        if idempotency_key is not None:
            key_digest = hashlib.sha256(f"{seat}\x00{idempotency_key}".encode()).hexdigest()
            idem = (key_digest, body_digest)
            record = self.store.idempotency_record(game_id, key_digest)
            if record is not None:
                return self._replayed(game_id, record, body_digest)
        for _ in range(MAX_RETRIES):
            table = self.load(game_id)
            if expected_version is not None and expected_version != table.version:
                raise VersionConflict(table.version)
            rng = Rng(bytes.fromhex(self._seed(game_id)), table.version + 1)
            events, after = command(table.game, table.state, seat, action, rng)
            at = now_rfc3339()
            envelopes = [self._envelope(table.game, e, at) for e in events]
            over = table.game.is_over(after)
            result = self.store.append(game_id, table.version, envelopes,
                                       status="finished" if over else None, idempotency=idem)
            if result.outcome == "ok":
                new_version = result.version
                self.cache.put(game_id, new_version, after)
                self._after_append(table, new_version, after, over)
                return (Table(game_id, table.game, table.meta, after, new_version),
                        table.version + 1, envelopes)
            if result.outcome == "idem":
                return self._replayed(game_id, result.record, body_digest)
            if result.outcome == "missing":
                raise NotFound("game_not_found", f"no game {game_id!r}")
            if expected_version is not None:
                raise VersionConflict(result.version)
        raise VersionConflict(self.store.version(game_id))

    def _after_append(self, table: Table, new_version: int, state: dict, over: bool) -> None:
        k = self.snapshot_every
        if k and new_version // k > table.version // k:
            self.store.save_snapshot(table.id, new_version, state)
        if over:
            self.store.index(table.id, table.game.type_id, "finished", table.meta["created_ms"])

    def _replayed(self, game_id: str, record: str, body_digest: str):
        digest, first, last = record.rsplit("|", 2)
        if not hmac.compare_digest(digest, body_digest):
            raise IdempotencyKeyReused()
        first_v, last_v = int(first), int(last)
        table = self.load(game_id)
        stored = self.store.read(game_id, first_v - 1, last_v)
        return table, first_v, [s.envelope for s in stored]

    def _seed(self, game_id: str) -> str:
        seed = self.store.seed(game_id)
        if seed is None:
            raise NotFound("game_not_found", f"no game {game_id!r}")
        return seed

    # -- reads ----------------------------------------------------------------------------
    def served_events(self, table: Table, envelopes: Sequence[dict], first_version: int,
                      viewer: Viewer) -> list[dict]:
        """Envelopes numbered from ``first_version`` as ``viewer`` may see them now."""
        out = []
        over = table.over
        for offset, env in enumerate(envelopes):
            ev = {"type": env["type"], "seat": env.get("seat"), "data": env.get("data", {})}
            if env.get("forced"):
                ev["forced"] = True
            shown = visible(table.game, ev, viewer, over)
            if shown is None:
                continue
            served = {"version": first_version + offset, "type": shown["type"],
                      "at": env.get("at"), "seat": shown.get("seat"),
                      "data": shown.get("data", {})}
            if shown.get("forced"):
                served["forced"] = True
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

    def view(self, table: Table, viewer: Viewer) -> dict:
        game, state = table.game, table.state
        over = game.is_over(state)
        created = table.created["data"]
        return {
            "id": table.id,
            "type": game.type_id,
            "status": table.status,
            "version": table.version,
            "created_at": table.created.get("at"),
            "players": [{"seat": i, "name": p["name"], "bot": p.get("bot")}
                        for i, p in enumerate(created["players"])],
            "you": viewer if isinstance(viewer, int) else None,
            "options": created["options"] if over or viewer == ALL else _public_options(created),
            "seed": created["seed"],
            "seed_commitment": created["seed_commitment"],
            "setup": created["setup"],
            "awaiting": [] if over else [{"seat": s, "deadline": None}
                                         for s in game.awaiting(state)],
            "state": game.view(state, viewer),
            "result": game.result(state) if over else None,
        }

    def legal_actions(self, table: Table, viewer: Viewer) -> list[dict]:
        if not isinstance(viewer, int) or table.over:
            return []
        if viewer not in table.game.awaiting(table.state):
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


def _valid_id(game_id: str) -> bool:
    return 1 <= len(game_id) <= 64 and all(c in "0123456789abcdef" for c in game_id)


def body_digest(payload: Any) -> str:
    return hashlib.sha256(orjson.dumps(payload, option=orjson.OPT_SORT_KEYS)).hexdigest()


__all__ = ["GameService", "Table", "NotFound", "VersionConflict", "IdempotencyKeyReused",
           "InvalidRequest", "IllegalAction", "NotYourTurn", "body_digest"]
