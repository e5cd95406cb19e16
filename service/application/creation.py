"""Creating games: validating a request, drawing the seed, the creation event and the setup
events, and writing one game or many at once. :func:`new_game` and :meth:`Creation.open` are
shared with forks (``exports.py``)."""

from __future__ import annotations

import secrets
import uuid
from dataclasses import dataclass
from typing import Any, Callable, Sequence

from .. import clock as clock_mod
from ..engine import Game, InvalidOptions, Rng, start
from ..engine.local import creation_event
from ..games import GAMES
from ..store.events import EventStore
from .envelopes import envelope, rfc3339
from .errors import InvalidRequest
from .identity import new_seat_tokens
from .listeners import ListenerBus
from .loading import Loader
from .model import Cached, Shell, Table

#: (game type, players, options, seed hex or None): one game of a creation request
Spec = tuple[str, list[dict], dict, str | None]


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
    def record(self) -> tuple[str, dict[str, str], str, list[dict]]:
        """What ``EventStore.create`` writes."""
        return self.id, self.meta, self.seed, self.envelopes


def new_game(game: Game, envelopes: list[dict], state: dict, shell: Shell, *, seed: bytes,
             now: int, status: str) -> NewGame:
    """A new game from its first envelopes (the creation event first) and the state and shell
    after them: a fresh id and seat tokens, the shell on the last envelope, the meta."""
    created = envelopes[0]["data"]
    game_id = uuid.uuid4().hex[:20]
    tokens, digests = new_seat_tokens(len(created["players"]))
    envelopes[-1]["shell"] = shell.stored()
    meta = {"type": game.type_id, "created_ms": str(now), "tokens": digests, "status": status,
            "created_version": str(len(envelopes))}
    return NewGame(game_id, game, meta, seed.hex(), envelopes, state, shell, now, {
        "id": game_id,
        "version": len(envelopes),
        "seats": [{"seat": i, "name": p["name"], "token": tokens[i]}
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

    def create_many(self, specs: Sequence[Spec]) -> list[dict]:
        """Create every game or none: all are validated and set up first, then written in one
        transaction. Raises InvalidRequest (with ``details.index`` for bulk requests)."""
        prepared = []
        for index, spec in enumerate(specs):
            try:
                prepared.append(self.prepare(*spec))
            except InvalidRequest as exc:
                if len(specs) > 1:
                    exc.details = {"index": index, **exc.details}
                raise
        self.store.create_many([new.record for new in prepared])
        out = []
        for new in prepared:
            table = self.open(new)
            self.bus.notify(table, 1, new.envelopes)
            out.append(new.response)
        return out

    def open(self, new: NewGame) -> Table:
        """A game just written: in the index and this process's cache, its first jobs
        scheduled."""
        self.store.index(new.id, new.game.type_id, new.meta["status"], new.now)
        self.loader.cache.put(new.id, Cached(len(new.envelopes), new.state, new.shell))
        table = self.loader.load(new.id)
        self.scheduler.changed(table)
        return table

    def prepare(self, game_type: str, players: list[dict], options: dict,
                seed_hex: str | None) -> NewGame:
        game = GAMES.get(game_type)
        if game is None:
            raise InvalidRequest("unknown_game_type", f"no game type {game_type!r}",
                                 {"known": sorted(GAMES)})
        if not game.min_players <= len(players) <= game.max_players:
            raise InvalidRequest("invalid_player_count",
                                 f"{game.name} takes {game.min_players} to {game.max_players} "
                                 f"players, not {len(players)}",
                                 {"min": game.min_players, "max": game.max_players})
        from ..engine.bots import available

        for seat, p in enumerate(players):
            if p.get("bot") and not available(game, p["bot"]["level"]):
                raise InvalidRequest("bot_level_unavailable",
                                     f"no {p['bot']['level']} bot for {game.name} yet",
                                     {"seat": seat})
        options = dict(options)
        try:
            clock = clock_mod.normalize(options.pop("clock", None))
            normalized = game.normalize_options(options, players)
        except (clock_mod.ClockError, InvalidOptions) as exc:
            raise InvalidRequest("invalid_options", exc.message,
                                 {"code": exc.code, **exc.details}) from None
        seed = bytes.fromhex(seed_hex) if seed_hex else secrets.token_bytes(32)
        first = creation_event(game, players, normalized, seed,
                               "supplied" if seed_hex else "server")
        first["data"]["clock"] = clock
        setup, state = start(game, game.initial(first["data"]["players"], normalized),
                             Rng(seed, 1))
        events = [first] + setup
        now = self.now_ms()
        at = rfc3339(now)
        over = game.is_over(state)
        shell = Shell.initial(first["data"])
        if shell.clock:
            shell = shell._replace(clock=clock_mod.restart(
                shell.clock, now, [] if over else game.awaiting(state)))
        return new_game(game, [envelope(game, e, at) for e in events], state, shell,
                        seed=seed, now=now, status="finished" if over else "active")
