"""Exports of finished games and their offline verification.

``verify(export)`` needs nothing but this package's rules and the public RNG: it checks the seed
against its commitment, re-derives every random draw, replays every recorded command through the
rules and compares what it produces with the log, event by event; lets the shell's events
(resignations, forfeits, aborts) stand only where the shell could have appended them, and
timeout flags only on commands the clock could have played; and checks the export's own fields
(players, options, clock, status, the result recomputed by the rules) against its events. The
server's own aborts stand only where its limits required them: an ``event_limit`` abort only
where the command it refused (``cmd.refused``, derived again) would have taken the log past the
game's ``max_events`` minus one, and no command ever past it; an ``idle`` abort (or, in a game
whose result counts, rated or a tournament's, the idle seats' resignations) only in an active
game without a clock, at least ``idle_abort_s`` after the event before it (a game created before
that was recorded: not before it). Given the server's public keys it first checks the export's
Ed25519 signature (``service.signing``), which proves what nothing else can: the names, the
times, the game's id. ``python -m service.replay verify EXPORT.json [--key KEY]`` runs it
without a server.
"""

from __future__ import annotations

import argparse
import copy
import json
import re
import sys
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Callable, Iterable, Sequence

from . import signing
from .engine import (RESIGNED_BOT, Game, IllegalAction, NotYourTurn, Rng, command, commitment,
                     event, fields_detail, fold, forfeit, forfeit_result,
                     idle_resigners, result_counts, start)
from .engine.lobby import LOBBY_EVENTS, Lobby, SeatUnavailable, unfilled
from .engine.local import creation_event
from .engine.schemas import INSTANT_PATTERN
from .games import GAMES

FORMAT = "cartouche-export/1"
#: Events the shell writes about seats and the table; the rules never see them (a table's
#: ``GameStarted`` begins the rules' state: see ``engine.lobby``).
SHELL_EVENTS = frozenset({"SeatResigned", "SeatForfeited", "GameAborted"}) | LOBBY_EVENTS
#: Creation-event fields the shell adds around what the rules decide.
SHELL_CREATED_FIELDS = ("clock", "forked_from", "on_decline", "rematch_of", "rated",
                        "seeks", "max_events", "idle_abort_s", "lobby_ttl_s", "tournament",
                        "round")
#: The shell commands of a table before its game starts (``engine.lobby``).
LOBBY_COMMANDS = frozenset({"join", "leave", "decline"})
#: The members of an export (``signature`` is added by a server that signs: ``signing``).
EXPORT_FIELDS = frozenset({"format", "id", "type", "status", "created_at", "players", "options",
                           "clock", "seed", "seed_source", "seed_commitment", "forked_from",
                           "events", "result", "signature"})
#: The members of an exported event.
EVENT_FIELDS = frozenset({"version", "type", "seat", "data", "at", "forced", "timeout", "cmd"})


def export_document(meta: dict, players: list[dict], seed_hex: str,
                    envelopes: list[tuple[int, dict]], game_id: str, status: str,
                    result: dict | None) -> dict:
    """``players``: who held each seat at the end (a table's seats as they were filled)."""
    created = envelopes[0][1]["data"]
    return {
        "format": FORMAT,
        "id": game_id,
        "type": meta["type"],
        "status": status,
        "created_at": envelopes[0][1].get("at"),
        "players": players,
        "options": created["options"],
        "clock": created.get("clock"),
        "seed": seed_hex,
        "seed_source": created["seed"],
        "seed_commitment": created["seed_commitment"],
        "forked_from": created.get("forked_from"),
        "events": [_exported(v, env) for v, env in envelopes],
        "result": result,
    }


def _exported(version: int, env: dict) -> dict:
    out = {"version": version, "type": env["type"], "seat": env.get("seat"),
           "data": env.get("data", {}), "at": env.get("at")}
    for key in ("forced", "timeout", "cmd"):
        if env.get(key):
            out[key] = env[key]
    return out


def _same(ev: dict) -> dict:
    return {"type": ev["type"], "seat": ev.get("seat"), "data": ev.get("data", {}),
            "forced": bool(ev.get("forced"))}


class Divergence(Exception):
    def __init__(self, version: int | None, reason: str, details: dict | None = None) -> None:
        super().__init__(reason)
        self.version = version
        self.reason = reason
        self.details = details or {}


#: What reading a document of the wrong shape raises, wherever: a member missing or of the
#: wrong type, a value the rules cannot take (no player: a division by zero; an empty deck),
#: nesting deeper than Python recurses. (The server's budget, raised by ``tick``, is none.)
MALFORMED = (LookupError, TypeError, ValueError, AttributeError, ArithmeticError,
             RuntimeError)


def verify(doc: Any, keys: Sequence[Any] | None = None,
           tick: Callable[[], None] | None = None) -> dict:
    """``{"valid": true, "version": null, "reason": null, "details": {"checked": N,
    "signature": ...}}`` or ``{"valid": false, "version", "reason", "details"}``. A fork's
    details also say how many of its events were ``copied`` from its parent (and which:
    ``forked_from``): those were folded in as logged, proven by the signature or by the
    parent's export, not by this one's seed (:func:`copied`).

    Without ``keys`` everything the seed and the rules can prove is checked, and
    ``details.signature`` is ``"unchecked"``: the names, the times and the game's id are then
    not proven. With ``keys`` (Ed25519 public keys, ``service.signing``) the export must also
    carry a valid signature by one of them (checked first): then every value is the server's.
    ``tick`` is called once per command (the server bounds the work with it).

    A tournament's export (``service.tournament_verify``) is verified game by game, then its
    own events and standings."""
    if isinstance(doc, dict) and doc.get("format") == "cartouche-tournament":
        from .tournament_verify import verify_tournament

        return verify_tournament(doc, keys, tick or (lambda: None), verify)
    try:
        signature = "unchecked"
        if keys is not None:
            if not isinstance(doc, dict):
                raise Divergence(0, "not_an_export", {"format": FORMAT})
            try:
                refused = signing.check(doc, keys)
            except MALFORMED as exc:  # a value no export holds (an integer past 64 bits...)
                raise Divergence(None, "malformed_export", {"error": type(exc).__name__}) \
                    from None
            if refused is not None:
                raise Divergence(None, refused, {"content": _content(doc, tick)})
            signature = "valid"
        try:
            checked = _verify(doc, tick or (lambda: None))
        except MALFORMED as exc:
            # a member missing or of the wrong shape, wherever it was read
            raise Divergence(None, "malformed_export", {"error": type(exc).__name__}) from None
    except Divergence as exc:
        return {"valid": False, "version": exc.version, "reason": exc.reason,
                "details": exc.details}
    details = {"checked": checked, "signature": signature}
    if copied(doc):
        details["copied"] = copied(doc)
        details["forked_from"] = doc["events"][0]["data"]["forked_from"]
    return {"valid": True, "version": None, "reason": None, "details": details}


def _content(doc: dict, tick: Callable[[], None] | None) -> dict:
    """The verdict of the seed and the rules on an export whose signature failed: whether they
    find it valid, or the first version that diverges (to find what was changed)."""
    try:
        _verify(doc, tick or (lambda: None))
    except MALFORMED as exc:
        return {"valid": False, "version": None, "reason": "malformed_export",
                "error": type(exc).__name__}
    except Divergence as exc:
        return {"valid": False, "version": exc.version, "reason": exc.reason}
    return {"valid": True, "version": None, "reason": None}


def _compare(expected: Iterable[dict], got: list[dict], first_version: int) -> None:
    expected = list(expected)
    for i, (want, have) in enumerate(zip(expected, got)):
        if _same(want) != _same(have):
            raise Divergence(first_version + i, "event_differs",
                             {"expected": _same(want), "logged": _same(have)})
    if len(expected) != len(got):
        raise Divergence(first_version + min(len(expected), len(got)), "event_count_differs",
                         {"expected": len(expected), "logged": len(got)})


@dataclass
class Seats:
    """What verification follows besides the rules' state, as the shell keeps it: who holds
    and who controls each seat, and how the game ended."""

    players: list[dict]
    clock: dict | None
    #: per seat: ``human``, ``bot``, ``auto`` or ``left``
    controllers: list[str] = field(default_factory=list)
    aborted: bool = False
    #: a forfeit that ended a game unable to go on: ``{"reason", "seats"}``
    ended: dict | None = None
    #: a command since the game started (an abort is refused from then on)
    moved: bool = False
    #: the limits the creation event records (``service.application.creation``): the most
    #: events of the log, how long the game may stay idle and how long a table may wait for
    #: players (None: not recorded)
    max_events: int | None = None
    idle_abort_s: int | None = None
    lobby_ttl_s: int | None = None
    #: the ``at`` of the creation event
    created_at: str | None = None
    #: the ``at`` of the last event of the previous command
    last_at: str | None = None
    #: the creation event's data
    created: dict = field(default_factory=dict)

    def start(self, players: list[dict]) -> None:
        self.players = players
        self.controllers = ["bot" if p.get("bot") else "human" for p in players]

    @property
    def policy(self) -> str | None:
        return self.clock["timeout"] if self.clock else None

    def over(self, game, state: dict | None) -> bool:
        return self.aborted or self.ended is not None or (
            state is not None and game.is_over(state))

    def status(self, game, state: dict | None) -> str:
        if self.aborted:
            return "aborted"
        if state is None:
            return "waiting"
        return "finished" if self.over(game, state) else "active"

    def result(self, game, state: dict | None) -> dict | None:
        if state is None:
            return None
        if self.ended is not None:
            return forfeit_result(len(self.players), self.ended["seats"], self.ended["reason"])
        return game.result(state) if game.is_over(state) else None

    def follow(self, ev: dict) -> None:
        """An inherited shell event of a fork (a fork at or after its parent's abort or
        ending forfeit is born over, as its parent was)."""
        if ev["type"] == "SeatResigned":
            self.controllers[ev["seat"]] = ev["data"]["replaced_by"].partition(":")[0]
        elif ev["type"] == "SeatForfeited":
            self.controllers[ev["seat"]] = "left"
            if ev["data"].get("game_continues") is False:  # with the seats leaving with it
                if self.ended is None:
                    self.ended = {"reason": f"forfeit_{ev['data']['reason']}", "seats": []}
                self.ended["seats"].append(ev["seat"])
        elif ev["type"] == "GameAborted":
            self.aborted = True


def _verify(doc: Any, tick: Callable[[], None]) -> int:
    if not isinstance(doc, dict) or doc.get("format") != FORMAT:
        raise Divergence(0, "not_an_export", {"format": FORMAT})
    unknown = sorted(set(doc) - EXPORT_FIELDS)
    if unknown:
        raise Divergence(0, "unknown_field",
                         fields_detail(unknown[0][:64], "not a field of the format"))
    game = GAMES.get(doc.get("type"))
    if game is None:
        raise Divergence(0, "unknown_game_type")
    events = doc.get("events")
    if not isinstance(events, list) or not events:
        raise Divergence(0, "no_events")
    for i, ev in enumerate(events):
        if not isinstance(ev, dict) or ev.get("version") != i + 1:
            raise Divergence(i + 1, "versions_not_dense")
        if set(ev) - EVENT_FIELDS or not isinstance(ev.get("data", {}), dict) \
                or any(ev.get(flag) not in (None, True) for flag in ("forced", "timeout")) \
                or not _instant(ev.get("at")):
            raise Divergence(i + 1, "malformed_event")
    try:
        seed = bytes.fromhex(doc["seed"])
    except (KeyError, TypeError, ValueError):
        raise Divergence(1, "seed_missing") from None
    if commitment(seed) != doc.get("seed_commitment") or \
            events[0]["data"].get("seed_commitment") != doc.get("seed_commitment"):
        raise Divergence(1, "seed_commitment_mismatch")
    created = events[0]
    if created["type"] != "GameCreated" or "cmd" in created:
        raise Divergence(1, "first_event_not_creation")
    data = created["data"]
    players, options = data["players"], data["options"]
    try:
        normalized = game.normalize_options(dict(options), players)
    except Exception as exc:  # noqa: BLE001 - any failure is a divergence to report
        raise Divergence(1, "options_rejected", {"error": str(exc)}) from None
    if normalized != options:
        raise Divergence(1, "options_not_normalized")
    want = creation_event(game, players, normalized, seed, data["seed"])["data"]
    if data.get("forked_from"):
        want["setup"] = "custom"  # a fork's past is fixed, not drawn
    have = {k: v for k, v in data.items() if k not in SHELL_CREATED_FIELDS}
    if want != have:
        raise Divergence(1, "creation_differs", {"expected": want, "logged": have})
    seats = _seats(created)
    state = None if any(unfilled(p) for p in players) else game.initial(players, normalized)
    for version, produced, logged, state in _commands(game, seed, events, state, seats):
        _compare(produced, logged, version)
        tick()
    _check_document(doc, game, seats, state, len(events))
    return len(events)


def copied(doc: dict) -> int:
    """How many events of a fork's export (``doc``, verified) were copied from its parent:
    folded into the state as logged, not re-derived (the parent's seed is not in the fork's
    export). What proves them is the signature, or the parent's own export verified."""
    forked = doc["events"][0]["data"].get("forked_from")
    return max(0, int(forked["version"]) - 1) if forked else 0


def against_parent(doc: dict, parent: Any, keys: Sequence[Any] | None = None) -> dict | None:
    """A fork's export (``doc``, verified) held against its parent's export: None when the
    parent verifies (signed by one of ``keys`` too, when given), is the game ``forked_from``
    names, and holds the fork's copied events (versions 2 to ``forked_from.version``) as they
    are; otherwise the invalid verdict (``parent_invalid``, with the parent's own verdict,
    ``not_the_parent`` or ``parent_differs``, at the first differing version). The copied
    events' draws are then proven by the parent's seed, without the fork's signature."""
    forked = doc["events"][0]["data"].get("forked_from")
    if not forked:
        return _invalid(None, "not_a_fork")
    outcome = verify(parent, keys)
    if not outcome["valid"]:
        return _invalid(None, "parent_invalid", {"parent": outcome})
    if parent.get("id") != forked["id"] or parent.get("type") != doc.get("type"):
        return _invalid(None, "not_the_parent", {"forked_from": forked["id"],
                                                 "given": parent.get("id")})
    theirs = parent["events"]
    for mine in doc["events"][1:forked["version"]]:
        version = mine["version"]
        if version > len(theirs) or theirs[version - 1] != mine:
            return _invalid(version, "parent_differs")
    return None


def _invalid(version: int | None, reason: str, details: dict | None = None) -> dict:
    return {"valid": False, "version": version, "reason": reason, "details": details or {}}


def _seats(created: dict) -> Seats:
    """The shell's side of a game as its creation event begins it."""
    data = created["data"]
    return Seats(data["players"], data.get("clock"), max_events=data.get("max_events"),
                 idle_abort_s=data.get("idle_abort_s"), lobby_ttl_s=data.get("lobby_ttl_s"),
                 created_at=created.get("at"), created=data)


def _check_document(doc: dict, game, seats: Seats, state: dict | None, last: int) -> None:
    """The export's own fields against what its events say."""
    data = doc["events"][0]["data"]
    derived = {"status": seats.status(game, state), "players": seats.players,
               "result": seats.result(game, state), "options": data["options"],
               "clock": data.get("clock"), "seed_source": data["seed"],
               "forked_from": data.get("forked_from"), "created_at": doc["events"][0].get("at")}
    for name, value in derived.items():
        if doc.get(name, _ABSENT) != value:
            raise Divergence(last, f"{name}_differs", {"expected": value,
                                                      "logged": doc.get(name)})


_ABSENT = object()


def _groups(events: list[dict], pos: int):
    """``(version, cmd, events)`` of each command from index ``pos`` on."""
    while pos < len(events):
        end = pos + 1
        while end < len(events) and "cmd" not in events[end]:
            end += 1
        yield events[pos]["version"], events[pos].get("cmd"), events[pos:end]
        pos = end


def _instant(at: Any) -> bool:
    """``at`` is null or an RFC 3339 point in time the calendar has (the contract's pattern
    takes 30 February)."""
    if at is None:
        return True
    if not isinstance(at, str) or re.fullmatch(INSTANT_PATTERN, at) is None:
        return False
    try:
        datetime.fromisoformat(at.upper())
    except ValueError:
        return False
    return True


def _at_ms(at: Any) -> float:
    """An event's ``at`` (RFC 3339) in milliseconds since the epoch."""
    return datetime.fromisoformat(at.upper()).timestamp() * 1000


def _idle(game, version: int, group: list[dict], state: dict | None,
          seats: Seats) -> list[dict]:
    """The server's end of the wait of a game nobody played for its idle limit (``{"shell":
    "idle"}``, ``service.application.seats``): no clock, and at least ``idle_abort_s`` (when
    recorded; else any time) after the previous event. The idle seats of a game whose result
    counts (rated, or a tournament's) resign (:func:`~service.engine.idle_resigners`);
    otherwise, and in games recorded before that rule (their logs show the abort), the game is
    aborted."""
    if seats.clock:
        raise Divergence(version, "idle_abort_not_allowed", {"reason": "clock"})
    waited = _at_ms(group[0]["at"]) - _at_ms(seats.last_at)
    if waited < (seats.idle_abort_s or 0) * 1000:
        raise Divergence(version, "idle_abort_not_allowed",
                         {"idle_abort_s": seats.idle_abort_s, "waited_ms": waited})
    gone = [] if state is None or group[0]["type"] == "GameAborted" else idle_resigners(
        result_counts(seats.created, seats.players), game.awaiting(state),
        [c == "human" for c in seats.controllers])
    if not gone:
        seats.aborted = True
        return [event("GameAborted", {"by": "server", "reason": "idle"})]
    seats.moved = True
    replaced = f"bot:{RESIGNED_BOT}"
    for seat in gone:
        seats.controllers[seat] = "bot"
    return [event("SeatResigned", {"replaced_by": replaced, "reason": "idle"}, seat)
            for seat in gone]


def _check_cap(version: int, count: int, seats: Seats) -> None:
    """A command of ``count`` events at ``version`` kept the log within its cap."""
    if seats.max_events and version - 1 + count > seats.max_events - 1:
        raise Divergence(version, "event_limit_exceeded", {"max_events": seats.max_events})


def _event_limit(version: int, cmd: dict, count: int, seats: Seats) -> list[dict]:
    """The server's abort at the game's event cap (``{"shell": "event_limit", "refused"}``,
    ``service.application.commands``): ``count``, the events the refused command would have
    appended, must take the log past ``max_events - 1``."""
    if not seats.max_events or version - 1 + count <= seats.max_events - 1:
        raise Divergence(version, "event_limit_not_reached",
                         {"max_events": seats.max_events, "refused_events": count})
    seats.aborted = True
    return [event("GameAborted", {"by": "server", "reason": "event_limit"})]


def _refused(version: int, cmd: dict) -> dict:
    """The command an ``event_limit`` abort refused, as recorded."""
    refused = cmd.get("refused")
    if not isinstance(refused, dict) or refused.get("shell") == "event_limit":
        raise Divergence(version, "unknown_shell_command", {"refused": "not a command"})
    return refused


def _expiry(version: int, group: list[dict], seats: Seats) -> None:
    """A table's expiry (``service.application.tables``) comes at least ``lobby_ttl_s`` after
    the table's creation (when recorded; else at any time)."""
    if not seats.lobby_ttl_s:
        return
    waited = _at_ms(group[0]["at"]) - _at_ms(seats.created_at)
    if waited < seats.lobby_ttl_s * 1000:
        raise Divergence(version, "lobby_expiry_not_allowed",
                         {"lobby_ttl_s": seats.lobby_ttl_s, "waited_ms": waited})


def _aborted(version: int, cmd: dict, group: list[dict], seats: Seats) -> list[dict]:
    """The event of an abort (``cmd: {"shell": "abort"}``: a seat or a platform key, before
    any move) or of a table's expiry (``{"shell": "expire"}``), as the shell writes it."""
    n = len(seats.players)
    by = group[0].get("data", {}).get("by")
    if cmd["shell"] == "expire":
        _expiry(version, group, seats)
        data = {"by": "lobby", "reason": "expired"}
    elif by == "platform" or (type(by) is int and 0 <= by < n):
        data = {"by": by}
    else:
        raise Divergence(version, "shell_event_differs", {"data": group[0].get("data")})
    seats.aborted = True
    return [event("GameAborted", data)]


def _lobby(game, seed: bytes, events: list[dict], seats: Seats):
    """A table's commands before its game starts, re-decided by ``engine.lobby``: yields
    like :func:`_commands`; returns the index of the first event after them and the rules'
    state then (None when the table never started)."""
    data = events[0]["data"]
    lobby = Lobby(data["players"], data.get("on_decline", "open"))
    pos = 1
    for version, cmd, group in _groups(events, 1):
        if not lobby.waiting:
            break
        if not isinstance(cmd, dict) or "shell" not in cmd:
            raise Divergence(version, "command_before_start")
        if cmd["shell"] == "event_limit":
            refused = _refused(version, cmd)
            try:
                count = _lobby_count(game, seed, copy.deepcopy(lobby), refused,
                                     data["options"])
            except SeatUnavailable as exc:
                raise Divergence(version, "recorded_action_rejected",
                                 {"error": exc.code}) from None
            produced = _event_limit(version, cmd, count, seats)
        elif cmd["shell"] in ("abort", "expire"):
            produced = _aborted(version, cmd, group, seats)
        else:
            produced = None
        if produced is not None:
            lobby.apply(produced[0])
            yield version, produced, group, None
            pos += len(group)
            continue
        if cmd["shell"] not in LOBBY_COMMANDS:
            raise Divergence(version, "unknown_shell_command")
        try:
            produced = lobby.decide(cmd)
        except SeatUnavailable as exc:
            raise Divergence(version, "recorded_action_rejected", {"error": exc.code}) from None
        for ev in produced:
            lobby.apply(ev)
            if ev["type"] == "GameAborted":
                seats.aborted = True
        seats.players = [dict(p) for p in lobby.seats]
        state = None
        if produced[-1]["type"] == "GameStarted":
            initial = game.initial(lobby.seats, data["options"])
            setup, state = _either_rule(
                game, lambda only: start(game, initial, Rng(seed, 1), only),
                _setup_logged(group, len(produced)))
            produced = produced + setup
        _check_cap(version, len(produced), seats)
        yield version, produced, group, state
        pos += len(group)
        if state is not None:
            return pos, state
    return pos, None


def _setup_logged(events: list[dict], first: int) -> list[dict]:
    """The logged setup events from index ``first`` of ``events``: up to the first command's
    event (the setup is the rules' own, recorded without a command)."""
    end = first
    while end < len(events) and "cmd" not in events[end]:
        end += 1
    return events[first:end]


def _lobby_count(game, seed: bytes, lobby: Lobby, cmd: dict, options: dict) -> int:
    """How many events the lobby command ``cmd`` appends (``lobby`` is changed): with the
    rules' setup when it starts the game. SeatUnavailable when it is refused."""
    if cmd.get("shell") in ("abort", "expire"):
        return 1
    if cmd.get("shell") not in LOBBY_COMMANDS:
        raise SeatUnavailable("unknown_shell_command", "not a lobby command")
    produced = lobby.decide(cmd)
    if produced[-1]["type"] != "GameStarted":
        return len(produced)
    for ev in produced:
        lobby.apply(ev)
    setup, _ = start(game, game.initial(lobby.seats, options), Rng(seed, 1))
    return len(produced) + len(setup)


def _shell(game, seed: bytes, version: int, cmd: dict, group: list[dict], state: dict,
           seats: Seats) -> tuple[list[dict], dict]:
    """The events a shell command of a started game produces, as the shell could have
    appended them (``service.application.seats``), and the state after them."""
    kind, seat = cmd["shell"], cmd.get("seat")
    if kind in LOBBY_COMMANDS:
        raise Divergence(version, "lobby_command_after_start")
    if kind == "idle":
        return _idle(game, version, group, state, seats), state
    if kind == "event_limit":
        refused = _refused(version, cmd)
        if "shell" not in refused:
            count = len(_decided(game, seed, version, refused, state)[0])
        elif refused["shell"] in ("idle", "abort", "resign"):
            count = 1
        elif refused["shell"] == "forfeit" and seats.policy == "forfeit":
            gone = _forfeiting(version, refused, seats)
            if any(seats.controllers[s] == "left" for s in gone):
                raise Divergence(version, "unknown_shell_command")
            left = forfeit(game, state, gone, Rng(seed, version))
            count = len(gone) + (len(left[0]) if left is not None else 0)
        else:
            raise Divergence(version, "unknown_shell_command")
        return _event_limit(version, cmd, count, seats), state
    if kind == "abort":
        if seats.moved:
            raise Divergence(version, "abort_after_start")
        return _aborted(version, cmd, group, seats), state
    if kind == "forfeit":
        seats.moved = True
        return _forfeit(game, seed, version, _forfeiting(version, cmd, seats), group, state,
                        seats)
    if kind != "resign" or type(seat) is not int or not 0 <= seat < len(seats.controllers):
        raise Divergence(version, "unknown_shell_command")
    seats.moved = True
    # a resign: a human seat, under a clock that does not forfeit it
    if seats.controllers[seat] != "human" or seats.policy == "forfeit":
        raise Divergence(version, "resign_not_allowed", {"seat": seat})
    replaced = "auto" if seats.policy == "auto" else \
        f"bot:{seats.clock['bot_level'] if seats.clock else RESIGNED_BOT}"
    seats.controllers[seat] = replaced.partition(":")[0]
    return [event("SeatResigned", {"replaced_by": replaced}, seat)], state


def _forfeiting(version: int, cmd: dict, seats: Seats) -> list[int]:
    """The seats a forfeit's record names (``service.application.seats.forfeit_command``):
    ``seat``, or ``seats`` (two or more, in seat order) for seats whose clocks ran out at
    one instant."""
    n = len(seats.controllers)
    if "seats" in cmd:
        gone = cmd["seats"]
        if "seat" in cmd or not isinstance(gone, list) or len(gone) < 2 or \
                any(type(s) is not int or not 0 <= s < n for s in gone) or \
                gone != sorted(set(gone)):
            raise Divergence(version, "unknown_shell_command")
        return gone
    if type(cmd.get("seat")) is not int or not 0 <= cmd["seat"] < n:
        raise Divergence(version, "unknown_shell_command")
    return [cmd["seat"]]


def _forfeit(game, seed: bytes, version: int, gone: list[int], group: list[dict], state: dict,
             seats: Seats) -> tuple[list[dict], dict]:
    """A forfeit's events: a clock that forfeits, seats still in the game, run out (several
    at one instant) or one resigned by its human."""
    reason = group[0].get("data", {}).get("reason")
    for seat in gone:
        if seats.policy != "forfeit" or seats.controllers[seat] == "left" or \
                reason not in ("timeout", "resigned") or \
                (reason == "resigned" and (seats.controllers[seat] != "human" or len(gone) > 1)):
            raise Divergence(version, "forfeit_not_allowed", {"seat": seat})
    for seat in gone:
        seats.controllers[seat] = "left"
    left = forfeit(game, state, gone, Rng(seed, version))
    markers = [event("SeatForfeited", {"reason": reason, "game_continues": left is not None},
                     seat) for seat in gone]
    if left is None:
        seats.ended = {"reason": f"forfeit_{reason}", "seats": list(gone)}
        return markers, state
    return markers + left[0], left[1]


def _timed_out(game, state: dict, version: int, cmd: dict, seats: Seats) -> None:
    """A command flagged ``timeout``: the clock played it (``service.application.autoplay``),
    so the game has a clock that does not forfeit, and a seat played by its human or the
    automatic move got the game's own timeout move."""
    seat = cmd.get("seat")
    if seats.policy not in ("auto", "bot") or type(seat) is not int \
            or not 0 <= seat < len(seats.controllers):
        raise Divergence(version, "timeout_not_allowed")
    if seats.policy == "auto" and seats.controllers[seat] in ("human", "auto") and \
            cmd.get("action") != game.timeout_action(state, seat):
        raise Divergence(version, "timeout_not_allowed", {"expected": "the timeout move"})


def _commands(game, seed: bytes, events: list[dict], state: dict | None, seats: Seats):
    """Re-derive ``events`` (an export's log) command by command from the seed and each
    command's record, starting from ``state`` (the game's initial state, mutated only while
    a fork's inherited events are folded in, :func:`_inherited`; None for a table that
    starts with its last join):
    yields ``(first version, events derived, events logged, state after them)``; ``seats``
    follows the shell's side (who controls each seat, an abort, a forfeit that ended it)."""
    forked = events[0]["data"].get("forked_from")
    if state is None:
        pos, state = yield from _lobby(game, seed, events, seats)
        if state is None:
            if pos < len(events):
                raise Divergence(events[pos]["version"], "events_after_end")
            return
        seats.start(seats.players)
    elif forked:
        upto = forked["version"]
        seats.start(seats.players)
        state = _inherited(game, events[:upto], state, seats)
        yield 2, [], [], state  # checked there, against the parent's draws as logged
        pos = upto
    else:
        seats.start(seats.players)
        initial = state
        setup, state = _either_rule(game, lambda only: start(game, initial, Rng(seed, 1), only),
                                    _setup_logged(events, 1))
        yield 2, setup, events[1:1 + len(setup)], state
        pos = 1 + len(setup)
    seats.last_at = events[pos - 1].get("at")
    for version, cmd, group in _groups(events, pos):
        if seats.over(game, state):
            raise Divergence(version, "events_after_end")
        if not isinstance(cmd, dict):
            raise Divergence(version, "missing_command_record")
        flags = {bool(e.get("timeout")) for e in group}
        if len(flags) > 1 or (flags == {True} and "shell" in cmd):
            raise Divergence(version, "timeout_flags_inconsistent")
        if "shell" in cmd:
            produced, state = _shell(game, seed, version, cmd, group, state, seats)
        else:
            if flags == {True}:
                _timed_out(game, state, version, cmd, seats)
            seats.moved = True
            produced, state = _decided(game, seed, version, cmd, state, group)
        if cmd.get("shell") != "event_limit":
            _check_cap(version, len(produced), seats)
        seats.last_at = group[-1].get("at")
        yield version, produced, group, state


def _inherited(game, events: list[dict], state: dict, seats: Seats) -> dict:
    """A fork's inherited events (versions 2 to its ``forked_from`` version) into ``state``.
    Their random draws came from the parent's seed, which the fork's export does not hold: a
    command that drew from its stream (a shuffle, a deal) is checked legal and folded in as
    logged, proven by the signature or the parent's own export. Every other rules command
    is decided again and must give exactly the events logged (a card revealed from a logged
    deck, a score), so the seed-less part cannot contradict itself."""
    for version, cmd, group in _groups(events, 1):
        rules_events = [e for e in group if e["type"] not in SHELL_EVENTS]
        if isinstance(cmd, dict) and "shell" not in cmd:
            streams = []

            def derive(only, cmd=cmd, version=version, state=state):
                streams.append(Rng(bytes(32), version))  # any seed: whether it is drawn from
                return command(game, state, cmd["seat"], cmd["action"], streams[-1], only=only)
            try:
                produced, after = _either_rule(game, derive, group)
            except (IllegalAction, NotYourTurn) as exc:
                raise Divergence(version, "recorded_action_rejected",
                                 {"error": exc.reason if isinstance(exc, NotYourTurn)
                                  else exc.code}) from None
            if all(stream.draws == 0 for stream in streams):
                _compare(produced, group, version)
                state = after
                rules_events = []
        try:
            fold(game, state, rules_events)
            for ev in group:
                seats.follow(ev)
        except Exception as exc:  # noqa: BLE001
            raise Divergence(version, "inherited_events_do_not_replay",
                             {"error": str(exc)}) from None
    return state


def _either_rule(game, derive: Callable[[Any], tuple[list[dict], Any]],
                 logged: list[dict] | None) -> tuple[list[dict], Any]:
    """``derive(None)``: events and state by the game's forced-move rule (``only_action``:
    a single choice is played at once only where every seat can tell it is single). An
    export may hold commands recorded by the rule that forces every single choice
    (``single_action``): where the ``logged`` events are what that rule gives and not what
    this one gives, those are the command's."""
    produced = derive(None)
    if logged is None or type(game).only_action is Game.only_action or \
            [_same(e) for e in produced[0]] == [_same(e) for e in logged]:
        return produced
    earlier = derive(game.single_action)
    return earlier if [_same(e) for e in earlier[0]] == [_same(e) for e in logged] \
        else produced


def _decided(game, seed: bytes, version: int, cmd: dict, state: dict,
             logged: list[dict] | None = None) -> tuple[list[dict], dict]:
    """The events of the recorded rules command ``cmd`` at ``version``, and the state after
    them (``state`` is not changed); by ``single_action``'s forced-move rule where only that
    gives the ``logged`` events (:func:`_either_rule`)."""
    try:
        return _either_rule(game, lambda only: command(
            game, state, cmd["seat"], cmd["action"], Rng(seed, version), only=only), logged)
    except (IllegalAction, NotYourTurn) as exc:
        raise Divergence(version, "recorded_action_rejected",
                         {"error": exc.reason if isinstance(exc, NotYourTurn)
                          else exc.code}) from None


def rederive(doc: dict) -> list[dict]:
    """Every event after the creation event of the export ``doc``, derived again from its seed
    and command records (shell events as logged). Raises :class:`Divergence` when a recorded
    command is refused."""
    game = GAMES[doc["type"]]
    events = doc["events"]
    data = events[0]["data"]
    state = (None if any(unfilled(p) for p in data["players"])
             else game.initial(data["players"], data["options"]))
    seats = _seats(events[0])
    out: list[dict] = []
    for _version, produced, _logged, _state in _commands(game, bytes.fromhex(doc["seed"]),
                                                         events, state, seats):
        out.extend(produced)
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m service.replay")
    parser.add_argument("command", choices=["verify"])
    parser.add_argument("export", metavar="EXPORT.json")
    parser.add_argument("--key", action="append", default=[], help="a server's Ed25519 "
                        "public key (PEM file or base64): the export must be signed by it")
    parser.add_argument("--parent", metavar="PARENT.json", help="a fork's parent's export: "
                        "the fork's copied events must be its own, and it must verify")
    args = parser.parse_args(argv)
    try:
        keys = [signing.read_public_key(k) for k in args.key]
    except ValueError as exc:
        return _cannot(f"--key: not an Ed25519 public key (a PEM file or base64): {exc}")
    docs = []
    for path in [args.export] + ([args.parent] if args.parent else []):
        try:  # read as ``cartouche verify`` reads it (``cli.read_json``): UTF-8, no BOM
            with open(path, encoding="utf-8") as fh:
                docs.append(json.load(fh))
        except OSError as exc:
            return _cannot(f"{path}: {exc.strerror or exc}")
        except UnicodeDecodeError:
            return _cannot(f"{path}: not a UTF-8 text file")
        except (ValueError, RecursionError) as exc:
            return _cannot(f"{path}: not JSON ({exc})")
    outcome = verify(docs[0], keys or None)
    if outcome["valid"] and args.parent:
        outcome = against_parent(docs[0], docs[1], keys or None) or outcome
    print(json.dumps(outcome, indent=2))
    return 0 if outcome["valid"] else 1


def _cannot(message: str) -> int:
    """A check that could not start: one line on stderr and exit status 1, as ``cartouche
    verify`` answers it."""
    print(f"error: {message}", file=sys.stderr)
    return 1


if __name__ == "__main__":
    sys.exit(main())
