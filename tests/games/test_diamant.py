"""Diamant: worked examples of spec section 10, options, hostile actions, leaks, properties."""

from __future__ import annotations

from collections import Counter

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from jsonschema import Draft202012Validator

from service.engine import ALL, IllegalAction, InvalidOptions, NotYourTurn, command, visible
from service.engine.fold import clone
from service.engine.local import LocalGame
from service.engine.rng import NoRandomness, Rng
from service.games import GAMES
from service.games.diamant import (CANONICAL, GAME, RELICS, TRAP_TYPE, TRAPS, TREASURE_VALUE,
                                   TREASURES)
from tests.games.harness import illegal, random_playout
from tests.games.schema_walk import check_history, walk

CONTINUE = {"type": "decide", "choice": "continue"}
RETURN = {"type": "decide", "choice": "return"}


def players(n: int) -> list[dict]:
    return [{"name": f"P{i}"} for i in range(n)]


def deck(*top: str) -> list[str]:
    """A full 35-card permutation starting with ``top`` (rest in canonical order)."""
    assert len(set(top)) == len(top)
    return list(top) + [c for c in CANONICAL if c not in top]


def new_game(n: int, *decks: list[str], seed: bytes = b"diamant-test") -> LocalGame:
    options = {"setup": {"round_decks": [list(d) for d in decks]}} if decks else {}
    return LocalGame(GAME, players(n), options, seed)


def step(g: LocalGame, choices: dict[int, str]) -> list[dict]:
    """Every awaited seat commits its choice (``choices`` must cover exactly the awaited)."""
    assert sorted(g.awaiting()) == sorted(choices)
    out: list[dict] = []
    for seat, choice in choices.items():
        out += g.act(seat, {"type": "decide", "choice": choice})
    return out


def all_(g: LocalGame, choice: str) -> list[dict]:
    return step(g, {s: choice for s in g.awaiting()})


def of_type(events: list[dict], type_: str) -> list[dict]:
    return [ev for ev in events if ev["type"] == type_]


def chests(g: LocalGame) -> list[int]:
    return [p["chest"] for p in GAME.view(g.state, ALL)["players"]]


def pockets(g: LocalGame) -> list[int]:
    return [p["pocket"] for p in GAME.view(g.state, ALL)["players"]]


def composition(cards) -> dict[str, int]:
    c = Counter()
    for card in cards:
        if card in TREASURE_VALUE:
            c["treasure"] += 1
        elif card in TRAP_TYPE:
            c["trap"] += 1
            c[TRAP_TYPE[card]] += 1
        else:
            c["relic"] += 1
    return dict(c)


# -- basics -------------------------------------------------------------------------------

def test_registry_and_card_data():
    assert GAMES["diamant"] is GAME
    assert (GAME.type_id, GAME.name, GAME.min_players, GAME.max_players) == \
        ("diamant", "Diamant", 3, 8)
    assert sorted(v for _, v in TREASURES) == [1, 2, 3, 4, 5, 5, 7, 7, 9, 11, 11, 13, 14, 15, 17]
    assert sum(v for _, v in TREASURES) == 124
    assert len(CANONICAL) == len(set(CANONICAL)) == 35
    assert CANONICAL[:15] == ["T1", "T2", "T3", "T4", "T5a", "T5b", "T7a", "T7b", "T9", "T11a",
                              "T11b", "T13", "T14", "T15", "T17"]
    assert CANONICAL[15:18] == ["SPIDER1", "SPIDER2", "SPIDER3"]
    assert CANONICAL[-8:] == ["RAM1", "RAM2", "RAM3", "R1", "R2", "R3", "R4", "R5"]
    assert len(TRAPS) == 15 and RELICS == ["R1", "R2", "R3", "R4", "R5"]


def test_round_one_shuffle_is_one_rng_shuffle_of_canonical_order():
    seed = b"shuffle-check"
    g = LocalGame(GAME, players(4), {}, seed)
    started = of_type(g.events, "RoundStarted")
    assert len(started) == 1
    assert started[0]["data"]["deck"] == Rng(seed, 1).shuffled(CANONICAL)
    assert started[0]["data"]["deck_size"] == 35
    # the first card is revealed at once and the decision phase starts
    assert g.events[-1]["type"] == "CardRevealed"
    assert g.events[-1]["data"]["card"] == started[0]["data"]["deck"][0]
    assert g.awaiting() == [0, 1, 2, 3]


def test_legal_and_timeout_actions():
    g = new_game(3, deck("T1"))
    for s in range(3):
        assert g.legal(s) == [CONTINUE, RETURN]
        assert GAME.timeout_action(g.state, s) == RETURN
    g.act(0, CONTINUE)
    assert g.legal(0) == []
    assert g.awaiting() == [1, 2]


# -- section 10 worked examples ------------------------------------------------------------

def test_example1_sharing_a_treasure_five_players():
    g = new_game(5, deck("T9"))
    rev = of_type(g.events, "CardRevealed")[-1]["data"]
    assert rev == {"card": "T9", "kind": "treasure", "value": 9, "share_each": 1,
                   "remainder": 4, "path_rubies": 4, "recipients": [0, 1, 2, 3, 4]}
    view = GAME.view(g.state, None)
    assert pockets(g) == [1, 1, 1, 1, 1]
    assert view["path_rubies"] == 4
    assert view["path"] == ["T9"]
    assert view["phase"] == "decision" and view["round"] == 1
    assert view["deck_size"] == 34


def test_example2_full_round_pooled_relic_trap():
    A, B, C, D = 0, 1, 2, 3
    seed = b"example-2"
    g = new_game(4, deck("T14", "R1", "T9", "T4", "T7a", "SPIDER1", "SPIDER2"), seed=seed)
    # step 1: T14 -> 3 each, remainder 2
    assert pockets(g) == [3, 3, 3, 3] and g.state["path_rubies"] == 2
    all_(g, "continue")
    # step 2: relic on the path
    assert GAME.view(g.state, None)["path"] == ["T14", "R1"]
    assert pockets(g) == [3, 3, 3, 3] and g.state["path_rubies"] == 2
    all_(g, "continue")
    # step 3: T9 -> 2 each, remainder 1
    assert pockets(g) == [5, 5, 5, 5] and g.state["path_rubies"] == 3
    evs = step(g, {A: "return", B: "return", C: "continue", D: "continue"})
    assert of_type(evs, "ChoicesRevealed")[0]["data"]["choices"] == \
        ["return", "return", "continue", "continue"]
    ret = of_type(evs, "PlayersReturned")[0]["data"]
    assert ret == {"seats": [A, B], "share_each": 1, "remainder": 1, "relics_taken": [],
                   "relic_values": []}
    assert chests(g)[:2] == [6, 6]
    # step 4: T4 -> 2 each to C, D; the relic stayed on the path
    assert of_type(evs, "CardRevealed")[0]["data"]["card"] == "T4"
    assert GAME.view(g.state, None)["path"] == ["T14", "R1", "T9", "T4"]
    assert pockets(g) == [0, 0, 7, 7] and g.state["path_rubies"] == 1
    evs = step(g, {C: "return", D: "continue"})
    ret = of_type(evs, "PlayersReturned")[0]["data"]
    assert ret == {"seats": [C], "share_each": 1, "remainder": 0, "relics_taken": ["R1"],
                   "relic_values": [5]}
    assert chests(g) == [6, 6, 13, 0]
    view = GAME.view(g.state, None)
    assert view["relics_brought_back"] == 1
    assert view["players"][C]["relics"] == 1
    assert view["path"] == ["T14", "T9", "T4", "T7a"]  # the taken relic left the path
    # step 5: D alone takes 7
    assert pockets(g) == [0, 0, 0, 14] and g.state["path_rubies"] == 0
    step(g, {D: "continue"})
    # step 6: first spider, harmless
    assert GAME.view(g.state, None)["traps_on_path"] == {"SPIDER": 1}
    assert pockets(g)[D] == 14
    version_before = g.version
    evs = step(g, {D: "continue"})
    # step 7: second spider ends the round at once
    types = [ev["type"] for ev in evs]
    assert types == ["ChoiceCommitted", "ChoicesRevealed", "CardRevealed", "RoundEndedByTrap",
                     "RoundEnded", "RoundStarted", "CardRevealed"]
    assert evs[3]["data"] == {"trap": "SPIDER", "card": "SPIDER2", "lost_pockets": [0, 0, 0, 14]}
    assert evs[4]["data"] == {"round": 1, "reason": "trap", "removed_trap": "SPIDER2",
                              "removed_relics": []}
    assert chests(g) == [6, 6, 13, 0]
    # round 2 deck: 33 cards, 15 treasures, 14 traps (2 spiders), 4 relics
    started = evs[5]["data"]
    assert started["round"] == 2 and started["deck_size"] == 33
    assert composition(started["deck"]) == {"treasure": 15, "trap": 14, "relic": 4, "SPIDER": 2,
                                            "SNAKE": 3, "LAVA": 3, "BOULDER": 3, "RAM": 3}
    assert "SPIDER2" not in started["deck"] and "R1" not in started["deck"]
    # no round_decks entry for round 2: exactly one rng.shuffle of the canonical restriction
    expected = [c for c in CANONICAL if c not in ("SPIDER2", "R1")]
    Rng(seed, version_before + 1).shuffle(expected)
    assert started["deck"] == expected
    view = GAME.view(g.state, None)
    assert view["round"] == 2 and view["removed"] == ["SPIDER2"]
    assert view["deck_size"] == 32 and len(view["path"]) == 1


def test_example3_pooled_split_not_per_card():
    E, F, G = 0, 1, 2
    g = new_game(3, deck("T7a", "T4", "T13", "SPIDER1"))
    assert g.state["path_rubies"] == 1 and pockets(g) == [2, 2, 2]
    all_(g, "continue")
    assert g.state["path_rubies"] == 2 and pockets(g) == [3, 3, 3]
    all_(g, "continue")
    assert g.state["path_rubies"] == 3 and pockets(g) == [7, 7, 7]
    evs = step(g, {E: "return", F: "return", G: "continue"})
    ret = of_type(evs, "PlayersReturned")[0]["data"]
    assert ret["seats"] == [E, F] and ret["share_each"] == 1 and ret["remainder"] == 1
    assert chests(g) == [8, 8, 0]
    assert pockets(g) == [0, 0, 7]
    view = GAME.view(g.state, None)
    assert view["path_rubies"] == 1
    assert [p["in_cave"] for p in view["players"]] == [False, False, True]
    assert g.awaiting() == [G]


def test_example4_relic_order_and_removal():
    G, C, H = 1, 2, 3  # seat 0 is a fourth explorer
    decks = [
        deck("R1", "SPIDER1", "SPIDER2"),
        deck("R2", "SNAKE1", "SNAKE2"),
        deck("R3", "R4", "LAVA1", "LAVA2"),
        deck("R5", "BOULDER1", "BOULDER2"),
        deck("RAM1", "RAM2"),
    ]
    g = new_game(4, *decks)
    # round 1: C returns alone with R1 -> #1 -> 5
    evs = step(g, {0: "continue", G: "continue", C: "return", H: "continue"})
    assert of_type(evs, "PlayersReturned")[0]["data"]["relic_values"] == [5]
    assert chests(g)[C] == 5 and g.state["relics_brought_back"] == 1
    evs = all_(g, "continue")  # SPIDER2 ends round 1, round 2 starts with R2 revealed
    assert of_type(evs, "RoundEnded")[0]["data"]["removed_relics"] == []
    assert GAME.view(g.state, None)["path"] == ["R2"]
    # round 2: two players return together -> nobody takes R2
    evs = step(g, {0: "return", G: "return", C: "continue", H: "continue"})
    assert of_type(evs, "PlayersReturned")[0]["data"]["relics_taken"] == []
    evs = all_(g, "continue")  # SNAKE2 ends round 2 with R2 still on the path
    ended = of_type(evs, "RoundEnded")[0]["data"]
    assert ended == {"round": 2, "reason": "trap", "removed_trap": "SNAKE2",
                     "removed_relics": ["R2"]}
    assert g.state["relics_brought_back"] == 1
    r3 = of_type(evs, "RoundStarted")[0]["data"]
    assert composition(r3["deck"])["relic"] == 3
    assert GAME.view(g.state, None)["removed"] == ["SPIDER2", "R2", "SNAKE2"]
    # round 3: R3 then R4; G returns alone -> #2 and #3 -> 5 + 5
    all_(g, "continue")
    assert GAME.view(g.state, None)["path"] == ["R3", "R4"]
    before = chests(g)[G]
    evs = step(g, {0: "continue", G: "return", C: "continue", H: "continue"})
    ret = of_type(evs, "PlayersReturned")[0]["data"]
    assert ret["relics_taken"] == ["R3", "R4"] and ret["relic_values"] == [5, 5]
    assert chests(g)[G] - before == 10 and g.state["relics_brought_back"] == 3
    all_(g, "continue")  # LAVA2 ends round 3; round 4 opens with R5
    # round 4: H returns alone with the last relic -> #4 -> 10
    before = chests(g)[H]
    evs = step(g, {0: "continue", G: "continue", C: "continue", H: "return"})
    ret = of_type(evs, "PlayersReturned")[0]["data"]
    assert ret["relics_taken"] == ["R5"] and ret["relic_values"] == [10]
    assert chests(g)[H] - before == 10 and g.state["relics_brought_back"] == 4
    evs = all_(g, "continue")  # BOULDER2 ends round 4
    r5 = of_type(evs, "RoundStarted")[0]["data"]
    assert r5["round"] == 5 and composition(r5["deck"]).get("relic", 0) == 0
    evs = all_(g, "continue")  # RAM2 ends round 5 and the game
    assert evs[-1]["type"] == "GameEnded"
    assert GAME.is_over(g.state)
    res = GAME.result(g.state)
    assert res["details"]["relics"] == [0, 2, 1, 1]
    assert res["details"]["relic_points"] == [0, 10, 5, 10]
    assert res["scores"] == [0, 10, 5, 10] == res["details"]["chests"]
    assert res["ranks"] == [4, 1, 3, 1] and res["winners"] == [1, 3]
    view = GAME.view(g.state, 0)
    assert view["relics_brought_back"] == 4
    assert view["removed"] == ["SPIDER2", "R2", "SNAKE2", "LAVA2", "BOULDER2", "RAM2"]
    assert view["phase"] == "game_over" and view["round"] == 5
    assert view["path"] == [] and view["path_rubies"] == 0
    assert view["deck_size"] == 35 - 6 - 4
    assert all(p["pocket"] == 0 and not p["in_cave"] for p in view["players"])
    assert [p["chest"] for p in view["players"]] == [0, 10, 5, 10]  # public after the end


def test_example5_same_trap_type_ends_two_rounds():
    decks = [
        deck("T1"),
        deck("SNAKE1", "SNAKE2"),
        deck("T2"),
        deck("SNAKE1", "SNAKE3"),
        deck("SNAKE1", "T3"),
    ]
    g = new_game(3, *decks)
    evs = all_(g, "return")  # round 1: everyone returns
    assert of_type(evs, "RoundEnded")[0]["data"] == {
        "round": 1, "reason": "all_returned", "removed_trap": None, "removed_relics": []}
    evs = all_(g, "continue")  # round 2: second SNAKE
    assert of_type(evs, "RoundEndedByTrap")[0]["data"]["trap"] == "SNAKE"
    r3 = of_type(evs, "RoundStarted")[0]["data"]
    assert composition(r3["deck"])["SNAKE"] == 2
    all_(g, "return")  # round 3: everyone returns
    evs = all_(g, "continue")  # round 4: second SNAKE again
    assert of_type(evs, "RoundEnded")[0]["data"]["removed_trap"] == "SNAKE3"
    r5 = of_type(evs, "RoundStarted")[0]["data"]
    assert r5["round"] == 5 and r5["deck_size"] == 33
    assert composition(r5["deck"]) == {"treasure": 15, "trap": 13, "relic": 5, "SNAKE": 1,
                                       "SPIDER": 3, "LAVA": 3, "BOULDER": 3, "RAM": 3}
    assert GAME.view(g.state, None)["removed"] == ["SNAKE2", "SNAKE3"]
    # round 5: the lone SNAKE is harmless
    assert GAME.view(g.state, None)["traps_on_path"] == {"SNAKE": 1}
    assert g.awaiting() == [0, 1, 2]
    evs = all_(g, "continue")
    assert of_type(evs, "CardRevealed")[0]["data"]["card"] == "T3"
    evs = all_(g, "return")
    assert evs[-1]["type"] == "GameEnded"
    # T1 and T2 (3 players) only left rubies on the path; T3 gave 1 each in round 5
    assert GAME.result(g.state)["scores"] == [1, 1, 1]


def test_example6_tie_shares_the_win():
    g = random_playout(GAME, players(3), {}, b"ex6")
    state = clone(g.state)
    state["chest"] = [40, 40, 37]
    state["taken"] = [["R1"], [], []]
    state["relic_points"] = [5, 0, 0]
    res = GAME.result(state)
    assert res["scores"] == [40, 40, 37]
    assert res["ranks"] == [1, 1, 3]
    assert res["winners"] == [0, 1]
    assert res["details"] == {"chests": [40, 40, 37], "relics": [1, 0, 0],
                              "relic_points": [5, 0, 0]}


def test_game_ended_event_matches_result():
    g = random_playout(GAME, players(5), {}, b"ended", pick_seed=3)
    ended = g.events[-1]
    assert ended["type"] == "GameEnded"
    res = GAME.result(g.state)
    assert ended["data"] == {"scores": res["scores"], "winners": res["winners"]}


# -- randomness and setup overrides ---------------------------------------------------------

def test_full_round_decks_use_no_randomness():
    decks = [Rng(b"perm", r).shuffled(CANONICAL) for r in range(1, 6)]
    options = GAME.normalize_options({"setup": {"round_decks": decks}}, players(4))
    state = GAME.initial(players(4), options)
    evs, _ = GAME.create(state, NoRandomness())
    assert evs[0]["data"]["deck"] == decks[0]
    a = random_playout(GAME, players(4), options, b"seed-a", pick_seed=7)
    b = random_playout(GAME, players(4), options, b"seed-b", pick_seed=7)
    assert a.events[1:] == b.events[1:]


def test_round_decks_are_restricted_to_cards_in_deck():
    decks = [deck("T1", "SPIDER1", "SPIDER2"), list(reversed(CANONICAL))]
    g = new_game(3, *decks)
    all_(g, "continue")
    evs = all_(g, "continue")
    r2 = of_type(evs, "RoundStarted")[0]["data"]["deck"]
    assert r2 == [c for c in reversed(CANONICAL) if c != "SPIDER2"]


def test_normalize_options_valid():
    assert GAME.normalize_options({}, players(3)) == {}
    decks = [deck(), deck("R5")]
    out = GAME.normalize_options({"setup": {"round_decks": decks}}, players(3))
    assert out == {"setup": {"round_decks": decks}}


@pytest.mark.parametrize("options, code, details", [
    ({"variant": "x"}, "unknown_option", {"option": "variant"}),
    ({"clock": {"per_decision_ms": 1000}}, "unknown_option", {"option": "clock"}),
    ({"setup": {"deck_order": []}}, "unknown_option", {"option": "setup.deck_order"}),
    ({"setup": {"round_decks": "T1"}}, "invalid_setup",
     {"option": "setup.round_decks", "expected": {"type": "array"}}),
    ({"setup": {"round_decks": [deck()] * 6}}, "invalid_setup",
     {"option": "setup.round_decks", "expected": {"maxItems": 5}}),
    ({"setup": {"round_decks": [deck(), deck()[:-1]]}}, "invalid_setup",
     {"option": "setup.round_decks.1", "expected": {"minItems": 35}}),
    ({"setup": {"round_decks": [deck()[:-1] + ["R1"]]}}, "invalid_setup",
     {"option": "setup.round_decks.0", "expected": {"uniqueItems": True}}),
    ({"setup": {"round_decks": [deck()[:-1] + ["T99"]]}}, "invalid_setup",
     {"option": "setup.round_decks.0.34", "expected": {"enum": CANONICAL}}),
    ({"setup": {"round_decks": [deck() + ["T99"]]}}, "invalid_setup",
     {"option": "setup.round_decks.0", "expected": {"maxItems": 35}}),
    ({"setup": {"round_decks": [deck()[:-1] + [5]]}}, "invalid_setup",
     {"option": "setup.round_decks.0.34", "expected": {"type": "string"}}),
    ({"setup": {"round_decks": [deck()[:-1] + [["R5"]]]}}, "invalid_setup",
     {"option": "setup.round_decks.0.34"}),
    ({"setup": {"round_decks": [None]}}, "invalid_setup", {"option": "setup.round_decks.0"}),
    ({"setup": {"round_decks": [{"a": 1}]}}, "invalid_setup",
     {"option": "setup.round_decks.0", "expected": {"type": "array"}}),
    ({"setup": "custom"}, "invalid_setup",
     {"option": "setup", "expected": {"type": ["object", "null"]}}),
])
def test_normalize_options_rejects(options, code, details):
    with pytest.raises(InvalidOptions) as exc:
        GAME.normalize_options(options, players(3))
    assert exc.value.code == code
    for k, v in details.items():
        assert exc.value.details[k] == v
    with pytest.raises(InvalidOptions):
        LocalGame(GAME, players(3), options, b"x")


# -- hostile actions and turn checks ---------------------------------------------------------

@pytest.mark.parametrize("action, code", [
    ({"type": "decide"}, "missing_field"),
    ({"type": "decide", "choice": "CONTINUE"}, "invalid_field"),
    ({"type": "decide", "choice": ""}, "invalid_field"),
    ({"type": "decide", "choice": 1}, "invalid_field"),
    ({"type": "decide", "choice": True}, "invalid_field"),
    ({"type": "decide", "choice": None}, "invalid_field"),
    ({"type": "decide", "choice": ["return"]}, "invalid_field"),
    ({"type": "decide", "choice": {"return": 1}}, "invalid_field"),
    ({"type": "decide", "choice": 10 ** 40}, "invalid_field"),
    ({"type": "decide", "choice": "return", "seat": 1}, "unexpected_field"),
    ({"type": "decide", "choice": "return", "x": {"y": [1]}}, "unexpected_field"),
    ({"type": "pass"}, "unknown_action"),
    ({"type": "Decide", "choice": "return"}, "unknown_action"),
    ({"type": "resign"}, "unknown_action"),
    ({"type": 3}, "malformed_action"),
    ({"choice": "return"}, "malformed_action"),
    (["decide", "return"], "malformed_action"),
    ("decide", "malformed_action"),
    (None, "malformed_action"),
])
def test_hostile_actions(action, code):
    g = new_game(3, deck("T5a"))
    exc = illegal(GAME, g.state, 1, action)
    assert isinstance(exc, IllegalAction)
    assert exc.code == code
    # through the engine as well (never a bare exception, state untouched)
    before = clone(g.state)
    with pytest.raises(IllegalAction):
        command(GAME, g.state, 1, action, Rng(b"x", 9))
    assert g.state == before


def test_not_awaited_reasons():
    g = new_game(3, deck("T5a", "T1"))
    g.act(0, RETURN)
    with pytest.raises(NotYourTurn) as exc:
        command(GAME, g.state, 0, CONTINUE, None)
    assert exc.value.reason == "already_committed"
    g.act(1, CONTINUE)
    g.act(2, CONTINUE)
    assert g.awaiting() == [1, 2]
    with pytest.raises(NotYourTurn) as exc:
        command(GAME, g.state, 0, CONTINUE, None)
    assert exc.value.reason == "in_camp"
    assert g.legal(0) == []
    # direct decide for a seat that is not awaited is an IllegalAction, not a crash
    assert illegal(GAME, g.state, 0, CONTINUE).code == "in_camp"
    g2 = random_playout(GAME, players(3), {}, b"over")
    with pytest.raises(NotYourTurn) as exc:
        command(GAME, g2.state, 0, CONTINUE, None)
    assert exc.value.reason == "game_over"
    assert GAME.awaiting(g2.state) == []


# -- information leaks ----------------------------------------------------------------------

def check_no_leak(g: LocalGame) -> None:
    state = g.state
    over = GAME.is_over(state)
    n = state["n"]
    for viewer in list(range(n)) + [None]:
        view = GAME.view(state, viewer)
        assert set(view) == {"round", "phase", "path", "path_rubies", "deck_size", "removed",
                             "relics_brought_back", "traps_on_path", "players"}
        for p in view["players"]:
            mine = viewer == p["seat"]
            if not over and not mine:
                assert p["chest"] is None
            if not mine:
                assert p["choice"] is None
            assert p["committed"] == (state["in_cave"][p["seat"]]
                                      and state["choice"][p["seat"]] is not None)
            if mine and p["committed"]:
                assert p["choice"] == state["choice"][p["seat"]]
        if not over:
            for ev in g.events[1:]:
                seen = visible(GAME, ev, viewer, False)
                if ev["type"] == "RoundStarted":
                    assert "deck" not in seen["data"]
                    assert seen["data"]["deck_size"] == ev["data"]["deck_size"]
                elif ev["type"] == "ChoiceCommitted" and ev["seat"] != viewer:
                    assert seen["data"] == {}
                else:
                    assert seen == ev


def test_views_do_not_depend_on_other_seats_pending_choice():
    g = new_game(4, deck("T7a", "T1"))
    base = {s: GAME.view(g.state, s) for s in [0, 2, 3, None]}
    for choice in CONTINUE, RETURN:
        evs, after = command(GAME, g.state, 1, choice, None)
        for viewer, before in base.items():
            now = GAME.view(after, viewer)
            expected = clone(before)
            expected["players"][1]["committed"] = True
            assert now == expected
            assert visible(GAME, evs[0], viewer, False)["data"] == {}
        assert GAME.view(after, 1)["players"][1]["choice"] == choice["choice"]
        assert GAME.view(after, ALL)["players"][1]["choice"] == choice["choice"]


def test_visible_does_not_mutate():
    g = new_game(3, deck("T1"))
    g.act(0, CONTINUE)
    for ev in g.events[1:]:
        snapshot = clone(ev)
        for viewer in (0, 1, 2, None):
            GAME.visible(ev, viewer)
        assert ev == snapshot


def test_every_event_and_every_version_is_served_as_declared():
    """Random games serve every event type, and the state at every version (the states inside
    a command that GET /states/{version} serves: a second trap on the path, say) matches the
    declared schemas for each seat, a spectator and ALL."""
    served = set()
    for n, seed in ((3, 4), (8, 2)):
        g, types = walk(GAME, n, {}, seed, lambda game, state, seat, legal, rnd:
                        rnd.choice(legal))
        check_history(GAME, g, [*range(n), None, ALL])
        served |= set(types)
    assert set(GAME.event_schemas) <= served


def test_served_schemas_refuse_what_diamant_never_serves():
    """The declared schemas are strict: a client generated from them can rely on every field."""
    g = new_game(4, deck("T7a", "R1", "SPIDER1"))
    all_(g, "continue")
    state = Draft202012Validator(GAME.state_schema)
    view = GAME.view(g.state, 0)
    assert view["path"] == ["T7a", "R1"] and state.is_valid(view)
    for broken in ({**view, "deck": ["T1"]},                       # an unknown (secret) field
                   {**view, "path": ["T7a", "R6"]},                 # no card R6
                   {**view, "phase": "reveal"},                     # no such phase
                   {**view, "traps_on_path": {"SPIDER": 3}},        # the 2nd of a type ends it
                   {**view, "players": view["players"][:2]}):       # Diamant has 3-8 seats
        assert not state.is_valid(broken)
    revealed = Draft202012Validator(GAME.event_schemas["CardRevealed"])
    data = of_type(g.events, "CardRevealed")[-1]["data"]
    assert revealed.is_valid(data)
    assert not revealed.is_valid({**data, "card": "T6"})
    assert not revealed.is_valid({k: v for k, v in data.items() if k != "recipients"})
    choice = Draft202012Validator(GAME.event_schemas["ChoiceCommitted"])
    assert choice.is_valid({}) and not choice.is_valid({"choice": "pass"})


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(n=st.integers(3, 8), seed=st.binary(min_size=1, max_size=8), pick=st.integers(0, 10**6))
def test_no_leaks_during_random_play(n, seed, pick):
    random_playout(GAME, players(n), {}, seed, pick_seed=pick, check=check_no_leak)


# -- properties -----------------------------------------------------------------------------

def check_invariants(g: LocalGame) -> None:
    s = g.state
    cards = s["deck"] + s["path"] + s["removed"] + [c for t in s["taken"] for c in t]
    assert sorted(cards) == sorted(CANONICAL)
    assert s["relics_brought_back"] == sum(len(t) for t in s["taken"])
    assert s["path_rubies"] >= 0 and all(p >= 0 for p in s["pocket"])
    view = GAME.view(s, ALL)
    assert view["deck_size"] == len(s["deck"])
    assert sum(view["traps_on_path"].values()) == sum(1 for c in s["path"] if c in TRAP_TYPE)
    assert all(v in (1, 2) for v in view["traps_on_path"].values())


def check_ledger(g: LocalGame) -> None:
    """Value conservation and round structure, computed from the event log alone."""
    n = len(g.events[0]["data"]["players"])
    pocket = [0] * n
    banked = [0] * n
    relic_pts = [0] * n
    path = 0
    revealed = lost = leftover = 0
    rounds_started, rounds_ended = [], []
    for ev in g.events[1:]:
        d = ev["data"]
        if ev["type"] == "RoundStarted":
            rounds_started.append(d["round"])
            assert len(d["deck"]) == d["deck_size"]
            assert path == 0 and pocket == [0] * n
        elif ev["type"] == "CardRevealed":
            if d["kind"] == "treasure":
                assert d["value"] == TREASURE_VALUE[d["card"]]
                assert d["value"] == d["share_each"] * len(d["recipients"]) + d["remainder"]
                revealed += d["value"]
                for seat in d["recipients"]:
                    pocket[seat] += d["share_each"]
                path += d["remainder"]
            else:
                assert d["value"] is None and d["share_each"] == d["remainder"] == 0
                assert d["recipients"] == []
            assert d["path_rubies"] == path
        elif ev["type"] == "PlayersReturned":
            k = len(d["seats"])
            assert path == d["share_each"] * k + d["remainder"]
            for seat in d["seats"]:
                banked[seat] += pocket[seat] + d["share_each"]
                pocket[seat] = 0
            if k > 1:
                assert d["relics_taken"] == [] and d["relic_values"] == []
            else:
                relic_pts[d["seats"][0]] += sum(d["relic_values"])
            path = d["remainder"]
        elif ev["type"] == "RoundEndedByTrap":
            for seat in range(n):
                assert d["lost_pockets"][seat] == pocket[seat]
                lost += pocket[seat]
                pocket[seat] = 0
        elif ev["type"] == "RoundEnded":
            rounds_ended.append(d["round"])
            assert pocket == [0] * n
            leftover += path
            path = 0
    assert rounds_started == rounds_ended == [1, 2, 3, 4, 5]
    assert revealed == sum(banked) + lost + leftover
    res = GAME.result(g.state)
    assert res["scores"] == [banked[s] + relic_pts[s] for s in range(n)]
    assert res["details"]["relic_points"] == relic_pts
    values = [v for ev in g.events if ev["type"] == "PlayersReturned"
              for v in ev["data"]["relic_values"]]
    assert values == [5, 5, 5, 10, 10][:len(values)]


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(n=st.integers(3, 8), seed=st.binary(min_size=1, max_size=8), pick=st.integers(0, 10**6))
def test_random_play_properties(n, seed, pick):
    g = random_playout(GAME, players(n), {}, seed, pick_seed=pick, check=check_invariants)
    check_ledger(g)


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(n=st.integers(3, 8),
       decks=st.lists(st.permutations(CANONICAL), max_size=5),
       pick=st.integers(0, 10**6))
def test_random_play_with_round_decks(n, decks, pick):
    options = {"setup": {"round_decks": [list(d) for d in decks]}}
    g = random_playout(GAME, players(n), options, b"rd", pick_seed=pick, check=check_invariants)
    check_ledger(g)
    started = [ev["data"]["deck"] for ev in g.events if ev["type"] == "RoundStarted"]
    for r, d in enumerate(decks):
        present = set(started[r])
        assert started[r] == [c for c in d if c in present]


@settings(max_examples=40, deadline=None)
@given(n=st.integers(3, 8), seed=st.binary(min_size=1, max_size=8))
def test_all_return_and_all_continue_strategies(n, seed):
    """Degenerate strategies: always everyone returns / nobody ever returns."""
    g = LocalGame(GAME, players(n), {}, seed)
    while not GAME.is_over(g.state):
        all_(g, "return")
    check_ledger(g)
    assert sum(ev["type"] == "CardRevealed" for ev in g.events) == 5
    g = LocalGame(GAME, players(n), {}, seed)
    while not GAME.is_over(g.state):
        all_(g, "continue")
    check_ledger(g)
    assert GAME.result(g.state)["scores"] == [0] * n
    assert GAME.result(g.state)["winners"] == list(range(n))
    assert sum(ev["type"] == "RoundEndedByTrap" for ev in g.events) == 5


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(n=st.integers(3, 8), seed=st.binary(min_size=1, max_size=8),
       p_continue=st.floats(0.6, 0.98), pick=st.integers(0, 10**6))
def test_biased_play_reaches_deep_rounds(n, seed, p_continue, pick):
    """Mostly-continue play turns long paths (relics, many traps); invariants and no leaks."""
    import random

    rnd = random.Random(pick)
    g = LocalGame(GAME, players(n), {}, seed)
    while not GAME.is_over(g.state):
        check_invariants(g)
        seat = rnd.choice(g.awaiting())
        before = clone(g.state)
        g.act(seat, CONTINUE if rnd.random() < p_continue else RETURN)
        assert before != g.state
    check_invariants(g)
    check_ledger(g)
    check_no_leak(g)
