"""Offline verification of a tournament's export (``GET /v1/tournaments/{id}/export``), as
``service.replay.verify`` does a game's: given keys, the export's signature first, then every
game's export verified on its own (its signature too); the tournament's events decided again
by the pure ``engine.tournament`` — each round's pairing, each game recorded, the end — against
the games: each game of a round names
the tournament and the round in its creation event and seats the paired participants in order,
with the tournament's type and options; the games of a deal of a duplicate tournament share one
seed; each recorded result is the game's own (its resigned and forfeited seats last where
the tournament says ``quitters: "last"``); and the standings, the final event's and the
export's, are what the results give. Not proven by re-deriving, only by the signature: the
participants' ratings at creation (the last tie-break and the Swiss order before any points),
which the server read from its store, its name and times, and the order it recorded a round's
games in.
"""

from __future__ import annotations

from typing import Any, Callable, Sequence

from . import clock as clock_mod
from . import signing
from .replay import MALFORMED
from .engine.game import CodedError, fields_detail
from .engine.tournament import Tournament
from .games import GAMES

FORMAT = "cartouche-tournament"
#: A game's events by which a seat leaves it (its player resigned, or forfeited on time).
QUITTING = frozenset({"SeatResigned", "SeatForfeited"})
FIELDS = frozenset({"format", "id", "events", "standings", "games", "signature"})


class Refused(Exception):
    def __init__(self, index: int | None, reason: str, details: dict | None = None) -> None:
        super().__init__(reason)
        self.index, self.reason, self.details = index, reason, details or {}


def verify_tournament(doc: dict, keys: Sequence[Any] | None,
                      tick: Callable[[], None], verify_game: Callable[..., dict]) -> dict:
    """The verdict in the shape of a game's (``version``: the index of the first tournament
    event that diverges, 1-based; None for the document as a whole)."""
    try:
        checked = _verify(doc, keys, tick, verify_game)
    except Refused as exc:
        return {"valid": False, "version": exc.index, "reason": exc.reason,
                "details": exc.details}
    except MALFORMED as exc:
        return {"valid": False, "version": None, "reason": "malformed_export",
                "details": {"error": type(exc).__name__}}
    return {"valid": True, "version": None, "reason": None,
            "details": {"checked": checked, "games": len(doc["games"]),
                        "signature": "valid" if keys is not None else "unchecked"}}


def _verify(doc: dict, keys, tick, verify_game) -> int:
    unknown = sorted(set(doc) - FIELDS)
    if unknown:
        raise Refused(None, "unknown_field",
                      fields_detail(unknown[0][:64], "not a field of the format"))
    if keys is not None:
        refused = signing.check(doc, keys)
        if refused is not None:
            raise Refused(None, refused)
    games = {}
    for g in doc["games"]:
        verdict = verify_game(g, keys, tick)
        if not verdict["valid"]:
            raise Refused(None, "game_invalid", {"game": str(g.get("id"))[:64], **verdict})
        games[g["id"]] = g
    events = doc["events"]
    if not events or events[0]["type"] != "TournamentCreated":
        raise Refused(1, "first_event_not_creation")
    t = Tournament.of(events[:1])
    used: set[str] = set()
    seeds: dict[tuple[int, int], str] = {}
    for index, ev in enumerate(events[1:], start=2):
        if ev["type"] == "TournamentFinished" and t.ends() and \
                ev["data"] != {"standings": t.standings()}:
            raise Refused(index, "standings_differ", {"expected": t.standings()})
        try:
            t.check(ev)
        except CodedError as exc:
            raise Refused(index, exc.code, exc.details) from None
        if ev["type"] == "RoundPaired":
            for g in ev["data"]["games"]:
                _check_game(index, doc["id"], t, ev["data"]["number"], g, games, seeds)
                used.add(g["id"])
        elif ev["type"] == "GameRecorded":
            game = games[ev["data"]["id"]]
            ranks = game["result"]["ranks"] if game["status"] == "finished" else None
            if ranks is not None:
                ranks = t.game_ranks(ranks, {e["seat"] for e in game["events"]
                                             if e["type"] in QUITTING})
            if ranks != ev["data"]["ranks"]:
                raise Refused(index, "result_differs", {"game": game["id"],
                                                        "expected": ranks,
                                                        "logged": ev["data"]["ranks"]})
        t.apply(ev)
    if not t.finished:
        raise Refused(len(events), "not_finished")
    if set(games) != used:
        raise Refused(None, "games_differ", {"unpaired": sorted(set(games) - used)[:10]})
    if doc["standings"] != t.standings():
        raise Refused(None, "standings_differ", {"expected": t.standings()})
    return len(events)


def _settings(config: dict) -> dict:
    """The options, clock and ``rated`` every game of the tournament ``config`` records in its
    creation event, as the server derives them from the tournament's options (the game's own
    normalized by the game; ``application.creation.Settings``)."""
    options = dict(config["options"])
    rated = bool(options.pop("rated", False))
    clock = clock_mod.normalize(options.pop("clock", None))
    game = GAMES[config["type"]]
    return {"options": game.normalize_options(options, [{}] * config["seats_per_game"]),
            "clock": clock, "rated": rated}


def _check_game(index: int, tid: str, t: Tournament, number: int, paired: dict,
                games: dict, seeds: dict) -> None:
    game = games.get(paired["id"])
    if game is None:
        raise Refused(index, "game_missing", {"game": paired["id"]})
    created = game["events"][0]["data"]
    seats = [p.get("player") for p in created["players"]]
    config = t.config
    try:
        settings = _settings(config)
    except CodedError as exc:  # options no game takes (InvalidOptions, ClockError)
        raise Refused(index, "options_rejected", {"error": exc.message}) from None
    expected = {"tournament": tid, "round": number, "seats": paired["seats"],
                "type": config["type"], **settings}
    have = {"tournament": created.get("tournament"), "round": created.get("round"),
            "seats": seats, "type": game["type"], "options": created.get("options"),
            "clock": created.get("clock"), "rated": bool(created.get("rated"))}
    if have != expected:
        raise Refused(index, "game_differs", {"game": game["id"], "expected": expected,
                                              "logged": have})
    if config["duplicate"]:
        deal = (number, paired["deal"])
        if seeds.setdefault(deal, game["seed"]) != game["seed"]:
            raise Refused(index, "deal_seeds_differ", {"game": game["id"]})
