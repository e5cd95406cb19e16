"""A choice made single by a seat's hidden cards is not played for it: a forced move
is flagged, and timed with the command before it, so it would tell every reader what the seat
holds. The deal and moves of ``papyrus_hidden_single_choice.json`` (a supplied seed and 164
moves) bring seat 1 to a Sandstorm (discard 2 movement cards) holding three cards of one
kind: one way to discard, which the others, seeing three cards, cannot know."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from service.engine import Game
from service.engine.local import LocalGame
from service.games import GAMES
from service.replay import verify
from tests.api.helpers import auth

PAPYRUS = GAMES["papyrus"]
HIT = json.loads((Path(__file__).parent / "papyrus_hidden_single_choice.json").read_text())


def replayed() -> LocalGame:
    g = LocalGame(PAPYRUS, [{"name": "A"}, {"name": "B"}], {}, bytes.fromhex(HIT["seed"]))
    for seat, action in HIT["actions"]:
        g.act(seat, action)
    return g


def test_a_sandstorm_single_only_by_the_hidden_hand_awaits_the_seat():
    g = replayed()
    assert not any(e.get("forced") for e in g.events)
    assert g.awaiting() == [1] and g.state["pending"]["kind"] == "sandstorm"
    assert g.legal(1) == [{"type": "event_choice", "discard": {"nature": 2}}]
    spectator = PAPYRUS.view(g.state, None)["seats"][1]
    assert spectator["movement_count"] == 3 and "movement" not in spectator
    assert PAPYRUS.only_action(g.state, 1) is None
    assert PAPYRUS.single_action(g.state, 1) == g.legal(1)[0]  # the rule of older exports


def test_a_choice_every_seat_can_tell_is_single_is_still_played_at_once():
    g = replayed()
    state = json.loads(json.dumps(g.state))
    state["seats"][1]["movement"] = {"light": 0, "darkness": 0, "nature": 2, "water": 0,
                                     "eye": 0}  # two cards, two to discard: all of them
    assert PAPYRUS.only_action(state, 1) == {"type": "event_choice", "discard": {"nature": 2}}
    state["seats"][1]["movement"]["water"] = 1  # three cards, two kinds: a real choice
    assert PAPYRUS.only_action(state, 1) is None and len(PAPYRUS.legal_actions(state, 1)) == 2


def test_a_main_turn_is_forced_only_when_the_hand_cannot_pay_any_path_by_its_size():
    g = replayed()
    g.act(1, g.legal(1)[0])
    seat = g.awaiting()[0]
    state = json.loads(json.dumps(g.state))
    state["pending"] = None
    for glyph in state["seats"][seat]["holder"]:
        state["seats"][seat]["holder"][glyph] = 0  # no tile: no exchange
    state["seats"][seat]["movement"] = {k: 0 for k in state["seats"][seat]["movement"]}
    assert PAPYRUS.only_action(state, seat) == {"type": "draw_movement"}  # no card at all
    state["seats"][seat]["movement"]["light"] = 9  # enough cards, of a colour no path takes?
    if PAPYRUS.legal_actions(state, seat) == [{"type": "draw_movement"}]:
        assert PAPYRUS.only_action(state, seat) is None  # single by colours only: awaited


@pytest.mark.unswept  # plays 164 commands through the app, twice
def test_an_export_recorded_by_the_earlier_rule_still_verifies(client, monkeypatch):
    """An export recorded by the rule that plays every single choice (``single_action``: the
    Sandstorm flagged ``forced``) verifies, as one recorded by ``only_action`` does; then seat 0
    resigns, which under a clock that forfeits ends a two-seat game."""
    exports = {}
    for rule in ("earlier", "public"):
        with monkeypatch.context() as patched:
            if rule == "earlier":
                patched.setattr(type(PAPYRUS), "only_action", Game.single_action)
            r = client.post("/v1/games", json={
                "type": "papyrus", "seed": HIT["seed"], "players": [{"name": "A"}, {"name": "B"}],
                "options": {"clock": {"per_decision_ms": 600_000, "timeout": "forfeit"}}})
            gid, tokens = r.get_json()["id"], [s["token"] for s in r.get_json()["seats"]]
            for seat, action in HIT["actions"]:
                answer = client.post(f"/v1/games/{gid}/actions", json={"action": action},
                                     headers=auth(tokens[seat]))
                assert answer.status_code == 201, answer.get_json()
            if rule == "public":
                answer = client.post(f"/v1/games/{gid}/actions", headers=auth(tokens[1]),
                                     json={"action": {"type": "event_choice",
                                                      "discard": {"nature": 2}}})
                assert answer.status_code == 201, answer.get_json()
            assert client.post(f"/v1/games/{gid}/resign",
                               headers=auth(tokens[0])).status_code == 200
            exports[rule] = client.get(f"/v1/games/{gid}/export").get_json()
    earlier, public = exports["earlier"], exports["public"]
    forced = [e for e in earlier["events"] if e.get("forced")]
    assert forced and forced[0]["version"] == HIT["forced_version"]
    assert not any(e.get("forced") for e in public["events"])
    for doc in (earlier, public):
        assert doc["status"] == "finished"
        outcome = verify(doc)
        assert outcome["valid"] is True, outcome
    # a fork of the earlier game, at its end: its copied part holds the forced Sandstorm,
    # decided again by the rule that recorded it
    fork = client.post(f"/v1/games/{earlier['id']}/fork",
                       json={"version": len(earlier["events"])})
    assert fork.status_code == 201, fork.get_json()
    forked = client.get(f"/v1/games/{fork.get_json()['id']}/export").get_json()
    outcome = verify(forked)
    assert outcome["valid"] is True and outcome["details"]["copied"] > HIT["forced_version"], \
        outcome
    # the two rules are not interchangeable: each export's command, the other's way, differs
    swapped = json.loads(json.dumps(earlier))
    swapped["events"][HIT["forced_version"] - 1]["forced"] = False
    assert verify(swapped)["valid"] is False


@pytest.mark.unswept  # plays 164 commands through the app, and an mcts decision of 0.3 s
def test_an_mcts_bot_with_a_single_hidden_choice_still_takes_its_budget(client, svc):
    """A bot's decision shows in its event's time: the mcts level answering its single legal
    action at once would tell the others what the Sandstorm told nobody."""
    import time

    r = client.post("/v1/games", json={"type": "papyrus", "seed": HIT["seed"],
                                       "players": [{"name": "A"}, {"name": "B"}]})
    gid, tokens = r.get_json()["id"], [s["token"] for s in r.get_json()["seats"]]
    for seat, action in HIT["actions"]:
        client.post(f"/v1/games/{gid}/actions", json={"action": action},
                    headers=auth(tokens[seat]))
    table = svc.load(gid)
    assert table.awaiting() == [1] and len(table.game.legal_actions(table.state, 1)) == 1
    started = time.perf_counter()
    action = svc._autoplay._bot_action(table, 1, "mcts", 300)
    assert time.perf_counter() - started >= 0.3
    assert action == table.game.legal_actions(table.state, 1)[0]
    started = time.perf_counter()
    svc._autoplay._bot_action(table, 1, "heuristic", 300)  # no search, no wait
    assert time.perf_counter() - started < 0.25
