"""What each player hears about the games it plays: one listener on the bus turns every append
into notifications on the players' streams (``store.players``), and keeps each player's list of
games and counts per rating type (``Game.rating_type``: the game type, or a mode rated apart).

- ``invitation {"game_id", "from"}``: a table reserved a seat for the player;
- ``seek_matched {"seek_id", "game_id"}``: the player's seek was matched into a new game (its
  creation event names the seek of each seat: ``seeks``);
- ``game_start {"game_id", "seat", "type"}``: a game the player holds a seat of began (at
  creation, or with the join that filled the last seat);
- ``your_turn {"game_id", "seat", "version", "deadline_at"}``: once per decision: the seat is
  awaited after a command and was not before it, or it has just acted and is awaited again;
  in version order per seat (``Batch.notify_turn``: a late listener's older one is dropped);
- ``game_finish {"game_id", "status", "result"}``: the game ended (or was aborted); for a game
  of a tournament's duplicate deal, once the tournament records the deal, every rotation over
  (:func:`tell_finished`, called by ``Tournaments.advance``): a rotation's result would tell
  the seats still playing the deal how it goes.

Built-in bot players get no notifications (the server plays them) but are counted. A game of a
tournament is counted when the tournament records it (:func:`count_finished`, called by
``Tournaments.advance``), not at its end: a rotation of a duplicate deal ends while the others
are still played, and its counts would tell them who won it.
"""

from __future__ import annotations

from collections.abc import Callable

from .. import clock as clock_mod
from ..store.players import Batch, PlayerStore
from ..timestamps import rfc3339
from .model import Table
from .players import bot_level
from .ratings import final_ranks


def served_notice(kind: str, data: dict) -> dict:
    """A stored notice's data as served. Player streams keep notices written by older servers,
    whose ``your_turn`` names its deadline ``deadline``; it is served as ``deadline_at``, the
    name of every point in time on the wire."""
    if kind == "your_turn" and "deadline" in data:
        data = {**{k: v for k, v in data.items() if k != "deadline"},
                "deadline_at": data["deadline"]}
    return data


def _deadline(table: Table, seat: int) -> str | None:
    if not table.clock or table.shell.clock is None:
        return None
    at = clock_mod.deadline(table.clock, table.shell.clock, seat)
    return rfc3339(at) if at is not None else None


def count_finished(out: Batch, table: Table) -> None:
    """Count a finished game in its players' profiles: one game for each player (holding one
    seat or several), a win for a player holding a seat ranked first as ratings rank it
    (:func:`final_ranks`: a seat resigned or forfeited below every seat that played on, so a
    bot that won a seat its player left wins nothing for it, and the player it left wins)."""
    if table.status != "finished":
        return
    winners = {s for s, rank in enumerate(final_ranks(table)) if rank == 1}
    counted_as = table.game.rating_type(table.created["data"]["options"])
    holders = {i: p["player"] for i, p in enumerate(table.players) if p.get("player")}
    for player in set(holders.values()):
        out.count_finish(player, counted_as, any(
            seat in winners for seat, held in holders.items() if held == player))


def tell_finished(out: Batch, table: Table) -> None:
    """Tell the players of ``table`` (over) it ended, with its result."""
    holders = {p["player"] for p in table.players if p.get("player")}
    invited = {p["invited"] for p in table.players if p.get("invited")}
    for player in holders | invited:
        PlayerNotices._tell(out, player, "game_finish", {
            "game_id": table.id, "status": table.status, "result": table.result()})


def _has_accounts(table: Table) -> bool:
    """Whether a seat of ``table`` is held by, or reserved for, a player account."""
    for p in table.players:
        if p.get("player") or p.get("invited"):
            return True
    return False


class PlayerNotices:
    wants_previous = True

    def __init__(self, store: PlayerStore,
                 of_duplicate_deal: Callable[[Table], bool] = lambda table: False) -> None:
        self.store = store
        #: a game of a tournament's duplicate deal, whose end is told once the deal is over
        #: (``GameService.of_duplicate_deal``)
        self.of_duplicate_deal = of_duplicate_deal

    def __call__(self, table: Table, first_version: int, envelopes: list[dict],
                 previous: Table | None = None) -> None:
        if not _has_accounts(table) and (previous is None or not _has_accounts(previous)):
            return  # a game of anonymous seats only: nobody to tell, nothing to count
        batch = self.store.batch()
        self._collect(batch, table, envelopes, previous)
        batch.send()

    def _collect(self, out: Batch, table: Table, envelopes: list[dict],
                 previous: Table | None) -> None:
        holders = {i: p["player"] for i, p in enumerate(table.players) if p.get("player")}
        if previous is None:  # a new game
            invited = [p["invited"] for p in table.players if p.get("invited")]
            for player in [*holders.values(), *invited]:
                self._add_game(out, player, table)
            for player in invited:
                self._tell(out, player, "invitation",
                           {"game_id": table.id, "type": table.game.type_id,
                            "from": table.meta.get("created_by")})
            for seat, seek_id in enumerate(table.created["data"].get("seeks") or ()):
                if seek_id is not None:  # a game of matched seeks (a bot's seat has none)
                    self._tell(out, holders[seat], "seek_matched",
                               {"seek_id": seek_id, "game_id": table.id})
        kinds = [env["type"] for env in envelopes]
        if previous is not None:
            for env in envelopes:  # who came and went at a table
                if env["type"] == "SeatJoined" and env["data"].get("player"):
                    self._add_game(out, env["data"]["player"], table)
                elif env["type"] in ("SeatLeft", "SeatDeclined"):
                    gone = previous.players[env["seat"]].get("player") or \
                        env["data"].get("player")
                    if gone:
                        out.remove_game(gone, table.id)
        started = (previous is None and table.state is not None) or "GameStarted" in kinds
        if started:
            for seat, player in holders.items():
                self._tell(out, player, "game_start",
                           {"game_id": table.id, "seat": seat, "type": table.game.type_id})
        before = set() if started or previous is None else set(previous.awaiting())
        cmd = envelopes[0].get("cmd") or {}
        acted = cmd.get("seat") if "action" in cmd else None
        for seat in table.awaiting_humans():
            player = holders.get(seat)
            if player is not None and (seat not in before or seat == acted) and \
                    bot_level(player) is None:
                out.notify_turn(player, table.id, seat, table.version,
                                {"game_id": table.id, "seat": seat, "version": table.version,
                                 "deadline_at": _deadline(table, seat)})
        if table.over and (previous is None or not previous.over):
            if not table.created["data"].get("tournament"):  # else counted when recorded
                count_finished(out, table)
            invited = [p["invited"] for p in table.players if p.get("invited")]
            for player in {*holders.values(), *invited}:
                out.remove_game(player, table.id)
            for player in set(holders.values()):
                if bot_level(player) is None:
                    out.forget_turns(player, table.id,
                                     [s for s, p in holders.items() if p == player])
            if not self.of_duplicate_deal(table):  # else told when recorded
                tell_finished(out, table)

    @staticmethod
    def _tell(out: Batch, player: str, kind: str, data: dict) -> None:
        if bot_level(player) is None:
            out.notify(player, kind, data)

    @staticmethod
    def _add_game(out: Batch, player: str, table: Table) -> None:
        if bot_level(player) is None:
            out.add_game(player, table.id, table.meta["created_ms"])
