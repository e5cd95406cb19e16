"""Pharaoh's Wall: base game and Eyes of the Sphinx (spec ../shared/rules/pharaohs-wall.md).

The curse variant is tested in test_pharaohs_wall_curse.py (it reuses the helpers below).
"""

from __future__ import annotations

import random
import re

import orjson
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from service.engine import (ALL, IllegalAction, InvalidOptions, NotYourTurn, Rng, command,
                            visible)
from service.engine.local import LocalGame
from service.games import GAMES
from service.games.pharaohs_wall import (ANIMALS, CARD_IDS, CARDS, CURSE_IDS, GAME, PHARAOHS,
                                         SARC_IDS, SARCOPHAGI, TIERS, find_pairs)
from tests.games.harness import illegal, random_playout

RED, BLUE, GREEN, YELLOW = 0, 1, 2, 3
NAMES = ["Red", "Blue", "Green", "Yellow"]


def players(n: int) -> list[dict]:
    return [{"name": NAMES[i]} for i in range(n)]


# ---------------------------------------------------------------------------------------------
# Position builder
# ---------------------------------------------------------------------------------------------

class Pool:
    """Hands out distinct ids: cards by "ANIMAL-L"/"ANIMAL-R", sarcophagi by value."""

    def __init__(self) -> None:
        self.cards: set[str] = set()
        self.sarcs: set[str] = set()

    def card(self, spec: str) -> str:
        animal, f = spec.rsplit("-", 1)
        facing = {"L": "LEFT", "R": "RIGHT"}[f]
        for cid in CARD_IDS:
            if cid not in self.cards and CARDS[cid] == {"animal": animal, "facing": facing}:
                self.cards.add(cid)
                return cid
        raise AssertionError(f"no {spec} left")

    def sarc(self, value: int) -> str:
        for sid in SARC_IDS:
            if sid not in self.sarcs and SARCOPHAGI[sid]["value"] == value:
                self.sarcs.add(sid)
                return sid
        raise AssertionError(f"no sarcophagus worth {value} left")

    def tier(self, eyes: int) -> str | None:
        for sid in TIERS[eyes - 1]:
            if sid not in self.sarcs:
                self.sarcs.add(sid)
                return sid
        return None


class Table:
    """A hand-built position played through the engine's ``command`` (forced moves included)."""

    def __init__(self, n: int = 3, *, curse: bool = False, sphinx: bool = False,
                 wall: list[list[str]] | None = None, hands: list[list[str]] | None = None,
                 pillars: dict | None = None, supply: int = 16,
                 reserves: list[int] | None = None, owned: dict | None = None,
                 turn: int = RED, pharaohs: list[str] | None = None,
                 main: list[str] | None = None) -> None:
        self.pool = pool = Pool()
        opts = GAME.normalize_options({"curse": curse, "sphinx": sphinx}, players(n))
        s = GAME.initial(players(n), opts)
        s["wall"] = [[pool.card(x) for x in col] for col in (wall or [[]] * 7)]
        while len(s["wall"]) < 7:
            s["wall"].append([])
        s["hands"] = [[pool.card(x) for x in h] for h in (hands or [[]] * n)]
        s["owned"] = [[pool.sarc(v) for v in (owned or {}).get(seat, [])] for seat in range(n)]
        explicit = {a: [pool.sarc(v) for v in spec[2]]
                    for a, spec in (pillars or {}).items() if spec[2] is not None}
        for a in ANIMALS:
            occ, scarabs, values = (pillars or {}).get(a, (None, 0, None))
            if values is None:
                stack = [pool.tier(e) for e in (1, 2, 3)]
                stack = [x for x in stack if x is not None]
            else:
                stack = explicit[a]
            s["pillars"][a] = {"occupant": occ, "scarabs": scarabs, "stack": stack}
        s["supply"] = supply
        s["reserves"] = list(reserves or [5] * n)
        s["pharaohs"] = list(pharaohs or PHARAOHS[:n])
        s["unused_pharaohs"] = [p for p in PHARAOHS if p not in s["pharaohs"]]
        rest = [c for c in CARD_IDS if c not in pool.cards]
        if curse:
            if main is None:
                s["piles"] = {"start": rest, "main": []}
            else:
                # main: explicit head of the main pile ("C1", or card specs), rest follows.
                head = [x if x in CURSE_IDS else pool.card(x) for x in main]
                rest = [c for c in CARD_IDS if c not in pool.cards]
                s["piles"] = {"start": [], "main": head + rest}
        else:
            s["piles"] = {"draw": rest}
        s["phase"] = "play"
        s["turn"] = turn
        s["turn_number"] = 1
        self.state = s
        self.events: list[dict] = []

    def card_at(self, col: int, row: int) -> str:
        return self.state["wall"][col][row]

    def hand_card(self, seat: int, spec: str) -> str:
        animal, f = spec.rsplit("-", 1)
        facing = {"L": "LEFT", "R": "RIGHT"}[f]
        for cid in self.state["hands"][seat]:
            if CARDS[cid] == {"animal": animal, "facing": facing}:
                return cid
        raise AssertionError(spec)

    def act(self, seat: int, action: dict) -> list[dict]:
        events, self.state = command(GAME, self.state, seat, action, Rng(b"t", 1))
        self.events += events
        return events

    def pillar(self, animal: str) -> tuple:
        p = self.state["pillars"][animal]
        return p["occupant"], p["scarabs"], [SARCOPHAGI[s]["value"] for s in p["stack"]]

    def values(self, seat: int) -> list[int]:
        return [SARCOPHAGI[s]["value"] for s in self.state["owned"][seat]]


def insert(card: str, column: int, explorer="none") -> dict:
    return {"type": "insert", "card": card, "column": column, "explorer": explorer}


def options_for(state, seat, card, column) -> list:
    return [a["explorer"] for a in GAME.legal_actions(state, seat)
            if a["card"] == card and a["column"] == column]


# ---------------------------------------------------------------------------------------------
# Worked examples (section 12)
# ---------------------------------------------------------------------------------------------

def test_example_1_opposite_facing_pair_at_empty_pillar():
    t = Table(wall=[[], [], ["CAMEL-L"]], hands=[["CAMEL-R", "IBIS-L", "CAT-R"], [], []],
              pillars={"CAMEL": (None, 0, [4, 6, 10])})
    camel = t.hand_card(RED, "CAMEL-R")
    assert options_for(t.state, RED, camel, 3) == ["none", "reserve"]
    ev = t.act(RED, insert(camel, 3, "reserve"))
    ins = ev[0]
    assert ins["type"] == "CardInserted" and (ins["data"]["column"], ins["data"]["row"]) == (3, 0)
    assert [p["facing"] for p in ins["data"]["pairs"]] == ["opposite"]
    assert t.state["reserves"][RED] == 4
    assert t.pillar("CAMEL") == (RED, 1, [4, 6, 10])
    assert t.state["supply"] == 15
    assert len(t.state["hands"][RED]) == 3  # drew one
    assert t.state["owned"][RED] == []
    assert t.state["turn"] == BLUE


def test_example_2_displacement_and_opening():
    t = Table(wall=[[], [], [], ["CAMEL-R"], ["IBIS-L"], ["CAMEL-L"]],
              hands=[["CAMEL-R", "CAT-L", "CAT-R"], [], []],
              pillars={"CAMEL": (BLUE, 1, [4, 6, 10])}, supply=10, reserves=[3, 2, 5])
    camel = t.hand_card(RED, "CAMEL-R")
    assert options_for(t.state, RED, camel, 4) == ["none", "reserve"]
    ev = t.act(RED, insert(camel, 4, "reserve"))
    pairs = ev[0]["data"]["pairs"]
    assert sorted((tuple(p["cell"]), p["facing"]) for p in pairs) == [
        ((3, 0), "same"), ((5, 0), "opposite")]
    assert t.state["reserves"][BLUE] == 3 and t.state["reserves"][RED] == 2
    assert [e["type"] for e in ev[1:6]] == ["ExplorerDisplaced", "ExplorerPlaced",
                                            "ScarabPlaced", "ScarabPlaced", "SarcophagusOpened"]
    assert t.values(RED) == [4]
    assert SARCOPHAGI[t.state["owned"][RED][0]]["eyes"] == 1
    assert t.state["supply"] == 11
    assert t.pillar("CAMEL") == (RED, 0, [6, 10])


def test_example_2_declining_keeps_blue():
    t = Table(wall=[[], [], [], ["CAMEL-R"], ["IBIS-L"], ["CAMEL-L"]],
              hands=[["CAMEL-R", "CAT-L", "CAT-R"], [], []],
              pillars={"CAMEL": (BLUE, 1, [4, 6, 10])}, supply=10, reserves=[3, 2, 5])
    t.act(RED, insert(t.hand_card(RED, "CAMEL-R"), 4, "none"))
    # Blue stays and the 3rd scarab opens Blue's sarcophagus: scarabs are compulsory.
    assert t.values(BLUE) == [4]
    assert t.pillar("CAMEL") == (BLUE, 0, [6, 10])


def test_example_3_three_pairs_capped_at_two_opening_for_another():
    t = Table(wall=[["SNAKE-R"], ["SNAKE-R"], ["SNAKE-R"]],
              hands=[[], ["SNAKE-L", "CAT-L", "CAT-R"], []],
              pillars={"SNAKE": (GREEN, 2, [5, 8])}, supply=9, turn=BLUE)
    snake = t.hand_card(BLUE, "SNAKE-L")
    assert options_for(t.state, BLUE, snake, 1) == ["none"]
    ev = t.act(BLUE, insert(snake, 1, "none"))
    assert len(ev[0]["data"]["pairs"]) == 3
    assert all(p["facing"] == "opposite" for p in ev[0]["data"]["pairs"])
    assert t.values(GREEN) == [5] and t.values(BLUE) == []
    assert t.pillar("SNAKE") == (GREEN, 1, [8])
    assert t.state["supply"] == 10
    types = [e["type"] for e in ev]
    assert types[:4] == ["CardInserted", "ScarabPlaced", "SarcophagusOpened", "ScarabPlaced"]


def full_wall_end_table() -> Table:
    """Example 4: the wall is full, Red (seat 0) begins the end-game moves."""
    t = Table(pillars={"CAMEL": (RED, 1, [6, 10]), "SNAKE": (RED, 2, [8]),
                       "FALCON": (RED, 0, []), "IBIS": (GREEN, 0, None)},
              owned={RED: [4, 5], GREEN: [10, 7], BLUE: [6, 8]},
              pharaohs=["P-CAMEL", "P-FALCON", "P-IBIS"], supply=13, reserves=[2, 5, 4])
    s = t.state
    s["wall"] = [CARD_IDS[7 * c:7 * c + 7] for c in range(7)]
    s["hands"] = [[], [], []]
    s["piles"] = {"draw": []}
    s["phase"] = "end"
    s["last_inserter"] = GREEN
    s["end"] = {"order": [RED, BLUE, GREEN], "index": 0, "moves": [0, 0, 0]}
    return t


def test_example_4_end_move_scoring_and_tie_break():
    t = full_wall_end_table()
    moves = GAME.legal_actions(t.state, RED)
    assert {"type": "move_scarab", "from": "CAMEL", "to": "SNAKE"} in moves
    assert {"type": "done"} in moves
    t.act(RED, {"type": "move_scarab", "from": "CAMEL", "to": "SNAKE"})
    assert t.values(RED) == [4, 5, 8]
    assert t.state["supply"] == 16
    # Red has no further move, Blue and Green none at all: all done automatically, game over.
    assert GAME.is_over(t.state)
    assert [e["type"] for e in t.events[-4:]] == ["EndDone", "EndDone", "EndDone", "GameEnded"]
    assert all(e.get("forced") for e in t.events[-4:-1])
    res = GAME.result(t.state)
    assert res["scores"] == [24, 14, 24]
    assert res["ranks"] == [1, 3, 2]
    assert res["winners"] == [RED]
    assert res["details"]["seats"][RED]["pharaoh_bonus"] == 7
    assert res["details"]["seats"][BLUE]["pharaoh_bonus"] == 0


def test_example_4_alternative_two_points_less():
    t = full_wall_end_table()
    t.act(RED, {"type": "move_scarab", "from": "SNAKE", "to": "CAMEL"})
    t.act(RED, {"type": "move_scarab", "from": "SNAKE", "to": "CAMEL"})
    assert t.values(RED) == [4, 5, 6]
    assert GAME.result(t.state)["scores"][RED] == 22


def example_5_table(sphinx: bool) -> Table:
    return Table(sphinx=sphinx, wall=[
        ["CAT-R", "CROCODILE-L"], ["IBIS-L"], ["CROCODILE-L"], ["SNAKE-L", "FALCON-L", "MULE-R"],
        [], ["MULE-L", "IBIS-R", "CAT-L", "SNAKE-R", "CROCODILE-R"],
        ["FALCON-R", "CROCODILE-R", "MULE-L", "IBIS-L", "SNAKE-L", "CAT-L"]],
        hands=[["CROCODILE-R", "CAMEL-L", "CAMEL-R"], [], []],
        pillars={"CROCODILE": (BLUE, 0, [3, 5, 7])}, supply=12, reserves=[3, 4, 5])


def test_example_5_eyes_of_the_sphinx():
    t = example_5_table(True)
    croc = t.hand_card(RED, "CROCODILE-R")
    pairs = find_pairs(t.state["wall"], 2, 1, croc, True)
    assert sorted((tuple(p["cell"]), p["facing"]) for p in pairs) == [
        ((2, 0), "opposite"), ((5, 4), "same")]
    assert options_for(t.state, RED, croc, 2) == ["none", "reserve"]
    t.act(RED, insert(croc, 2, "reserve"))
    assert t.state["reserves"][BLUE] == 5 and t.state["reserves"][RED] == 2
    assert t.pillar("CROCODILE") == (RED, 2, [3, 5, 7])
    assert t.state["supply"] == 10


def test_example_5_base_rule_same_position():
    t = example_5_table(False)
    croc = t.hand_card(RED, "CROCODILE-R")
    assert [p["cell"] for p in find_pairs(t.state["wall"], 2, 1, croc, False)] == [[2, 0]]
    assert options_for(t.state, RED, croc, 2) == ["none"]
    assert illegal(GAME, t.state, RED, insert(croc, 2, "reserve")).code == "explorer_not_allowed"
    t.act(RED, insert(croc, 2, "none"))
    assert t.pillar("CROCODILE") == (BLUE, 1, [3, 5, 7])
    assert t.state["supply"] == 11


# Edge cases of section 12 ----------------------------------------------------------------

def test_edge_unoccupied_pillar_with_three_scarabs_opens_on_arrival():
    t = Table(wall=[["MULE-L"]], hands=[["MULE-R", "CAT-L", "CAT-R"], [], []],
              pillars={"MULE": (None, 3, [3, 5, 7])}, supply=13)
    ev = t.act(RED, insert(t.hand_card(RED, "MULE-R"), 1, "reserve"))
    types = [e["type"] for e in ev]
    assert types[:4] == ["CardInserted", "ExplorerPlaced", "SarcophagusOpened", "ScarabPlaced"]
    assert t.values(RED) == [3]
    assert t.pillar("MULE") == (RED, 1, [5, 7])
    assert t.state["supply"] == 15


def test_edge_unoccupied_full_pillar_declined_stays():
    t = Table(wall=[["MULE-L"]], hands=[["MULE-R", "CAT-L", "CAT-R"], [], []],
              pillars={"MULE": (None, 3, [3, 5, 7])}, supply=13)
    ev = t.act(RED, insert(t.hand_card(RED, "MULE-R"), 1, "none"))
    assert ev[1]["type"] == "ScarabSkipped" and ev[1]["data"]["reason"] == "pillar_full"
    assert t.pillar("MULE") == (None, 3, [3, 5, 7])


def test_edge_empty_reserve_moves_an_explorer():
    occupied = {a: (RED, 0, None) for a in ("CAMEL", "SNAKE", "IBIS", "CROCODILE", "FALCON")}
    t = Table(wall=[["MULE-L"]], hands=[["MULE-R", "CAT-L", "CAT-R"], [], []],
              pillars=occupied, reserves=[0, 5, 5])
    mule = t.hand_card(RED, "MULE-R")
    opts = options_for(t.state, RED, mule, 1)
    assert opts == ["none"] + [{"from_pillar": a} for a in
                               ("CAMEL", "SNAKE", "IBIS", "CROCODILE", "FALCON")]
    assert illegal(GAME, t.state, RED, insert(mule, 1, "reserve")).code == "reserve_empty"
    assert illegal(GAME, t.state, RED,
                   insert(mule, 1, {"from_pillar": "CAT"})).code == "not_your_explorer"
    t.act(RED, insert(mule, 1, {"from_pillar": "FALCON"}))
    assert t.state["pillars"]["FALCON"]["occupant"] is None
    assert t.state["pillars"]["MULE"]["occupant"] == RED
    assert t.state["reserves"][RED] == 0


def test_from_pillar_refused_while_reserve_not_empty():
    t = Table(wall=[["MULE-L"]], hands=[["MULE-R", "CAT-L", "CAT-R"], [], []],
              pillars={"CAMEL": (RED, 0, None)}, reserves=[4, 5, 5])
    exc = illegal(GAME, t.state, RED, insert(t.hand_card(RED, "MULE-R"), 1,
                                             {"from_pillar": "CAMEL"}))
    assert exc.code == "reserve_not_empty"


def test_edge_empty_stack_with_three_scarabs_takes_no_more():
    t = Table(wall=[["MULE-L"]], hands=[["MULE-R", "CAT-L", "CAT-R"], [], []],
              pillars={"MULE": (BLUE, 3, [])}, supply=13)
    mule = t.hand_card(RED, "MULE-R")
    # Opposite-facing pair at Blue's pillar: nothing for Red; no scarab either.
    t.act(RED, insert(mule, 1, "none"))
    assert t.pillar("MULE") == (BLUE, 3, [])
    assert t.state["supply"] == 13


def test_empty_stack_pillar_is_a_legal_target():
    t = Table(wall=[["MULE-L"]], hands=[["MULE-L", "CAT-L", "CAT-R"], [], []],
              pillars={"MULE": (BLUE, 1, [])})
    mule = t.hand_card(RED, "MULE-L")
    assert options_for(t.state, RED, mule, 1) == ["none", "reserve"]
    t.act(RED, insert(mule, 1, "reserve"))
    assert t.pillar("MULE") == (RED, 2, [])


def test_own_pillar_gives_no_explorer_choice():
    t = Table(wall=[["MULE-L"]], hands=[["MULE-L", "CAT-L", "CAT-R"], [], []],
              pillars={"MULE": (RED, 0, None)})
    assert options_for(t.state, RED, t.hand_card(RED, "MULE-L"), 1) == ["none"]


def test_empty_supply_places_nothing():
    t = Table(wall=[["MULE-L"]], hands=[["MULE-L", "CAT-L", "CAT-R"], [], []],
              pillars={"CAMEL": (None, 3, None), "SNAKE": (None, 3, None),
                       "IBIS": (None, 3, None), "CAT": (None, 3, None),
                       "FALCON": (None, 3, None), "CROCODILE": (None, 1, None)}, supply=0)
    ev = t.act(RED, insert(t.hand_card(RED, "MULE-L"), 1, "none"))
    assert ev[1]["data"] == {"pillar": "MULE", "reason": "supply_empty"}
    assert t.state["pillars"]["MULE"]["scarabs"] == 0


def test_no_pair_no_explorer():
    t = Table(wall=[["MULE-L"]], hands=[["CAT-L", "CAT-R", "IBIS-L"], [], []])
    assert all(a["explorer"] == "none" for a in GAME.legal_actions(t.state, RED))


def test_pairs_in_all_eight_directions():
    # New card at (3,1): neighbours (2,0)(3,0)(4,0) below, (2,1)(4,1) beside, (2,2)(4,2) above.
    wall = [[], [], ["CAT-L", "CAT-R", "CAT-L"], ["IBIS-L"], ["CAT-R", "CAT-L", "CAT-R"]]
    t = Table(wall=wall, hands=[["IBIS-R", "MULE-L", "MULE-R"], [], []])
    card = t.pool.card("CAT-L")
    pairs = find_pairs(t.state["wall"], 3, 1, card, False)
    assert sorted(tuple(p["cell"]) for p in pairs) == [(2, 0), (2, 1), (2, 2), (4, 0), (4, 1),
                                                       (4, 2)]
    # Directly below (the cell above a landing card is always empty):
    wall2 = [[], [], [], ["IBIS-L", "CAT-L"]]
    t2 = Table(wall=wall2, hands=[["IBIS-R", "MULE-L", "MULE-R"], [], []])
    assert [p["cell"] for p in find_pairs(t2.state["wall"], 3, 2, t2.pool.card("CAT-R"),
                                          False)] == [[3, 1]]


def test_sphinx_line_with_two_others_gives_no_pair_and_gap_is_fine():
    wall = [["CAT-L"], [], [], ["IBIS-L"], [], [], ["CAT-R"]]
    t = Table(sphinx=True, wall=wall, hands=[["IBIS-R", "MULE-L", "MULE-R"], [], []])
    # Row 0 holds two other cats: no pair on the row.
    assert find_pairs(t.state["wall"], 2, 0, t.pool.card("CAT-L"), True) == []
    wall = [["CAT-L"], [], [], ["IBIS-L"]]
    t = Table(sphinx=True, wall=wall, hands=[["IBIS-R", "MULE-L", "MULE-R"], [], []])
    pairs = find_pairs(t.state["wall"], 2, 0, t.pool.card("CAT-L"), True)
    assert pairs == [{"cell": [0, 0], "card": t.card_at(0, 0), "facing": "same"}]


def test_sphinx_four_pairs_still_two_scarabs():
    # New cat at (3,1): exactly one other cat on its column, row and both diagonals.
    wall = [[], ["IBIS-R", "SNAKE-L", "SNAKE-R", "CAT-L"], [], ["CAT-R"], [],
            ["IBIS-L", "CAT-L"], ["MULE-L", "MULE-R", "MULE-L", "IBIS-L", "CAT-L"]]
    t = Table(sphinx=True, wall=wall, hands=[["CAT-R", "SNAKE-L", "FALCON-R"], [], []])
    cat = t.hand_card(RED, "CAT-R")
    pairs = find_pairs(t.state["wall"], 3, 1, cat, True)
    assert sorted((tuple(p["cell"]), p["facing"]) for p in pairs) == [
        ((1, 3), "opposite"), ((3, 0), "same"), ((5, 1), "opposite"), ((6, 4), "opposite")]
    assert [p["cell"] for p in find_pairs(t.state["wall"], 3, 1, cat, False)] == [[3, 0]]
    ev = t.act(RED, insert(cat, 3, "reserve"))
    assert len(ev[0]["data"]["pairs"]) == 4
    assert t.pillar("CAT")[:2] == (RED, 2)
    assert t.state["supply"] == 14


def test_turn_order_and_draw():
    t = Table(n=2, hands=[["CAT-L", "CAT-R", "IBIS-L"], ["MULE-L", "MULE-R", "IBIS-R"]])
    top = t.state["piles"]["draw"][0]
    t.act(RED, insert(t.hand_card(RED, "CAT-L"), 0))
    assert top in t.state["hands"][RED]
    assert t.state["turn"] == BLUE and t.state["turn_number"] == 2
    t.act(BLUE, insert(t.hand_card(BLUE, "MULE-L"), 6))
    assert t.state["turn"] == RED


def test_empty_pile_draws_nothing():
    t = Table(n=2, hands=[["CAT-L", "CAT-R", "IBIS-L"], ["MULE-L", "MULE-R", "IBIS-R"]])
    t.state["piles"]["draw"] = []
    t.act(RED, insert(t.hand_card(RED, "CAT-L"), 0))
    assert len(t.state["hands"][RED]) == 2


def test_end_phase_order_starts_left_of_last_inserter_and_move_cap():
    # 4 players, wall one card short; Green (2) fills it.
    t = Table(n=4, turn=GREEN, hands=[[], [], ["CAT-L"], []],
              pillars={"CAMEL": (YELLOW, 1, [3, 5, 7]), "MULE": (YELLOW, 1, [3, 5, 7]),
                       "SNAKE": (RED, 2, [])},
              supply=12)
    s = t.state
    rest = [c for c in CARD_IDS if c not in s["hands"][GREEN]]
    s["wall"] = [rest[7 * c:7 * c + 7] for c in range(6)] + [rest[42:48]]
    s["piles"]["draw"] = []
    t.act(GREEN, insert(s["hands"][GREEN][0], 6))
    assert t.state["phase"] == "end"
    assert t.state["end"]["order"] == [YELLOW, RED, BLUE, GREEN]
    assert GAME.awaiting(t.state) == [YELLOW]
    # Yellow shuffles a scarab back and forth 16 times; then done is automatic.
    for i in range(16):
        a, b = ("CAMEL", "MULE") if i % 2 == 0 else ("MULE", "CAMEL")
        assert GAME.awaiting(t.state) == [YELLOW]
        t.act(YELLOW, {"type": "move_scarab", "from": a, "to": b})
    # Yellow done automatically; Red (only one pillar), Blue and Green have no moves.
    assert GAME.is_over(t.state)
    assert t.state["end"]["moves"][YELLOW] == 16


def test_end_move_illegal_codes():
    t = full_wall_end_table()
    cases = [
        ({"type": "move_scarab", "from": "CAMEL", "to": "CAMEL"}, "same_pillar"),
        ({"type": "move_scarab", "from": "CAMEL", "to": "IBIS"}, "not_your_explorer"),
        ({"type": "move_scarab", "from": "FALCON", "to": "CAMEL"}, "no_scarab"),
        ({"type": "move_scarab", "from": "DOG", "to": "CAMEL"}, "unknown_pillar"),
        ({"type": "move_scarab", "from": 3, "to": "CAMEL"}, "invalid_field"),
        ({"type": "move_scarab", "from": "CAMEL"}, "missing_field"),
        ({"type": "done", "x": 1}, "unexpected_field"),
        ({"type": "insert", "card": "H-CAMEL-1", "column": 0, "explorer": "none"},
         "wrong_phase"),
    ]
    for action, code in cases:
        assert illegal(GAME, t.state, RED, action).code == code, action
    unknown = illegal(GAME, t.state, RED, {"type": "move_scarab", "from": "CAMEL", "to": "DOG"})
    assert unknown.details["fields"] == {"to": ["unknown pillar"]}  # the one shape of names
    t.state["pillars"]["SNAKE"]["scarabs"] = 3
    t.state["pillars"]["SNAKE"]["stack"] = []
    assert illegal(GAME, t.state, RED, {"type": "move_scarab", "from": "CAMEL",
                                        "to": "SNAKE"}).code == "pillar_full"


def test_tie_on_score_and_count_shares_the_win():
    t = full_wall_end_table()
    s = t.state
    s["owned"] = [[SARC_IDS[0]], [SARC_IDS[1]], []]  # both worth 3 (the stacks don't matter)
    for a in ANIMALS:
        s["pillars"][a]["occupant"] = None
    s["pillars"]["MULE"]["occupant"] = BLUE
    s["pharaohs"] = ["P-SNAKE", "P-MULE", "P-CAT"]
    s["end"]["index"] = 2
    s["end"]["order"] = [RED, GREEN, BLUE]
    s["pillars"]["CAT"]["occupant"] = GREEN
    s["supply"] = 16 - sum(p["scarabs"] for p in s["pillars"].values())
    t.act(BLUE, {"type": "done"})
    res = GAME.result(t.state)
    assert res["scores"] == [3, 10, 7]
    assert res["ranks"] == [3, 1, 2]
    s = t.state  # shared-win check on a fresh copy of the scores
    s["pharaohs"] = ["P-SNAKE", "P-CAMEL", "P-CAT"]
    s["owned"] = [[SARC_IDS[0]], [SARC_IDS[1]], []]
    res = GAME.result(s)
    assert res["scores"] == [3, 3, 7] and res["ranks"] == [2, 2, 1]
    s["pharaohs"] = ["P-SNAKE", "P-CAMEL", "P-IBIS"]
    res = GAME.result(s)
    assert res["ranks"] == [1, 1, 3] and res["winners"] == [RED, BLUE]


# ---------------------------------------------------------------------------------------------
# Options and setup
# ---------------------------------------------------------------------------------------------

def test_registered():
    assert GAME.type_id == "pharaohs-wall"
    if "pharaohs-wall" in GAMES:  # the lead wires the registry
        assert GAMES["pharaohs-wall"] is GAME
    assert (GAME.min_players, GAME.max_players) == (2, 4)


def test_defaults():
    assert GAME.normalize_options({}, players(2)) == {"curse": False, "sphinx": False}


def sarc_setup() -> dict:
    return {a: [TIERS[0][i], TIERS[1][i], TIERS[2][i]] for i, a in enumerate(ANIMALS)}


def test_setup_overrides_applied():
    deck = list(reversed(CARD_IDS))
    sar = sarc_setup()
    sar["CAMEL"], sar["MULE"] = sar["MULE"], sar["CAMEL"]
    opts = {"setup": {"deck_order": deck, "sarcophagi": sar,
                      "pharaohs": ["P-CAT", "P-MULE", "P-CAMEL"]}}
    g = LocalGame(GAME, players(3), opts, b"seed")
    s = g.state
    assert s["hands"] == [deck[0:3], deck[3:6], deck[6:9]]
    assert s["piles"]["draw"] == deck[9:]
    assert s["pillars"]["CAMEL"]["stack"] == sar["CAMEL"]
    assert s["pharaohs"] == ["P-CAT", "P-MULE", "P-CAMEL"]
    assert sorted(s["unused_pharaohs"]) == sorted(set(PHARAOHS) - {"P-CAT", "P-MULE", "P-CAMEL"})
    assert g.events[0]["data"]["setup"] == "custom"
    assert GAME.view(s, None)["setup"] == "custom"


def test_curse_setup_overrides_applied():
    start = CARD_IDS[:20]
    main = CURSE_IDS + CARD_IDS[20:]
    g = LocalGame(GAME, players(4), {"curse": True,
                                     "setup": {"start_pile": start, "main_pile": main}}, b"s")
    assert g.state["hands"][3] == start[9:12]
    assert g.state["piles"] == {"start": start[12:], "main": main}


def rng_reference(seed: bytes, n: int, curse: bool) -> dict:
    """The module docstring's RNG sequence, re-implemented independently."""
    rng = Rng(seed, 1)  # create runs with the stream of version 1 (LocalGame / engine start)
    order = list(ANIMALS)
    rng.shuffle(order)
    deck = list(CARD_IDS)
    rng.shuffle(deck)
    out = {"pillar_order": order}
    if curse:
        start = deck[:20]
        main = [c for c in CARD_IDS if c not in start] + list(CURSE_IDS)
        rng.shuffle(main)
        out["piles"] = {"start": start[3 * n:], "main": main}
        src = start
    else:
        out["piles"] = {"draw": deck[3 * n:]}
        src = deck
    out["hands"] = [src[3 * s:3 * s + 3] for s in range(n)]
    tiers = [list(t) for t in TIERS]
    for t in tiers:
        rng.shuffle(t)
    out["stacks"] = {a: [tiers[0][i], tiers[1][i], tiers[2][i]] for i, a in enumerate(ANIMALS)}
    ph = list(PHARAOHS)
    rng.shuffle(ph)
    out["pharaohs"] = ph[:n]
    return out


@pytest.mark.parametrize("curse", [False, True])
def test_documented_rng_sequence(curse):
    g = LocalGame(GAME, players(3), {"curse": curse}, b"\x01\x02")
    ref = rng_reference(b"\x01\x02", 3, curse)
    s = g.state
    assert s["pillar_order"] == ref["pillar_order"]
    assert s["piles"] == ref["piles"]
    assert s["hands"] == ref["hands"]
    assert {a: s["pillars"][a]["stack"] for a in ANIMALS} == ref["stacks"]
    assert s["pharaohs"] == ref["pharaohs"]


BAD_OPTIONS = [
    ({"curse": "yes"}, "invalid_option"),
    ({"sphinx": 1}, "invalid_option"),
    ({"colour": True}, "unknown_option"),
    ({"setup": []}, "invalid_setup"),
    ({"setup": {"deck_order": CARD_IDS[:48]}}, "invalid_setup"),
    ({"setup": {"deck_order": CARD_IDS[:48] + CARD_IDS[:1]}}, "invalid_setup"),
    ({"setup": {"deck_order": CARD_IDS[:48] + ["H-DOG-1"]}}, "invalid_setup"),
    ({"setup": {"deck_order": CARD_IDS[:48] + [7]}}, "invalid_setup"),
    ({"setup": {"deck_order": "abc"}}, "invalid_setup"),
    ({"setup": {"start_pile": CARD_IDS[:20], "main_pile": CARD_IDS[20:] + CURSE_IDS}},
     "invalid_setup"),
    ({"curse": True, "setup": {"deck_order": CARD_IDS}}, "invalid_setup"),
    ({"curse": True, "setup": {"start_pile": CARD_IDS[:20]}}, "invalid_setup"),
    ({"curse": True, "setup": {"start_pile": CARD_IDS[:19] + ["C1"],
                               "main_pile": CARD_IDS[19:] + CURSE_IDS[1:]}}, "invalid_setup"),
    ({"curse": True, "setup": {"start_pile": CARD_IDS[:20],
                               "main_pile": CARD_IDS[20:] + CURSE_IDS[:5] + ["C1"]}},
     "invalid_setup"),
    ({"setup": {"sarcophagi": {"CAMEL": ["S01", "S08", "S15"]}}}, "invalid_setup"),
    ({"setup": {"pharaohs": ["P-CAT", "P-CAT"]}}, "invalid_setup"),
    ({"setup": {"pharaohs": ["P-CAT"]}}, "invalid_setup"),
    ({"setup": {"pharaohs": ["P-CAT", "P-DOG"]}}, "invalid_setup"),
    ({"setup": {"extra": 1}}, "unknown_option"),
    ({"clock": {"per_decision_ms": 1000}}, "unknown_option"),  # the shell's, never the game's
]


@pytest.mark.parametrize("options,code", BAD_OPTIONS)
def test_invalid_options(options, code):
    with pytest.raises(InvalidOptions) as exc:
        GAME.normalize_options(options, players(2))
    assert exc.value.code == code


@pytest.mark.parametrize("mutate,option,failed", [
    (lambda s: s.update(CAMEL=["S08", "S01", "S15"]), "CAMEL.0", "enum"),  # tier order
    (lambda s: s.update(CAMEL=list(s["MULE"])), "MULE", "duplicate_id"),
    (lambda s: s.update(CAMEL=["S01", "S08"]), "CAMEL", "minItems"),
    (lambda s: s.update(CAMEL=["S01", "S08", "S99"]), "CAMEL.2", "enum"),
    (lambda s: s.pop("CAT"), "CAT", "required"),
])
def test_invalid_sarcophagi(mutate, option, failed):
    sar = sarc_setup()
    mutate(sar)
    with pytest.raises(InvalidOptions) as exc:
        GAME.normalize_options({"setup": {"sarcophagi": sar}}, players(2))
    details = exc.value.details
    assert exc.value.code == "invalid_setup" and details["option"] == f"setup.sarcophagi.{option}"
    assert failed in (details.get("reason"), *details.get("expected", {}))


@pytest.mark.parametrize("curse,setup,option,reason", [
    (True, {"deck_order": CARD_IDS}, "setup.deck_order", "wrong_mode"),
    (False, {"start_pile": CARD_IDS[:20], "main_pile": CARD_IDS[20:] + CURSE_IDS},
     "setup.start_pile", "wrong_mode"),
    (True, {"start_pile": CARD_IDS[:20], "main_pile": CARD_IDS[19:48] + CURSE_IDS},
     "setup.main_pile", "duplicate_id"),
    (False, {"pharaohs": ["P-CAT", "P-MULE", "P-IBIS"]}, "setup.pharaohs", "wrong_length"),
])
def test_setup_rules_the_schema_cannot_say(curse, setup, option, reason):
    with pytest.raises(InvalidOptions) as exc:
        GAME.normalize_options({"curse": curse, "setup": setup}, players(2))
    assert exc.value.code == "invalid_setup"
    assert exc.value.details["option"] == option and exc.value.details["reason"] == reason


def test_invalid_player_count():
    with pytest.raises(InvalidOptions):
        GAME.normalize_options({}, players(1))
    with pytest.raises(InvalidOptions):
        GAME.normalize_options({}, [{"name": str(i)} for i in range(5)])


# ---------------------------------------------------------------------------------------------
# Legal actions and hostile input
# ---------------------------------------------------------------------------------------------

def test_legal_actions_enumerate_every_insert_choice():
    g = LocalGame(GAME, players(3), {}, b"legal")
    s = g.state
    acts = GAME.legal_actions(s, RED)
    combos = {(a["card"], a["column"]) for a in acts}
    assert combos == {(c, col) for c in s["hands"][RED] for col in range(7)}
    assert all(a["explorer"] == "none" for a in acts)  # empty wall: no pairs
    assert GAME.legal_actions(s, BLUE) == []
    for a in acts:
        assert set(a) == {"type", "card", "column", "explorer"}


def test_full_column_refused():
    t = Table(wall=[["CAT-L", "CAT-R", "CAT-L", "CAT-R", "CAT-L", "CAT-R", "CAT-L"]],
              hands=[["IBIS-L", "MULE-L", "MULE-R"], [], []])
    ibis = t.hand_card(RED, "IBIS-L")
    assert all(a["column"] != 0 for a in GAME.legal_actions(t.state, RED))
    assert illegal(GAME, t.state, RED, insert(ibis, 0)).code == "column_full"


HOSTILE = [
    {"type": "insert"},
    {"type": "insert", "card": "H-CAMEL-1", "column": 0},
    {"type": "insert", "card": 5, "column": 0, "explorer": "none"},
    {"type": "insert", "card": None, "column": 0, "explorer": "none"},
    {"type": "insert", "card": ["H-CAMEL-1"], "column": 0, "explorer": "none"},
    {"type": "insert", "card": "H-DOG-1", "column": 0, "explorer": "none"},
    {"type": "insert", "card": "__HAND__", "column": "0", "explorer": "none"},
    {"type": "insert", "card": "__HAND__", "column": True, "explorer": "none"},
    {"type": "insert", "card": "__HAND__", "column": 1.0, "explorer": "none"},
    {"type": "insert", "card": "__HAND__", "column": -1, "explorer": "none"},
    {"type": "insert", "card": "__HAND__", "column": 10 ** 30, "explorer": "none"},
    {"type": "insert", "card": "__HAND__", "column": 0, "explorer": None},
    {"type": "insert", "card": "__HAND__", "column": 0, "explorer": "everywhere"},
    {"type": "insert", "card": "__HAND__", "column": 0, "explorer": {"from_pillar": 3}},
    {"type": "insert", "card": "__HAND__", "column": 0, "explorer": {"from_pillar": "DOG"}},
    {"type": "insert", "card": "__HAND__", "column": 0, "explorer": {"x": {"y": []}}},
    {"type": "insert", "card": "__HAND__", "column": 0, "explorer": "reserve"},
    {"type": "insert", "card": "__HAND__", "column": 0, "explorer": "none", "order": [1]},
    {"type": "move_scarab", "from": "CAMEL", "to": "MULE"},
    {"type": "done"},
    {"type": "curse_pass"},
    {"type": "curse_claim", "cells": [[0, 0], [1, 0], [2, 0]]},
    {"type": "curse_victim", "seat": 1},
    {"type": "curse_give", "sarcophagus": "S01"},
    {"type": "resign"},
    {"type": "INSERT"},
    {"type": 7},
    {"type": {"a": 1}},
    {},
]


@pytest.mark.parametrize("action", HOSTILE)
def test_hostile_actions(action):
    g = LocalGame(GAME, players(3), {}, b"hostile")
    card = g.state["hands"][0][0]
    action = {k: (card if v == "__HAND__" else v) for k, v in action.items()}
    exc = illegal(GAME, g.state, RED, action)
    assert re.fullmatch(r"[a-z_]+", exc.code)


JSON = st.recursive(st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False)
                    | st.text(max_size=12), lambda ch: st.lists(ch, max_size=3)
                    | st.dictionaries(st.text(max_size=8), ch, max_size=3), max_leaves=8)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(kind=st.sampled_from(["insert", "move_scarab", "done", "curse_claim", "curse_pass",
                             "curse_victim", "curse_give", "x"]),
       fields=st.dictionaries(st.sampled_from(["card", "column", "explorer", "from", "to",
                                               "cells", "seat", "sarcophagus", "zz"]),
                              JSON, max_size=4))
def test_fuzzed_actions_never_crash(kind, fields):
    t = Table(wall=[["MULE-L"]], hands=[["MULE-R", "CAT-L", "CAT-R"], [], []])
    action = {"type": kind, **fields}
    legal = GAME.legal_actions(t.state, RED)
    try:
        GAME.decide(t.state, RED, action, None)
    except IllegalAction as exc:
        assert re.fullmatch(r"[a-z_]+", exc.code)
    else:
        assert action in legal


def test_not_awaited_gets_409():
    g = LocalGame(GAME, players(3), {}, b"x")
    with pytest.raises(NotYourTurn) as exc:
        g.act(BLUE, {"type": "done"})
    assert exc.value.reason == "not_your_turn"


# ---------------------------------------------------------------------------------------------
# Hidden information
# ---------------------------------------------------------------------------------------------

SARC_RE = re.compile(rb'"(S\d\d)"')


def secrets_for(state, viewer) -> set[str]:
    """Ids the viewer must not see now: others' hands, piles, others' pharaohs, stacks and
    sarcophagi it does not own."""
    out: set[str] = set()
    n = state["players"]
    for s in range(n):
        if s != viewer:
            out |= set(state["hands"][s])
            out.add(state["pharaohs"][s])
    out |= set(state["unused_pharaohs"])
    for pile in state["piles"].values():
        out |= {c for c in pile if c not in CURSE_IDS}
    for a in ANIMALS:
        out |= set(state["pillars"][a]["stack"])
    return out


def check_no_leak(g: LocalGame, seen_sarcs: dict) -> None:
    state = g.state
    if GAME.is_over(state):
        return
    n = state["players"]
    for viewer in list(range(n)) + [None]:
        if viewer is not None:
            seen_sarcs.setdefault(viewer, set()).update(state["owned"][viewer])
        secret = secrets_for(state, viewer)
        for s in range(n):
            if s != viewer:
                secret |= set(state["owned"][s]) - seen_sarcs.get(viewer, set())
        blob = orjson.dumps(GAME.view(state, viewer))
        logs = orjson.dumps([visible(GAME, ev, viewer, False) for ev in g.events])
        for sid in SARC_RE.findall(blob) + SARC_RE.findall(logs):
            assert sid.decode() not in secret, (viewer, sid)
        for item in secret:
            key = b'"' + item.encode() + b'"'
            assert key not in blob, (viewer, item)
            assert key not in logs, (viewer, item)


@pytest.mark.parametrize("opts", [{}, {"sphinx": True}])
def test_no_leaks_during_play(opts):
    seen: dict = {}
    random_playout(GAME, players(3), opts, b"leak", pick_seed=3,
                   check=lambda g: check_no_leak(g, seen))


def test_custom_setup_not_leaked_by_creation_event():
    deck = list(reversed(CARD_IDS))
    opts = {"setup": {"deck_order": deck, "sarcophagi": sarc_setup(), "pharaohs": PHARAOHS[:3]}}
    seen: dict = {}
    g = LocalGame(GAME, players(3), opts, b"custom")
    check_no_leak(g, seen)
    created = visible(GAME, g.events[0], RED, False)
    assert "setup" not in created["data"]["options"] and created["data"]["setup"] == "custom"
    assert "setup" in g.events[0]["data"]["options"]  # not mutated
    assert visible(GAME, g.events[0], ALL, False) == g.events[0]
    random_playout(GAME, players(3), opts, b"custom", pick_seed=2,
                   check=lambda g: check_no_leak(g, seen))


def test_everything_revealed_at_the_end():
    g = random_playout(GAME, players(2), {}, b"end", pick_seed=1)
    v = GAME.view(g.state, None)
    assert all(p is not None for p in v["pharaohs"])
    assert "unused_pharaohs" in v
    assert all("value" in x for row in v["sarcophagi"] for x in row)
    assert v["result"] == GAME.result(g.state)
    assert g.events[-1]["type"] == "GameEnded"


def test_own_secrets_visible():
    g = LocalGame(GAME, players(3), {}, b"own")
    v = GAME.view(g.state, BLUE)
    assert v["hands"][BLUE] == g.state["hands"][BLUE] and v["hands"][RED] is None
    assert v["pharaohs"][BLUE] == g.state["pharaohs"][BLUE] and v["pharaohs"][RED] is None
    setup = visible(GAME, g.events[1], BLUE, False)
    assert setup["data"]["hands"][BLUE] == g.state["hands"][BLUE]
    assert setup["data"]["hands"][RED] is None
    assert "stacks" not in setup["data"] and "piles" not in setup["data"]
    assert g.events[1]["data"]["hands"][RED]  # input event not mutated


# ---------------------------------------------------------------------------------------------
# Property tests: random legal play to a full wall
# ---------------------------------------------------------------------------------------------

def invariants(g: LocalGame) -> None:
    s = g.state
    n = s["players"]
    pillars = s["pillars"].values()
    assert s["supply"] + sum(p["scarabs"] for p in pillars) == 16
    assert all(0 <= p["scarabs"] <= 3 for p in pillars)
    assert s["supply"] >= 0
    for seat in range(n):
        placed = sum(1 for p in pillars if p["occupant"] == seat)
        assert s["reserves"][seat] + placed == 5
    # one occupant per pillar by construction; each occupant is a real seat
    assert all(p["occupant"] is None or 0 <= p["occupant"] < n for p in pillars)
    sar = [x for p in pillars for x in p["stack"]] + [x for o in s["owned"] for x in o]
    assert sorted(sar) == sorted(SARC_IDS)
    for p in pillars:
        assert [SARCOPHAGI[x]["eyes"] for x in p["stack"]] == [1, 2, 3][3 - len(p["stack"]):]
    cards = ([c for col in s["wall"] for c in col] + [c for h in s["hands"] for c in h]
             + [c for pile in s["piles"].values() for c in pile if c not in CURSE_IDS])
    assert sorted(cards) == sorted(CARD_IDS)
    assert all(len(col) <= 7 for col in s["wall"])
    if s["phase"] == "play":
        assert s["hands"][s["turn"]], "the active player always holds a card"
    if GAME.is_over(s):
        assert sum(len(c) for c in s["wall"]) == 49


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(n=st.integers(2, 4), sphinx=st.booleans(), seed=st.binary(min_size=1, max_size=8),
       pick=st.integers(0, 10 ** 6))
def test_random_playouts(n, sphinx, seed, pick):
    g = random_playout(GAME, players(n), {"sphinx": sphinx}, seed, pick_seed=pick,
                       check=invariants)
    res = GAME.result(g.state)
    assert res["winners"] == [s for s in range(n) if res["ranks"][s] == 1]


@pytest.mark.parametrize("opts", [{"sphinx": True}, {"curse": True}])
def test_timeout_actions_are_legal(opts):
    rnd = random.Random(5)
    g = LocalGame(GAME, players(3), opts, b"clock")
    while not GAME.is_over(g.state):
        seat = rnd.choice(g.awaiting())
        action = GAME.timeout_action(g.state, seat)
        assert action in GAME.legal_actions(g.state, seat)
        g.act(seat, action)
    assert GAME.result(g.state) is not None


def test_view_shapes():
    g = LocalGame(GAME, players(2), {}, b"view")
    for viewer in (RED, BLUE, None, ALL):
        v = GAME.view(g.state, viewer)
        assert v["phase"] == "play" and v["turn"] == RED
        assert v["hand_sizes"] == [3, 3]
        assert v["pile_sizes"] == {"draw": 43}
        assert len(v["pillars"]) == 7


@pytest.mark.parametrize("opts", [{}, {"sphinx": True}, {"curse": True},
                                  {"curse": True, "sphinx": True}])
def test_explorer_never_placed_on_occupied_pillar(opts):
    """Fold the logs of random games checking every placement lands on a free pillar."""
    for i in range(4):
        g = random_playout(GAME, players(2 + i % 3), opts, b"expl%d" % i, pick_seed=i)
        state = GAME.initial(players(2 + i % 3), g.events[0]["data"]["options"])
        for ev in g.events[1:]:
            if ev["type"] == "ExplorerPlaced":
                assert state["pillars"][ev["data"]["pillar"]]["occupant"] is None
            if ev["type"] == "ExplorerDisplaced":
                assert state["pillars"][ev["data"]["pillar"]]["occupant"] == ev["data"]["seat"]
            GAME.apply(state, ev)
        assert state == g.state
