""":class:`GameService`, the one entry to the application layer for the API, the workers, the
webhooks, the benchmarks and the tests. It composes the parts (each gets only what it needs) and
holds no logic of its own beyond which part answers."""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Any, Callable, Sequence

from ..engine import Viewer
from ..memo import Memo
from ..signing import Signer
from ..store.events import EventStore
from ..store.players import PlayerStore
from ..store.ratings import RatingStore
from ..store.quota import Quota
from ..store.seeks import SeekStore
from ..store.tournaments import TournamentStore
from .autoplay import Autoplay
from .commands import Appender, Commands
from .creation import IDLE_ABORT_S, LOBBY_TTL_S, MAX_EVENTS, Creation, Spec
from .exports import Exports
from .identity import Identity
from .listeners import ListenerBus
from .loading import Loader
from .errors import NotFound
from .model import Appended, Table
from .observer import Observer
from .notices import PlayerNotices, count_finished, tell_finished
from .players import Players
from .ratings import Ratings, shown
from .reads import Reads
from .seats import Seats
from .seeks import SeekLimits, Seeks
from .tables import Tables
from .tournaments import TournamentLimits, Tournaments, limits_of as tournament_limits_of

if TYPE_CHECKING:
    import redis

    from ..config import Config

#: Events read at a time when looking back for a withheld game's last command (a command's
#: events: one to a few hundred in the longest forced chains).
LAST_COMMAND_WINDOW = 256


def rating_types() -> list[str]:
    """Every rating type of the registered games."""
    from ..games import GAMES

    return [t for game in GAMES.values() for t in game.rating_types]


class NullScheduler:
    """Schedules nothing (tests of the API alone; the RQ scheduler is in service.jobs)."""

    def changed(self, table: Table, previous: Table | None = None) -> None:
        pass

    def enqueue_rating(self, game_id: str) -> None:
        pass

    def resume(self, tables: list[Table]) -> None:
        pass

    def expires(self, table: Table, at_ms: int) -> None:
        pass

    def seek_opened(self, seek_id: str, expires_ms: int, fill_ms: int | None) -> None:
        pass

    def claim_archives(self) -> list[str]:
        return []

    def archived(self, game_id: str) -> None:
        pass


def _wall_clock_ms() -> int:
    return int(time.time() * 1000)


class GameService:
    """Games as event streams: loads state (cache, snapshot, replay), runs commands through the
    engine, appends atomically, serves redacted views and logs.

    No HTTP here (that is ``service.api``) and no rules (that is ``service.games``)."""

    def __init__(self, store: EventStore, *, snapshot_every: int = 100, cache_size: int = 2048,
                 platform_key_digests: Sequence[str] = (), scheduler=None,
                 now_ms: Callable[[], int] | None = None, lobby_ttl_s: int = LOBBY_TTL_S,
                 player_store: PlayerStore | None = None,
                 rating_store: RatingStore | None = None, signer: Signer | None = None,
                 seek_limits: SeekLimits | None = None, max_events_per_game: int = MAX_EVENTS,
                 idle_abort_s: int = IDLE_ABORT_S,
                 tournament_limits: TournamentLimits | None = None) -> None:
        self.store = store
        self.snapshot_every = snapshot_every
        self.scheduler = scheduler or NullScheduler()
        self.now_ms = now_ms or _wall_clock_ms
        self.player_store = player_store or PlayerStore(store.r)
        self.players = Players(self.player_store, self.now_ms)
        self._identity = Identity(platform_key_digests, self.players)
        self._loader = Loader(store, cache_size)
        self._bus = ListenerBus()
        self._bus.listeners.append(PlayerNotices(self.player_store, self.of_duplicate_deal))
        self.ratings = Ratings(rating_store or RatingStore(store.r), self.player_store,
                               rating_types)
        appender = Appender(store, self._loader, self._bus, self.scheduler, self.now_ms,
                            snapshot_every)
        self._seats = Seats(store, self._loader, appender, idle_abort_s)
        self._autoplay = Autoplay(store, self._loader, appender, self._seats, self.now_ms)
        self._commands = Commands(store, self._loader, appender, self._autoplay, self.now_ms)
        self._creation = Creation(store, self._loader, self._bus, self.scheduler, self.now_ms,
                                  self.players, lobby_ttl_s, max_events_per_game,
                                  idle_abort_s)
        self._tables = Tables(store, self._loader, appender, self._creation, self.players,
                              self.now_ms)
        #: the key exports are signed with (``service.signing``; None: unsigned)
        self.signer = signer
        self._exports = Exports(store, self._loader, self._creation, self.now_ms, signer,
                                self.withheld)
        self._reads = Reads(store, self.now_ms, self.withheld_from, self._loader.load,
                            self.withheld_among)
        #: games over whose deal was found complete (they stay so)
        self._revealed: Memo[bool] = Memo(cache_size)
        #: withheld games: the first version of the command that ended each (it never moves)
        self._ending: Memo[int] = Memo(cache_size)
        self.seeks = Seeks(SeekStore(store.r), store, self._creation, self.ratings,
                           self.scheduler, self.now_ms, seek_limits or SeekLimits())
        self.tournaments = Tournaments(TournamentStore(store.r), self._creation, self._loader,
                                       self.players, self.ratings, self.now_ms, self.export,
                                       tournament_limits or TournamentLimits(),
                                       self._count_recorded)

    def _count_recorded(self, tables: list[Table]) -> None:
        """A tournament recorded these games over (a duplicate deal's together, once every
        rotation is over): their players' counts and their ratings, held back until now."""
        batch = self.player_store.batch()
        for table in tables:
            count_finished(batch, table)
            if self.of_duplicate_deal(table):
                tell_finished(batch, table)
        batch.send()
        for table in tables:
            if table.status == "finished" and table.created["data"].get("rated"):
                self.scheduler.enqueue_rating(table.id)

    def observe(self, observer: Observer) -> None:
        """Report commands, append conflicts and bot decision times to ``observer``
        (``service.application.observer``; ``service.metrics.OBSERVER`` counts them)."""
        self._commands.observer = self._commands.appender.observer = observer
        self._autoplay.observer = observer

    @classmethod
    def configured(cls, config: Config, client: redis.Redis, **parts: Any) -> GameService:
        """A service on ``client`` with every setting of ``config``, as the API and the
        workers both build it; ``parts``: the scheduler, a clock (``now_ms``)."""
        from ..games import GAMES

        return cls(EventStore(client, archive_cache=config.archive_cache,
                              archive_dir=config.archive_dir, game_types=tuple(GAMES)),
                   snapshot_every=config.snapshot_every,
                   cache_size=config.cache_size,
                   platform_key_digests=config.platform_key_digests,
                   lobby_ttl_s=config.lobby_ttl_s,
                   max_events_per_game=config.max_events_per_game,
                   idle_abort_s=config.idle_abort_s,
                   player_store=PlayerStore(client, stream_max=config.player_stream_max,
                                             games_max=config.player_games_max),
                   rating_store=RatingStore(client, min_games=config.rating_min_games),
                   seek_limits=SeekLimits(config.seek_ttl_s, config.seeks_per_player,
                                          config.seeks_max),
                   tournament_limits=tournament_limits_of(config),
                   **parts)

    # -- identity -------------------------------------------------------------------------
    @property
    def platform_key_digests(self) -> tuple[str, ...]:
        return self._identity.platform_key_digests

    def is_platform_key(self, token: str, digest: str | None = None) -> bool:
        return self._identity.is_platform_key(token, digest)

    def viewer_for(self, table: Table, token: str | None) -> Viewer:
        """The seat a bearer token acts as, ALL for a platform key, None without a token (or
        with the token of a player holding no seat); InvalidToken for a token of no seat."""
        return self._identity.viewer_for(table, token)

    def key_scope(self, table: Table, token: str, seat: int) -> str:
        """What an Idempotency-Key of ``token`` acting as ``seat`` is scoped to
        (``Identity.key_scope``)."""
        return self._identity.key_scope(table, token, seat)

    def player_for_token(self, token: str | None) -> str | None:
        """The player a player token belongs to (None: no token, or not a player token);
        InvalidToken for a player token of nobody."""
        return None if token is None else self._identity.player_for_token(token)

    # -- creation -------------------------------------------------------------------------
    def create(self, game_type: str, players: list[dict], options: dict,
               seed_hex: str | None, creator: str | None = None,
               charge: Callable[[int], None] | None = None) -> dict:
        return self._creation.create_many([(game_type, players, options, seed_hex)],
                                          creator, charge, bulk=False)[0]

    def create_many(self, specs: Sequence[Spec], creator: str | None = None,
                    charge: Callable[[int], None] | None = None) -> list[dict]:
        return self._creation.create_many(specs, creator, charge)

    def player_profile(self, player_id: str, private: bool = False) -> dict:
        """A player's public profile with its ratings (``private``: ``Players.profile``)."""
        profile = self.players.profile(player_id, private)
        for rating_type, rating in self.ratings.of_player(player_id).items():
            entry = profile["stats"].setdefault(rating_type,
                                                {"games": 0, "wins": 0, "rating": None})
            entry["rating"] = shown(rating)
        return profile

    def rate(self, game_id: str) -> dict | None:
        """Rate a finished game (once: the rating job; ``Ratings.rate``)."""
        return self.ratings.rate(self._loader.load(game_id))

    def leaderboard(self, rating_type: str, offset: int, limit: int,
                    provisional_offset: int = 0) -> dict:
        return self.ratings.leaderboard(rating_type, offset, limit,
                                        self.player_store.get_many, provisional_offset)

    def player_games(self, player_id: str) -> list[dict]:
        """The tables and games a player is in, waiting or running, newest first (the player's
        list keeps the newest ``CARTOUCHE_PLAYER_GAMES_MAX``): ``{"id", "type", "status",
        "seats"}``. A game gone from the store, or over whose end the list missed, is taken
        out of the list here."""
        out = []
        for game_id in self.player_store.game_ids(player_id, self.player_store.games_max):
            try:
                table = self._loader.load(game_id)
            except NotFound:  # gone from the store
                table = None
            if table is None or table.over:
                self.player_store.remove_game(player_id, game_id)
                continue
            out.append({"id": game_id, "type": table.game.type_id, "status": table.status,
                        "seats": table.seats_of(player_id)})
        return out

    # -- tables ---------------------------------------------------------------------------
    def join(self, game_id: str, seat: int | None, player: str | None,
             name: str | None) -> dict:
        return self._tables.join(game_id, seat, player, name)

    def leave(self, game_id: str, seat: int) -> Table:
        return self._tables.leave(game_id, seat)

    def decline(self, game_id: str, player: str) -> Table:
        return self._tables.decline(game_id, player)

    def expire_table(self, game_id: str) -> bool:
        return self._tables.expire(game_id)

    def overdue_tables(self, limit: int) -> list[str]:
        return self._tables.overdue(limit)

    @property
    def lobby_ttl_s(self) -> int:
        return self._tables.lobby_ttl_s

    def rematch(self, game_id: str, seat: int, player: str | None,
                charge: Callable[[int], None] | None = None) -> tuple[dict, bool]:
        return self._tables.rematch(game_id, seat, player, charge)

    # -- loading --------------------------------------------------------------------------
    def withheld(self, table: Table) -> bool:
        """``table`` is over but served as a running game until another one ends: a game of a
        duplicate deal while another of the deal is still played (a tournament's rotations of
        one seed), or a fork while the game it was forked from is not over (or withheld
        itself). A fork copies its parent's events, hidden draws included (a deck's order),
        and an ended game shows everything: a running parent's secrets would be public.

        A chain of forks, each over, is walked up in a loop to the first game that decides
        (running, revealed, gone, or not a fork): one load per game, never a recursion as
        deep as the chain."""
        if not table.over or self._revealed.get(table.id):
            return False
        chain = [table.id]  # over and not known revealed: each as withheld as the next
        held = False
        while True:
            data = table.created["data"]
            if data.get("tournament") is not None:
                held = self.tournaments.deal_running(data["tournament"], table.id)
                break
            forked_from = data.get("forked_from")
            if forked_from is None:
                break
            try:
                table = self._loader.load(forked_from["id"])
            except NotFound:  # gone: nothing of it left to keep hidden
                break
            if not table.over:
                held = True
                break
            if self._revealed.get(table.id):
                break
            chain.append(table.id)
        if not held:
            for game_id in chain:
                self._revealed.put(game_id, True)
        return held

    def of_duplicate_deal(self, table: Table) -> bool:
        """``table`` is a game of a tournament that plays duplicate deals: its end is told to
        its players with the deal's (``notices.tell_finished``)."""
        tid = table.created["data"].get("tournament")
        return tid is not None and self.tournaments.duplicate(tid)

    def withheld_among(self, games: dict[str, str]) -> set[str]:
        """Of ``games`` (over, each with its tournament's id), those :meth:`withheld`: each
        tournament read once."""
        out: set[str] = set()
        for tid in set(games.values()):
            out |= {g for g in self.tournaments.withheld_games(tid)
                    if games.get(g) == tid and not self._revealed.get(g)}
        return out

    def withheld_from(self, table: Table) -> int | None:
        """The first version of ``table`` not served while it is :meth:`withheld` (None: it is
        not): that of the command that ended it. Its events hold the end (the rules' last
        event names the scores and winners) that a running game's log never shows."""
        if not self.withheld(table):
            return None
        found = self._ending.get(table.id)
        if found is None:
            found = self._last_command(table)
            self._ending.put(table.id, found)
        return found

    def _last_command(self, table: Table) -> int:
        """The first version of ``table``'s last command (each command's first event keeps
        its record, ``cmd``), read backwards a window at a time."""
        upto = table.version
        while upto > 0:
            after = max(0, upto - LAST_COMMAND_WINDOW)
            for stored in reversed(self.store.read(table.id, after, upto)):
                if "cmd" in stored.envelope:
                    return stored.version
            upto = after
        return table.version

    def load(self, game_id: str, version: int | None = None) -> Table:
        return self._loader.load(game_id, version)

    def load_for_command(self, game_id: str) -> Table:
        return self._loader.load_for_command(game_id)

    def latest(self, game_ids: list[str]) -> list[Table | None]:
        return self._loader.latest(game_ids)

    def load_recent(self, game_id: str, at_least: int) -> Table:
        return self._loader.load_recent(game_id, at_least)

    def archive(self, game_id: str) -> str:
        """Replace a game that is over by its compressed document (``EventStore.archive``);
        every read answers the same after."""
        return self.store.archive(game_id)

    def drop_caches(self) -> None:
        """Forget every game this process holds (state cache, meta and seed memos, archive
        documents)."""
        self._loader.forget()
        self.store.documents.clear()

    def readiness(self) -> str:
        """``"ready"``, or why not: ``"unreachable"`` (the store does not answer), ``"full"``
        (it refuses writes at its memory limit)."""
        return self.store.readiness()

    # -- commands -------------------------------------------------------------------------
    def act(self, game_id: str, seat: int, action: Any, expected_version: int | None,
            idempotency_key: str | None, body_digest: str, *, loaded: Table | None = None,
            quota: Quota | None = None, key_scope: str | None = None) -> Appended:
        """One command of a human seat (``Commands.act``)."""
        return self._commands.act(game_id, seat, action, expected_version, idempotency_key,
                                  body_digest, loaded=loaded, quota=quota, key_scope=key_scope)

    @property
    def listeners(self) -> list[Callable[..., None]]:
        """Called after every successful append (``ListenerBus``)."""
        return self._bus.listeners

    # -- leaving --------------------------------------------------------------------------
    def resign(self, game_id: str, seat: int) -> Table:
        """Overdue clocks are settled first, as for any command."""
        self._autoplay.settle_timeouts(game_id)
        return self._seats.resign(game_id, seat)

    def abort(self, game_id: str, by: Viewer) -> Table:
        return self._seats.abort(game_id, by)

    def idle_games(self, tables: list[Table], created: dict[str, int]) -> list[str]:
        """Of ``tables`` (loaded, with their creation times), those the idle sweep should
        look at (``Seats.idle_candidates``)."""
        return self._seats.idle_candidates(tables, created)

    def settle_idle(self, game_id: str) -> bool:
        """End the wait of a game without a clock idle for its limit: its idle seats resign
        in a rated game, else it is aborted (``Seats.settle_idle``)."""
        return self._seats.settle_idle(game_id)

    # -- what happens without a request: clocks and bots ----------------------------------
    def overdue(self, table: Table) -> list[int]:
        """The awaited seats of ``table`` past their deadline."""
        return self._autoplay.overdue(table)

    def settle_timeouts(self, game_id: str, version: int | None = None) -> list[int]:
        return self._autoplay.settle_timeouts(game_id, version)

    def play_bot(self, game_id: str, seat: int, version: int) -> bool:
        return self._autoplay.play_bot(game_id, seat, version)

    # -- exports and forks ----------------------------------------------------------------
    def export(self, game_id: str) -> dict:
        return self._exports.export(game_id)

    def export_tournament(self, tid: str) -> dict:
        """A finished tournament's export (``Tournaments.export``), signed as a game's is:
        the signature proves what re-deriving its events cannot (its name, its times, the
        participants' ratings at its creation, the order it recorded a round's games in)."""
        doc = self.tournaments.export(tid)
        return self.signer.sign(doc) if self.signer is not None else doc

    def fork(self, game_id: str, at: int, charge: Callable[[int], None] | None = None) -> dict:
        return self._exports.fork(game_id, at, charge)

    # -- reads ----------------------------------------------------------------------------
    def view(self, table: Table, viewer: Viewer, now_ms: int | None = None) -> dict:
        return self._reads.view(table, viewer, now_ms)

    def reached_ms(self, table: Table) -> int:
        return self._reads.reached_ms(table)

    def served_events(self, table: Table, envelopes: Sequence[dict], first_version: int,
                      viewer: Viewer) -> list[dict]:
        return self._reads.served_events(table, envelopes, first_version, viewer)

    def events(self, table: Table, viewer: Viewer, after: int,
               limit: int) -> tuple[list[dict], int]:
        return self._reads.events(table, viewer, after, limit)

    def shown_version(self, table: Table, viewer: Viewer) -> int:
        return self._reads.shown_version(table, viewer)

    def legal_actions(self, table: Table, viewer: Viewer) -> list[dict]:
        return self._reads.legal_actions(table, viewer)

    def list_games(self, game_type: str | None, status: str | None, page: int,
                   per_page: int) -> dict:
        return self._reads.list_games(game_type, status, page, per_page)
