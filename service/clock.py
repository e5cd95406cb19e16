"""Turn clocks (``options.clock``, docs/design/api.md "Clocks and bots"): pure bookkeeping, no I/O.

A clock is a per-decision limit and/or a Fischer bank (initial + increment per decision), in ms.
Its state travels with the events (the last envelope of every command carries it), so replay and
every process agree on it; the time itself comes from the caller (``now_ms``), which tests inject.

State: ``{"bank": [ms or None per seat], "since": [ms or None per seat]}`` — ``since`` is when the
seat became awaited (None when it is not awaited).
"""

from __future__ import annotations

from typing import Iterable

from .engine import CodedError
from .engine.bots import LEVELS

POLICIES = ("auto", "bot", "forfeit")
MIN_MS, MAX_MS = 100, 7 * 24 * 3600 * 1000


def _ms_schema(low: int) -> dict:
    return {"type": ["integer", "null"], "minimum": low, "maximum": MAX_MS}


#: JSON Schema of ``options.clock`` as :func:`normalize` accepts it; the catalog serves it in
#: every game's options schema (``service.options.served_schema``).
SCHEMA = {
    "type": ["object", "null"],
    "description": "a turn clock: a limit per decision, a Fischer bank (initial_ms, plus "
                   "increment_ms per decision), or both; timeout says what happens to a seat "
                   "that runs out",
    "properties": {
        "per_decision_ms": _ms_schema(MIN_MS),
        "initial_ms": _ms_schema(MIN_MS),
        "increment_ms": {**_ms_schema(0), "default": 0},
        "timeout": {"type": "string", "enum": list(POLICIES), "default": "auto"},
        "bot_level": {"type": "string", "enum": list(LEVELS), "default": "heuristic"},
    },
    "additionalProperties": False,
    # per_decision_ms, initial_ms or both: written as if/else rather than an anyOf of the two,
    # which generated clients read as a union of one-field types (the same JSON Schema)
    "if": {"required": ["per_decision_ms"], "properties": {"per_decision_ms": {"type": "integer"}}},
    "else": {"required": ["initial_ms"], "properties": {"initial_ms": {"type": "integer"}}},
}


class ClockError(CodedError):
    """``options.clock`` is not acceptable (``code``: ``invalid_clock``)."""


def normalize(clock) -> dict | None:
    """Validate ``options.clock``; None when absent."""
    if clock is None:
        return None
    if not isinstance(clock, dict):
        raise ClockError("invalid_clock", "options.clock must be an object")
    allowed = {"per_decision_ms", "initial_ms", "increment_ms", "timeout", "bot_level"}
    unknown = sorted(set(clock) - allowed)
    if unknown:
        raise ClockError("invalid_clock", f"unknown clock fields: {', '.join(unknown)}")

    def ms(name, lo=MIN_MS):
        value = clock.get(name)
        if value is None:
            return None
        if isinstance(value, bool) or not isinstance(value, int) or not lo <= value <= MAX_MS:
            raise ClockError("invalid_clock", f"{name} must be an integer from {lo} to {MAX_MS}")
        return value

    out = {
        "per_decision_ms": ms("per_decision_ms"),
        "initial_ms": ms("initial_ms"),
        "increment_ms": ms("increment_ms", lo=0) or 0,  # null, like absent, is no increment
        "timeout": clock.get("timeout", "auto"),
        "bot_level": clock.get("bot_level", "heuristic"),
    }
    if out["per_decision_ms"] is None and out["initial_ms"] is None:
        raise ClockError("invalid_clock", "a clock needs per_decision_ms or initial_ms")
    if out["timeout"] not in POLICIES:
        raise ClockError("invalid_clock", f"timeout must be one of {', '.join(POLICIES)}")
    if out["bot_level"] not in LEVELS:
        raise ClockError("invalid_clock", f"bot_level must be one of {', '.join(LEVELS)}")
    return out


def initial(clock: dict, n: int) -> dict:
    return {"bank": [clock["initial_ms"]] * n, "since": [None] * n}


def deadline(clock: dict, state: dict, seat: int) -> int | None:
    """When ``seat`` runs out (ms since the epoch), or None when it is not waited for."""
    since = state["since"][seat]
    if since is None:
        return None
    limits = []
    if clock["per_decision_ms"] is not None:
        limits.append(clock["per_decision_ms"])
    if state["bank"][seat] is not None:
        limits.append(state["bank"][seat])
    return since + min(limits)


def advance(clock: dict, state: dict, now: int, before: Iterable[int], after: Iterable[int],
            actors: Iterable[int]) -> dict:
    """The clock after a command at ``now``: ``actors`` made a decision (charged, incremented);
    seats no longer awaited are charged their waiting time; newly awaited seats start waiting."""
    bank, since = list(state["bank"]), list(state["since"])
    before, after, actors = set(before), set(after), set(actors)
    for seat in range(len(bank)):
        acted = seat in actors
        if since[seat] is not None and (acted or seat not in after):
            if bank[seat] is not None:
                bank[seat] = max(0, bank[seat] - max(0, now - since[seat]))
                if acted:
                    bank[seat] += clock["increment_ms"]
            since[seat] = None
        if seat in after and since[seat] is None:
            since[seat] = now
    return {"bank": bank, "since": since}


def restart(state: dict, now: int, awaiting: Iterable[int]) -> dict:
    """The clock with every bank as it is and only the ``awaiting`` seats' decisions running,
    from ``now`` (a new game's first wait; a fork's)."""
    awaiting = set(awaiting)
    return {"bank": list(state["bank"]),
            "since": [now if seat in awaiting else None for seat in range(len(state["bank"]))]}


def remaining(clock: dict, state: dict, now: int) -> list[int | None]:
    """Each seat's time left now: the bank minus the running decision (or the per-decision
    limit when there is no bank), never below 0; None for a seat with no limit running."""
    out = []
    for seat, bank in enumerate(state["bank"]):
        since = state["since"][seat]
        elapsed = max(0, now - since) if since is not None else 0
        if bank is not None:
            out.append(max(0, bank - elapsed))
        else:
            out.append(max(0, clock["per_decision_ms"] - elapsed))
    return out


def overdue(clock: dict, state: dict, now: int, awaiting: Iterable[int]) -> list[int]:
    return [s for s in awaiting if (d := deadline(clock, state, s)) is not None and d <= now]
