"""One independent player for ``test_lobby_processes.py``, run as its own process. It knows the
server's URL and nothing else: it creates its own player, meets the others through the lobby
and plays its game to the end, driven by its player stream alone.

    python -m tests.client.lobby_player URL TYPE host SEATS [OPTIONS_JSON]
    python -m tests.client.lobby_player URL TYPE guest

A host creates a table of TYPE: its own seat and SEATS - 1 open ones. A guest looks for a table
of TYPE with an open seat in the lobby (``GET /v1/games?status=waiting&type=TYPE``) and joins
it. Both then answer each ``your_turn`` with a random legal action and, at their game's
``game_finish``, print ``{"game_id", "seat", "status", "turns"}`` as one JSON line.
"""

from __future__ import annotations

import json
import random
import sys
import time

from service.client import ApiError, Client

#: A guest gives up when no table of its type has an open seat for this long.
LOBBY_WAIT_S = 60
#: Answers of a join that another guest won: look in the lobby again.
TAKEN = {"seat_taken", "game_full", "game_aborted"}


def host(me: Client, game_type: str, seats: int, options: dict | None) -> tuple[str, int]:
    return me.create_table(game_type, open=seats - 1, options=options)["id"], 0


def guest(me: Client, game_type: str) -> tuple[str, int]:
    deadline = time.monotonic() + LOBBY_WAIT_S
    while time.monotonic() < deadline:
        for table in me.lobby(game_type)["games"]:
            if not table["open_seats"]:
                continue
            try:
                return table["id"], me.join(table["id"])["seat"]
            except ApiError as exc:
                if exc.code not in TAKEN:
                    raise
        time.sleep(0.05)
    raise SystemExit(f"no {game_type} table had an open seat for {LOBBY_WAIT_S} s")


def play(me: Client, game_id: str) -> dict:
    """Answer each ``your_turn`` of ``game_id`` until its ``game_finish``."""
    turns = 0
    for event in me.player_events():          # from the first notice: nothing is missed
        if event.data.get("game_id") != game_id:
            continue
        if event.kind == "your_turn":
            legal = me.legal_actions(game_id)
            if legal["actions"]:
                me.act(game_id, random.choice(legal["actions"]))
                turns += 1
        elif event.kind == "game_finish":
            return {"status": event.data["status"], "turns": turns}
    raise SystemExit("the player stream ended")


def main(url: str, game_type: str, role: str, seats: str = "0", options: str = "null") -> None:
    api = Client(url)
    me = api.as_seat(api.create_player(f"{role}-{game_type}")["token"])
    game_id, seat = host(me, game_type, int(seats), json.loads(options)) if role == "host" \
        else guest(me, game_type)
    print(json.dumps({"game_id": game_id, "seat": seat, **play(me, game_id)}), flush=True)


if __name__ == "__main__":
    main(*sys.argv[1:])
