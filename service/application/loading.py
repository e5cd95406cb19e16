"""Loading games: this process's state cache, the meta and seed memos, and snapshot-plus-replay
from the store (one round trip for whatever the process does not hold)."""

from __future__ import annotations

import logging
import re
import threading

import orjson

from ..engine import Game, clone
from ..games import GAMES
from ..memo import Memo, Recent
from ..replay import SHELL_EVENTS
from ..store.events import EventStore, Loaded
from .envelopes import game_event
from .errors import NotFound
from .model import Cached, Shell, Table, unfilled

log = logging.getLogger(__name__)

_GAME_ID = re.compile("[0-9a-f]{1,64}")


def valid_id(game_id: str) -> bool:
    return isinstance(game_id, str) and _GAME_ID.fullmatch(game_id) is not None


class StateCache(Recent[Cached]):
    """Latest known :class:`Cached` entry per game, per process, least recently used out
    first. Entries (and the states in them) are never mutated."""

    def put(self, game_id: str, entry: Cached) -> None:
        """Keep ``entry`` unless a later version of the game is kept already."""
        with self._lock:
            old = self._data.get(game_id)
            if old is None or old.version < entry.version:
                self._data[game_id] = entry
                self._data.move_to_end(game_id)
            self._bound()


class Loader:
    """Games as :class:`Table`: from the cache, else the newest snapshot plus the events after
    it. Also the per-game facts every command needs (meta, seed) without a read each time."""

    def __init__(self, store: EventStore, cache_size: int) -> None:
        self.store = store
        self.cache = StateCache(cache_size)
        self._metas: Memo[dict] = Memo(cache_size)
        self._seeds: Memo[str] = Memo(cache_size)
        #: games whose last command here lost its append, or was refused, on the cached state
        #: (``moved_on``): their next command loads first
        self._moved_on: Memo[bool] = Memo(cache_size)
        self._load_stripes = [threading.Lock() for _ in range(64)]

    def forget(self) -> None:
        """Drop everything this process holds (as a process that never saw any game)."""
        self.cache.clear()
        self._metas.clear()
        self._seeds.clear()
        self._moved_on.clear()

    # -- the facts that never change ------------------------------------------------------
    def meta(self, game_id: str) -> dict:
        meta = self._metas.get(game_id)
        if meta is None:
            meta = self._remember(game_id, self.store.load(game_id, upto=1, after=1,
                                                           with_meta=True))
        return meta

    def seed(self, game_id: str) -> str:
        """The game's seed (hex; never served): one read per game per process."""
        seed = self._seeds.get(game_id)
        if seed is not None:
            return seed
        seed = self.store.seed(game_id)
        if seed is None:
            raise NotFound.game(game_id)
        self._seeds.put(game_id, seed)
        return seed

    def _remember(self, game_id: str, loaded: Loaded) -> dict:
        """Keep the game's meta and seed from a load made ``with_meta``; NotFound when there is
        no such game."""
        raw = loaded.meta
        if raw is None or loaded.first is None or loaded.seed is None:
            raise NotFound.game(game_id)
        return self._keep(game_id, raw, loaded.first.envelope, loaded.seed)

    def written(self, game_id: str, raw_meta: dict[str, str], envelopes: list[dict],
                seed: str, state: dict | None, shell: Shell) -> None:
        """A game this process has just stored (``raw_meta``: its meta hash as written; the
        state and shell after its ``envelopes``): kept as a load would keep it, so that its
        first load needs no read. The creation event is kept in its stored form (a JSON round
        trip), as a load would read it."""
        self._keep(game_id, raw_meta, orjson.loads(orjson.dumps(envelopes[0])), seed)
        self.cache.put(game_id, Cached(len(envelopes), state, shell))

    def _keep(self, game_id: str, raw: dict[str, str], created: dict, seed: str) -> dict:
        """The game's meta as commands use it, from its meta hash and creation event; kept with
        its seed."""
        meta = {"type": raw["type"], "created_ms": int(raw["created_ms"]),
                "created_version": int(raw["created_version"]),
                "tokens": orjson.loads(raw["tokens"]),
                "created": created}
        if "seats" in raw:  # a table, or a game with players' seats
            meta["seats"] = orjson.loads(raw["seats"])
        if "created_by" in raw:  # who created it (a player's invitations say so)
            meta["created_by"] = raw["created_by"]
        # A waiting table's seats and tokens change with each join: its meta is read again
        # with every load until it starts; from then on it never changes.
        if raw.get("status") != "waiting":
            self._metas.put(game_id, meta)
        self._seeds.put(game_id, seed)
        return meta

    @staticmethod
    def _initial(game: Game, meta: dict) -> dict | None:
        """The rules' state before the first event after creation; None for a table still
        waiting for players (its rules state begins with ``GameStarted``)."""
        data = meta["created"]["data"]
        if any(unfilled(p) for p in data["players"]):
            return None
        return game.initial(data["players"], data["options"])

    # -- tables ---------------------------------------------------------------------------
    def load(self, game_id: str, version: int | None = None) -> Table:
        """The game at ``version`` (latest when None), from cache or snapshot plus replay."""
        if not valid_id(game_id):
            raise NotFound.game(game_id)
        meta = self._metas.get(game_id)
        cached = self.cache.get(game_id)
        base_version, base, shell = 1, None, None
        if cached is not None and (version is None or cached.version <= version):
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
        stored_shell = None  # the newest shell in its stored form, parsed once at the end
        if base is None and loaded.snapshot is not None:
            base_version, snap = loaded.snapshot
            base, stored_shell = snap["state"], snap["shell"]
        stored = loaded.events
        if base is None:
            base = self._initial(game, meta)
            shell = Shell.initial(meta["created"]["data"])
        state, current = base, base_version
        if stored:
            state = clone(base)
            for s in stored:
                kind = s.envelope["type"]
                if kind == "GameStarted":  # a table's last seat filled: the rules begin
                    state = game.initial(s.envelope["data"]["players"],
                                         meta["created"]["data"]["options"])
                elif kind not in SHELL_EVENTS:
                    game.apply(state, game_event(game, s))
                if "shell" in s.envelope:
                    stored_shell = s.envelope["shell"]
            current = stored[-1].version
        if stored_shell is not None:
            shell = Shell.parse(stored_shell)
        if version is not None and current != version:
            raise NotFound.version(version)
        if version is None or version == current:
            self.cache.put(game_id, Cached(current, state, shell))
        return Table(game_id, game, meta, state, current, shell)

    def latest(self, game_ids: list[str]) -> list[Table | None]:
        """The latest of each game, reading the versions of all in one round trip, then each
        game at its version (:meth:`load`: no other read for a game this process holds at
        it). None (logged) for a game that could not be loaded: one broken game does not stop
        the others."""
        out: list[Table | None] = []
        for game_id, version in zip(game_ids, self.store.stream_lengths(game_ids)):
            try:  # version 0: no stream (archived, or gone): load finds out
                out.append(self.load(game_id, version or None))
            except Exception:
                log.exception("could not load game %s", game_id)
                out.append(None)
        return out

    def load_for_command(self, game_id: str) -> Table:
        """The game to run a command against: this process's latest cached table as is (no
        Redis call; ``checked`` False), else :meth:`load`. Optimistic: the command's append is
        conditional on the version, so a table another process has moved past only costs a
        conflict and a reload, and the command re-checks any refusal against a fresh load.

        Loaded first instead (the events after the cached version, one read): games with a
        clock (their deadlines are settled on the fresh game), and a game whose last command
        here lost its append that way or was refused on the cache (:meth:`moved_on`). Where a
        game's commands come through several processes in turn (clients without kept-alive
        connections, a balancer in front of several servers), the cache is mostly behind, and
        a read costs less than a decision and an append spent in vain. A load that finds
        nothing new sends the game's next command back to the cache."""
        hit = self.cache.get(game_id) if valid_id(game_id) else None
        if hit is None:
            return self.load(game_id)
        meta = self.meta(game_id)
        if meta["created"]["data"].get("clock"):
            return self.load(game_id)
        if self._moved_on.get(game_id):
            table = self.load(game_id)
            if table.version == hit.version:
                self._moved_on.discard(game_id)
            return table
        return Table(game_id, GAMES[meta["type"]], meta, hit.state, hit.version, hit.shell,
                     checked=False)

    def moved_on(self, game_id: str) -> None:
        """A command decided on this process's cached ``game_id`` lost its append (another
        process had moved the game on), or was refused there (the cache may be behind): the
        game's next command here loads first."""
        self._moved_on.put(game_id, True)

    def load_recent(self, game_id: str, at_least: int) -> Table:
        """The latest game this process knows if it is at version ``at_least`` or later (no
        Redis call), else :meth:`load`. For event streams: many subscribers of one game wake
        together on each append; one of them loads (per stripe lock, cooperative under gevent)
        while the others wait and then find the cache fresh, instead of every subscriber reading
        and replaying the same events."""
        hit = self.cache.get(game_id)
        if hit is None or hit.version < at_least:
            with self._load_stripes[hash(game_id) % len(self._load_stripes)]:
                hit = self.cache.get(game_id)
                if hit is None or hit.version < at_least:
                    return self.load(game_id)
        if not valid_id(game_id):
            raise NotFound.game(game_id)
        meta = self.meta(game_id)
        return Table(game_id, GAMES[meta["type"]], meta, hit.state, hit.version, hit.shell)
