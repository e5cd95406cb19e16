"""Seeks: matchmaking. A player asks for a game (a type, a seat count or a range of them, options,
optionally a rating range and bots to fill in after a delay) and is matched with other players'
compatible seeks into one new active game.

Compatible seeks are of the same game type and the same options in their canonical form, accept
a common seat count, and each one's rating range (on ordinals, ``mu - 3 sigma``, in the rating
type of the game they would play) holds the current ordinal of every other player of the group.
A seek sits in one *pool* per seat count it accepts, named by the type, the count and the
canonical form of the options at that count (the games normalize options for a number of
players: ``creation.Settings.of``, the same check a creation makes); the seeks of one pool differ
only in their players and rating ranges.

Matching (:meth:`Seeks.match`) runs in the request that opens a seek and in the bot-fill job:
it picks a group around the seek (the largest seat count that fills first, the oldest seeks
first, the pool read a page at a time), creates the game with the players seated in an order
drawn from the server's secret randomness, then claims the group with one script
(``store.seeks``: every seek still waiting becomes matched, or nothing changes). A lost claim
deletes the game, never announced, and matching starts again; a won one announces the game
(its creation event names each seat's seek), and the notices listener tells every player
``seek_matched`` then ``game_start``. So no seek is matched twice and no cancelled or expired
seek is matched, whatever the number of processes: a seek leaves ``waiting`` through that one
script only.

Two seeks opened at once in two processes cannot miss each other: each request writes its seek
before it reads the pool, so the later read sees the other seek. A seek whose opening request
died before it tried stays marked untried, and the sweep tries it. Nothing else starts a
matching: a group that becomes possible later only because a rating moved waits for the next
compatible seek.

A seek with ``fill_with_bots`` still waiting at its fill time gets seats of the built-in bot
player of that level, up to the least seat count it accepts (two seats or more of one bot player
make the game unrated), and starts; its job is scheduled when it opens and the sweep makes up
for a lost one. A seek still waiting ``ttl_s`` after it opened expires (its job, or the sweep).
"""

from __future__ import annotations

import dataclasses
import hashlib
import logging
import re
import secrets
from typing import Any, Callable, Iterator, Sequence

import orjson

from ..store.errors import StoreError, is_full
from ..store.events import EventStore
from ..store.seeks import WAITING, Card, Opened, Seek, SeekStore
from ..timestamps import rfc3339
from .creation import Creation, Settings, check_bot_level, check_seat_count, game_of
from .errors import (Forbidden, InvalidRequest, NotFound, SeekEnded, SeeksFull,
                     TooManySeeks)
from .players import PLATFORM, bot_player_id
from .ratings import Ratings

log = logging.getLogger("cartouche.application")

MATCHED, CANCELLED, EXPIRED = "matched", "cancelled", "expired"
#: Matching attempts of one call whose claims lose races, before leaving the seek to the next
#: compatible seek's matching.
MAX_ATTEMPTS = 20
#: Seeks of a pool read at a time while looking for a group, oldest first.
CANDIDATES = 100
#: Seats a seek asks for at least (a game with nobody else is no match).
MIN_SEATS = 2
#: A seek opened this recently and not tried yet is left to its own request by the sweep.
UNTRIED_GRACE_MS = 10_000
#: The seconds a client is told to wait when the server holds as many seeks as it may.
RETRY_FULL_S = 5
#: Seeks past their time a full server expires before it refuses a new one (their jobs and
#: the sweep expire the rest).
EXPIRE_AT_ONCE = 100
_ID = re.compile(r"s-[0-9a-f]{16}")
#: The seat order of matched games comes from the operating system's secret randomness.
_SEATS = secrets.SystemRandom()


@dataclasses.dataclass(frozen=True)
class SeekLimits:
    #: a seek still waiting this long after it opened expires (CARTOUCHE_SEEK_TTL_S)
    ttl_s: int = 600
    #: waiting seeks per player (CARTOUCHE_SEEKS_PER_PLAYER)
    per_player: int = 20
    #: waiting seeks on the server (CARTOUCHE_SEEKS_MAX)
    total: int = 10_000


def pool_name(game_type: str, seats: int, settings: Settings) -> str:
    """The pool of the seeks that may play one game of ``seats`` seats with ``settings``:
    the type, the count and a digest of the settings' canonical JSON (keys sorted)."""
    canonical = orjson.dumps([settings.options, settings.clock, settings.rated],
                             option=orjson.OPT_SORT_KEYS)
    return f"{game_type}:{seats}:{hashlib.sha256(canonical).hexdigest()[:32]}"


def shown(seek: Seek) -> dict:
    """A seek as the API serves it."""
    asked = seek.request
    return {"id": seek.id, "status": seek.status, "player": seek.player, "type": seek.type,
            "seats": asked["seats"], "options": asked["options"],
            "rating_range": list(seek.rating_range) if seek.rating_range else None,
            "fill_with_bots": asked["fill_with_bots"],
            "created_at": rfc3339(seek.created_ms), "expires_at": rfc3339(seek.expires_ms),
            "game_id": seek.game_id, "seat": seek.seat}


def accepts(seek: Seek | Card, ordinal: float) -> bool:
    """``seek``'s rating range holds ``ordinal`` (a seek without one accepts anybody)."""
    limits = seek.rating_range
    return limits is None or limits[0] <= ordinal <= limits[1]


@dataclasses.dataclass(eq=False)
class Seeks:
    store: SeekStore
    games: EventStore
    creation: Creation
    ratings: Ratings
    scheduler: Any
    now_ms: Callable[[], int]
    limits: SeekLimits = dataclasses.field(default_factory=SeekLimits)

    # -- opening, reading, cancelling ----------------------------------------------------
    def open(self, player: str, game_type: str, seats: tuple[int, int], options: dict,
             rating_range: tuple[float, float] | None = None,
             fill_with_bots: dict | None = None,
             charge: Callable[[int], None] | None = None) -> dict:
        """A new seek of ``player``, matched at once when compatible seeks wait (its answer
        then says ``matched``). Everything is checked first: the game type, every seat count
        of ``seats`` against the game and the options (``rated`` defaults to true), the
        rating range, the bots' level and delay (shorter than the seek's life).

        ``charge``: called with the bytes the seek stores (its request, pools and ids) just
        before it is written; it raises to refuse it (a budget of bytes stored per minute)."""
        game = game_of(game_type)
        low, high = seats
        if low > high:
            raise InvalidRequest("invalid_player_count", "seats: the least count comes first",
                                 {"min": low, "max": high})
        if options.get("setup") is not None:  # strangers are matched: the server deals
            raise InvalidRequest("invalid_options", "a seek's game is dealt by the server: "
                                 "options.setup is for games you create",
                                 {"code": "invalid_option", "option": "setup"})
        options = {"rated": True, **options}
        if fill_with_bots is not None:  # (the pools below are named with the bots' level)
            check_bot_level(game, fill_with_bots["level"], {"option": "fill_with_bots.level"})
        pools, rating_types = {}, {}
        for n in range(low, high + 1):
            check_seat_count(game, n, MIN_SEATS)
            # a seek filled with bots must take them (Papyrus' turn_limit 0 does not)
            seated = [{"bot": {"level": fill_with_bots["level"]}} if fill_with_bots else {}] * n
            settings = Settings.of(game, seated, options, table=False)
            pools[n] = pool_name(game.type_id, n, settings)
            rating_types[str(n)] = game.rating_type(settings.options)
        if rating_range is not None and (len(rating_range) != 2
                                         or rating_range[0] > rating_range[1]):
            raise InvalidRequest("invalid_rating_range", "rating_range is [low, high]",
                                 {"rating_range": list(rating_range)})
        now = self.now_ms()
        fill_ms = None
        if fill_with_bots is not None:
            if not 0 <= fill_with_bots["after_s"] < self.limits.ttl_s:
                raise InvalidRequest("invalid_fill_with_bots", "fill_with_bots.after_s is from "
                                     "0 to less than a seek's life",
                                     {"min_after_s": 0, "max_after_s": self.limits.ttl_s - 1})
            fill_ms = now + fill_with_bots["after_s"] * 1000
        seek = Seek(f"s-{secrets.token_hex(8)}", player, game.type_id, now,
                    now + self.limits.ttl_s * 1000, fill_ms, pools,
                    tuple(rating_range) if rating_range else None, {
                        "seats": [low, high], "options": options,
                        "fill_with_bots": fill_with_bots, "rating_types": rating_types})
        if charge is not None:
            charge(len(orjson.dumps(seek.request)) + sum(map(len, pools.values()))
                   + len(seek.id) + len(player))
        opened = self.store.open(seek, self.limits.per_player, self.limits.total)
        if opened in (Opened.PLAYER_FULL, Opened.FULL) and self._expire_due(
                player if opened is Opened.PLAYER_FULL else None):
            # seeks past their time still counted (their jobs and the sweep had not run)
            opened = self.store.open(seek, self.limits.per_player, self.limits.total)
        if opened is Opened.PLAYER_FULL:
            raise TooManySeeks(self.limits.per_player)
        if opened is Opened.FULL:
            raise SeeksFull(self.limits.total, RETRY_FULL_S)
        try:
            seek = self._first_match(seek)
        except StoreError as exc:
            if not is_full(exc):
                raise
            # the seek is stored and waiting: the sweep matches it once the store has room
            log.warning("seek %s: not matched at its opening, the store is full", seek.id)
        if seek.status == WAITING:  # its jobs (if the request dies first: the sweep's work)
            self.scheduler.seek_opened(seek.id, seek.expires_ms, fill_ms)
        return shown(seek)

    def get(self, seek_id: str) -> Seek:
        """The seek, expired first if it is still waiting past its time (as its job or the
        sweep would expire it: they may not have run yet)."""
        found = self.store.get(seek_id) if _ID.fullmatch(seek_id) else None
        if found is None:
            raise NotFound("seek_not_found", f"no seek {seek_id!r}")
        now = self.now_ms()
        if found.status == WAITING and found.expires_ms <= now:
            return self._expired(found, now)
        return found

    def _expired(self, seek: Seek, now: int) -> Seek:
        """``seek``, waiting past its time, expired (or as another process ended it
        meanwhile). A full store refuses the write: the seek reads expired all the same, and
        its job or the sweep writes it once there is room."""
        expired = dataclasses.replace(seek, status=EXPIRED, ended_ms=now)
        try:
            if self.store.settle([seek], EXPIRED, now).ok:
                return expired
        except StoreError as exc:
            if not is_full(exc):
                raise
            return expired
        return self.store.get(seek.id) or expired

    def _expire_due(self, player: str | None) -> bool:
        """Expire the waiting seeks past their time (``player``'s, or the oldest due on the
        server); whether any was."""
        due = (self.store.of_player(player, self.limits.per_player) if player is not None
               else self.expiring(EXPIRE_AT_ONCE))
        return sum(self.expire(seek_id) for seek_id in due) > 0

    def show(self, seek_id: str) -> dict:
        return shown(self.get(seek_id))

    def cancel(self, seek_id: str, player: str) -> dict:
        """The player's seek, cancelled unless it has ended already: cancelling twice answers
        the cancelled seek; a matched or expired one is SeekEnded."""
        seek = self.get(seek_id)
        if seek.player != player:
            raise Forbidden("not_your_seek", "only the player who opened a seek may cancel it")
        if seek.status == WAITING and self.store.settle([seek], CANCELLED, self.now_ms()).ok:
            return self.show(seek_id)
        seek = self.get(seek_id)
        if seek.status != CANCELLED:
            raise SeekEnded(seek.status, seek.game_id)
        return shown(seek)

    def waiting(self, game_type: str | None, offset: int, limit: int) -> dict:
        """The waiting seeks (of ``game_type``, or all), newest first: those past their time
        are expired first (up to :data:`EXPIRE_AT_ONCE` of the server's; one still on the
        page is expired there and left out)."""
        try:
            self._expire_due(None)
        except StoreError as exc:  # a full store: the page below leaves them out all the same
            if not is_full(exc):
                raise
        ids, total = self.store.waiting(game_type, offset, limit)
        found = [s for s in self.store.get_many(ids) if s is not None]
        live = self._live(found)
        return {"seeks": [shown(s) for s in live], "total": total - (len(found) - len(live))}

    def of_player(self, player: str) -> list[dict]:
        """The player's waiting seeks, newest first (those past their time expired)."""
        ids = self.store.of_player(player, self.limits.per_player)
        return [shown(s) for s in self._live([s for s in self.store.get_many(ids) if s])]

    def _live(self, seeks: list[Seek]) -> list[Seek]:
        """``seeks`` less those waiting past their time, which are expired on the way (as
        :meth:`get` does: their job or the sweep may not have run yet)."""
        now = self.now_ms()
        due = [s for s in seeks if s.status == WAITING and s.expires_ms <= now]
        for seek in due:
            self._expired(seek, now)
        return [s for s in seeks if s not in due]

    # -- matching -------------------------------------------------------------------------
    def first_match(self, seek_id: str) -> Seek:
        """The matching a seek gets when it opens (from the sweep when the request that opened
        it died first): with the compatible seeks waiting, else with its bots if they are due
        already; then the seek is marked as tried."""
        return self._first_match(self.get(seek_id))

    def _first_match(self, seek: Seek) -> Seek:
        seek = self._fill(seek)
        if seek.status == WAITING:  # an ended seek has left the untried ones with its status
            self.store.tried(seek.id)
        return seek

    def match(self, seek_id: str) -> Seek:
        """Match a waiting seek with compatible waiting seeks into one new game, if a group
        can be found; the seek as it is afterwards (matched by this call or by another, or
        still waiting)."""
        return self._match(self.get(seek_id))

    def _match(self, seek: Seek) -> Seek:
        for _ in range(MAX_ATTEMPTS):
            if seek.status != WAITING:
                return seek
            others = self._group(seek)
            if others is None:
                return seek
            group = [seek, *self.store.get_many(others)]
            if all(s is not None and s.status == WAITING for s in group):
                started = self._start(group)
                if started is not None:
                    return started[0]
            seek = self.get(seek.id)  # a race lost to another process: as things are now
        return seek

    def _group(self, seek: Seek) -> list[str] | None:
        """The ids of the seeks to play with ``seek``: for each seat count it accepts, the
        largest first, its pool's oldest waiting seeks of other players, not past their time,
        whose rating ranges accept everybody in the group and whose players everybody's range
        accepts, until the count is reached. None when no count fills."""
        now = self.now_ms()
        if seek.expires_ms <= now:  # its expiry is due: no more matching
            return None
        for n in sorted(seek.pools, reverse=True):
            rating_type = seek.request["rating_types"][str(n)]
            group: list[Seek | Card] = [seek]
            ordinal: dict[str, float] = {}
            for page in self._candidates(seek.pools[n], n, now):
                # the ratings are read only when a rating range is there to be met
                ranged = any(s.rating_range is not None for s in (*group, *page))
                if ranged:
                    players = [s.player for s in (*group, *page) if s.player not in ordinal]
                    ordinal.update(zip(players, self.ratings.ordinals(rating_type, players)))
                for c in page:
                    if all(c.player != g.player for g in group) and (not ranged or all(
                            accepts(g, ordinal[c.player]) and accepts(c, ordinal[g.player])
                            for g in group)):
                        group.append(c)
                        if len(group) == n:
                            return [c.id for c in group[1:]]
        return None

    def _candidates(self, pool: str, n: int, now: int) -> Iterator[list[Card]]:
        """The waiting seeks of a pool not past their time, oldest first, a small page first
        (the first seeks usually fit), then pages of :data:`CANDIDATES` (nothing when the pool
        holds fewer than ``n``)."""
        offset, size = 0, min(4 * n, CANDIDATES)
        while True:
            cards, held = self.store.pool(pool, offset, size)
            if held < n:
                return
            yield [c for c in cards if c.expires_ms > now]
            offset += size
            if offset >= held:
                return
            size = CANDIDATES

    def _start(self, seeks: list[Seek], bots: Sequence[str] = ()) -> list[Seek] | None:
        """One game for the players of ``seeks`` and the built-in bot players ``bots``, seated
        in a random order: created, then the seeks claimed for it (the seeks as matched). When
        a seek is no longer waiting nothing is claimed and the game, never announced, is
        deleted (None)."""
        holders = [s.player for s in seeks] + list(bots)
        seats = list(range(len(holders)))
        _SEATS.shuffle(seats)
        players: list[dict] = [{}] * len(holders)
        by_seat: list[str | None] = [None] * len(holders)
        for i, seat in enumerate(seats):
            players[seat] = {"player": holders[i]}
            if i < len(seeks):
                by_seat[seat] = seeks[i].id
        options = dict(seeks[0].request["options"])
        if len(set(holders)) < len(holders):  # a bot player in two seats: never rated
            options["rated"] = False
        new = self.creation.prepare(seeks[0].type, players, options, None, creator=PLATFORM,
                                    shell_fields={"seeks": by_seat})
        if not self.creation.write([new], lambda: self.store.settle(
                seeks, MATCHED, new.now, game_id=new.id, seats=seats[:len(seeks)]).ok):
            return None  # a seek ended meanwhile: the game is deleted
        self.creation.announce(new)  # the notices listener tells seek_matched, game_start
        return [dataclasses.replace(s, status=MATCHED, game_id=new.id, seat=seat,
                                    ended_ms=new.now) for s, seat in zip(seeks, seats)]

    # -- what happens later: bots, expiry, the sweep --------------------------------------
    def fill(self, seek_id: str) -> Seek:
        """The bot-fill job: a seek still waiting at its fill time is matched with whoever
        fits now, else gets seats of the built-in bot player of its level up to the least seat
        count it accepts, and starts. Does nothing to a seek that is not waiting or not due,
        so a duplicated or late job changes nothing."""
        return self._fill(self.get(seek_id))

    def _fill(self, seek: Seek) -> Seek:
        seek = self._match(seek)
        now = self.now_ms()
        if seek.status != WAITING or seek.fill_ms is None or not \
                seek.fill_ms <= now < seek.expires_ms:
            return seek
        bot = bot_player_id(seek.request["fill_with_bots"]["level"])
        started = self._start([seek], [bot] * (min(seek.pools) - 1))
        return started[0] if started is not None else self.get(seek.id)

    def expire(self, seek_id: str) -> bool:
        """End a seek still waiting at its expiry time (True); anything else is left alone."""
        seek = self.store.get(seek_id)
        now = self.now_ms()
        if seek is None or seek.status != WAITING or now < seek.expires_ms:
            return False
        return self.store.settle([seek], EXPIRED, now).ok

    def expiring(self, limit: int) -> list[str]:
        """The waiting seeks past their time (for the sweep)."""
        return self.store.expiring(self.now_ms(), limit)

    def filling(self, limit: int) -> list[str]:
        """The waiting seeks whose bots are due (for the sweep)."""
        return self.store.filling(self.now_ms(), limit)

    def untried(self, limit: int) -> list[str]:
        """The waiting seeks no request has tried to match (for the sweep: their opening
        request died in between), leaving alone those opened in the last
        :data:`UNTRIED_GRACE_MS`, whose requests may still be at it."""
        return self.store.untried(self.now_ms() - UNTRIED_GRACE_MS, limit)
