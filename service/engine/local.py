"""A game played in memory exactly as the server plays it (same events, same random stream).

Used by tests, bots' simulations, benchmarks and replay verification: the store adds only
persistence around the same calls.
"""

from __future__ import annotations

from typing import Sequence

from .game import Action, Event, Game, State, event
from .rng import Rng, commitment
from .runner import command, start


def creation_event(game: Game, players: Sequence[dict], options: dict, seed: bytes,
                   seed_source: str = "server") -> Event:
    """Version 1 of every game: public facts about the table and the seed commitment.

    A seat entry is ``{"name", "bot"}``, with ``"player"`` when a player holds it; a table's
    seat nobody holds yet is ``{"name": null, "bot": null}`` with ``"open": true`` or
    ``"invited": "<player id>"``."""
    return event("GameCreated", {
        "game_type": game.type_id,
        "players": [seat_entry(p) for p in players],
        "options": options,
        "seed_commitment": commitment(seed),
        "seed": seed_source,
        "setup": "custom" if options.get("setup") else "standard",
    })


def seat_entry(player: dict) -> dict:
    """A seat's entry as the creation event and ``GameStarted`` record it."""
    out = {"name": player.get("name"), "bot": player.get("bot")}
    for key in ("player", "invited"):
        if player.get(key) is not None:
            out[key] = player[key]
    if player.get("open"):
        out["open"] = True
    return out


class LocalGame:
    """One game held in memory: ``events`` (version i+1 at index i) and the current ``state``."""

    def __init__(self, game: Game, players: Sequence[dict], options: dict | None,
                 seed: bytes) -> None:
        self.game = game
        self.seed = seed
        players = [dict(p) for p in players]
        normalized = game.normalize_options(dict(options or {}), players)
        self.events: list[Event] = [creation_event(game, players, normalized, seed)]
        setup, state = start(game, game.initial(players, normalized), Rng(seed, 1))
        self.events += setup
        self.state: State = state

    @property
    def version(self) -> int:
        return len(self.events)

    def act(self, seat: int, action: Action) -> list[Event]:
        events, self.state = command(self.game, self.state, seat, action,
                                     Rng(self.seed, self.version + 1))
        self.events += events
        return events

    def awaiting(self) -> list[int]:
        return [] if self.game.is_over(self.state) else self.game.awaiting(self.state)

    def legal(self, seat: int) -> list[Action]:
        return self.game.legal_actions(self.state, seat)
