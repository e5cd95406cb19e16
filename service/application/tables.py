"""Tables: games created with open or reserved seats. Joining, leaving and declining are shell
commands decided by ``engine.lobby`` and appended like moves (conditional on the version, so
the join that fills the last seat starts the game exactly once, whatever the races); expiry of
waiting tables; rematches."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import orjson

from .. import clock as clock_mod
from ..engine import Rng, start
from ..engine.lobby import OPEN_SEAT, Lobby, SeatUnavailable, unfilled
from ..store.events import EventStore
from .commands import MAX_RETRIES, Appender
from .creation import Creation, stored_size
from .errors import CannotRematch, InvalidRequest, VersionConflict
from .identity import new_seat_token
from .loading import Loader
from .model import HUMAN, OPEN, Appended, Controller, Table
from .players import Players


def lobby_of(table: Table) -> Lobby:
    data = table.created["data"]
    return Lobby(data["players"], data.get("on_decline", "open"), table.players)


def _controllers(seats: list[dict]) -> tuple[Controller, ...]:
    return tuple(OPEN if unfilled(p) else
                 Controller.bot(p["bot"]["level"]) if p.get("bot") else HUMAN for p in seats)


@dataclass(eq=False)
class Tables:
    store: EventStore
    loader: Loader
    appender: Appender
    creation: Creation
    players: Players
    now_ms: Callable[[], int]

    @property
    def lobby_ttl_s(self) -> int:
        """How long a table may wait for players (``Creation.lobby_ttl_s``)."""
        return self.creation.lobby_ttl_s

    def join(self, game_id: str, seat: int | None, player: str | None,
             name: str | None) -> dict:
        """Take a seat of a waiting table: ``{"seat", "token", "status"}`` (the seat's token,
        this once). The join that fills the last seat starts the game in the same append."""
        if player is not None:
            name = self.players.record(player)["name"]
        for _ in range(MAX_RETRIES):
            table = self.loader.load(game_id)
            self._check_waiting(table)
            lobby = lobby_of(table)
            taken, events = lobby.join(seat, name, player)
            token, digest = new_seat_token()
            tokens = list(table.meta["tokens"])
            tokens[taken] = digest
            for ev in events:
                lobby.apply(ev)
            outcome = self._append(table, lobby, events, tokens,
                                   {"shell": "join", "seat": taken, "name": name,
                                    "player": player})
            if isinstance(outcome, Appended):
                return {"seat": taken, "token": token, "status": outcome.table.status,
                        "version": outcome.last_version}
        raise VersionConflict(self.store.version(game_id))

    def leave(self, game_id: str, seat: int) -> Table:
        """Give a seat back before the start."""
        for _ in range(MAX_RETRIES):
            table = self.loader.load(game_id)
            self._check_waiting(table, started="game_started")
            lobby = lobby_of(table)
            events = lobby.leave(seat)
            tokens = list(table.meta["tokens"])
            tokens[seat] = ""
            for ev in events:
                lobby.apply(ev)
            outcome = self._append(table, lobby, events, tokens,
                                   {"shell": "leave", "seat": seat})
            if isinstance(outcome, Appended):
                return outcome.table
        raise VersionConflict(self.store.version(game_id))

    def decline(self, game_id: str, player: str) -> Table:
        """Turn an invitation down: the seat opens, or the table is aborted
        (``options.on_decline``)."""
        for _ in range(MAX_RETRIES):
            table = self.loader.load(game_id)
            self._check_waiting(table, started="game_started")
            lobby = lobby_of(table)
            seat, events = lobby.decline(player)
            for ev in events:
                lobby.apply(ev)
            outcome = self._append(table, lobby, events, list(table.meta["tokens"]),
                                   {"shell": "decline", "seat": seat, "player": player})
            if isinstance(outcome, Appended):
                return outcome.table
        raise VersionConflict(self.store.version(game_id))

    def expire(self, game_id: str) -> bool:
        """Abort a table still waiting the ``lobby_ttl_s`` it records after its creation (the
        lobby job and the sweep call this; anything else is left alone). Conditional on the
        version like a join, so an expiry racing the last join either aborts the table before
        it starts or finds it started."""
        from ..engine import event

        for _ in range(MAX_RETRIES):
            table = self.loader.load(game_id)
            if not table.waiting or \
                    self.now_ms() < self.creation.lobby_deadline(table.created,
                                                                 table.meta["created_ms"]):
                return False
            marker = event("GameAborted", {"by": "lobby", "reason": "expired"})
            outcome = self.appender.append(
                table, [marker], None, table.shell._replace(aborted=True),
                cmd={"shell": "expire"})
            if isinstance(outcome, Appended):
                return True
        return False

    def overdue(self, limit: int) -> list[str]:
        """The tables the index lists as waiting since this server's ``lobby_ttl_s`` or
        longer, oldest first, at most ``limit``, less those whose own recorded wait has not
        passed (their meta's deadline, read in one round trip, not loaded): what one sweep
        expires (:meth:`expire` checks again)."""
        now = self.now_ms()
        ids = self.store.created_before("waiting", now - self.lobby_ttl_s * 1000, limit)
        return [game_id for game_id, deadline in zip(ids, self.store.lobby_deadlines(ids))
                if deadline is None or deadline <= now]

    def _check_waiting(self, table: Table, started: str = "game_full") -> None:
        if table.waiting:
            return
        if table.status == "aborted":
            raise SeatUnavailable("game_aborted", "the table was aborted")
        raise SeatUnavailable(started, "the game has started" if started == "game_started"
                              else "every seat is taken: the game has started")

    def _append(self, table: Table, lobby: Lobby, events: list[dict], tokens: list[str],
                cmd: dict):
        """Append a lobby command's events, with the table's seats and tokens; the rules'
        setup too when the last seat filled."""
        state = None
        shell = table.shell._replace(controllers=_controllers(lobby.seats),
                                     aborted=lobby.aborted)
        meta = {"seats": orjson.dumps(lobby.seats).decode(),
                "tokens": orjson.dumps(tokens).decode()}
        if events[-1]["type"] == "GameStarted":
            data = table.created["data"]
            seed = bytes.fromhex(self.loader.seed(table.id))
            setup, state = start(table.game, table.game.initial(lobby.seats, data["options"]),
                                 Rng(seed, 1))
            events = events + setup
            if table.clock:
                over = table.game.is_over(state)
                shell = shell._replace(clock=clock_mod.restart(
                    clock_mod.initial(table.clock, len(lobby.seats)), self.now_ms(),
                    [] if over else table.game.awaiting(state)))
            meta["created_version"] = str(table.version + len(events))
        new_meta = {**table.meta, "seats": lobby.seats, "tokens": tokens}
        if "created_version" in meta:
            new_meta["created_version"] = int(meta["created_version"])
        return self.appender.append(table, events, state, shell, cmd=cmd, meta=meta,
                                    new_meta=new_meta)

    # -- rematches ------------------------------------------------------------------------
    def rematch(self, game_id: str, seat: int, player: str | None,
                charge: Callable[[int], None] | None = None) -> tuple[dict, bool]:
        """A new waiting table for the same players, seats rotated by one, linked both ways;
        ``(answer, created)``. Every call after the first returns the same rematch.
        ``charge``: called with the bytes the table stores just before it is written; it
        raises to refuse it."""
        table = self.loader.load(game_id)
        if not table.over or table.status == "aborted":
            raise CannotRematch()
        existing = self.store.meta_field(game_id, "rematch")
        if existing is not None:
            return self._rematch_answer(existing), False
        n = len(table.players)
        players: list[dict] = [{}] * n
        for i, entry in enumerate(table.players):
            if entry.get("player") is not None:
                new = {"player": entry["player"]}
            elif entry.get("bot"):
                new = {"name": entry["name"], "bot": entry["bot"]}
            elif i == seat:
                new = {"name": entry["name"]}
            else:
                new = dict(OPEN_SEAT)
            players[(i + 1) % n] = new
        data = table.created["data"]
        options = {k: v for k, v in data["options"].items() if k != "setup"}
        if data.get("clock"):
            options["clock"] = data["clock"]
        options["rated"] = bool(data.get("rated"))
        if data.get("on_decline") and any("player" in p and p["player"] != player
                                          for p in players):
            options["on_decline"] = data["on_decline"]
        try:
            new = self.creation.prepare(table.game.type_id, players, options, None,
                                        creator=player, shell_fields={"rematch_of": game_id})
        except InvalidRequest as exc:  # a player or bot level gone since
            raise CannotRematch(exc.message) from None
        if charge is not None:
            charge(stored_size(new))
        if not self.creation.write([new], lambda: self.store.link_rematch(game_id, new.id)):
            # another seat's request won (ours is deleted): answer with its game
            return self._rematch_answer(self.store.meta_field(game_id, "rematch")), False
        self.creation.announce(new)
        return new.response, True

    def _rematch_answer(self, rematch_id: str) -> dict:
        """A rematch another call created: its seats without tokens (invited players join;
        a seat token's holder of the old game joins an open seat)."""
        table = self.loader.load(rematch_id)
        return {"id": rematch_id, "version": table.version,
                "seats": [{"seat": i, "name": p.get("name"), "token": None}
                          for i, p in enumerate(table.players)],
                "seed_commitment": table.created["data"]["seed_commitment"]}
