"""engine.lobby: who may take which seat of a table, what each command produces, and offline
verification of a table's log (``service.replay``) refusing any rewrite of it."""

from __future__ import annotations

import copy

import pytest

from service.engine import Rng, commitment, start
from service.engine.lobby import OPEN_SEAT, Lobby, SeatUnavailable
from service.engine.local import creation_event
from service.games import GAMES
from service.replay import FORMAT, verify

INVITED = {"name": None, "bot": None, "invited": "p-00000000000000bb"}
HOST = {"name": "Host", "bot": None, "player": "p-00000000000000aa"}


def codes(fn, *args):
    with pytest.raises(SeatUnavailable) as info:
        fn(*args)
    return info.value.code


def test_pick_prefers_the_invitation_then_the_first_open_seat():
    lobby = Lobby([HOST, dict(OPEN_SEAT), INVITED])
    assert lobby.pick(None, "p-00000000000000bb") == 2
    assert lobby.pick(None, "p-00000000000000cc") == 1
    assert lobby.pick(None, None) == 1
    assert codes(lobby.pick, 2, "p-00000000000000cc") == "not_invited"
    assert codes(lobby.pick, 0, "p-00000000000000cc") == "seat_taken"
    assert codes(lobby.pick, None, "p-00000000000000aa") == "already_seated"


def test_a_player_invited_to_two_seats_joins_both():
    """A player may hold several seats (a player token plays each), and a rematch of such a
    game invites it to each: seated once, it may still take a seat reserved for it, and
    nothing else."""
    bob = INVITED["invited"]
    lobby = Lobby([HOST, dict(INVITED), dict(OPEN_SEAT), dict(INVITED)])
    for ev in lobby.join(None, "Bob", bob)[1]:
        lobby.apply(ev)
    assert lobby.seats_of(bob) == [1]
    assert codes(lobby.pick, 2, bob) == "already_seated"  # an open seat: one is enough
    assert lobby.pick(None, bob) == 3 and lobby.pick(3, bob) == 3
    for ev in lobby.join(3, "Bob", bob)[1]:
        lobby.apply(ev)
    assert lobby.seats_of(bob) == [1, 3]
    assert codes(lobby.pick, None, bob) == "already_seated"


def test_the_join_that_fills_the_table_starts_it():
    lobby = Lobby([HOST, dict(OPEN_SEAT)])
    seat, events = lobby.join(None, "Bob", "p-00000000000000bb")
    assert seat == 1 and [e["type"] for e in events] == ["SeatJoined", "GameStarted"]
    assert events[1]["data"]["players"][1] == {"name": "Bob", "bot": None,
                                               "player": "p-00000000000000bb"}
    assert lobby.waiting  # deciding applied nothing
    for ev in events:
        lobby.apply(ev)
    assert not lobby.waiting
    assert codes(lobby.join, None, "Cy", None) == "game_full"
    assert codes(lobby.leave, 1) == "game_started"


def test_only_invited_seats_left_refuse_strangers():
    lobby = Lobby([HOST, INVITED])
    assert codes(lobby.join, None, "Cy", "p-00000000000000cc") == "not_invited"
    assert codes(lobby.join, None, "Anon", None) == "not_invited"


def test_leaving_restores_the_seat_and_an_empty_table_is_aborted():
    lobby = Lobby([dict(OPEN_SEAT), INVITED, dict(OPEN_SEAT)])
    for ev in lobby.join(1, "Bob", "p-00000000000000bb")[1]:
        lobby.apply(ev)
    events = lobby.leave(1)
    assert [e["type"] for e in events] == ["SeatLeft", "GameAborted"]
    assert events[1]["data"] == {"by": 1, "reason": "empty"}
    lobby.apply(events[0])
    assert lobby.seats[1] == INVITED  # back to its reservation
    assert codes(lobby.leave, 0) == "not_seated"


def test_declining_opens_the_seat_or_aborts():
    seat, events = Lobby([HOST, INVITED]).decline("p-00000000000000bb")
    assert seat == 1 and [e["type"] for e in events] == ["SeatDeclined"]
    _, events = Lobby([HOST, INVITED], "abort").decline("p-00000000000000bb")
    assert [e["type"] for e in events] == ["SeatDeclined", "GameAborted"]
    assert codes(Lobby([HOST, INVITED]).decline, "p-00000000000000cc") == "not_invited"


def table_export(game_type="tides-of-time"):
    """A table's log as the server writes it: created with the host and an open seat, then
    the join that starts it and the rules' setup (no moves: verification covers the commands
    present)."""
    game = GAMES[game_type]
    seed = bytes(range(32))
    seats = [HOST, dict(OPEN_SEAT)]
    options = game.normalize_options({}, seats)
    created = creation_event(game, seats, options, seed)
    created["data"].update({"clock": None, "on_decline": "open"})
    lobby = Lobby(seats)
    _, joined = lobby.join(None, "Bob", "p-00000000000000bb")
    for ev in joined:
        lobby.apply(ev)
    setup, _ = start(game, game.initial(lobby.seats, options), Rng(seed, 1))
    joined[0]["cmd"] = {"shell": "join", "seat": 1, "name": "Bob",
                        "player": "p-00000000000000bb"}
    events = [created, *joined, *setup]
    return {"format": FORMAT, "id": "0a", "type": game_type, "status": "active",
            "created_at": None, "players": lobby.seats, "options": options, "clock": None,
            "seed": seed.hex(), "seed_source": "server", "seed_commitment": commitment(seed),
            "forked_from": None, "result": None,
            "events": [{**e, "version": i + 1} for i, e in enumerate(events)]}


def test_a_table_log_verifies_and_rewrites_of_it_do_not():
    doc = table_export()
    assert verify(doc)["valid"], verify(doc)

    renamed = copy.deepcopy(doc)
    renamed["events"][1]["data"]["name"] = "Mallory"
    assert verify(renamed)["reason"] == "event_differs"

    seats_swapped = copy.deepcopy(doc)
    players = seats_swapped["events"][2]["data"]["players"]
    players.reverse()
    assert verify(seats_swapped)["reason"] == "event_differs"

    stranger = copy.deepcopy(doc)
    stranger["events"][0]["data"]["players"][1] = dict(INVITED)  # reserved for another
    stranger["events"][1]["cmd"]["player"] = "p-00000000000000cc"
    stranger["events"][1]["data"]["player"] = "p-00000000000000cc"
    assert verify(stranger)["reason"] == "recorded_action_rejected"

    moved = copy.deepcopy(doc)  # a move recorded before the table started
    moved["events"][1]["cmd"] = {"seat": 0, "action": {"type": "play"}}
    assert verify(moved)["reason"] == "command_before_start"
