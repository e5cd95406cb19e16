"""Tides of Time: every worked example of the spec (T1-T6), properties, hostile actions, leaks."""

from __future__ import annotations

import json
from collections import Counter

import pytest

from service.engine import visible as engine_visible
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from jsonschema import Draft202012Validator

from service.engine import ALL, IllegalAction, InvalidOptions, NotYourTurn, command
from service.engine.fold import clone
from service.engine.local import LocalGame
from service.engine.rng import Rng
from service.games.tides_of_time import (CARDS, GAME, SUITS, effective_counts, score_kingdoms,
                                         shuffled_deck)
from tests.games.harness import illegal, random_playout
from tests.games.schema_walk import check_history, walk

PLAYERS = [{"name": "A"}, {"name": "B"}]
T1_DECK = [17, 1, 15, 12, 7, 2, 10, 14, 6, 9, 5, 16, 3, 18, 11, 8, 13, 4]


def new_game(deck=T1_DECK, seed=b"tides", **options) -> LocalGame:
    if deck is not None:
        options["setup"] = {"deck_order": list(deck)}
    return LocalGame(GAME, PLAYERS, options, seed)


def play_picks(g: LocalGame, pairs) -> None:
    for a, b in pairs:
        g.act(0, {"type": "pick", "card": a})
        g.act(1, {"type": "pick", "card": b})


def points(lines) -> dict[int, int]:
    return {ln["card"]: ln["points"] for ln in lines}


def hand(g, seat):
    return sorted(g.state["hands"][seat])


def counts_tuple(kingdom) -> tuple:
    n = effective_counts(kingdom)
    return tuple(n[s] for s in SUITS)


# ---------------------------------------------------------------------------------------------
# Data table
# ---------------------------------------------------------------------------------------------

def test_card_table_design_check():
    assert sorted(CARDS) == list(range(1, 19))
    suits = Counter(c["suit"] for c in CARDS.values())
    assert suits == {**{s: 3 for s in SUITS}, None: 3}
    for kind in ("EACH", "MAJ"):
        cards = [c for c in CARDS.values() if c["kind"] == kind]
        assert len(cards) == 5
        assert sorted(c["params"]["suit"] for c in cards) == sorted(SUITS)
        assert all(c["params"]["suit"] != c["suit"] for c in cards)
    sets = {c["number"]: (sorted(c["params"]["suits"]), c["params"]["points"])
            for c in CARDS.values() if c["kind"] == "SET"}
    assert sets == {5: (sorted(["palace", "stronghold", "temple"]), 9),
                    9: (sorted(SUITS), 13), 14: (["garden", "library"], 5)}
    kinds = Counter(c["kind"] for c in CARDS.values())
    assert kinds == {"EACH": 5, "MAJ": 5, "SET": 3, "MISSING": 1, "SINGLES": 1, "BEST": 1,
                     "TIES": 1, "DOUBLE": 1}
    assert len({c["id"] for c in CARDS.values()}) == 18


class Mulberry32:
    """The reference generator of scarabya.md 4.3 (below(n) = next() mod n)."""

    def __init__(self, seed: int) -> None:
        self.state = seed & 0xFFFFFFFF

    def next(self) -> int:
        m = 0xFFFFFFFF
        self.state = (self.state + 0x6D2B79F5) & m
        t = self.state
        t = ((t ^ (t >> 15)) * (t | 1)) & m
        t = t ^ ((t + (((t ^ (t >> 7)) * (t | 61)) & m)) & m)
        return (t ^ (t >> 14)) & m

    def below(self, n: int) -> int:
        return self.next() % n


def test_shuffle_conformance_vector():
    ref = Mulberry32(1)
    assert [ref.next() for _ in range(3)] == [2693262067, 11749833, 2265367787]
    assert shuffled_deck(Mulberry32(1)) == [7, 4, 14, 15, 13, 6, 10, 3, 11, 5, 9, 1, 18, 2, 16,
                                            17, 12, 8]


def test_create_makes_exactly_the_documented_rng_calls():
    rng = Rng(b"seed", 1)
    deck = shuffled_deck(rng)
    assert rng.draws == 17
    same = Rng(b"seed", 1).shuffled(list(range(1, 19)))
    assert deck == same  # identical to the engine's own Fisher-Yates from [1..18]
    g = LocalGame(GAME, PLAYERS, {}, b"seed")
    dealt = g.events[1]["data"]
    assert dealt["hands"] == [deck[:5], deck[5:10]] and dealt["pile"] == deck[10:]


def test_deck_order_uses_no_randomness():
    class NoRng:
        def below(self, n):  # pragma: no cover - a failure if called
            raise AssertionError("no draw expected")
    state = GAME.initial(PLAYERS, GAME.normalize_options(
        {"setup": {"deck_order": T1_DECK}}, PLAYERS))
    events, _ = GAME.create(state, NoRng())
    assert events[0]["data"]["hands"] == [[17, 1, 15, 12, 7], [2, 10, 14, 6, 9]]


# ---------------------------------------------------------------------------------------------
# Worked examples
# ---------------------------------------------------------------------------------------------

def test_t1_round_one_draft_and_the_seeds_25_point_kingdom():
    g = new_game()
    assert hand(g, 0) == [1, 7, 12, 15, 17] and hand(g, 1) == [2, 6, 9, 10, 14]
    assert g.state["pile"] == [5, 16, 3, 18, 11, 8, 13, 4]
    assert g.awaiting() == [0, 1]
    expected_after = [([2, 6, 9, 10], [1, 7, 12, 15]), ([1, 7, 15], [6, 9, 10]),
                      ([9, 10], [7, 15])]
    for (a, b), (ha, hb) in zip([(17, 14), (2, 12), (1, 6)], expected_after):
        g.act(0, {"type": "pick", "card": a})
        assert g.awaiting() == [1]
        g.act(1, {"type": "pick", "card": b})
        assert (hand(g, 0), hand(g, 1)) == (ha, hb)
    g.act(0, {"type": "pick", "card": 10})
    events = g.act(1, {"type": "pick", "card": 7})
    # The fifth pick is played by the engine as a forced move (15 for A, 9 for B).
    forced = [e for e in events if e.get("forced")]
    commits = [e for e in forced if e["type"] == "PickCommitted"]
    assert [(e["seat"], e["data"]["card"]) for e in commits] == [(0, 15), (1, 9)]
    reveal = [e for e in forced if e["type"] == "PicksRevealed"]
    assert reveal[-1]["data"] == {"round": 1, "pick": 5, "cards": [15, 9]}
    assert g.state["played"] == [[17, 2, 1, 10, 15], [14, 12, 6, 7, 9]]
    assert counts_tuple(g.state["played"][0]) == (4, 0, 0, 1, 1)
    assert counts_tuple(g.state["played"][1]) == (0, 1, 2, 1, 1)
    scored = next(e for e in events if e["type"] == "RoundScored")["data"]
    assert scored["totals"] == [25, 18]
    assert points(scored["per_card"][0]) == {17: 0, 2: 7, 1: 0, 10: 6, 15: 12}
    assert points(scored["per_card"][1]) == {14: 5, 12: 7, 6: 6, 7: 0, 9: 0}
    divide = next(ln for ln in scored["per_card"][0] if ln["card"] == 2)
    assert divide["mine"] == 1 and divide["theirs"] == 1 and divide["tie_won"] is True
    eye = next(ln for ln in scored["per_card"][0] if ln["card"] == 10)
    assert eye["missing"] == ["library", "garden"]
    assert g.state["phase"] == "RELIC" and g.awaiting() == [0, 1]
    view = GAME.view(g.state, None)
    assert [s["round_scores"] for s in view["seats"]] == [[25], [18]]


def round_one(g=None):
    g = g or new_game()
    play_picks(g, [(17, 14), (2, 12), (1, 6), (10, 7)])
    return g


def test_t2_relic_phase_after_round_one():
    g = round_one()
    assert len(GAME.legal_actions(g.state, 0)) == 20
    assert illegal(GAME, g.state, 0, {"type": "relic", "keep": 1, "remove": 1}).code == "same_card"
    assert illegal(GAME, g.state, 1, {"type": "relic", "keep": 3, "remove": 9}).code == \
        "not_played_this_round"
    refused = illegal(GAME, g.state, 1, {"type": "relic", "keep": 6, "remove": 17})
    assert refused.code == "not_played_this_round"
    assert refused.details == {"card": 17, "fields": {"remove": [
        "remove: card 17 is not one of your 5 cards of this round"]}}
    assert illegal(GAME, g.state, 0, {"type": "pick", "card": 17}).code == "wrong_phase"
    g.act(0, {"type": "relic", "keep": 1, "remove": 10})
    # A's choice is hidden from B and spectators until B commits.
    assert GAME.view(g.state, 1)["seats"][0]["pending"] is None
    assert GAME.view(g.state, 1)["seats"][0]["committed"] is True
    assert GAME.view(g.state, 0)["seats"][0]["pending"] == {"keep": 1, "remove": 10}
    last = g.events[-1]
    assert GAME.visible(last, 1)["data"] == {} and GAME.visible(last, None)["data"] == {}
    with pytest.raises(NotYourTurn) as exc:
        command(GAME, g.state, 0, {"type": "relic", "keep": 2, "remove": 10}, None)
    assert exc.value.reason == "already_committed"
    events = g.act(1, {"type": "relic", "keep": 6, "remove": 9})
    revealed = next(e for e in events if e["type"] == "RelicsRevealed")
    assert revealed["data"]["kept"] == [1, 6] and revealed["data"]["removed"] == [10, 9]
    draws = [(e["seat"], e["data"]["cards"]) for e in events if e["type"] == "CardsDrawn"]
    assert draws == [(0, [5, 16]), (1, [3, 18])]
    assert g.state["removed"] == [10, 9]
    assert hand(g, 0) == [2, 5, 15, 16, 17] and hand(g, 1) == [3, 7, 12, 14, 18]
    assert g.state["pile"] == [11, 8, 13, 4]
    assert g.state["relics"] == [[1], [6]]
    assert g.state["round"] == 2 and g.state["phase"] == "DRAFT" and g.awaiting() == [0, 1]


def test_relic_phase_view_shows_the_cards_taken_back_into_hand():
    """Spec 5.3.1: the 5 cards played this round go back into hand for the relic choice; the
    owner sees them as its hand, everybody else sees 5 hidden cards (they stay listed publicly
    under played_this_round and kingdom); after the reveal the hand is the 3 leftovers + 2
    drawn (T2)."""
    g = round_one()
    for seat, cards in ((0, [1, 2, 10, 15, 17]), (1, [6, 7, 9, 12, 14])):
        own = GAME.view(g.state, seat)["seats"][seat]
        assert sorted(own["hand"]) == cards and own["hand_size"] == 5
        assert sorted(own["played_this_round"]) == cards
        for viewer in (1 - seat, None):
            other = GAME.view(g.state, viewer)["seats"][seat]
            assert other["hand"] is None and other["hand_size"] == 5
    g.act(0, {"type": "relic", "keep": 1, "remove": 10})
    assert sorted(GAME.view(g.state, 0)["seats"][0]["hand"]) == [1, 2, 10, 15, 17]
    g.act(1, {"type": "relic", "keep": 6, "remove": 9})
    own = GAME.view(g.state, 0)["seats"][0]
    assert sorted(own["hand"]) == [2, 5, 15, 16, 17] and own["played_this_round"] == []
    assert GAME.view(g.state, 0)["seats"][1]["hand_size"] == 5


def round_two(g=None):
    g = round_one(g)
    g.act(0, {"type": "relic", "keep": 1, "remove": 10})
    g.act(1, {"type": "relic", "keep": 6, "remove": 9})
    play_picks(g, [(17, 14), (18, 2), (15, 12), (7, 16)])
    return g


def test_t3_round_two_roof_doubles_four_suits_and_a_relic_wins_a_tie():
    g = round_one()
    g.act(0, {"type": "relic", "keep": 1, "remove": 10})
    g.act(1, {"type": "relic", "keep": 6, "remove": 9})
    checks = [([3, 7, 12, 18], [2, 5, 15, 16]), ([5, 15, 16], [3, 7, 12]), ([3, 7], [5, 16])]
    for (a, b), (ha, hb) in zip([(17, 14), (18, 2), (15, 12)], checks):
        g.act(0, {"type": "pick", "card": a})
        g.act(1, {"type": "pick", "card": b})
        assert (hand(g, 0), hand(g, 1)) == (ha, hb)
    g.act(0, {"type": "pick", "card": 7})
    events = g.act(1, {"type": "pick", "card": 16})
    assert [e["data"]["card"] for e in events if e["type"] == "PickCommitted" and
            e.get("forced")] == [5, 3]
    kingdoms = [g.state["relics"][s] + g.state["played"][s] for s in (0, 1)]
    assert kingdoms == [[1, 17, 18, 15, 7, 5], [6, 14, 2, 12, 16, 3]]
    assert counts_tuple(kingdoms[0]) == (2, 2, 2, 2, 0)
    assert counts_tuple(kingdoms[1]) == (2, 1, 0, 1, 1)
    scored = next(e for e in events if e["type"] == "RoundScored")["data"]
    assert points(scored["per_card"][0]) == {1: 0, 17: 0, 18: 0, 15: 6, 7: 7, 5: 0}
    assert points(scored["per_card"][1]) == {6: 0, 14: 0, 2: 7, 12: 0, 16: 8, 3: 3}
    assert scored["totals"] == [13, 18]
    port = next(ln for ln in scored["per_card"][0] if ln["card"] == 18)
    assert (port["mine"], port["theirs"]) == (7, 8)
    molehill = next(ln for ln in scored["per_card"][1] if ln["card"] == 16)
    assert (molehill["mine"], molehill["theirs"]) == (3, 0)
    # Relic phase 2.
    g.act(0, {"type": "relic", "keep": 17, "remove": 5})
    g.act(1, {"type": "relic", "keep": 16, "remove": 14})
    assert g.state["removed"] == [10, 9, 5, 14]
    assert hand(g, 0) == [7, 8, 11, 15, 18] and hand(g, 1) == [2, 3, 4, 12, 13]
    assert g.state["pile"] == [] and g.state["relics"] == [[1, 17], [6, 16]]


def test_t4_round_three_sapphire_port_and_final_result():
    g = round_two()
    g.act(0, {"type": "relic", "keep": 17, "remove": 5})
    g.act(1, {"type": "relic", "keep": 16, "remove": 14})
    play_picks(g, [(18, 13), (2, 7), (15, 3)])
    g.act(0, {"type": "pick", "card": 12})
    events = g.act(1, {"type": "pick", "card": 8})
    kingdoms = [g.state["relics"][s] + g.state["played"][s] for s in (0, 1)]
    assert kingdoms == [[1, 17, 18, 2, 15, 12, 11], [6, 16, 13, 7, 3, 8, 4]]
    assert counts_tuple(kingdoms[0]) == (4, 0, 0, 1, 4)
    assert counts_tuple(kingdoms[1]) == (1, 2, 2, 1, 0)
    scored = next(e for e in events if e["type"] == "RoundScored")["data"]
    assert points(scored["per_card"][0]) == {1: 0, 17: 0, 18: 8, 2: 7, 15: 12, 12: 0, 11: 3}
    assert points(scored["per_card"][1]) == {6: 6, 16: 8, 13: 7, 7: 0, 3: 6, 8: 0, 4: 0}
    assert scored["totals"] == [30, 27]
    library = next(ln for ln in scored["per_card"][1] if ln["card"] == 4)
    assert (library["mine"], library["theirs"], library["tie_won"]) == (1, 1, False)
    ended = events[-1]
    assert ended["type"] == "GameEnded" and ended["data"]["totals"] == [68, 63]
    assert GAME.is_over(g.state) and g.awaiting() == []
    res = GAME.result(g.state)
    assert res["scores"] == [68, 63] and res["ranks"] == [1, 2] and res["winners"] == [0]
    d = res["details"]
    assert d["round_scores"] == [[25, 13, 30], [18, 18, 27]]
    assert [r["totals"] for r in d["rounds"]] == [[25, 18], [13, 18], [30, 27]]
    assert points(d["rounds"][2]["per_card"][0])[18] == 8
    assert sum(len(k) for k in d["kingdoms"]) == 14 and d["removed"] == [10, 9, 5, 14]
    assert g.state["pile"] == [] and g.state["hands"] == [[], []]
    assert GAME.legal_actions(g.state, 0) == [] and GAME.legal_actions(g.state, 1) == []


T5_A = [1, 18, 2, 3, 4]
T5_B = [5, 6, 7, 8, 12]


@pytest.mark.parametrize("strict, a_points, a_total", [
    (False, {1: 0, 18: 8, 2: 0, 3: 3, 4: 7}, 18),
    (True, {1: 0, 18: 0, 2: 0, 3: 3, 4: 0}, 3),
])
def test_t5_zero_zero_tie_and_sapphire_port_tie(strict, a_points, a_total):
    assert counts_tuple(T5_A) == (3, 1, 0, 0, 0) and counts_tuple(T5_B) == (0, 2, 2, 0, 1)
    scored = score_kingdoms([T5_A, T5_B], strict_zero_ties=strict)
    assert points(scored["per_card"][1]) == {5: 0, 6: 6, 7: 0, 8: 3, 12: 7}
    assert points(scored["per_card"][0]) == a_points
    assert scored["totals"] == [a_total, 16]


@pytest.mark.parametrize("strict, total", [(False, 18), (True, 3)])
def test_t5_through_a_real_draft_with_the_option(strict, total):
    # A is dealt {1, 18, 2, 5, 6}, B {3, 4, 7, 8, 12}; this draft yields T5's kingdoms.
    deck = [1, 18, 2, 5, 6, 3, 4, 7, 8, 12, 9, 10, 11, 13, 14, 15, 16, 17]
    g = new_game(deck, strict_zero_ties=strict)
    play_picks(g, [(1, 7), (3, 5), (18, 8), (4, 6)])
    assert sorted(g.state["played"][0]) == sorted(T5_A)
    assert sorted(g.state["played"][1]) == sorted(T5_B)
    assert g.state["round_scores"] == [[total], [16]]
    assert GAME.view(g.state, None)["strict_zero_ties"] is strict


def test_t6a_sets_and_doubled_sets():
    a = [14, 17, 6, 9, 4, 7, 3]
    b = [5, 1, 2, 10, 11, 13, 15]
    assert counts_tuple(a) == (1, 4, 4, 1, 0) and counts_tuple(b) == (2, 1, 0, 2, 2)
    scored = score_kingdoms([a, b])
    assert points(scored["per_card"][0]) == {14: 20, 17: 0, 6: 12, 9: 0, 4: 0, 7: 0, 3: 12}
    assert points(scored["per_card"][1]) == {5: 18, 1: 0, 2: 7, 10: 3, 11: 6, 13: 0, 15: 6}
    assert scored["totals"] == [44, 40]


def test_t6b_the_maze():
    a = [9, 1, 4, 11, 14]
    b = [16, 15, 10, 3, 8]
    assert counts_tuple(a) == (1, 1, 1, 1, 1) and counts_tuple(b) == (1, 0, 1, 1, 1)
    scored = score_kingdoms([a, b])
    assert points(scored["per_card"][0]) == {9: 13, 1: 0, 4: 7, 11: 3, 14: 5}
    assert points(scored["per_card"][1]) == {16: 0, 15: 3, 10: 3, 3: 0, 8: 3}
    assert scored["totals"] == [28, 9]


def test_roof_edge_cases():
    assert counts_tuple([17, 16, 18]) == (0, 0, 0, 0, 0)  # no suited card: no effect
    assert counts_tuple([17, 1, 2, 4, 5, 7]) == (4, 4, 1, 0, 0)  # 2/2/1 -> 4/4/1
    # The Roof never changes the opponent's counts.
    scored = score_kingdoms([[17, 1, 2], [7]])
    assert scored["counts"][1]["palace"] == 0 and scored["counts"][0]["palace"] == 4


def test_section7_equal_totals_share_the_victory():
    g = round_two()
    g.act(0, {"type": "relic", "keep": 17, "remove": 5})
    g.act(1, {"type": "relic", "keep": 16, "remove": 14})
    play_picks(g, [(18, 13), (2, 7), (15, 3), (12, 8)])
    state = clone(g.state)
    state["round_scores"] = [[20, 25, 30], [25, 20, 30]]
    res = GAME.result(state)
    assert res["scores"] == [75, 75] and res["ranks"] == [1, 1] and res["winners"] == [0, 1]
    assert res["details"]["shared_victory"] is True


def test_kings_nest_does_not_break_an_equal_final_total():
    # Any finished game whose totals are equal gives two winners even if one holds the Nest.
    for seed in range(300):
        g = random_game(seed.to_bytes(4, "big"), seed)
        res = GAME.result(g.state)
        if res["scores"][0] == res["scores"][1]:
            assert res["winners"] == [0, 1] and res["ranks"] == [1, 1]
            return
    pytest.skip("no tied game in the sample")  # pragma: no cover


# ---------------------------------------------------------------------------------------------
# Options
# ---------------------------------------------------------------------------------------------

@pytest.mark.parametrize("options, code", [
    ({"setup": {"deck_order": list(range(1, 18))}}, "invalid_setup"),
    ({"setup": {"deck_order": list(range(1, 18)) + [17]}}, "invalid_setup"),
    ({"setup": {"deck_order": list(range(0, 18))}}, "invalid_setup"),
    ({"setup": {"deck_order": list(range(1, 20))}}, "invalid_setup"),
    ({"setup": {"deck_order": [str(i) for i in range(1, 19)]}}, "invalid_setup"),
    ({"setup": {"deck_order": [True] + list(range(2, 19))}}, "invalid_setup"),
    ({"setup": {"deck_order": [1.0] + list(range(2, 19))}}, "invalid_setup"),
    ({"setup": {"deck_order": "1,2,3"}}, "invalid_setup"),
    ({"setup": {"deck_order": {"a": 1}}}, "invalid_setup"),
    ({"setup": {"deck_order": [10 ** 30] + list(range(2, 19))}}, "invalid_setup"),
    ({"setup": {"deck_order": None}}, "invalid_setup"),
    ({"setup": {"decks": T1_DECK}}, "unknown_option"),
    ({"setup": [1, 2]}, "invalid_setup"),
    ({"strict_zero_ties": "yes"}, "invalid_option"),
    ({"strict_zero_ties": 1}, "invalid_option"),
    ({"bogus": 1}, "unknown_option"),
    ({"clock": {"per_decision_ms": 1000}}, "unknown_option"),  # the shell's, never the game's
])
def test_invalid_options(options, code):
    with pytest.raises(InvalidOptions) as exc:
        GAME.normalize_options(options, PLAYERS)
    assert exc.value.code == code


def test_player_count_and_defaults():
    with pytest.raises(InvalidOptions) as exc:
        GAME.normalize_options({}, PLAYERS + [{"name": "C"}])
    assert exc.value.code == "invalid_player_count"
    assert GAME.min_players == GAME.max_players == 2
    assert GAME.normalize_options({}, PLAYERS) == {"strict_zero_ties": False}
    assert GAME.type_id == "tides-of-time"


def test_catalog_schemas_accept_every_legal_action():
    jsonschema_rs = pytest.importorskip("jsonschema_rs")
    validators = {k: jsonschema_rs.validator_for(v) for k, v in GAME.action_schemas.items()}
    opts = jsonschema_rs.validator_for(GAME.options_schema)
    assert opts.is_valid({"strict_zero_ties": True, "setup": {"deck_order": T1_DECK}})
    assert not opts.is_valid({"setup": {"deck_order": T1_DECK[:17]}})
    g = round_one()
    for a in GAME.legal_actions(g.state, 0):
        assert validators[a["type"]].is_valid(a)
    g2 = new_game()
    for a in GAME.legal_actions(g2.state, 1):
        assert validators[a["type"]].is_valid(a)
    assert not validators["pick"].is_valid({"type": "pick", "card": "7"})
    assert not validators["relic"].is_valid({"type": "relic", "keep": 1})


# ---------------------------------------------------------------------------------------------
# Hostile actions
# ---------------------------------------------------------------------------------------------

HOSTILE_PICKS = [
    ({"type": "pick"}, "missing_field"),
    ({"type": "pick", "card": "17"}, "invalid_field"),
    ({"type": "pick", "card": True}, "invalid_field"),
    ({"type": "pick", "card": 17.0}, "invalid_field"),
    ({"type": "pick", "card": None}, "invalid_field"),
    ({"type": "pick", "card": [17]}, "invalid_field"),
    ({"type": "pick", "card": {"card": 17}}, "invalid_field"),
    ({"type": "pick", "card": 17, "extra": 1}, "unexpected_field"),
    ({"type": "pick", "card": 10 ** 40}, "card_not_in_hand"),
    ({"type": "pick", "card": -17}, "card_not_in_hand"),
    ({"type": "pick", "card": 0}, "card_not_in_hand"),
    ({"type": "pick", "card": 2}, "card_not_in_hand"),  # in the opponent's hand
    ({"type": "pick", "card": 5}, "card_not_in_hand"),  # in the draw pile
    ({"type": "relic", "keep": 17, "remove": 1}, "wrong_phase"),
    ({"type": "PICK", "card": 17}, "unknown_action"),
    ({"type": "resign"}, "unknown_action"),
    ({"type": ["pick"], "card": 17}, "malformed_action"),
    ({"card": 17}, "malformed_action"),
    ({}, "malformed_action"),
]


@pytest.mark.parametrize("action, code", HOSTILE_PICKS)
def test_hostile_actions_in_the_draft(action, code):
    g = new_game()
    assert illegal(GAME, g.state, 0, action).code == code


HOSTILE_RELICS = [
    ({"type": "relic"}, "missing_field"),
    ({"type": "relic", "keep": 1}, "missing_field"),
    ({"type": "relic", "keep": "1", "remove": 10}, "invalid_field"),
    ({"type": "relic", "keep": 1, "remove": False}, "invalid_field"),
    ({"type": "relic", "keep": 1, "remove": 10, "also": 2}, "unexpected_field"),
    ({"type": "relic", "keep": [1], "remove": 10}, "invalid_field"),
    ({"type": "relic", "keep": 1, "remove": 2 ** 70}, "not_played_this_round"),
    ({"type": "relic", "keep": 14, "remove": 10}, "not_played_this_round"),  # B's card
    ({"type": "relic", "keep": 1, "remove": 1}, "same_card"),
    ({"type": "pick", "card": 1}, "wrong_phase"),
]


@pytest.mark.parametrize("action, code", HOSTILE_RELICS)
def test_hostile_actions_in_the_relic_phase(action, code):
    g = round_one()
    assert illegal(GAME, g.state, 0, action).code == code


def test_engine_rejects_non_awaited_and_finished():
    g = new_game()
    g.act(0, {"type": "pick", "card": 17})
    with pytest.raises(NotYourTurn) as exc:
        g.act(0, {"type": "pick", "card": 1})
    assert exc.value.reason == "already_committed"
    with pytest.raises(IllegalAction) as exc2:
        command(GAME, g.state, 1, "pick", None)
    assert exc2.value.code == "malformed_action"
    done = random_game(b"over", 1)
    with pytest.raises(NotYourTurn):
        done.act(0, {"type": "pick", "card": 1})


def test_illegal_messages_do_not_reveal_secrets():
    g = new_game()
    exc = illegal(GAME, g.state, 0, {"type": "pick", "card": 2})
    text = json.dumps([exc.message, exc.details])
    assert "opponent" not in text and "pile" not in text and "10" not in text


# ---------------------------------------------------------------------------------------------
# Hidden information
# ---------------------------------------------------------------------------------------------

def test_views_hide_hands_pending_and_pile():
    g = new_game()
    g.act(0, {"type": "pick", "card": 17})
    for viewer in (1, None):
        v = GAME.view(g.state, viewer)
        assert v["seats"][0]["hand"] is None and v["seats"][0]["pending"] is None
        assert v["seats"][0]["hand_size"] == 5 and v["seats"][0]["committed"] is True
        assert "draw_pile" not in v and v["draw_pile_size"] == 8
        assert "deck_order" not in json.dumps(v)
    assert GAME.view(g.state, None)["seats"][1]["hand"] is None
    own = GAME.view(g.state, 0)["seats"][0]
    assert own["hand"] == [17, 1, 15, 12, 7] and own["pending"] == 17
    assert GAME.view(g.state, ALL)["draw_pile"] == [5, 16, 3, 18, 11, 8, 13, 4]


def test_events_hide_secrets_while_running():
    g = round_one()
    g.act(0, {"type": "relic", "keep": 1, "remove": 10})
    g.act(1, {"type": "relic", "keep": 6, "remove": 9})
    created = g.events[0]
    for viewer in (0, 1, None):
        # what the server serves: the engine's rule (setup hidden for every game) + the game's
        seen = [engine_visible(GAME, e, viewer, False) for e in g.events]
        c = seen[0]
        assert "deck_order" not in c["data"]["options"].get("setup", {})
        assert created["data"]["options"]["setup"]["deck_order"] == T1_DECK  # input untouched
        for e in seen:
            if e is None:
                continue
            assert "pile" not in e["data"]
            if e["type"] in ("CardsDealt", "HandsExchanged"):
                for s, h in enumerate(e["data"]["hands"]):
                    assert (h is not None) == (viewer == s)
            if e["type"] in ("PickCommitted", "CardsDrawn", "RelicCommitted") and \
                    e["seat"] != viewer:
                assert set(e["data"]) <= {"count"}
    # The engine serves everything once over; visible() never mutates its input.
    before = clone(g.events)
    for e in g.events:
        GAME.visible(e, 1)
    assert g.events == before


def test_every_event_and_every_version_is_served_as_declared():
    """Random games of both variants serve every event type, and the state at every version
    (the states inside a command that GET /states/{version} serves: SCORED between round 3's
    scoring and the end, say) matches the declared schemas for each seat, a spectator and
    ALL."""
    served = set()
    for options, seed in (({}, 2), ({"strict_zero_ties": True}, 3)):
        g, types = walk(GAME, 2, options, seed, lambda game, state, seat, legal, rnd:
                        rnd.choice(legal))
        check_history(GAME, g, [0, 1, None, ALL])
        served |= set(types)
    assert set(GAME.event_schemas) <= served


def test_served_schemas_refuse_what_tides_of_time_never_serves():
    """The declared schemas are strict: a client generated from them can rely on every field."""
    g = round_one()
    state = Draft202012Validator(GAME.state_schema)
    view = GAME.view(g.state, 0)
    assert view["phase"] == "RELIC" and state.is_valid(view)
    seat = view["seats"][0]
    for broken in ({**view, "deck_order": T1_DECK},                     # an unknown field
                   {**view, "phase": "SCORING"},                        # no such phase
                   {**view, "removed": [19]},                           # no card 19
                   {**view, "seats": [{**seat, "pending": {"keep": 1}}, view["seats"][1]]},
                   {**view, "seats": [seat]}):                          # two seats, always
        assert not state.is_valid(broken)
    scored = Draft202012Validator(GAME.event_schemas["RoundScored"])
    data = next(e for e in g.events if e["type"] == "RoundScored")["data"]
    assert scored.is_valid(data)
    line = data["per_card"][0][0]
    assert line["card"] == 17 and line["kind"] == "DOUBLE"
    for wrong in ({**line, "kind": "EACH"},                             # 17 is not an EACH card
                  {**line, "id": "kings_nest"},                         # nor card 1
                  {**line, "bonus": 3}):                                # nothing else is said
        assert not scored.is_valid({**data, "per_card": [[wrong], data["per_card"][1]]})
    pick = Draft202012Validator(GAME.event_schemas["PickCommitted"])
    assert pick.is_valid({}) and not pick.is_valid({"card": 0})


def _perturb_secrets_of(state, seat):
    """Another state that differs from ``state`` only in what ``seat`` must keep secret from
    its opponent: ``seat``'s hand (a card swapped with the pile), its pending choice, the pile
    order."""
    s2 = clone(state)
    h, pile = s2["hands"][seat], s2["pile"]
    if h and pile and s2["pending"][seat] is None:
        h[0], pile[-1] = pile[-1], h[0]
    pile.reverse()
    pending = s2["pending"][seat]
    if isinstance(pending, int):
        others = [c for c in h if c != pending]
        if others:
            s2["pending"][seat] = others[0]
    elif isinstance(pending, dict):
        s2["pending"][seat] = {"keep": pending["remove"], "remove": pending["keep"]}
    return s2


def _leak_check(g: LocalGame) -> None:
    state = g.state
    if GAME.is_over(state):
        return
    for seat in (0, 1):
        other = 1 - seat
        s2 = _perturb_secrets_of(state, seat)
        for viewer in (other, None):
            assert GAME.view(s2, viewer) == GAME.view(state, viewer)
        assert GAME.legal_actions(s2, other) == GAME.legal_actions(state, other)
        assert GAME.awaiting(s2) == GAME.awaiting(state)


# ---------------------------------------------------------------------------------------------
# Properties: random legal play to the end
# ---------------------------------------------------------------------------------------------

def _invariants(g: LocalGame) -> None:
    st_ = g.state
    zones = (st_["hands"][0] + st_["hands"][1] + st_["played"][0] + st_["played"][1] +
             st_["relics"][0] + st_["relics"][1] + st_["pile"] + st_["removed"])
    assert sorted(zones) == list(range(1, 19)), "cards are conserved"
    rnd = st_["round"]
    assert [len(r) for r in st_["relics"]] == [rnd - 1, rnd - 1]
    assert len(st_["removed"]) == 2 * (rnd - 1)
    if st_["phase"] == "DRAFT":
        k = st_["pick"]
        assert [len(h) for h in st_["hands"]] == [6 - k, 6 - k]
        assert [len(p) for p in st_["played"]] == [k - 1, k - 1]
        assert len(st_["pile"]) == 8 - 4 * (rnd - 1)
    for r in st_["rounds"]:
        for s in (0, 1):
            assert r["totals"][s] == sum(ln["points"] for ln in r["per_card"][s])
            assert all(isinstance(ln["points"], int) and ln["points"] >= 0
                       for ln in r["per_card"][s])
    for s in (0, 1):
        assert st_["totals"][s] == sum(st_["round_scores"][s])
        assert st_["round_scores"][s] == [r["totals"][s] for r in st_["rounds"]]
    _leak_check(g)


def random_game(seed: bytes, pick_seed: int, **options) -> LocalGame:
    return random_playout(GAME, PLAYERS, options, seed, pick_seed=pick_seed, check=_invariants)


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.binary(min_size=1, max_size=16), pick_seed=st.integers(0, 2 ** 32),
       strict=st.booleans())
def test_random_playouts(seed, pick_seed, strict):
    g = random_game(seed, pick_seed, strict_zero_ties=strict)
    res = GAME.result(g.state)
    d = res["details"]
    assert len(d["rounds"]) == 3 and [len(k) for k in d["kingdoms"]] == [7, 7]
    assert len(d["removed"]) == 4 and g.state["pile"] == []
    for s in (0, 1):
        assert res["scores"][s] == sum(d["round_scores"][s]) == sum(
            ln["points"] for r in d["rounds"] for ln in r["per_card"][s])
    assert res["winners"] == [s for s in (0, 1) if res["scores"][s] == max(res["scores"])]
    # Each round's events re-score identically from the kingdoms they show.
    for r in d["rounds"]:
        assert score_kingdoms(r["kingdoms"], strict)["per_card"] == r["per_card"]
    # 5th picks are always forced, never asked: exactly 6 forced commits in a game.
    forced = [e for e in g.events if e.get("forced")]
    assert sum(e["type"] == "PickCommitted" for e in forced) == 6
    assert GAME.view(g.state, 1)["seats"][0]["hand"] == []


@settings(max_examples=10, deadline=None)
@given(deck=st.permutations(list(range(1, 19))), pick_seed=st.integers(0, 2 ** 32))
def test_random_playouts_with_fixed_deck(deck, pick_seed):
    g = random_playout(GAME, PLAYERS, {"setup": {"deck_order": deck}}, b"fixed",
                       pick_seed=pick_seed, check=_invariants)
    dealt = g.events[1]["data"]
    assert dealt["hands"][0] + dealt["hands"][1] + dealt["pile"] == deck
    assert GAME.view(g.state, 0)["setup"] == "custom"


@settings(max_examples=40, deadline=None)
@given(kingdoms=st.permutations(list(range(1, 19))).flatmap(
    lambda p: st.tuples(st.integers(0, 7), st.integers(0, 7)).map(
        lambda n: [p[:n[0]], p[n[0]:n[0] + n[1]]])), strict=st.booleans())
def test_scoring_properties(kingdoms, strict):
    scored = score_kingdoms(kingdoms, strict)
    for s in (0, 1):
        lines = scored["per_card"][s]
        assert [ln["card"] for ln in lines] == list(kingdoms[s])
        assert scored["totals"][s] == sum(ln["points"] for ln in lines)
        # Order inside a kingdom never matters.
    swapped = score_kingdoms([kingdoms[0][::-1], kingdoms[1]], strict)
    assert swapped["totals"] == scored["totals"]
    mirrored = score_kingdoms([kingdoms[1], kingdoms[0]], strict)
    assert mirrored["totals"] == scored["totals"][::-1]


def test_timeout_actions_are_legal_and_follow_the_suggestion():
    g = new_game()
    assert GAME.timeout_action(g.state, 0) == {"type": "pick", "card": 1}
    g = round_one()
    # A scored 17:0, 2:7, 1:0, 10:6, 15:12 -> keep 15, remove lowest other (1).
    assert GAME.timeout_action(g.state, 0) == {"type": "relic", "keep": 15, "remove": 1}
    # B scored 14:5, 12:7, 6:6, 7:0, 9:0 -> keep 12, remove 6.
    assert GAME.timeout_action(g.state, 1) == {"type": "relic", "keep": 12, "remove": 6}
    for seat in (0, 1):
        assert GAME.timeout_action(g.state, seat) in GAME.legal_actions(g.state, seat)


def test_same_seed_same_game():
    a = random_game(b"same", 7)
    b = random_game(b"same", 7)
    assert a.events == b.events


def test_decide_never_mutates_its_input_for_any_action():
    """decide resolves on a private copy of only the parts apply changes in place: for every
    legal action of every awaited seat, at every step of random games (one seat committed or
    none), the input state is untouched and the events are those decided on a deep copy."""
    import random

    for i in range(6):
        rnd = random.Random(i)
        g = new_game(deck=None, seed=b"pure-%d" % i, strict_zero_ties=i % 2 == 1)
        while not GAME.is_over(g.state):
            st = g.state
            before = clone(st)
            for seat in GAME.awaiting(st):
                for action in GAME.legal_actions(st, seat):
                    decided = GAME.decide(st, seat, action, None)
                    assert st == before, f"decide {action} for seat {seat} mutated the state"
                    assert decided == GAME.decide(clone(st), seat, action, None)
            seat = rnd.choice(g.awaiting())
            g.act(seat, rnd.choice(g.legal(seat)))
