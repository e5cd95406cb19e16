"""A finished game's export (seed revealed, signed by the server's key when it has one:
``service.signing``), and forks: a new game continuing from a version of another."""

from __future__ import annotations

import secrets
from dataclasses import dataclass
from typing import TYPE_CHECKING, Callable

from .. import clock as clock_mod
from ..engine import commitment
from ..signing import Signer

if TYPE_CHECKING:
    from .model import Table
from ..store.events import EventStore
from ..timestamps import rfc3339
from .creation import Creation, new_game, stored_size
from .errors import GameNotFinished, InvalidRequest, NotFound
from .loading import Loader


@dataclass(eq=False)
class Exports:
    store: EventStore
    loader: Loader
    creation: Creation
    now_ms: Callable[[], int]
    #: signs every export (None: exports are not signed)
    signer: Signer | None = None
    #: a game over whose secrets must stay hidden a while (``Reads.withheld``): no export, no
    #: fork (both would reveal them)
    withheld: Callable[[Table], bool] = lambda table: False

    def export(self, game_id: str) -> dict:
        """The self-contained record of a finished (or aborted) game, seed revealed, signed."""
        from ..replay import export_document

        table = self.loader.load(game_id)
        if not table.over or self.withheld(table):
            raise GameNotFinished()
        stored = self.store.read(game_id, 0, table.version)
        doc = export_document(table.meta, table.players, self.loader.seed(game_id),
                              [(s.version, s.envelope) for s in stored], game_id,
                              table.status, table.result())
        return self.signer.sign(doc) if self.signer is not None else doc

    def fork(self, game_id: str, at: int, charge: Callable[[int], None] | None = None) -> dict:
        """A new game continuing from version ``at`` of this one, with new seat tokens and a
        new seed for every draw after ``at`` (the copied events keep their parent's draws).
        ``charge``: called with the bytes the new game stores just before it is written; it
        raises to refuse it."""
        parent = self.loader.load(game_id)
        if parent.over and self.withheld(parent):
            raise GameNotFinished()
        if not 1 <= at <= parent.version:
            raise NotFound.version(at)
        cap = self.creation.max_events
        if cap and at > cap - 1:
            raise InvalidRequest("fork_too_long",
                                 f"version {at} is past this server's cap of {cap} events a "
                                 "game", {"version": at, "max_events": cap})
        stored = self.store.read(game_id, 0, min(at + 1, parent.version))
        boundary = (at == parent.version or at == parent.meta["created_version"]
                    or "cmd" in stored[at].envelope)
        if not boundary:
            raise InvalidRequest("not_a_command_boundary",
                                 f"version {at} is inside a command; fork at a version that "
                                 "ends one", {"version": at})
        table = self.loader.load(game_id, at)
        if table.state is None:
            raise InvalidRequest("game_not_started",
                                 f"version {at} is before the table's game started",
                                 {"version": at})
        seed = secrets.token_bytes(32)
        now = self.now_ms()
        created = dict(parent.created)
        data = dict(created["data"])
        # a table's fork starts with its seats as they were filled (the lobby is inherited),
        # by name: whoever forks plays them with the new seat tokens, not its players, whose
        # games and counts a fork is not
        data["players"] = [{k: v for k, v in p.items() if k != "player"} for p in table.players]
        data.pop("on_decline", None)
        data.pop("rated", None)  # a game continued from another's position is not rated
        data.pop("tournament", None)  # nor a game of its parent's tournament
        data.pop("round", None)
        data.update({"seed_commitment": commitment(seed), "seed": "server", "setup": "custom",
                     "forked_from": {"id": game_id, "version": at}})
        data.pop("max_events", None)  # held to this server's limits, like a new game
        data.pop("idle_abort_s", None)
        data.pop("lobby_ttl_s", None)  # a fork is never a table waiting for players
        data.update(self.creation.limits())
        envelopes = [{**created, "data": data, "at": rfc3339(now)}]
        envelopes += [dict(s.envelope) for s in stored[1:at]]
        shell = table.shell
        if table.clock:
            shell = shell._replace(clock=clock_mod.restart(shell.clock, now, table.awaiting()))
        new = new_game(parent.game, envelopes, table.state, shell, seed=seed, now=now,
                       status=table.status)
        if charge is not None:
            charge(stored_size(new))
        self.creation.publish([new])  # told to the listeners, as a creation is (webhooks)
        return new.response
