"""Tables from the terminal: acting as a player (its token), and waiting on the player stream
for a table's last seat to be taken."""

from __future__ import annotations

from contextlib import suppress
from typing import Callable

from rich.console import Console

from ..client import ApiError, Client, GameView


def as_player(api: Client, token: str | None) -> Client:
    """``api`` acting with a player token (an error naming the ways to give one without)."""
    if not token:
        raise ApiError("token_required", "this takes a player token: --token or "
                       "CARTOUCHE_TOKEN (`cartouche player create NAME` makes one)")
    return api.as_seat(token)


def held_seat(player: Client, game_id: str) -> int | None:
    """The first seat of ``game_id`` the player holds (None: none), from its profile."""
    for game in player.me().get("games") or []:
        if game["id"] == game_id and game["seats"]:
            return game["seats"][0]
    return None


def _await(player: Client, key: str, value: str, read: Callable[[str], dict]) -> dict:
    """Block until ``read(value)`` (a table or a seek) is no longer ``waiting``; return it.

    The player stream is read from the oldest notification the server keeps, so a notice that
    came before this connection is found too. Each notification whose ``data[key]`` is
    ``value``, and each ``gap``, is checked against ``read(value)`` itself."""
    for event in player.player_events():
        if event.kind == "gap" or event.data.get(key) == value:
            found = read(value)
            if found["status"] != "waiting":
                return found
    raise ApiError("stream_interrupted", "the player stream ended")


def await_start(player: Client, game_id: str) -> GameView:
    """Block until the table ``game_id`` stops waiting; return its view (``active``, or
    ``aborted`` when it ended first)."""
    return _await(player, "game_id", game_id, player.get)


def wait_for_players(console: Console, player: Client, game_id: str) -> None:
    """Return once ``game_id`` is under way (at once when it is not waiting). Ctrl-C while
    waiting gives the seat back; a table aborted before its start is an error."""
    if player.get(game_id)["status"] != "waiting":
        return
    try:
        console.print("Waiting for players (Ctrl-C gives your seat back)...")
        view = await_start(player, game_id)
    except KeyboardInterrupt:
        with suppress(ApiError):
            player.leave(game_id)
        raise
    if view["status"] != "active":
        raise ApiError("game_aborted", f"the table {game_id} was {view['status']} before "
                       f"its start")
    console.print(f"Every seat is taken: {game_id} starts.")


def await_match(player: Client, seek_id: str) -> dict:
    """Block until the seek ``seek_id`` stops waiting; return it (``matched`` with its
    ``game_id`` and ``seat``, or ``expired``/``cancelled``)."""
    seek = player.get_seek(seek_id)
    if seek["status"] != "waiting":
        return seek
    return _await(player, "seek_id", seek_id, player.get_seek)


def wait_for_match(console: Console, player: Client, seek_id: str) -> dict:
    """The matched seek; Ctrl-C while waiting cancels it; an expired or cancelled seek is an
    error."""
    try:
        console.print("Waiting for a match (Ctrl-C cancels the seek)...")
        seek = await_match(player, seek_id)
    except KeyboardInterrupt:
        with suppress(ApiError):
            player.cancel_seek(seek_id)
        raise
    if seek["status"] != "matched":
        raise ApiError(f"seek_{seek['status']}", f"the seek {seek_id} was {seek['status']} "
                       "before a match")
    return seek
