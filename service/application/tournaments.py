"""Tournaments: round robin and Swiss over players and bots, with duplicate deals, paired by the
server. The decisions (pairing, standings) are the pure ``engine.tournament``; this module
checks a request, creates each round's games through the normal creation path and keeps the
tournament's event stream (``store.tournaments``).

:meth:`Tournaments.advance` is the one step that moves a tournament on: it records the current
round's games that are over, then, once none is left, pairs the next round (or finishes). Every
write is an append at the version it was decided on, and a round's games are written together
with the ``RoundPaired`` event that names them (``Creation.write`` with the append as its claim:
a lost append deletes the games, never announced). So a duplicated, retried or concurrent
advance pairs a round once. It runs in the request that creates the tournament (round 1), in the
job the scheduler enqueues when a tournament's game ends (``workers.jobs.tournament_advance``),
and in the sweep for every running tournament (lost jobs).

Each game's creation event names its tournament (``"tournament"``) and round; with
``duplicate`` every game of a deal is created with the same seed, drawn from the server's secret
randomness when the round is paired (seeds are never in the tournament's stream: a game's seed
is revealed by its own export once it is over).
"""

from __future__ import annotations

import dataclasses
import logging
import re
import secrets
from typing import Any, Callable, Sequence

import orjson

from ..engine.tournament import FORMATS, Tournament, created, games_count, rotations
from ..store.archive import OVER
from ..store.errors import StoreError, is_full
from ..store.tournaments import TournamentStore, Written
from .creation import (Creation, Settings, check_bot_level, check_seat_count, game_of,
                       stored_size)
from .errors import GameNotFinished, InvalidRequest, NotFound, TournamentsFull
from .loading import Loader
from .model import Table
from .players import PLATFORM, Players, bot_level, bot_name
from .ratings import Ratings, quit_seats

log = logging.getLogger("cartouche.application")

_ID = re.compile(r"t-[0-9a-f]{16}")
#: Appends of one advance that lose races before leaving the tournament to the next job.
MAX_ATTEMPTS = 10
#: A running entry without a stream older than this is a creation that died (on a cluster,
#: between its admission and its append): :meth:`Tournaments.advance` removes it.
ORPHAN_AFTER_MS = 60_000

#: A participant's rating is recorded with 4 decimals: a number of at least 0.0001 (or 0) is
#: written in plain decimal by every JSON serializer, so the export's signed form does not
#: depend on how one writes 0.00001 (``1e-05``, ``0.00001``, ``1e-5``).
RATING_DECIMALS = 4



@dataclasses.dataclass(frozen=True)
class TournamentLimits:
    #: participants of one tournament (CARTOUCHE_TOURNAMENT_PLAYERS_MAX)
    participants: int = 64
    #: games one tournament plays, every rotation counted (CARTOUCHE_TOURNAMENT_GAMES_MAX)
    games: int = 2000
    #: rounds of a Swiss (CARTOUCHE_TOURNAMENT_ROUNDS_MAX)
    rounds: int = 30
    #: tournaments running at once on the server (CARTOUCHE_TOURNAMENTS_MAX)
    running: int = 1000
    #: seconds a finished tournament's stream is kept (CARTOUCHE_TOURNAMENT_KEEP_S)
    keep_s: int = 30 * 24 * 3600


def max_events(config: dict, limits: TournamentLimits) -> int:
    """The longest a tournament's stream may grow: its creation, one pairing per round, one
    record per game and its end."""
    return 2 * limits.games + limits.rounds + 2 + len(config.get("participants", ()))


@dataclasses.dataclass(eq=False)
class Tournaments:
    store: TournamentStore
    creation: Creation
    loader: Loader
    players: Players
    ratings: Ratings
    now_ms: Callable[[], int]
    exporter: Callable[[str], dict]
    limits: TournamentLimits = dataclasses.field(default_factory=TournamentLimits)
    #: told of the games over each record names, once it is written (their counts and
    #: ratings wait for it: ``GameService._count_recorded``)
    recorded: Callable[[list[Table]], None] = lambda tables: None

    # -- creating -------------------------------------------------------------------------
    def create(self, body: dict, charge: Callable[[int], None] | None = None, *,
               platform: bool = False) -> dict:
        """A new tournament, its first round paired; everything checked first. ``charge``:
        called with the bytes the tournament will store (:meth:`stored_size`) before anything
        is written (the creator's budget of bytes stored: it may raise). ``platform``: the
        creator is a platform key; only one may create a rated tournament (it seats the
        players it names without asking them; the platform answers for their consent)."""
        game = game_of(body["type"])
        k = body["seats_per_game"]
        check_seat_count(game, k, 2)
        fmt = body["format"]
        if fmt not in FORMATS:
            raise InvalidRequest("invalid_format", f"format is one of {', '.join(FORMATS)}",
                                 {"known": list(FORMATS)})
        participants = list(body["participants"])
        if len(set(participants)) != len(participants):
            raise InvalidRequest("duplicate_participant", "each participant is named once")
        if not k <= len(participants) <= self.limits.participants:
            raise InvalidRequest("invalid_participant_count",
                                 f"a tournament takes {k} to {self.limits.participants} "
                                 "participants", {"min": k, "max": self.limits.participants})
        rounds = body.get("rounds")
        if fmt == "swiss" and not (isinstance(rounds, int) and
                                   1 <= rounds <= self.limits.rounds):
            raise InvalidRequest("invalid_rounds", f"a Swiss takes 1 to {self.limits.rounds} "
                                 "rounds", {"min": 1, "max": self.limits.rounds})
        duplicate, rated = bool(body.get("duplicate")), bool(body.get("rated"))
        if rated and not platform:
            raise InvalidRequest("invalid_options", "a rated tournament seats the players it "
                                 "names without asking them: only a platform key may create "
                                 "one", {"code": "invalid_option", "option": "rated"})
        count = games_count(fmt, len(participants), k, rounds or 0, duplicate)
        if count > self.limits.games:
            raise InvalidRequest("too_many_games", f"this tournament would play {count} "
                                 f"games; at most {self.limits.games}",
                                 {"games": count, "max": self.limits.games})
        options = {**body.get("options", {}), "rated": rated}
        settings = Settings.of(game, [{}] * k, options, table=False)
        names = []
        for index, player in enumerate(participants):
            level = bot_level(player)
            if level is not None:
                check_bot_level(game, level, {"index": index})
                names.append(bot_name(level))
                continue
            try:
                names.append(self.players.record(player)["name"])
            except NotFound:
                raise InvalidRequest("player_not_found", f"no player {player!r}",
                                     {"index": index}) from None
        ordinals = self.ratings.ordinals(game.rating_type(settings.options), participants)
        first = created(body["name"], game.type_id, options, fmt, rounds, k,
                        [{"player": p, "name": n, "rating": round(r, RATING_DECIMALS)}
                         for p, n, r in zip(participants, names, ordinals)], duplicate, rated)
        tid = f"t-{secrets.token_hex(8)}"
        if charge is not None:
            charge(self.stored_size(tid, first, count))
        written = self.store.append(tid, 0, [first], max_events=max_events(first["data"],
                                                                           self.limits),
                                    max_running=self.limits.running, now_ms=self.now_ms(),
                                    status="running")
        if written is Written.FULL:
            raise TournamentsFull(self.limits.running)
        try:
            self.advance(tid)
        except StoreError as exc:  # created: the sweep pairs round 1 once the store has room
            if not is_full(exc):
                raise
            log.warning("tournament %s: round 1 not paired, the store is full", tid)
        return self.show(tid)

    def stored_size(self, tid: str, first: dict, games: int) -> int:
        """The bytes a tournament stores, charged at its creation although workers pair its
        later rounds: its creation event, and ``games`` games the size of one of its first
        (:func:`creation.stored_size`), whose players are its first participants."""
        data = first["data"]
        seats = [{"player": p["player"]} for p in data["participants"][:data["seats_per_game"]]]
        one = self.creation.prepare(data["type"], seats, data["options"], None,
                                    creator=PLATFORM,
                                    shell_fields={"tournament": tid, "round": 1})
        return len(orjson.dumps(first)) + games * stored_size(one)

    # -- reading --------------------------------------------------------------------------
    def deal_running(self, tid: str, game_id: str) -> bool:
        """Another game of ``game_id``'s duplicate deal (the same seed, the seats rotated) is
        still being played: until it ends, ``game_id`` reveals nothing a running game would
        not (its own end would give the others' deal away)."""
        found = self.store.events(tid) if _ID.fullmatch(tid) else []
        if not found or not found[0]["data"].get("duplicate"):
            return False
        siblings = [g for g in Tournament.of(found).deal_of(game_id) if g != game_id]
        return any(self.loader.store.meta_field(g, "status") not in OVER
                   for g in siblings)

    def duplicate(self, tid: str) -> bool:
        """Whether ``tid`` plays duplicate deals (its creation event alone is read)."""
        first = self.store.read(tid, 0, count=1) if _ID.fullmatch(tid) else []
        return bool(first and first[0][1]["data"].get("duplicate"))

    def withheld_games(self, tid: str) -> set[str]:
        """The games over of ``tid``'s duplicate deals that another game of their deal is still
        being played in (the last round's: a round is paired once every game before is over):
        :meth:`deal_running` for all of them at once."""
        found = self.store.events(tid) if _ID.fullmatch(tid) else []
        if not found or not found[0]["data"].get("duplicate"):
            return set()
        rounds = Tournament.of(found).rounds
        games = rounds[-1]["games"] if rounds else []
        over = {g["id"] for g in games
                if self.loader.store.meta_field(g["id"], "status") in OVER}
        running_deals = {g["deal"] for g in games if g["id"] not in over}
        return {g["id"] for g in games if g["id"] in over and g["deal"] in running_deals}

    def events(self, tid: str) -> list[dict]:
        found = self.store.events(tid) if _ID.fullmatch(tid) else []
        if not found:
            raise NotFound("tournament_not_found", f"no tournament {tid!r}")
        return found

    def show(self, tid: str, events: Sequence[dict] | None = None) -> dict:
        events = self.events(tid) if events is None else events
        t = Tournament.of(events)
        config = events[0]["data"]
        rounds = []
        for rnd in t.rounds:
            games = []
            for g in rnd["games"]:
                if g["id"] in t.results:
                    ranks = t.results[g["id"]]
                    status, result = ("finished", ranks) if ranks is not None else (
                        "aborted", None)
                else:
                    status, result = self._status(g["id"]), None
                games.append({"id": g["id"], "seats": g["seats"], "deal": g["deal"],
                              "status": status, "result": result})
            rounds.append({"number": rnd["number"], "games": games, "byes": rnd["byes"]})
        return {"id": tid, "name": config["name"], "type": config["type"],
                "options": config["options"], "format": config["format"],
                "rounds_total": config["rounds"], "seats_per_game": config["seats_per_game"],
                "duplicate": config["duplicate"], "rated": config["rated"],
                "status": "finished" if t.finished else "running",
                "participants": config["participants"], "rounds": rounds,
                "standings": t.standings(), "version": len(events)}

    def _status(self, game_id: str) -> str:
        try:
            return self.loader.load(game_id).status
        except NotFound:
            return "missing"

    def export(self, tid: str) -> dict:
        """A finished tournament: its events, its standings and every game's export."""
        events = self.events(tid)
        t = Tournament.of(events)
        if not t.finished:
            raise GameNotFinished()
        games = [self.exporter(g["id"]) for rnd in t.rounds for g in rnd["games"]]
        return {"format": "cartouche-tournament", "id": tid, "events": events,
                "standings": t.standings(), "games": games}

    def running(self, limit: int) -> list[str]:
        return self.store.running(limit)

    # -- moving on ------------------------------------------------------------------------
    def advance(self, tid: str) -> str:
        """Record the current round's games that are over; pair the next round once none is
        left (or finish). Returns what it did: ``finished``, ``paired``, ``recorded``,
        ``playing`` (nothing to do), ``busy`` (races lost :data:`MAX_ATTEMPTS` times),
        ``gone`` (a running entry without a tournament, removed)."""
        did = "playing"
        for _ in range(MAX_ATTEMPTS):
            try:
                events = self.events(tid)
            except NotFound:
                if self.store.orphaned(tid, self.now_ms() - ORPHAN_AFTER_MS):
                    self.store.not_running(tid)
                    return "gone"
                raise
            t = Tournament.of(events)
            if t.finished:
                self.store.ended(tid)
                return "finished" if did == "playing" else did
            over: dict[str, Table | None] = {}
            for game_id in t.pending():
                try:
                    table = self.loader.load(game_id)
                except NotFound:  # gone from the store: it scores nothing, as if aborted
                    table = None
                if table is None or table.over:
                    over[game_id] = table
            new: list[dict] = []
            tables: list[Table] = []
            for game_id in t.recordable(over):
                table = over[game_id]
                ranks = None
                if table is not None and table.status == "finished":
                    ranks = t.game_ranks(table.result()["ranks"], quit_seats(table))
                for ev in t.record(game_id, ranks):
                    t.apply(ev)
                    new.append(ev)
                if table is not None:
                    tables.append(table)
            if new:
                if self._append(tid, events, new, t) is not Written.OK:
                    continue
                self.recorded(tables)  # by the one process whose record was written
                did = "recorded"
                if t.finished:
                    return "finished"
                events = events + new
            if not t.round_over():
                return did
            if self._pair(tid, events, t):
                return "finished" if t.finished else "paired"
        log.warning("tournament %s: advance lost %s races; left to the next job", tid,
                    MAX_ATTEMPTS)
        return "busy"

    def _append(self, tid: str, events: list[dict], new: list[dict],
                after: Tournament) -> Written:
        written = self.store.append(
            tid, len(events), new, max_events=max_events(events[0]["data"], self.limits),
            status="finished" if after.finished else "", keep_s=self.limits.keep_s)
        if written is Written.TOO_LONG:  # creation's checks bound the stream: never here
            raise RuntimeError(f"tournament {tid}: stream limit reached")
        return written

    def _pair(self, tid: str, events: list[dict], t: Tournament) -> bool:
        """The next round's games created and named by ``RoundPaired`` at this version (or
        ``TournamentFinished``); False when another process moved first (the games deleted)."""
        planned = t.plan()
        if planned is None:
            new = t.next_round([])
            t.apply(new[0])
            return self._append(tid, events, new, t) is Written.OK
        groups, _ = planned
        config = t.config
        number = len(t.rounds) + 1
        news, ids = [], []
        for group in groups:
            seatings = rotations(group, config["duplicate"])
            seed = secrets.token_hex(32) if config["duplicate"] else None
            deal = []
            for seats in seatings:
                new = self.creation.prepare(
                    config["type"], [{"player": p} for p in seats], config["options"], seed,
                    creator=PLATFORM, shell_fields={"tournament": tid, "round": number})
                news.append(new)
                deal.append(new.id)
            ids.append(deal)
        paired = t.next_round(ids)
        after = Tournament.of([*events, *paired])
        if not self.creation.write(news, lambda: self._append(tid, events, paired, after)
                                   is Written.OK):
            return False
        for new in news:
            self.creation.announce(new)
        t.apply(paired[0])
        return True


def limits_of(config: Any) -> TournamentLimits:
    return TournamentLimits(config.tournament_players_max, config.tournament_games_max,
                            config.tournament_rounds_max, config.tournaments_max,
                            config.tournament_keep_s)
