"""Papyrus resignation (spec 12.4): ``GAME.resign(state, seat)`` as the shell's forfeit uses it."""

from __future__ import annotations

import random

import pytest

from service.engine import ALL, Rng, clone, command
from service.engine import fold, forced_moves
from tests.games.test_papyrus_helpers import GAME, SEED, conservation, fresh, holder


def resign(state: dict, seat: int) -> tuple[list[dict], dict]:
    """The rules' part of the shell's forfeit: the events and the state after them."""
    before = clone(state)
    left = GAME.resign(state, seat)
    assert state == before, "resign mutated its input state"
    assert left is not None and left[0], "the game should go on through events"
    events, after = left
    assert after == fold(GAME, clone(state), events)
    return events, after


def types(events: list[dict]) -> list[str]:
    return [e["type"] for e in events]


def check(state: dict) -> None:
    conservation(state)
    resigned = [i for i, p in enumerate(state["seats"]) if p.get("resigned")]
    assert not set(GAME.awaiting(state)) & set(resigned)
    for i in resigned:
        assert GAME.legal_actions(state, i) == []
        p = state["seats"][i]
        assert p["gods"] == [] and not any(p["holder"].values())
        assert not any(p["movement"].values())
        if state["variant"] == "standard":
            assert p["pawn"] is None
    if not state["over"]:
        for seat in GAME.awaiting(state):
            assert GAME.legal_actions(state, seat)


def play_out(state: dict, rnd: random.Random, version: int = 1000,
             resign_at: int | None = None, max_steps: int = 20_000) -> dict:
    """Random legal play (engine commands, forced moves included) to the end; optionally one
    resignation of a random non-resigned seat at step ``resign_at``."""
    for step in range(max_steps):
        check(state)
        if state["over"]:
            return state
        if step == resign_at:
            live = [i for i in range(state["n"]) if not state["seats"][i].get("resigned")]
            seat = rnd.choice(live)
            left = GAME.resign(state, seat)
            if left is None:
                assert state["variant"] == "solo" and state["n"] == 1
                return state
            # the forced moves after it, as the engine's forfeit plays them
            state = forced_moves(GAME, left[1], Rng(SEED, version))[1]
            version += 1
            continue
        seat = rnd.choice(GAME.awaiting(state))
        action = rnd.choice(GAME.legal_actions(state, seat))
        _, state = command(GAME, state, seat, action, Rng(SEED, version))
        version += 1
    raise AssertionError("game did not end")  # pragma: no cover


# -- the basic cases ------------------------------------------------------------------------

def test_resign_off_turn_three_seats():
    s = fresh(3)
    assert s["current"] == 0
    gods = list(s["seats"][2]["gods"])
    held = dict(s["seats"][2]["holder"])
    cards = dict(s["seats"][2]["movement"])
    events, after = resign(s, 2)
    assert types(events) == ["PlayerResigned"]
    ev = events[0]
    assert ev["seat"] == 2 and ev["data"]["gods"] == gods and ev["data"]["dropped"] is None
    assert after["current"] == 0 and GAME.awaiting(after) == [0]
    assert after["seats"][2]["resigned"] and after["seats"][2]["pawn"] is None
    assert set(gods) <= set(after["gods_out"])
    for g, v in held.items():
        assert after["glyph_discard"][g] == s["glyph_discard"][g] + v
    for k, v in cards.items():
        assert after["movement_discard"][k] == s["movement_discard"][k] + v
    check(after)
    # the turn order skips seat 2 from now on
    _, after = command(GAME, after, 0, {"type": "draw_movement"}, Rng(SEED, 50))
    assert GAME.awaiting(after) == [1]
    _, after = command(GAME, after, 1, {"type": "draw_movement"}, Rng(SEED, 51))
    assert GAME.awaiting(after) == [0]
    assert GAME.resign(after, 2) is None  # twice: nothing left to do


def test_resign_on_turn_passes_the_turn():
    s = fresh(3)
    events, after = resign(s, 0)
    assert types(events) == ["PlayerResigned", "TurnEnded", "TurnStarted"]
    assert events[-1]["seat"] == 1
    assert after["turns"] == s["turns"] + 1
    assert GAME.awaiting(after) == [1] and after["pending"] is None
    check(after)


def test_resign_on_turn_skips_resigned_and_skipping_seats():
    s = fresh(4)
    _, s = resign(s, 1)
    s["seats"][2]["skip"] = True
    events, after = resign(s, 0)
    assert types(events) == ["PlayerResigned", "TurnEnded", "TurnSkipped", "TurnStarted"]
    assert events[2]["seat"] == 2 and events[3]["seat"] == 3
    assert GAME.awaiting(after) == [3]
    check(after)


def test_resign_drops_a_pending_event_decision():
    s = fresh(3)
    s["event_deck"].remove("sacred-barque")
    s["event_card"] = "sacred-barque"
    s["pending"] = {"seat": 0, "kind": "sacred-barque", "count": 1, "card": "sacred-barque"}
    conservation(s)
    assert GAME.awaiting(s) == [0]
    events, after = resign(s, 0)
    assert types(events) == ["PlayerResigned", "EventDiscarded", "TurnEnded", "TurnStarted"]
    assert events[0]["data"]["dropped"] == "sacred-barque"
    assert after["pending"] is None and after["event_card"] is None
    assert after["event_discard"]["sacred-barque"] == 1
    assert GAME.awaiting(after) == [1]
    check(after)


def test_resign_drops_a_capacity_discard():
    s = fresh(3)
    extra = s["bag"][:11]
    del s["bag"][:11]
    for g in extra:
        s["seats"][0]["holder"][g] += 1
    s["pending"] = {"seat": 0, "kind": "capacity", "count": 1, "card": None}
    conservation(s)
    events, after = resign(s, 0)
    assert events[0]["data"]["dropped"] == "capacity"
    assert after["pending"] is None and GAME.awaiting(after) == [1]
    check(after)


def test_two_seats_the_other_wins_at_once():
    s = fresh(2)
    s["seats"][0]["score"] = 50  # far ahead: resigning still loses
    for seat in (0, 1):
        events, after = resign(s, seat)
        assert types(events) == ["PlayerResigned", "GameEnded"]
        assert events[-1]["data"]["reason"] == "resignation"
        assert after["over"] and GAME.awaiting(after) == []
        res = GAME.result(after)
        other = 1 - seat
        assert res["winners"] == [other]
        assert res["ranks"][other] == 1 and res["ranks"][seat] == 2
        assert res["details"]["resigned"] == [seat]
        assert res["details"]["seats"][seat]["resigned"]
        check(after)


def test_three_seats_game_goes_on_and_resigner_ranks_last():
    s = fresh(3, god_deck_size=10, turn_limit=60)
    s["seats"][1]["score"] = 99
    events, s = resign(s, 1)
    assert types(events) == ["PlayerResigned"] and not s["over"]
    s = play_out(s, random.Random(3))
    res = GAME.result(s)
    assert res["ranks"][1] == 3 and 1 not in res["winners"]
    assert sorted(res["ranks"][i] for i in (0, 2)) in ([1, 1], [1, 2])
    assert res["scores"][1] >= 99


def test_second_last_resignation_ends_the_game_and_resigned_ordered_by_score():
    s = fresh(4)
    s["seats"][0]["score"] = 5
    s["seats"][2]["score"] = 9
    _, s = resign(s, 0)
    _, s = resign(s, 2)
    assert not s["over"]
    events, s = resign(s, 3)
    assert types(events)[-1] == "GameEnded"
    res = GAME.result(s)
    assert res["winners"] == [1]
    assert res["ranks"] == [3, 1, 2, 4]  # resigned by score: 2 (9), then 0 (5), then 3 (0)
    check(s)


def test_final_round_resignations():
    s = fresh(4)
    # seat 0 triggered the final round; seat 1 is playing its last turn, 2 and 3 still to play
    s["final"] = {"trigger": 0, "remaining": [2, 3]}
    s["current"] = 1
    events, after = resign(s, 2)  # off turn: leaves the final-round list
    assert types(events) == ["PlayerResigned"]
    assert after["final"]["remaining"] == [3] and GAME.awaiting(after) == [1]
    events, after = resign(after, 1)  # on turn: the turn goes to 3, the last one
    assert types(events) == ["PlayerResigned", "TurnEnded", "TurnStarted"]
    assert events[-1]["seat"] == 3 and after["final"]["remaining"] == []
    _, end = command(GAME, after, 3, {"type": "draw_movement"}, Rng(SEED, 9))
    assert end["over"] and end["end_reason"] == "final_round"
    res = GAME.result(end)
    assert res["ranks"][1] > 2 and res["ranks"][2] > 2
    # the last final-round player resigning ends it at once (two others are left)
    s = fresh(4)
    s["final"] = {"trigger": 0, "remaining": []}
    s["current"] = 3
    events, after = resign(s, 3)
    assert types(events) == ["PlayerResigned", "TurnEnded", "GameEnded"]
    assert after["end_reason"] == "final_round"
    assert GAME.result(after)["ranks"][3] == 4


def test_final_round_started_after_a_resignation_leaves_out_the_resigner():
    s = fresh(3)
    _, s = resign(s, 2)
    # seat 0 conquers its last God card with the God deck empty
    s["gods_out"] += s["god_deck"]
    s["god_deck"] = []
    p = s["seats"][0]
    s["gods_out"] += p["gods"][1:]
    god = p["gods"][0]
    p["gods"] = [god]
    from service.games.papyrus.data import SPELLING
    for g, k in p["holder"].items():
        s["glyph_discard"][g] += k
    p["holder"] = holder()
    for g, k in SPELLING[god].items():
        for _ in range(k):
            s["bag"].remove(g)
        p["holder"][g] += k
    board = GAME.board(s)
    node = next(n for n in board.nodes.values() if n.get("god") == god)
    pid = next(iter(board.adjacent[node["id"]]))
    p["pawn"] = board.other_end(pid, node["id"])
    need = sum(board.paths[pid]["squares"].values())
    s["movement_deck"] += [k for k, v in p["movement"].items() for _ in range(v)]
    for _ in range(need):
        s["movement_deck"].remove("eye")
    p["movement"] = {k: 0 for k in p["movement"]}
    p["movement"]["eye"] = need
    conservation(s)
    events, after = command(GAME, s, 0, {"type": "move", "path": pid,
                                         "cards": {"eye": need}}, Rng(SEED, 3))
    fr = [e for e in events if e["type"] == "FinalRoundStarted"]
    assert fr and fr[0]["data"]["seats"] == [1]
    assert after["current"] == 1 or after["over"]


def test_no_leak_of_the_resigners_hand():
    s = fresh(3)
    gods = list(s["seats"][1]["gods"])
    events, after = resign(s, 1)
    ev = events[0]
    for viewer in (0, 2, None):
        seen = GAME.visible(ev, viewer)
        assert seen["data"]["gods"] == len(gods)
        text = repr(seen)
        assert not any(g in text for g in gods)
        view = GAME.view(after, viewer)
        assert view["resigned"] == [1] and view["seats"][1]["resigned"]
        assert "gods" not in view["seats"][1]
        vtext = repr({k: v for k, v in view.items() if k != "board"})
        assert not any(f"'{g}'" in vtext for g in gods)
    assert GAME.visible(ev, 1)["data"]["gods"] == gods
    assert GAME.visible(ev, ALL)["data"]["gods"] == gods
    assert ev["data"]["gods"] == gods  # the input is not mutated


# -- solo ------------------------------------------------------------------------------------

def test_solo_one_seat_returns_none():
    s = fresh(1, variant="solo")
    assert GAME.resign(s, 0) is None


def test_solo_multi_seat_goes_on_until_nobody_is_left():
    s = fresh(3, variant="solo", god_deck_size=9)
    s["seats"][0]["score"] = 40  # beats the Pharaoh on points, but resigning is a loss
    events, after = resign(s, 0)
    assert types(events) == ["PlayerResigned", "TurnEnded", "TurnStarted"]
    assert GAME.awaiting(after) == [1]
    events, after = resign(after, 2)
    assert types(events) == ["PlayerResigned"] and not after["over"]  # seat 1 plays on alone
    _, after = command(GAME, after, 1, {"type": "buy_glyph"}, Rng(SEED, 7))
    assert after["over"] or GAME.awaiting(after) == [1]
    events, end = resign(after, 1)
    assert types(events)[-1] == "GameEnded" and end["over"]
    res = GAME.result(end)
    assert res["winners"] == [] and sorted(res["ranks"]) == [1, 2, 3]
    assert res["ranks"][0] == 1  # all resigned: ordered by margin
    check(end)


def test_solo_multi_seat_resigned_never_wins():
    s = fresh(2, variant="solo", god_deck_size=6, turn_limit=30)
    s["seats"][1]["score"] = 99
    _, s = resign(s, 1)
    s = play_out(s, random.Random(1))
    res = GAME.result(s)
    assert 1 not in res["winners"] and res["ranks"][1] == 2


# -- random playouts -------------------------------------------------------------------------

@pytest.mark.parametrize("i", range(12))
def test_random_playouts_with_a_resignation_end(i):
    rnd = random.Random(i)
    n = rnd.choice([2, 3, 4, 5])
    solo = i % 4 == 3
    opts = ({"variant": "solo", "god_deck_size": 3 * n, "turn_limit": 60 * n} if solo else
            {"god_deck_size": 3 * n + 1, "turn_limit": 30 * n})
    s = fresh(n, **opts)
    s = forced_moves(GAME, s, Rng(SEED, 2))[1]
    end = play_out(s, rnd, resign_at=rnd.randrange(0, 40))
    assert end["over"]
    res = GAME.result(end)
    resigned = res["details"]["resigned"]
    assert len(resigned) == 1
    assert res["ranks"][resigned[0]] == n
    assert resigned[0] not in res["winners"]
    if not solo and n == 2:
        assert res["winners"] == [1 - resigned[0]]
