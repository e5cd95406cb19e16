"""Tables from the terminal: acting as a player (its token), and waiting on the player stream
for a table's last seat to be taken."""

from __future__ import annotations

from contextlib import suppress

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


def await_start(player: Client, game_id: str) -> GameView:
    """Block until the table ``game_id`` stops waiting; return its view (``active``, or
    ``aborted`` when it ended first).

    The player stream is read from the oldest notification the server keeps, so the table's
    ``game_start`` or ``game_finish`` is found even when it came before this connection. Each
    notification about the table, and each ``gap``, is checked against the table itself."""
    for event in player.player_events():
        if event.kind == "gap" or event.data.get("game_id") == game_id:
            view = player.get(game_id)
            if view["status"] != "waiting":
                return view
    raise ApiError("stream_interrupted", "the player stream ended")


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
    ``game_id`` and ``seat``, or ``expired``/``cancelled``). Each ``seek_matched`` notice, and
    each ``gap``, is checked against the seek itself."""
    seek = player.get_seek(seek_id)
    if seek["status"] != "waiting":
        return seek
    for event in player.player_events():
        if event.kind == "gap" or event.data.get("seek_id") == seek_id:
            seek = player.get_seek(seek_id)
            if seek["status"] != "waiting":
                return seek
    raise ApiError("stream_interrupted", "the player stream ended")


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
