"""Exports of finished games and their offline verification.

``verify(export)`` needs nothing but this package's rules and the public RNG: it checks the seed
against its commitment, re-derives every random draw, replays every recorded command through the
rules and compares what it produces with the log, event by event. ``python -m service.replay
verify EXPORT.json`` runs it without a server.
"""

from __future__ import annotations

import json
import sys
from typing import Any, Iterable

from .engine import (IllegalAction, NotYourTurn, Rng, command, commitment, fold, forfeit,
                     start)
from .engine.lobby import LOBBY_EVENTS, Lobby, SeatUnavailable, unfilled
from .engine.local import creation_event
from .games import GAMES

FORMAT = "cartouche-export/1"
#: Events the shell writes about seats and the table; the rules never see them (a table's
#: ``GameStarted`` begins the rules' state: see ``engine.lobby``).
SHELL_EVENTS = frozenset({"SeatResigned", "SeatForfeited", "GameAborted"}) | LOBBY_EVENTS
#: Creation-event fields the shell adds around what the rules decide.
SHELL_CREATED_FIELDS = ("clock", "forked_from", "on_decline", "rematch_of", "rated",
                        "seeks")
#: The shell commands of a table before its game starts (``engine.lobby``).
LOBBY_COMMANDS = frozenset({"join", "leave", "decline"})


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
    def __init__(self, version: int, reason: str, details: dict | None = None) -> None:
        super().__init__(reason)
        self.version = version
        self.reason = reason
        self.details = details or {}


def verify(doc: Any) -> dict:
    """``{"valid": true, "checked": N}`` or ``{"valid": false, "version", "reason", "details"}``."""
    try:
        checked = _verify(doc)
    except Divergence as exc:
        return {"valid": False, "version": exc.version, "reason": exc.reason,
                "details": exc.details}
    return {"valid": True, "version": None, "reason": None, "details": {"checked": checked}}


def _compare(expected: Iterable[dict], got: list[dict], first_version: int) -> None:
    expected = list(expected)
    for i, (want, have) in enumerate(zip(expected, got)):
        if _same(want) != _same(have):
            raise Divergence(first_version + i, "event_differs",
                             {"expected": _same(want), "logged": _same(have)})
    if len(expected) != len(got):
        raise Divergence(first_version + min(len(expected), len(got)), "event_count_differs",
                         {"expected": len(expected), "logged": len(got)})


def _verify(doc: Any) -> int:
    if not isinstance(doc, dict) or doc.get("format") != FORMAT:
        raise Divergence(0, "not_an_export", {"format": FORMAT})
    game = GAMES.get(doc.get("type"))
    if game is None:
        raise Divergence(0, "unknown_game_type")
    events = doc.get("events")
    if not isinstance(events, list) or not events:
        raise Divergence(0, "no_events")
    for i, ev in enumerate(events):
        if not isinstance(ev, dict) or ev.get("version") != i + 1:
            raise Divergence(i + 1, "versions_not_dense")
    try:
        seed = bytes.fromhex(doc["seed"])
    except (KeyError, TypeError, ValueError):
        raise Divergence(1, "seed_missing") from None
    if commitment(seed) != doc.get("seed_commitment") or \
            events[0]["data"].get("seed_commitment") != doc.get("seed_commitment"):
        raise Divergence(1, "seed_commitment_mismatch")
    created = events[0]
    if created["type"] != "GameCreated":
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
    state = None if any(unfilled(p) for p in players) else game.initial(players, normalized)
    for version, produced, logged, state in _commands(game, seed, events, state):
        _compare(produced, logged, version)
    result = doc.get("result")
    if state is not None and game.is_over(state) and result is not None and result != game.result(state):
        raise Divergence(len(events), "result_differs",
                         {"expected": game.result(state), "logged": result})
    return len(events)


def _groups(events: list[dict], pos: int):
    """``(version, cmd, events)`` of each command from index ``pos`` on."""
    while pos < len(events):
        end = pos + 1
        while end < len(events) and "cmd" not in events[end]:
            end += 1
        yield events[pos]["version"], events[pos].get("cmd"), events[pos:end]
        pos = end


def _lobby(game, seed: bytes, events: list[dict]):
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
        if cmd["shell"] not in LOBBY_COMMANDS:  # an abort or an expiry: as logged
            if any(e["type"] != "GameAborted" for e in group):
                raise Divergence(version, "shell_command_with_game_events")
            for ev in group:
                lobby.apply(ev)
            yield version, group, group, None
            pos += len(group)
            continue
        try:
            produced = lobby.decide(cmd)
        except SeatUnavailable as exc:
            raise Divergence(version, "recorded_action_rejected", {"error": exc.code}) from None
        for ev in produced:
            lobby.apply(ev)
        state = None
        if produced[-1]["type"] == "GameStarted":
            setup, state = start(game, game.initial(lobby.seats, data["options"]),
                                 Rng(seed, 1))
            produced = produced + setup
        yield version, produced, group, state
        pos += len(group)
        if state is not None:
            return pos, state
    return pos, None


def _commands(game, seed: bytes, events: list[dict], state: dict | None):
    """Re-derive ``events`` (an export's log) command by command from the seed and each
    command's record, starting from ``state`` (the game's initial state, mutated only while
    inherited events are folded in; None for a table that starts with its last join):
    yields ``(first version, events derived, events logged, state after them)``."""
    forked = events[0]["data"].get("forked_from")
    if state is None:
        pos, state = yield from _lobby(game, seed, events)
        if state is None:
            if pos < len(events):
                raise Divergence(events[pos]["version"], "events_after_end")
            return
    elif forked:
        # Inherited events came from the parent's seed: replayed, not re-derived.
        upto = forked["version"]
        try:
            fold(game, state, [e for e in events[1:upto] if e["type"] not in SHELL_EVENTS])
        except Exception as exc:  # noqa: BLE001
            raise Divergence(2, "inherited_events_do_not_replay", {"error": str(exc)}) from None
        pos = upto
    else:
        setup, state = start(game, state, Rng(seed, 1))
        yield 2, setup, events[1:1 + len(setup)], state
        pos = 1 + len(setup)
    for version, cmd, group in _groups(events, pos):
        if not isinstance(cmd, dict):
            raise Divergence(version, "missing_command_record")
        if "shell" in cmd:
            if cmd["shell"] in LOBBY_COMMANDS:
                raise Divergence(version, "lobby_command_after_start")
            if cmd["shell"] == "forfeit" and len(group) > 1:
                left = forfeit(game, state, cmd["seat"], Rng(seed, version))
                produced, state = left if left is not None else ([], state)
                yield version, [group[0]] + produced, group, state
            elif any(e["type"] not in SHELL_EVENTS for e in group):
                raise Divergence(version, "shell_command_with_game_events")
            else:
                yield version, group, group, state
        else:
            try:
                produced, state = command(game, state, cmd["seat"], cmd["action"],
                                          Rng(seed, version))
            except (IllegalAction, NotYourTurn) as exc:
                raise Divergence(version, "recorded_action_rejected",
                                 {"error": exc.reason if isinstance(exc, NotYourTurn)
                                  else exc.code}) from None
            yield version, produced, group, state


def rederive(doc: dict) -> list[dict]:
    """Every event after the creation event of the export ``doc``, derived again from its seed
    and command records (shell events as logged). Raises :class:`Divergence` when a recorded
    command is refused."""
    game = GAMES[doc["type"]]
    events = doc["events"]
    data = events[0]["data"]
    state = (None if any(unfilled(p) for p in data["players"])
             else game.initial(data["players"], data["options"]))
    out: list[dict] = []
    for _version, produced, _logged, _state in _commands(game, bytes.fromhex(doc["seed"]),
                                                         events, state):
        out.extend(produced)
    return out


def main(argv: list[str] | None = None) -> int:
    args = argv if argv is not None else sys.argv[1:]
    if len(args) != 2 or args[0] != "verify":
        print("usage: python -m service.replay verify EXPORT.json", file=sys.stderr)
        return 2
    with open(args[1]) as fh:
        outcome = verify(json.load(fh))
    print(json.dumps(outcome, indent=2))
    return 0 if outcome["valid"] else 1


if __name__ == "__main__":
    sys.exit(main())
