"""The command runner (``service.engine.runner``) and ``Outcome``, on a toy game.

Two seats take turns adding 1 or 2 to a total; at 8 or more only 1 may be added (a forced move);
the game ends at 10. The toy counts its ``apply`` calls: every event is applied exactly once.
"""

from __future__ import annotations

import pytest

from service.engine import (Game, IllegalAction, NotYourTurn, Outcome, Rng, clone, command,
                            fold, forced_moves, forfeit, idle_resigners, is_int, start)
from service.engine.actions import action_type, check_fields, invalid_field


class Toy(Game):
    type_id = "toy"
    min_players = max_players = 2

    def __init__(self) -> None:
        self.applied = 0
        self.decided = 0

    def initial(self, players, options):
        return {"turn": 0, "total": 0, "over": False, "left": None}

    def create(self, state, rng):
        out = Outcome(self, state, rng)
        out.emit("Started", {"total": 6 + out.rng.below(2)})  # 6 or 7
        return out.done()

    def decide(self, state, seat, action, rng):
        self.decided += 1
        action_type(action, ("add",))
        check_fields(action, ("n",))
        n = action["n"]
        if not is_int(n):
            raise invalid_field("n", "n is an integer")
        if {"type": "add", "n": n} not in self.legal_actions(state, seat):
            raise IllegalAction("not_allowed", "add 1 or 2 (1 from 8 on)")
        out = Outcome(self, state, rng)
        out.emit("Added", {"n": n}, seat)
        if out.state["total"] >= 10:
            out.emit("Ended")
        return out.done()

    def resign(self, state, seat):
        if state["total"] < 7:
            return None
        out = Outcome(self, state)
        out.emit("Left", {}, seat)
        return out.done()

    def apply(self, state, ev):
        self.applied += 1
        d = ev["data"]
        if ev["type"] == "Started":
            state["total"] = d["total"]
        elif ev["type"] == "Added":
            state["total"] += d["n"]
            state["turn"] = 1 - state["turn"]
        elif ev["type"] == "Left":
            state["left"] = ev["seat"]
        else:
            state["over"] = True

    def is_over(self, state):
        return state["over"]

    def awaiting(self, state):
        return [] if state["over"] else [state["turn"]]

    def legal_actions(self, state, seat):
        if seat not in self.awaiting(state):
            return []
        return [{"type": "add", "n": n} for n in ((1, 2) if state["total"] < 8 else (1,))]


def started(seed: bytes = b"toy") -> tuple[Toy, dict]:
    game = Toy()
    events, state = start(game, game.initial([{}, {}], {}), Rng(seed, 1))
    assert [e["type"] for e in events] == ["Started"]
    return game, state


def test_start_returns_the_setup_and_the_state_after_it():
    game = Toy()
    initial = game.initial([{}, {}], {})
    events, state = start(game, initial, Rng(b"toy", 1))
    assert initial == game.initial([{}, {}], {})  # not mutated
    assert state == fold(game, game.initial([{}, {}], {}), events)
    assert state["total"] in (6, 7)


def test_a_command_applies_each_event_once_and_plays_the_forced_moves():
    game, state = started()
    state["total"] = 7
    before = clone(state)
    game.applied = 0
    events, after = command(game, state, 0, {"type": "add", "n": 1}, Rng(b"toy", 2))
    assert state == before  # the input is never mutated
    # 7 + 1 = 8: seat 1 may only add 1 (forced), 9: seat 0 likewise (forced), 10: the end
    assert [(e["type"], e["seat"], e.get("forced", False)) for e in events] == [
        ("Added", 0, False), ("Added", 1, True), ("Added", 0, True), ("Ended", None, True)]
    assert game.applied == len(events)
    assert after == fold(game, clone(before), events) and game.is_over(after)


def test_a_simulated_command_is_decide_alone():
    game, state = started()
    state["total"] = 7
    events, after = command(game, state, 0, {"type": "add", "n": 1}, Rng(b"toy", 2),
                            simulated=True)
    assert [e["type"] for e in events] == ["Added"] and not events[0].get("forced")
    assert after["total"] == 8 and game.awaiting(after) == [1]  # no forced move played


def test_forced_moves_play_what_the_games_only_action_answers():
    class Told(Toy):  # answers only_action itself, without legal_actions
        listed = 0

        def only_action(self, state, seat):
            return {"type": "add", "n": 1} if state["total"] == 9 else None

        def legal_actions(self, state, seat):
            self.listed += 1  # decide's own check asks too
            return super().legal_actions(state, seat)

    game = Told()
    assert Toy().only_action({"turn": 0, "total": 8, "over": False}, 0) == {"type": "add", "n": 1}
    assert Toy().only_action({"turn": 0, "total": 7, "over": False}, 0) is None
    state = {"turn": 1, "total": 8, "over": False, "left": None}
    events, after = forced_moves(game, state, Rng(b"toy", 2))
    # at 8 the game says there is a choice (the toy's rules would force one): none is played;
    # at 9 it names one, and it is played
    assert (events, after) == ([], state)
    events, after = forced_moves(game, {**state, "total": 9}, Rng(b"toy", 2))
    assert [(e["type"], e["seat"], e.get("forced")) for e in events] == [
        ("Added", 1, True), ("Ended", None, True)]
    assert after["total"] == 10 and game.is_over(after)
    assert game.listed == game.decided == 1


def test_forced_moves_return_the_state_itself_when_none_is_due():
    game, state = started()
    assert forced_moves(game, state, Rng(b"toy", 2)) == ([], state)
    assert forced_moves(game, state, Rng(b"toy", 2))[1] is state


def test_turn_check_then_malformed_check_then_decide():
    game, state = started()
    with pytest.raises(NotYourTurn) as exc:
        command(game, state, 1, "not even an action", Rng(b"toy", 2))
    assert exc.value.reason == "not_awaited" and exc.value.details == {"code": "not_awaited"}
    game.decided = 0
    with pytest.raises(IllegalAction) as exc:
        command(game, state, 0, {"n": 1}, Rng(b"toy", 2))
    assert exc.value.code == "malformed_action" and game.decided == 0
    with pytest.raises(IllegalAction) as exc:
        command(game, state, 0, {"type": "add", "n": 5}, Rng(b"toy", 2))
    assert exc.value.code == "not_allowed"
    over = dict(state, over=True)
    with pytest.raises(NotYourTurn) as exc:
        command(game, over, 0, {"type": "add", "n": 1}, Rng(b"toy", 2))
    assert exc.value.reason == "game_over"


def test_forfeit_plays_the_forced_moves_after_the_rules_consequence():
    game, state = started()
    state["total"] = 6
    assert forfeit(game, state, [0], Rng(b"toy", 2)) is None  # the game cannot go on
    state["total"] = 9
    before = clone(state)
    events, after = forfeit(game, state, [1], Rng(b"toy", 2))
    assert state == before
    assert [(e["type"], e.get("forced", False)) for e in events] == [
        ("Left", False), ("Added", True), ("Ended", True)]
    assert after["left"] == 1 and game.is_over(after)


def test_seats_forfeiting_together_leave_in_order_and_none_wins_by_the_others_leaving():
    game, state = started()
    state["total"] = 9
    events, after = forfeit(game, state, [0, 1], Rng(b"toy", 2))
    assert [(e["type"], e["seat"]) for e in events] == [
        ("Left", 0), ("Left", 1), ("Added", state["turn"]), ("Ended", None)]

    class EndsOnLeaving(Toy):  # the last one standing wins, as in Papyrus (12.4)
        def resign(self, state, seat):
            out = Outcome(self, state)
            out.emit("Left", {}, seat)
            out.emit("Ended")
            return out.done()

    game = EndsOnLeaving()
    assert forfeit(game, state, [1], Rng(b"toy", 2))[0][-1]["type"] == "Ended"
    # both late: the first one's leaving must not make the other the winner
    assert forfeit(game, state, [0, 1], Rng(b"toy", 2)) is None


def test_outcome_works_on_a_clone_and_applies_each_event_as_it_is_emitted():
    game, state = started()
    before = clone(state)
    out = Outcome(game, state)
    ev = out.emit("Added", {"n": 2}, 0)
    assert ev == {"type": "Added", "seat": 0, "data": {"n": 2}}
    assert out.state["total"] == before["total"] + 2 and state == before
    assert out.done() == ([ev], out.state)


@pytest.mark.parametrize("counts, awaiting, humans, resign", [
    (True, [1], [True, True], [1]),  # a player waits on the idle one
    (True, [0], [True, False], [0]),  # a bot player waits on it
    (True, [0, 2], [True, True, True], [0, 2]),  # two idle of three
    (True, [1], [False, True], [1]),  # the other seat resigned before: it ranks below
    (False, [1], [True, True], []),  # the result counts for nothing: aborted
    (True, [0, 1], [True, True], []),  # every seat an idle human: nobody to rank below
    (True, [1], [True, False], []),  # the awaited seat is a bot (a lost job)
])
def test_idle_seats_resign_where_the_result_counts_and_another_seat_is_in(
        counts, awaiting, humans, resign):
    assert idle_resigners(counts, awaiting, humans) == resign
