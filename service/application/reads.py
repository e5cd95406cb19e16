"""Read models: a caller's view of a game, its log as the caller may see it, its legal actions,
and the list of games. Nothing here writes."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Sequence

import orjson

from .. import clock as clock_mod
from ..engine import ALL, Viewer, visible
from ..replay import SHELL_EVENTS
from ..store.archive import OVER
from ..store.events import EventStore
from ..timestamps import ms, rfc3339
from .model import Table, unfilled


def _public_options(created: dict) -> dict:
    """Options without the setup overrides (they fix hidden orders until the end)."""
    return {k: v for k, v in created["options"].items() if k != "setup"}


def _seat(seat: int, entry: dict, controller: str) -> dict:
    """A seat as views and the lobby show it: who holds it (``player`` for a player's seat),
    or for a table's unfilled seat ``open`` / ``invited``."""
    out = {"seat": seat, "name": entry.get("name"), "bot": entry.get("bot"),
           "controller": controller}
    for key in ("player", "invited"):
        if entry.get(key):
            out[key] = entry[key]
    return out


def _shown_version(table: Table, viewer: Viewer, withheld_from: int | None) -> int:
    """:meth:`Reads.shown_version`, the game's ``withheld_from`` given."""
    return table.version if withheld_from is None or viewer == ALL else withheld_from - 1


@dataclass(eq=False)
class Reads:
    store: EventStore
    now_ms: Callable[[], int]
    #: a game over whose secrets must stay hidden a while (a duplicate deal still being played
    #: elsewhere): the first version not served (the command that ended it), its earlier
    #: events served as while it ran; None for any other game
    withheld_from: Callable[[Table], int | None] = lambda table: None
    #: a game loaded by id (the list loads a withheld game, to ask the above)
    load: Callable[[str], Table] | None = None
    #: of the games over of a page of the list (by id, with their tournament's), those
    #: withheld (``GameService.withheld_among``)
    withheld_among: Callable[[dict[str, str]], set[str]] = lambda games: set()

    def shown_version(self, table: Table, viewer: Viewer) -> int:
        """The game's version as ``viewer`` is told it: for a withheld game, but to a platform
        key, the last version before the command that ended it (how many events that command
        appended depends on what it revealed)."""
        return _shown_version(table, viewer, self.withheld_from(table) if table.over else None)

    def served_events(self, table: Table, envelopes: Sequence[dict], first_version: int,
                      viewer: Viewer) -> list[dict]:
        """Envelopes numbered from ``first_version`` as ``viewer`` may see them now."""
        return self._served(table, envelopes, first_version, viewer,
                            self.withheld_from(table) if table.over else None)

    def _served(self, table: Table, envelopes: Sequence[dict], first_version: int,
                viewer: Viewer, withheld_from: int | None) -> list[dict]:
        """:meth:`served_events`, the game's :attr:`withheld_from` given."""
        out = []
        over = table.over and withheld_from is None
        # a platform key reads everything (webhooks deliver what it reads)
        cutoff = None if viewer == ALL else withheld_from
        for offset, env in enumerate(envelopes):
            if cutoff is not None and first_version + offset >= cutoff:
                break
            ev = {"type": env["type"], "seat": env.get("seat"), "data": env.get("data", {})}
            if env["type"] in SHELL_EVENTS:
                shown = ev  # about seats and the table: public
            else:
                shown = visible(table.game, ev, viewer, over)
            if shown is None:
                continue
            served = {"version": first_version + offset, "type": shown["type"],
                      "at": env.get("at"), "seat": shown.get("seat"),
                      "data": shown.get("data", {})}
            for flag in ("forced", "timeout"):
                if env.get(flag):
                    served[flag] = True
            out.append(served)
        return out

    def events(self, table: Table, viewer: Viewer, after: int,
               limit: int) -> tuple[list[dict], int]:
        """Up to ``limit`` log entries after ``after`` as ``viewer`` may see them, and the last
        version read (private events are skipped, so fewer may be served; a withheld game's
        are read up to the command that ended it, so a reader paging on finds that command
        once the game is no longer withheld)."""
        withheld_from = self.withheld_from(table) if table.over else None
        upto = _shown_version(table, viewer, withheld_from)
        stored = self.store.read(table.id, after, upto, count=limit)
        if not stored:
            return [], after
        served = self._served(table, [s.envelope for s in stored], stored[0].version, viewer,
                              withheld_from)
        return served, stored[-1].version

    def reached_ms(self, table: Table) -> int:
        """When ``table``'s version was written: its last event's ``at``."""
        stored = self.store.read(table.id, table.version - 1, table.version)
        return ms(stored[0].envelope["at"])

    def view(self, table: Table, viewer: Viewer, now_ms: int | None = None) -> dict:
        game, state = table.game, table.state
        over = table.over
        # a game over that is withheld shows neither its final state nor its result (both
        # reveal everything) until the rest of its deal is over
        withheld_from = self.withheld_from(table) if over else None
        withheld = withheld_from is not None
        created = table.created["data"]
        clock, clock_state = table.clock, table.shell.clock
        now = self.now_ms() if now_ms is None else now_ms

        def deadline(seat):
            # no clock state: a version inside the command that started the game (its setup),
            # before the clock that command started
            if not clock or clock_state is None:
                return None
            at = clock_mod.deadline(clock, clock_state, seat)
            return rfc3339(at) if at is not None else None

        options = created["options"] if over or viewer == ALL else _public_options(created)
        if created.get("rated"):
            options = {**options, "rated": True}
        view = {
            "id": table.id,
            "type": game.type_id,
            "status": table.status,
            "version": _shown_version(table, viewer, withheld_from),
            "created_at": table.created.get("at"),
            "players": [_seat(i, p, table.shell.controllers[i].shown)
                        for i, p in enumerate(table.players)],
            "you": viewer if isinstance(viewer, int) else None,
            "options": {**options, "clock": clock} if clock else options,
            "seed": created["seed"],
            "seed_commitment": created["seed_commitment"],
            "setup": created["setup"],
            "awaiting": [{"seat": s, "deadline_at": deadline(s)} for s in table.awaiting()],
            # (a withheld game's banks would tell how long its ending decisions took)
            "clock": None if not clock else {
                "remaining_ms": (clock_mod.remaining(clock, clock_state, now)
                                 if clock_state is not None and
                                 not (withheld and viewer != ALL) else None),
                "per_decision_ms": clock["per_decision_ms"],
                "increment_ms": clock["increment_ms"], "timeout": clock["timeout"]},
            # over (finished or aborted), every secret is public, as in the events and the
            # past states: the last state as the platform sees it, whoever asks
            "state": None if state is None or withheld else
            game.view(state, ALL if over else viewer),
            "result": table.result() if over and not withheld else None,
        }
        if created.get("rematch_of"):
            view["rematch_of"] = created["rematch_of"]
        if over and (rematch := self.store.meta_field(table.id, "rematch")):
            view["rematch"] = rematch
        return view

    @staticmethod
    def legal_actions(table: Table, viewer: Viewer) -> list[dict]:
        """What ``viewer`` may post now: nothing unless its seat is awaited and still played
        by its human (``Table.awaiting_humans``)."""
        if not isinstance(viewer, int) or viewer not in table.awaiting_humans():
            return []
        return table.game.legal_actions(table.state, viewer)

    def list_games(self, game_type: str | None, status: str | None, page: int,
                   per_page: int) -> dict:
        ids, total = self.store.list_ids(game_type, status, (page - 1) * per_page, per_page)
        metas = {game_id: self.store.meta(game_id) for game_id in ids}
        withheld = self.withheld_among({game_id: meta["tournament"]
                                        for game_id, meta in metas.items()
                                        if meta and meta.get("tournament")
                                        and meta["status"] in OVER})
        games = []
        for game_id, meta in metas.items():
            if meta is None:
                continue
            version = int(meta["version"])
            if game_id in withheld and self.load is not None:  # (the list is public)
                version = self.shown_version(self.load(game_id), None)
            entry = {"id": game_id, "type": meta["type"], "status": meta["status"],
                     "version": version, "created_at": rfc3339(int(meta["created_ms"]))}
            if "seats" in meta:  # a table: who sits, what is open, on what options
                seats = orjson.loads(meta["seats"])
                entry["open_seats"] = sum(1 for p in seats if unfilled(p))
                entry["seats"] = [_seat(i, p, "open" if unfilled(p) else
                                        "bot" if p.get("bot") else "human")
                                  for i, p in enumerate(seats)]
                entry["options"] = orjson.loads(meta["options"])
            games.append(entry)
        return {"games": games, "page": page, "per_page": per_page, "total": total}
