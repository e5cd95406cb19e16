"""Creating games: validating a request, drawing the seed, the creation event and the setup
events, and writing one game or many at once. :func:`new_game` and :meth:`Creation.open` are
shared with forks (``exports.py``); the checks of a request (:func:`game_of`,
:func:`check_seat_count`, :func:`check_bot_level`, :meth:`Settings.of`) with seeks
(``seeks.py``), which check a game before there are players for it."""

from __future__ import annotations

import logging
import secrets
import uuid

import orjson
from dataclasses import dataclass
from typing import Any, Callable, NamedTuple, Sequence

from .. import clock as clock_mod
from ..engine import Game, InvalidOptions, Rng, start
from ..engine.local import creation_event
from ..games import GAMES
from ..options import rates
from ..store.errors import StoreError
from ..store.events import EventStore
from ..timestamps import rfc3339
from .envelopes import envelope
from .errors import InvalidRequest, NotFound
from .identity import new_seat_tokens
from .listeners import ListenerBus, Reads
from .loading import Loader
from .model import Shell, Table, unfilled
from .players import PLATFORM, Players, bot_level, bot_name

log = logging.getLogger("cartouche.application")

#: What happens to an invited seat its player declines (``options.on_decline``).
ON_DECLINE = ("open", "abort")

#: A waiting table nobody completes is aborted after this long (CARTOUCHE_LOBBY_TTL_S).
LOBBY_TTL_S = 3600
#: The most events a game's log may hold (CARTOUCHE_MAX_EVENTS_PER_GAME; 0: no cap). Recorded in
#: the creation event (``max_events``): ``Appender.append`` enforces the game's own.
MAX_EVENTS = 20_000
#: An active game without a clock idle this long is aborted by the sweep
#: (CARTOUCHE_IDLE_ABORT_S; 0: never). Recorded in the creation event (``idle_abort_s``).
IDLE_ABORT_S = 30 * 24 * 3600

#: (game type, players, options, seed hex or None): one game of a creation request
Spec = tuple[str, list[dict], dict, str | None]


def game_of(game_type: str) -> Game:
    """The registered game ``game_type``; InvalidRequest ``unknown_game_type``."""
    game = GAMES.get(game_type)
    if game is None:
        raise InvalidRequest("unknown_game_type", f"no game type {game_type!r}",
                             {"known": sorted(GAMES)})
    return game


def check_seat_count(game: Game, n: int, low: int | None = None) -> None:
    """InvalidRequest ``invalid_player_count`` unless ``game`` takes ``n`` seats (and ``n`` is
    at least ``low``, a caller's own floor above the game's)."""
    least = max(game.min_players, low or 0)
    if not least <= n <= game.max_players:
        raise InvalidRequest("invalid_player_count",
                             f"{game.name} takes {least} to {game.max_players} players, "
                             f"not {n}", {"min": least, "max": game.max_players})


def check_bot_level(game: Game, level: str, details: dict) -> None:
    """InvalidRequest ``bot_level_unavailable`` unless ``game`` has bots of ``level``."""
    from ..engine.bots import LEVELS, available

    if level not in LEVELS:
        raise InvalidRequest("bot_level_unavailable", f"no bot level {level[:64]!r} (levels: "
                             f"{', '.join(LEVELS)})", details)
    if not available(game, level):
        raise InvalidRequest("bot_level_unavailable", f"no {level} bot for {game.name} yet",
                             details)


_ABSENT = object()  # an option not given (null is a value, and refused where it is not one)


class Settings(NamedTuple):
    """A creation request's options as the creation event records them: the game's own,
    normalized by the game, and the shell's (``clock``, ``rated``, a table's ``on_decline``)."""

    options: dict
    clock: dict | None
    rated: bool
    on_decline: str | None

    @classmethod
    def of(cls, game: Game, players: Sequence[dict], options: dict, *,
           table: bool, supplied_seed: bool = False, platform: bool = False) -> Settings:
        """``options`` checked for ``players`` (their number is what the games look at);
        InvalidRequest ``invalid_options`` with the game's or the clock's code in
        ``details.code``. ``rated`` defaults to ``table``, but for a solo game and for a deal
        a client fixed (a ``supplied_seed``, an ``options.setup``), which is never rated: its
        author would know every hidden card, and the bots' draws. A ``platform`` key's seed
        or setup is the platform's own (a tournament's duplicate deals)."""
        options = dict(options)
        fixed = not platform and (supplied_seed or options.get("setup") is not None)
        on_decline = options.pop("on_decline", _ABSENT)
        if on_decline == "open" and not table:  # the default, sent: as if not sent
            on_decline = _ABSENT
        if on_decline is not _ABSENT and (not table or on_decline not in ON_DECLINE):
            raise InvalidRequest("invalid_options", "on_decline is 'open' or 'abort', for "
                                 "tables with an invited seat",
                                 {"code": "invalid_option", "option": "on_decline",
                                  "expected": list(ON_DECLINE)})
        rated = options.pop("rated", _ABSENT)
        if rated is not _ABSENT and (not isinstance(rated, bool) or (rated and len(players) < 2)):
            raise InvalidRequest("invalid_options", "rated is true or false, and solo games "
                                 "are never rated", {"code": "invalid_option", "option": "rated"})
        try:
            clock = clock_mod.normalize(options.pop("clock", None))
            normalized = game.normalize_options(options, players)
        except (clock_mod.ClockError, InvalidOptions) as exc:
            raise InvalidRequest("invalid_options", exc.message,
                                 {"code": exc.code, **exc.details}) from None
        comparable = rates(game, normalized)
        if rated is True and (fixed or not comparable):
            raise InvalidRequest("invalid_options", "a game whose deal is fixed (a supplied "
                                 "seed, options.setup) is never rated" if fixed else
                                 "a game cut short or on another board than the game's own is "
                                 "never rated", {"code": "invalid_option", "option": "rated"})
        if rated is _ABSENT:
            rated = table and len(players) > 1 and not fixed and comparable
        return cls(normalized, clock, rated, None if on_decline is _ABSENT else on_decline)


@dataclass
class NewGame:
    """A game ready to be written, and the answer to its creation."""

    id: str
    game: Game
    #: the store's meta hash (strings)
    meta: dict[str, str]
    seed: str
    envelopes: list[dict]
    #: the rules' state and the shell after the last envelope
    state: dict
    shell: Shell
    now: int
    #: ``{"id", "version", "seats": [{"seat", "name", "token"}], "seed_commitment"}``: the seat
    #: tokens are returned this once
    response: dict

    @property
    def record(self) -> tuple[str, dict[str, str], str, list[dict], tuple[str, int]]:
        """What ``EventStore.create`` writes, its listing in the game index included."""
        return self.id, self.meta, self.seed, self.envelopes, (self.game.type_id, self.now)


def stored_size(new: NewGame) -> int:
    """The bytes a new game stores: its envelopes, meta and seed."""
    return (sum(len(orjson.dumps(e)) for e in new.envelopes) + len(new.seed)
            + sum(len(k) + len(v) for k, v in new.meta.items()))


def recorded_lobby_deadline(created: dict, created_ms: int) -> int | None:
    """When a table created at ``created_ms`` is aborted if still waiting, by the wait its
    creation event's ``created`` data records (``lobby_ttl_s``); None where it records none."""
    wait_s = created.get("lobby_ttl_s")
    return None if wait_s is None else created_ms + wait_s * 1000


def token_shown(seat: dict, creator: str | None) -> bool:
    """Whether a new game's answer shows a seat's token to its ``creator``: not for a seat
    another player holds (a built-in bot player seated at once), whose view would show the
    creator that player's hidden cards, in a game that may be rated. That player acts with its
    own token; a platform key, which sees every seat, gets every token."""
    holder = seat.get("player")
    return holder is None or holder == creator or creator == PLATFORM


def new_game(game: Game, envelopes: list[dict], state: dict | None, shell: Shell, *,
             seed: bytes, now: int, status: str, created_by: str | None = None) -> NewGame:
    """A new game from its first envelopes (the creation event first) and the state and shell
    after them: a fresh id and seat tokens, the shell on the last envelope, the meta.
    A table's unfilled seats get their tokens when somebody joins."""
    created = envelopes[0]["data"]
    game_id = uuid.uuid4().hex[:20]
    open_seats = [i for i, p in enumerate(created["players"]) if unfilled(p)]
    tokens, digests = new_seat_tokens(len(created["players"]), open_seats)
    envelopes[-1]["shell"] = shell.stored()
    meta = {"type": game.type_id, "created_ms": str(now), "tokens": digests, "status": status,
            "created_version": str(len(envelopes))}
    if open_seats:  # a table: its seats change as players join
        meta["seats"] = orjson.dumps(created["players"]).decode()
        deadline = recorded_lobby_deadline(created, now)
        if deadline is not None:  # what the sweep reads of a table, without loading it
            meta["lobby_deadline_ms"] = str(deadline)
        # what a joiner browsing the lobby needs: the game's options, the clock and `rated`
        shown = {k: v for k, v in created["options"].items() if k != "setup"}
        shown.update({k: created[k] for k in ("clock", "rated") if created.get(k)})
        meta["options"] = orjson.dumps(shown).decode()
    if created_by is not None:
        meta["created_by"] = created_by
    if created.get("tournament"):  # what the list reads to ask whether the game is withheld
        meta["tournament"] = created["tournament"]
    return NewGame(game_id, game, meta, seed.hex(), envelopes, state, shell, now, {
        "id": game_id,
        "version": len(envelopes),
        "seats": [{"seat": i, "name": p["name"],
                   "token": tokens[i] if token_shown(p, created_by) else None}
                  for i, p in enumerate(created["players"])],
        "seed_commitment": created["seed_commitment"],
    })


@dataclass(eq=False)
class Creation:
    store: EventStore
    loader: Loader
    bus: ListenerBus
    scheduler: Any
    now_ms: Callable[[], int]
    players: Players
    lobby_ttl_s: int = LOBBY_TTL_S
    max_events: int = MAX_EVENTS
    idle_abort_s: int = IDLE_ABORT_S

    def limits(self) -> dict:
        """The creation event's record of the limits a new game is held to (none when 0)."""
        return {k: v for k, v in (("max_events", self.max_events),
                                  ("idle_abort_s", self.idle_abort_s)) if v}

    def lobby_deadline(self, created: dict, created_ms: int) -> int:
        """When a table is aborted if it is still waiting: ``created_ms`` plus the wait its
        creation event ``created`` records (``lobby_ttl_s``), or, for a table whose creation
        records none, this server's."""
        recorded = recorded_lobby_deadline(created["data"], created_ms)
        return recorded if recorded is not None else created_ms + self.lobby_ttl_s * 1000

    def create_many(self, specs: Sequence[Spec], creator: str | None = None,
                    charge: Callable[[int], None] | None = None, *,
                    bulk: bool = True) -> list[dict]:
        """Create every game or none: all are validated and set up first, then written in one
        transaction. Raises InvalidRequest, with ``details.index`` naming the failing entry of
        a ``bulk`` request (one entry too); a single creation (``bulk`` False) has none.

        ``charge``: called with the bytes the games store (:func:`stored_size`) just before
        they are written; it raises to refuse them (a budget of bytes stored per minute).

        ``creator``: the player creating the games (a player token); an entry
        ``{"player": <creator>}`` seats the creator at once, any other player is invited.
        With ``creator`` :data:`PLATFORM` (a platform key) every named player is seated."""
        prepared = []
        for index, spec in enumerate(specs):
            try:
                prepared.append(self.prepare(*spec, creator=creator))
            except InvalidRequest as exc:
                if bulk:
                    exc.details = {"index": index, **exc.details}
                raise
        if charge is not None:
            charge(sum(stored_size(new) for new in prepared))
        self.publish(prepared)
        return [new.response for new in prepared]

    def publish(self, news: Sequence[NewGame]) -> None:
        """Store games no client knows yet and announce each (:meth:`announce`): the
        listeners' reads (the webhook subscriptions) ride in the games' own write."""
        reads = self.bus.reads()
        replies = self.store_games(news, [read for _, wanted in reads for read in wanted])
        for new in news:
            self.announce(new, reads, replies, unseen=True)

    def write(self, news: Sequence[NewGame], then: Callable[[], bool] | None = None) -> bool:
        """Store ``news``, then run ``then`` (a write that claims the games: a rematch's link,
        matched seeks, a tournament's pairing), then list them in the game index, all or
        nothing: when a step before the listing fails (the store refusing writes at its memory
        limit, say) the games are deleted again and the exception raised; when ``then``
        answers False they are deleted and False returned. Deleting is allowed at the memory
        limit, so nothing is left half-written. Until they are claimed nobody can learn their
        ids: a game that loses its claim was never listed, nor read (no process caches it)."""
        if then is None:
            self.store_games(news)
            return True
        self.store_games(news, listed=False)
        try:
            claimed = then()
        except BaseException:
            self.discard(news)
            raise
        if not claimed:
            self.discard(news)
            return False
        self.list_games(news)
        return True

    def list_games(self, news: Sequence[NewGame]) -> None:
        """List games stored unlisted and claimed since (:meth:`write`): they are the claim's
        now, so a store that refuses is asked once more, then logged (the game is played all
        the same by its seats; the listings and the workers' sweep miss it until its status
        changes, which lists it again)."""
        for new in news:
            for attempt in (1, 2):
                try:
                    self.store.index(new.id, new.game.type_id, new.meta["status"], new.now)
                    break
                except StoreError as exc:
                    if attempt == 2:
                        log.error("game %s, claimed, could not be listed: %s", new.id, exc)

    def store_games(self, news: Sequence[NewGame], reads: Sequence = (), *,
                    listed: bool = True) -> tuple:
        """Store ``news``, listed in the game index unless not ``listed``, then run ``reads``
        (read-only commands, in the same round trip on a single server) and return their
        replies. When the store refuses them, none is left written and the exception is
        raised."""
        try:
            return self.store.create_many([new.record if listed else (*new.record[:4], None)
                                           for new in news], reads)
        except KeyError:  # an id was taken: that game is somebody else's
            raise
        except BaseException:  # a refusal inside the transaction: none written, made sure
            self.discard(news)
            raise

    def discard(self, news: Sequence[NewGame]) -> None:
        """Remove games :meth:`write` stored but never announced, and their index entries
        (best effort: a store that cannot be reached is logged; the write's own error is the
        one raised)."""
        try:
            for new in news:
                self.store.delete_game(new.id)
                self.store.unindex(new.id, new.game.type_id)
        except StoreError as exc:
            log.error("games %s not deleted after a failed creation: %s",
                      [new.id for new in news], exc)

    def announce(self, new: NewGame, reads: Reads = (), replies: Sequence = (), *,
                 unseen: bool = False) -> Table:
        """A game just written (:meth:`write`): :meth:`open`, and the listeners told (with the
        replies of their ``reads`` when the write ran them)."""
        table = self.open(new, unseen=unseen)
        self.bus.notify(table, 1, new.envelopes, reads, replies)
        return table

    def open(self, new: NewGame, *, unseen: bool = False) -> Table:
        """A game just written and indexed (:meth:`write`): in this process's cache, its first
        jobs scheduled (a table waiting for players: its expiry, this once). ``unseen``: no
        client can know the game yet (its creation's answer is not sent), so nothing was
        appended since: its table is the one written, without a read; otherwise (a matched
        seek's players may already act) the latest."""
        self.loader.written(new.id, new.meta, new.envelopes, new.seed, new.state, new.shell)
        table = self.loader.load(new.id, len(new.envelopes) if unseen else None)
        self.scheduler.changed(table)
        if table.waiting:
            self.scheduler.expires(table, self.lobby_deadline(table.created, new.now))
        return table

    def prepare(self, game_type: str, players: list[dict], options: dict,
                seed_hex: str | None, *, creator: str | None = None,
                shell_fields: dict | None = None) -> NewGame:
        game = game_of(game_type)
        check_seat_count(game, len(players))
        players = [self.seat(p, creator, seat) for seat, p in enumerate(players)]
        for seat, p in enumerate(players):
            if p.get("bot"):
                check_bot_level(game, p["bot"]["level"], {"seat": seat})
        table = any(unfilled(p) for p in players)
        normalized, clock, rated, on_decline = Settings.of(
            game, players, options, table=table, supplied_seed=bool(seed_hex),
            platform=creator == PLATFORM)
        seed = bytes.fromhex(seed_hex) if seed_hex else secrets.token_bytes(32)
        first = creation_event(game, players, normalized, seed,
                               "supplied" if seed_hex else "server")
        first["data"]["clock"] = clock
        if table:
            first["data"]["on_decline"] = on_decline or "open"
            first["data"]["lobby_ttl_s"] = self.lobby_ttl_s
        if rated:
            first["data"]["rated"] = True
        first["data"].update(self.limits())
        first["data"].update(shell_fields or {})
        now = self.now_ms()
        at = rfc3339(now)
        shell = Shell.initial(first["data"])
        if table:  # the rules begin when the last seat fills (Tables.start)
            return new_game(game, [envelope(game, first, at)], None, shell, seed=seed,
                            now=now, status="waiting", created_by=creator)
        setup, state = start(game, game.initial(first["data"]["players"], normalized),
                             Rng(seed, 1))
        events = [first] + setup
        over = game.is_over(state)
        if shell.clock:
            shell = shell._replace(clock=clock_mod.restart(
                shell.clock, now, [] if over else game.awaiting(state)))
        return new_game(game, [envelope(game, e, at) for e in events], state, shell,
                        seed=seed, now=now, status="finished" if over else "active",
                        created_by=creator)

    def seat(self, entry: dict, creator: str | None, index: int) -> dict:
        """A requested seat as the creation event records it: ``{"open": true}`` stays open;
        ``{"player": id}`` is a built-in bot's seat, the creator's own seat, or an
        invitation (third-party bots are invited like anybody else)."""
        if "player" not in entry:
            return entry
        player_id = entry["player"]
        level = bot_level(player_id)
        if level is not None:
            # a built-in bot's name is fixed: no read of its profile at each creation
            return {"name": bot_name(level), "bot": {"level": level}, "player": player_id}
        try:
            record = self.players.record(player_id)
        except NotFound:
            raise InvalidRequest("player_not_found", f"no player {player_id!r}",
                                 {"seat": index}) from None
        if player_id == creator or creator == PLATFORM:
            return {"name": record["name"], "bot": None, "player": player_id}
        return {"name": None, "bot": None, "invited": player_id}
