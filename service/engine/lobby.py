"""A table before its game starts: who holds each seat, as a small pure decider shared by the
server (``service.application.tables``) and offline verification (``service.replay``).

A seat entry is what the creation event records: ``{"name", "bot"[, "player"]}`` for a held
seat, ``{"name": null, "bot": null, "open": true}`` for a seat anyone may take, and
``{"name": null, "bot": null, "invited": "<player id>"}`` for a seat reserved for one player.

Commands (each recorded as the ``cmd`` of its first event, so that verification decides it
again) and the events they produce, all about seats, before the rules' first event:

- ``{"shell": "join", "seat", "name", "player"}`` -> ``SeatJoined {"name", "player"}``, and
  when no seat is left unfilled ``GameStarted {"players": [entries]}`` (the rules' setup
  follows, drawn as any game's: ``Rng(seed, 1)``);
- ``{"shell": "leave", "seat"}`` -> ``SeatLeft {}`` (a seat its invited player leaves is
  reserved for it again; any other becomes open: a seat reserved for a player was taken by
  another only once that player declined it), and ``GameAborted {"by": seat, "reason":
  "empty"}`` when no human seat is held any more;
- ``{"shell": "decline", "seat", "player"}`` -> ``SeatDeclined {"player"}``: the seat becomes
  open, or with ``on_decline: "abort"`` ``GameAborted {"by": seat, "reason": "declined"}``.
"""

from __future__ import annotations

from typing import Sequence

from .game import CodedError, Event, event

LOBBY_EVENTS = frozenset({"SeatJoined", "SeatLeft", "SeatDeclined", "GameStarted"})


class SeatUnavailable(CodedError):
    """A join, leave or decline the table refuses: ``seat_taken``, ``game_full``,
    ``not_invited``, ``already_seated``, ``not_seated``, ``game_started``."""


class InvalidSeat(CodedError):
    def __init__(self, seat: int, n: int) -> None:
        super().__init__("invalid_seat", f"seat {seat} does not exist: seats are 0 to {n - 1}",
                         {"seat": seat, "seats": n})


def unfilled(entry: dict) -> bool:
    return bool(entry.get("open")) or "invited" in entry


OPEN_SEAT = {"name": None, "bot": None, "open": True}


class Lobby:
    def __init__(self, created: Sequence[dict], on_decline: str = "open",
                 seats: Sequence[dict] | None = None) -> None:
        #: the seats as the creation event recorded them
        self.created = [dict(p) for p in created]
        self.on_decline = on_decline
        self.seats = [dict(p) for p in (seats if seats is not None else created)]
        self.aborted = False

    @property
    def waiting(self) -> bool:
        return not self.aborted and any(unfilled(p) for p in self.seats)

    def seats_of(self, player: str | None) -> list[int]:
        if player is None:
            return []
        return [i for i, p in enumerate(self.seats) if p.get("player") == player]

    # -- deciding -------------------------------------------------------------------------
    def pick(self, seat: int | None, player: str | None) -> int:
        """The seat a join takes: ``seat`` if it may, else the seat reserved for ``player``,
        else the first open one. A player holding a seat may join again only a seat reserved
        for it (a player may hold several seats, as a rematch of such a game invites it)."""
        if not self.waiting:
            raise SeatUnavailable("game_full", "every seat is taken")
        held = self.seats_of(player)
        if held and not any(e.get("invited") == player and (seat is None or i == seat)
                            for i, e in enumerate(self.seats)):
            raise SeatUnavailable("already_seated", "you hold a seat of this game already",
                                  {"seat": held[0]})
        if seat is not None:
            if not 0 <= seat < len(self.seats):
                raise InvalidSeat(seat, len(self.seats))
            entry = self.seats[seat]
            if not unfilled(entry):
                raise SeatUnavailable("seat_taken", f"seat {seat} is taken", {"seat": seat})
            if "invited" in entry and entry["invited"] != player:
                raise SeatUnavailable("not_invited", f"seat {seat} is reserved for another "
                                      "player", {"seat": seat})
            return seat
        for i, entry in enumerate(self.seats):
            if player is not None and entry.get("invited") == player:
                return i
        for i, entry in enumerate(self.seats):
            if entry.get("open"):
                return i
        raise SeatUnavailable("not_invited", "the seats left are reserved for invited players")

    def join(self, seat: int | None, name: str, player: str | None) -> tuple[int, list[Event]]:
        """The seat taken and the events of joining it (``GameStarted`` last if it filled the
        table). Nothing is applied."""
        seat = self.pick(seat, player)
        joined = event("SeatJoined", {"name": name, "player": player}, seat)
        after = self._evolved([joined])
        events = [joined]
        if not after.waiting:
            events.append(event("GameStarted", {"players": after.seats}))
        return seat, events

    def leave(self, seat: int) -> list[Event]:
        if not self.waiting:
            raise SeatUnavailable("game_started", "the game has started: resign instead")
        if not 0 <= seat < len(self.seats) or unfilled(self.seats[seat]):
            raise SeatUnavailable("not_seated", "you hold no seat of this table")
        left = event("SeatLeft", {}, seat)
        events = [left]
        if not any(p.get("player") or (p.get("name") and not p.get("bot"))
                   for p in self._evolved(events).seats):
            events.append(event("GameAborted", {"by": seat, "reason": "empty"}))
        return events

    def decline(self, player: str) -> tuple[int, list[Event]]:
        if not self.waiting:
            raise SeatUnavailable("game_started", "the game has started")
        for seat, entry in enumerate(self.seats):
            if entry.get("invited") == player:
                events = [event("SeatDeclined", {"player": player}, seat)]
                if self.on_decline == "abort":
                    events.append(event("GameAborted", {"by": seat, "reason": "declined"}))
                return seat, events
        raise SeatUnavailable("not_invited", "you have no invitation to this table")

    def decide(self, cmd: dict) -> list[Event]:
        """The events of a recorded lobby command (verification)."""
        kind = cmd.get("shell")
        if kind == "join":
            seat, events = self.join(cmd.get("seat"), cmd.get("name"), cmd.get("player"))
            if seat != cmd.get("seat"):
                raise SeatUnavailable("seat_taken", "the recorded seat differs")
            return events
        if kind == "leave":
            return self.leave(cmd.get("seat"))
        if kind == "decline":
            seat, events = self.decline(cmd.get("player"))
            if seat != cmd.get("seat"):
                raise SeatUnavailable("not_invited", "the recorded seat differs")
            return events
        raise SeatUnavailable("not_a_lobby_command", f"{kind!r} is not a lobby command")

    # -- evolving -------------------------------------------------------------------------
    def apply(self, ev: Event) -> None:
        kind, seat = ev["type"], ev.get("seat")
        if kind == "SeatJoined":
            entry = {"name": ev["data"]["name"], "bot": None}
            if ev["data"].get("player") is not None:
                entry["player"] = ev["data"]["player"]
            self.seats[seat] = entry
        elif kind == "SeatLeft":
            made, leaver = self.created[seat], self.seats[seat].get("player")
            invited_back = made.get("invited") is not None and made["invited"] == leaver
            self.seats[seat] = dict(made) if invited_back else dict(OPEN_SEAT)
        elif kind == "SeatDeclined":
            self.seats[seat] = dict(OPEN_SEAT)
        elif kind == "GameAborted":
            self.aborted = True

    def _evolved(self, events: list[Event]) -> Lobby:
        out = Lobby(self.created, self.on_decline, self.seats)
        for ev in events:
            out.apply(ev)
        return out
