"""The Pharaoh's Wall reference implementation: (a) proven on the spec's worked examples
(rules/pharaohs-wall.md section 12) and edge cases, (b) cross-checked step by step against the
production module ``service.games.pharaohs_wall`` played through ``LocalGame`` with the same
random streams, in every variant (base, sphinx, curse, curse+sphinx) and for 2-4 seats.

Part (b) is skipped while ``service.games.pharaohs_wall`` does not exist.
"""

from __future__ import annotations

import hashlib
import importlib
import importlib.util
import json
import os
import random

import pytest

from service.engine.rng import Rng
from tests.reference.pharaohs_wall_ref import (ANIMALS, CARD, CARD_IDS, CURSE_IDS, CURSES,
                                               LEFT_COUNT, PHARAOHS, SARC_EYES, SARC_IDS,
                                               SARC_VALUE, TIERS, PharaohsWallRef)

RED, BLUE, GREEN = 0, 1, 2
INS = "insert"

# sarcophagus ids by value (table 2.3): 3 -> S01..S04, 4 -> S05..S07, 5 -> S08..S11, 6 -> S12..S14,
# 7 -> S15..S17, 8 -> S18, S19, 10 -> S20, S21
BY_VALUE = {}
for _sid in SARC_IDS:
    BY_VALUE.setdefault(SARC_VALUE[_sid], []).append(_sid)


class Ids:
    """Hands out unused card / sarcophagus ids for building positions."""

    def __init__(self):
        self.cards = set()
        self.sarcs = set()

    def card(self, spec: str) -> str:
        animal, f = spec.rsplit("-", 1)
        facing = {"L": "LEFT", "R": "RIGHT"}[f]
        for cid in CARD_IDS:
            if CARD[cid] == (animal, facing) and cid not in self.cards:
                self.cards.add(cid)
                return cid
        raise AssertionError(f"no {spec} left")

    def sarc(self, value: int) -> str:
        for sid in BY_VALUE[value]:
            if sid not in self.sarcs:
                self.sarcs.add(sid)
                return sid
        raise AssertionError(f"no sarcophagus of value {value} left")


def blank(n=3, curse=False, sphinx=False) -> PharaohsWallRef:
    """A reference game emptied out, ready to have a position written into it."""
    ref = PharaohsWallRef(n, {"curse": curse, "sphinx": sphinx}, Rng(b"blank", 1))
    ref.wall.clear()
    ref.height = [0] * 7
    ref.hands = [[] for _ in range(n)]
    ref.pile, ref.start_pile, ref.main_pile = [], [], []
    ref.stack = {a: [] for a in ANIMALS}
    ref.occupant = {a: None for a in ANIMALS}
    ref.scarabs = {a: 0 for a in ANIMALS}
    ref.supply = 16
    ref.reserve = [5] * n
    ref.owned = [[] for _ in range(n)]
    ref.pharaoh = ["P-CAT", "P-CAT", "P-CAT", "P-CAT"][:n]
    ref.phase, ref.active = "play", 0
    return ref


def put(ref: PharaohsWallRef, ids: Ids, col: int, *cards: str) -> None:
    """Stack ``cards`` (``ANIMAL-L``/``ANIMAL-R``) into shaft ``col``, bottom first."""
    for spec in cards:
        ref.wall[(col, ref.height[col])] = ids.card(spec)
        ref.height[col] += 1


def filler_pile(ids: Ids, k: int) -> list[str]:
    return [c for c in CARD_IDS if c not in ids.cards][:k]


def ins(card, column, explorer="none"):
    return {"type": INS, "card": card, "column": column, "explorer": explorer}


def canon(actions) -> set:
    return {json.dumps(a, sort_keys=True) for a in actions}


# ---------------------------------------------------------------------------------------------
# data
# ---------------------------------------------------------------------------------------------

def test_data_json_matches_spec_tables():
    path = os.path.join(os.path.dirname(__file__), "..", "..", "service", "games",
                        "pharaohs_wall", "data.json")
    with open(path) as fh:
        data = json.load(fh)
    assert data["animals"] == ANIMALS
    assert data["cards_per_animal"] == 7
    assert data["left_facing"] == LEFT_COUNT
    assert [s["id"] for s in data["sarcophagi"]] == SARC_IDS
    assert {s["id"]: s["value"] for s in data["sarcophagi"]} == SARC_VALUE
    assert {s["id"]: s["eyes"] for s in data["sarcophagi"]} == SARC_EYES
    assert data["curses"] == CURSES
    assert sum(SARC_VALUE.values()) == 119
    assert sum(LEFT_COUNT.values()) == 25


def test_setup_consumes_the_documented_rng_sequence():
    seed = b"pw-setup"
    for curse in (False, True):
        ref = PharaohsWallRef(3, {"curse": curse}, Rng(seed, 1))
        rng = Rng(seed, 1)
        assert ref.pillar_order == rng.shuffled(ANIMALS)
        deck = rng.shuffled(CARD_IDS)
        if not curse:
            assert ref.hands == [deck[0:3], deck[3:6], deck[6:9]] and ref.pile == deck[9:]
        else:
            start = deck[:20]
            main = rng.shuffled([c for c in CARD_IDS if c not in start] + CURSE_IDS)
            assert ref.hands == [start[0:3], start[3:6], start[6:9]]
            assert ref.start_pile == start[9:] and ref.main_pile == main
        tiers = [rng.shuffled(t) for t in TIERS]
        assert ref.stack == {a: [tiers[0][i], tiers[1][i], tiers[2][i]]
                             for i, a in enumerate(ANIMALS)}
        assert ref.pharaoh == rng.shuffled(PHARAOHS)[:3]
        assert ref.awaiting() == [0] and len(ref.legal(0)) > 1


# ---------------------------------------------------------------------------------------------
# (a) worked examples, reference alone
# ---------------------------------------------------------------------------------------------

def test_example_1_opposite_pair_at_empty_pillar():
    ids = Ids()
    ref = blank()
    put(ref, ids, 2, "CAMEL-L")
    ref.stack["CAMEL"] = [ids.sarc(4), ids.sarc(6), ids.sarc(10)]
    stack = list(ref.stack["CAMEL"])
    camel_r, ibis_l, cat_r = ids.card("CAMEL-R"), ids.card("IBIS-L"), ids.card("CAT-R")
    ref.hands[RED] = [camel_r, ibis_l, cat_r]
    ref.pile = filler_pile(ids, 10)
    assert ref.pairs_for(camel_r, (3, 0)) == [((2, 0), False)]
    legal = canon(ref.legal(RED))
    assert canon([ins(camel_r, 3, "none"), ins(camel_r, 3, "reserve")]) <= legal
    assert json.dumps(ins(ibis_l, 3, "reserve"), sort_keys=True) not in legal
    ref.act(RED, ins(camel_r, 3, "reserve"))
    assert ref.wall[(3, 0)] == camel_r
    assert ref.occupant["CAMEL"] == RED and ref.reserve[RED] == 4
    assert ref.scarabs["CAMEL"] == 1 and ref.supply == 15 and ref.stack["CAMEL"] == stack
    assert len(ref.hands[RED]) == 3 and ref.owned == [[], [], []]
    assert ref.awaiting() == [BLUE]


def test_example_2_displacement_and_opening():
    ids = Ids()
    ref = blank()
    put(ref, ids, 3, "CAMEL-R")
    put(ref, ids, 4, "IBIS-L")
    put(ref, ids, 5, "CAMEL-L")
    s4, s6, s10 = ids.sarc(4), ids.sarc(6), ids.sarc(10)
    ref.stack["CAMEL"] = [s4, s6, s10]
    ref.occupant["CAMEL"], ref.scarabs["CAMEL"] = BLUE, 1
    ref.scarabs.update(MULE=2, SNAKE=2, IBIS=1)  # keeps supply + pillars = 16
    ref.supply = 10
    ref.reserve = [3, 2, 5]
    card = ids.card("CAMEL-R")
    ref.hands[RED] = [card, ids.card("CAT-L"), ids.card("CAT-L")]
    ref.pile = filler_pile(ids, 10)
    assert sorted(ref.pairs_for(card, (4, 1))) == [((3, 0), True), ((5, 0), False)]
    assert ref.explorer_options(RED, card, 4) == ["none", "reserve"]
    ref.act(RED, ins(card, 4, "reserve"))
    assert ref.reserve == [2, 3, 5]
    assert ref.owned[RED] == [s4]
    assert ref.occupant["CAMEL"] == RED and ref.scarabs["CAMEL"] == 0
    assert ref.stack["CAMEL"] == [s6, s10] and ref.supply == 11


def test_example_3_capped_at_two_opening_for_another_player():
    ids = Ids()
    ref = blank()
    put(ref, ids, 0, "SNAKE-R")
    put(ref, ids, 1, "SNAKE-R")
    put(ref, ids, 2, "SNAKE-R")
    s5, s8 = ids.sarc(5), ids.sarc(8)
    ref.stack["SNAKE"] = [s5, s8]
    ref.occupant["SNAKE"], ref.scarabs["SNAKE"] = GREEN, 2
    ref.scarabs.update(CAMEL=3, MULE=2)  # 9 + 2 + 5 = 16
    ref.supply = 9
    ref.active = BLUE
    card = ids.card("SNAKE-L")
    ref.hands[BLUE] = [card, ids.card("CAT-L"), ids.card("CAT-L")]
    ref.pile = filler_pile(ids, 10)
    assert len(ref.pairs_for(card, (1, 1))) == 3
    assert ref.explorer_options(BLUE, card, 1) == ["none"]
    assert json.dumps(ins(card, 1, "reserve"), sort_keys=True) not in canon(ref.legal(BLUE))
    with pytest.raises(ValueError):
        ref.act(BLUE, ins(card, 1, "reserve"))
    ref.act(BLUE, ins(card, 1, "none"))
    assert ref.owned == [[], [], [s5]]
    assert ref.occupant["SNAKE"] == GREEN and ref.scarabs["SNAKE"] == 1
    assert ref.stack["SNAKE"] == [s8] and ref.supply == 10


def _example_4_position():
    ids = Ids()
    ref = blank()
    ref.phase, ref.end_seat, ref.end_done = "end", RED, set()
    for a in ("CAMEL", "SNAKE", "FALCON"):
        ref.occupant[a] = RED
    ref.occupant["IBIS"] = GREEN
    ref.reserve = [2, 5, 4]
    ref.scarabs.update(CAMEL=1, SNAKE=2, FALCON=0)
    ref.supply = 13
    ref.owned[RED] = [ids.sarc(4), ids.sarc(5)]
    ref.owned[GREEN] = [ids.sarc(10), ids.sarc(7)]
    ref.owned[BLUE] = [ids.sarc(6), ids.sarc(8)]
    ref.stack["CAMEL"] = [ids.sarc(6), ids.sarc(10)]
    ref.stack["SNAKE"] = [ids.sarc(8)]
    ref.pharaoh = ["P-CAMEL", "P-FALCON", "P-IBIS"]
    return ref


def test_example_4_end_move_scoring_tiebreak():
    ref = _example_4_position()
    snake_8 = ref.stack["SNAKE"][0]
    assert canon(ref.legal(RED)) == canon([
        {"type": "move_scarab", "from": "CAMEL", "to": "SNAKE"},
        {"type": "move_scarab", "from": "CAMEL", "to": "FALCON"},
        {"type": "move_scarab", "from": "SNAKE", "to": "CAMEL"},
        {"type": "move_scarab", "from": "SNAKE", "to": "FALCON"},
        {"type": "done"}])
    assert ref.legal(BLUE) == [] and ref.legal(GREEN) == []
    ref.act(RED, {"type": "move_scarab", "from": "CAMEL", "to": "SNAKE"})
    # Red has no move left (camel 0, snake 0, falcon 0): done is forced; Blue (no explorer) and
    # Green (one explorer) are forced done as well -> the game is over
    assert snake_8 in ref.owned[RED] and ref.supply == 16
    assert ref.awaiting() == [] and ref.phase == "over"
    assert ref.result() == {"scores": [24, 14, 24], "ranks": [1, 3, 2], "winners": [RED]}


def test_example_4_alternative_two_snake_scarabs_to_camel():
    ref = _example_4_position()
    camel_6 = ref.stack["CAMEL"][0]
    ref.act(RED, {"type": "move_scarab", "from": "SNAKE", "to": "CAMEL"})
    assert ref.awaiting() == [RED]
    ref.act(RED, {"type": "move_scarab", "from": "SNAKE", "to": "CAMEL"})
    assert camel_6 in ref.owned[RED]
    assert ref.result()["scores"] == [22, 14, 24]  # 2 points less than the move to the snake


def _example_5_position(sphinx: bool):
    ids = Ids()
    ref = blank(sphinx=sphinx)
    put(ref, ids, 0, "CAT-R", "CROCODILE-L")
    put(ref, ids, 1, "IBIS-L")
    put(ref, ids, 2, "CROCODILE-L")
    put(ref, ids, 3, "SNAKE-L", "FALCON-L", "MULE-R")
    put(ref, ids, 5, "MULE-L", "IBIS-R", "CAT-L", "SNAKE-R", "CROCODILE-R")
    put(ref, ids, 6, "FALCON-R", "CROCODILE-R", "MULE-L", "IBIS-L", "SNAKE-L", "CAT-L")
    ref.stack["CROCODILE"] = [ids.sarc(3), ids.sarc(5), ids.sarc(7)]
    ref.occupant["CROCODILE"] = BLUE
    ref.reserve = [3, 4, 5]
    ref.scarabs.update(CAMEL=2, MULE=2)
    ref.supply = 12
    card = ids.card("CROCODILE-R")
    ref.hands[RED] = [card, ids.card("CAMEL-L"), ids.card("CAMEL-L")]
    ref.pile = filler_pile(ids, 10)
    return ref, card


def test_example_5_sphinx():
    ref, card = _example_5_position(sphinx=True)
    assert sorted(ref.pairs_for(card, (2, 1))) == [((2, 0), False), ((5, 4), True)]
    assert ref.explorer_options(RED, card, 2) == ["none", "reserve"]
    ref.act(RED, ins(card, 2, "reserve"))
    assert ref.occupant["CROCODILE"] == RED and ref.reserve[:2] == [2, 5]
    assert ref.scarabs["CROCODILE"] == 2 and ref.supply == 10 and ref.owned == [[], [], []]


def test_example_5_base_rule_same_position():
    ref, card = _example_5_position(sphinx=False)
    assert ref.pairs_for(card, (2, 1)) == [((2, 0), False)]
    assert ref.explorer_options(RED, card, 2) == ["none"]
    ref.act(RED, ins(card, 2, "none"))
    assert ref.occupant["CROCODILE"] == BLUE and ref.reserve[:2] == [3, 4]
    assert ref.scarabs["CROCODILE"] == 1 and ref.supply == 11


def _example_6_position():
    ids = Ids()
    ref = blank(curse=True)
    put(ref, ids, 0, "SNAKE-R")
    put(ref, ids, 1, "IBIS-L", "MULE-L")
    put(ref, ids, 2, "CAT-R", "FALCON-L")
    camel = ids.card("CAMEL-R")
    ref.owned = [[ids.sarc(4), ids.sarc(8)], [ids.sarc(6)], [ids.sarc(5)]]
    ref.hands[RED] = [camel, ids.card("CAT-L"), ids.card("CAT-L")]
    ref.hands[BLUE] = [ids.card("IBIS-R"), ids.card("IBIS-R"), ids.card("IBIS-R")]
    ref.hands[GREEN] = [ids.card("MULE-R"), ids.card("MULE-R"), ids.card("MULE-R")]
    ref.main_pile = ["C1"] + filler_pile(ids, 5)
    return ref, camel


def test_example_6_curse():
    ref, camel = _example_6_position()
    red4, red8 = ref.owned[RED]
    next_card = ref.main_pile[1]
    ref.act(RED, ins(camel, 2))  # lands at (2,2): no camel neighbour
    assert ref.phase == "curse_claims" and ref.curse_card == "C1"
    assert ref.awaiting() == [RED, BLUE, GREEN]
    claims = canon(ref.legal(BLUE))
    assert claims == canon([
        {"type": "curse_claim", "cells": [[0, 0], [1, 0], [2, 0]]},
        {"type": "curse_claim", "cells": [[0, 0], [1, 1], [2, 2]]},
        {"type": "curse_claim", "cells": [[2, 0], [2, 1], [2, 2]]},
        {"type": "curse_pass"}])
    assert ref.legal(RED) == ref.legal(BLUE) == ref.legal(GREEN)
    with pytest.raises(ValueError):  # not a straight segment
        ref.act(GREEN, {"type": "curse_claim", "cells": [[0, 0], [1, 0], [1, 1]]})
    ref.act(BLUE, {"type": "curse_claim", "cells": [[2, 2], [1, 1], [0, 0]]})
    assert ref.phase == "curse_victim" and ref.awaiting() == [BLUE]
    assert canon(ref.legal(BLUE)) == canon([{"type": "curse_victim", "seat": RED},
                                            {"type": "curse_victim", "seat": GREEN}])
    ref.act(BLUE, {"type": "curse_victim", "seat": RED})
    assert ref.awaiting() == [RED]
    assert canon(ref.legal(RED)) == canon([{"type": "curse_give", "sarcophagus": red4},
                                           {"type": "curse_give", "sarcophagus": red8}])
    ref.act(RED, {"type": "curse_give", "sarcophagus": red4})
    assert ref.owned[RED] == [red8] and ref.owned[BLUE][-1] == red4 and len(ref.owned[GREEN]) == 1
    assert ref.discarded_curses == ["C1"] and "C1" not in ref.main_pile
    assert next_card in ref.hands[RED] and len(ref.hands[RED]) == 3
    assert ref.phase == "play" and ref.awaiting() == [BLUE]


def test_example_6_nobody_claims_correctly():
    ref, camel = _example_6_position()
    owned = [list(o) for o in ref.owned]
    ref.act(RED, ins(camel, 2))
    ref.act(GREEN, {"type": "curse_claim", "cells": [[0, 0], [1, 0], [2, 0]]})  # wrong = pass
    ref.act(RED, {"type": "curse_pass"})
    assert ref.awaiting() == [BLUE]
    ref.act(BLUE, {"type": "curse_pass"})
    assert ref.owned == owned and ref.discarded_curses == ["C1"]
    assert len(ref.hands[RED]) == 3 and ref.awaiting() == [BLUE] and ref.phase == "play"


def test_curse_single_victim_and_single_sarcophagus_are_forced():
    ref, camel = _example_6_position()
    ref.owned[GREEN] = []
    ref.owned[RED] = ref.owned[RED][:1]
    red4 = ref.owned[RED][0]
    ref.act(RED, ins(camel, 2))
    ref.act(BLUE, {"type": "curse_claim", "cells": [[0, 0], [1, 1], [2, 2]]})
    # one candidate (Red) and one sarcophagus: both forced, drawing continues
    assert ref.owned[BLUE][-1] == red4 and ref.owned[RED] == []
    assert ref.phase == "play" and ref.awaiting() == [BLUE]


def test_curse_without_segments_is_passed_by_everyone():
    ids = Ids()
    ref = blank(curse=True)
    card = ids.card("CAMEL-L")
    ref.hands[RED] = [card, ids.card("CAT-L"), ids.card("CAT-L")]
    ref.main_pile = ["C2", "C3"] + filler_pile(ids, 3)
    top = ref.main_pile[2]
    ref.act(RED, ins(card, 0))
    assert ref.discarded_curses == ["C2", "C3"] and top in ref.hands[RED]
    assert ref.awaiting() == [BLUE]


def test_edge_three_scarabs_no_occupant_then_explorer_opens_first():
    ids = Ids()
    ref = blank()
    put(ref, ids, 0, "MULE-L")
    s3, s5 = ids.sarc(3), ids.sarc(5)
    ref.stack["MULE"] = [s3, s5]
    ref.scarabs["MULE"] = 3
    ref.supply = 13
    card = ids.card("MULE-L")
    ref.hands[RED] = [card, ids.card("CAT-L"), ids.card("CAT-L")]
    ref.pile = filler_pile(ids, 5)
    ref.act(RED, ins(card, 1, "reserve"))
    assert ref.owned[RED] == [s3] and ref.scarabs["MULE"] == 1 and ref.supply == 15


def test_edge_reserve_empty_moves_an_explorer():
    ids = Ids()
    ref = blank()
    put(ref, ids, 0, "MULE-L")
    for a in ("CAMEL", "SNAKE", "IBIS", "FALCON", "CAT"):
        ref.occupant[a] = RED
    ref.reserve[RED] = 0
    card = ids.card("MULE-R")
    ref.hands[RED] = [card, ids.card("CAT-L"), ids.card("CAT-L")]
    ref.pile = filler_pile(ids, 5)
    assert ref.explorer_options(RED, card, 1) == ["none"] + [
        {"from_pillar": a} for a in ("CAMEL", "SNAKE", "IBIS", "FALCON", "CAT")]
    ref.act(RED, ins(card, 1, {"from_pillar": "FALCON"}))
    assert ref.occupant["MULE"] == RED and ref.occupant["FALCON"] is None
    assert ref.reserve[RED] == 0


def test_edge_empty_stack_three_scarabs_place_nothing():
    ids = Ids()
    ref = blank()
    put(ref, ids, 0, "IBIS-L")
    ref.scarabs["IBIS"] = 3
    ref.supply = 13
    card = ids.card("IBIS-L")
    ref.hands[RED] = [card, ids.card("CAT-L"), ids.card("CAT-L")]
    ref.pile = filler_pile(ids, 5)
    ref.act(RED, ins(card, 1, "reserve"))  # empty-stack pillars are legal targets
    assert ref.occupant["IBIS"] == RED and ref.scarabs["IBIS"] == 3 and ref.supply == 13
    assert ref.owned[RED] == []


def test_last_insert_is_the_seat_s_and_the_end_move_cap():
    ref = blank(n=2)
    # wall full but one cell at (6,6); Blue holds the last card (a cat); the cats fill the
    # first cells (far from (6,6)), so the last card forms no pair
    last = "H-CAT-7"
    rest = [c for c in reversed(CARD_IDS) if c != last]
    cells = [(col, row) for col in range(7) for row in range(7) if (col, row) != (6, 6)]
    for cell, cid in zip(cells, rest):
        ref.wall[cell] = cid
    ref.height = [7, 7, 7, 7, 7, 7, 6]
    assert not ref.pairs_for(last, (6, 6))
    ref.hands = [[], [last]]
    ref.active = BLUE
    ref.occupant.update(CAMEL=RED, MULE=RED)
    ref.scarabs.update(CAMEL=2, MULE=0)
    ref.supply = 14
    ref.reserve = [3, 5]
    # Blue's only action (one card, one shaft) is not played for it: whether it has one
    # explorer option depends on the card, which Red does not see; Blue sends it
    assert ref.legal(BLUE) == [ins(last, 6)]
    ref._forced()
    assert ref.awaiting() == [BLUE] and len(ref.wall) == 48
    ref.act(BLUE, ins(last, 6))
    assert len(ref.wall) == 49 and ref.phase == "end" and ref.awaiting() == [RED]
    for i in range(16):
        src, dst = ("CAMEL", "MULE") if ref.scarabs["CAMEL"] else ("MULE", "CAMEL")
        assert ref.awaiting() == [RED], i
        ref.act(RED, {"type": "move_scarab", "from": src, "to": dst})
    # after the 16th move Red's done is automatic; Blue has no explorers -> over
    assert ref.phase == "over" and ref.end_moves[RED] == 16


# ---------------------------------------------------------------------------------------------
# (b) the cross-check against the production module
# ---------------------------------------------------------------------------------------------

VARIANTS = [
    ("base", {}),
    ("sphinx", {"sphinx": True}),
    ("curse", {"curse": True}),
    ("curse+sphinx", {"curse": True, "sphinx": True}),
]


def _production():
    if importlib.util.find_spec("service.games.pharaohs_wall") is None:
        pytest.skip("service.games.pharaohs_wall does not exist yet")
    return importlib.import_module("service.games.pharaohs_wall").GAME


def _seed(i: int) -> bytes:
    return hashlib.sha256(f"pharaohs-wall-crosscheck-{i}".encode()).digest()


def _random_setup(rnd: random.Random, n: int, curse: bool) -> dict:
    setup: dict = {}
    if rnd.random() < 0.5:
        deck = list(CARD_IDS)
        rnd.shuffle(deck)
        if curse:
            main = deck[20:] + list(CURSE_IDS)
            rnd.shuffle(main)
            setup["start_pile"], setup["main_pile"] = deck[:20], main
        else:
            setup["deck_order"] = deck
    if rnd.random() < 0.5:
        tiers = [rnd.sample(t, 7) for t in TIERS]
        setup["sarcophagi"] = {a: [tiers[0][i], tiers[1][i], tiers[2][i]]
                               for i, a in enumerate(ANIMALS)}
    if rnd.random() < 0.5 or not setup:
        setup["pharaohs"] = rnd.sample(PHARAOHS, n)
    return setup


def _compare(g, ref, n, where):
    assert g.awaiting() == ref.awaiting(), (
        f"{where}: awaiting production {g.awaiting()} reference {ref.awaiting()}")
    for seat in range(n):
        prod, mine = canon(g.legal(seat)), canon(ref.legal(seat))
        if prod != mine:
            pytest.fail(f"{where}: legal actions of seat {seat} differ; only production: "
                        f"{sorted(prod - mine)[:6]}; only reference: {sorted(mine - prod)[:6]}")


def _choose(rnd: random.Random, ref: PharaohsWallRef, seat: int, p_done: float,
            p_place: float) -> dict:
    acts = ref.legal(seat)
    if ref.phase == "curse_claims":
        good = ref.matching_segments()
        if good and rnd.random() < 0.5:
            cells = [list(c) for c in rnd.choice(good)]
            rnd.shuffle(cells)  # claims are compared as a set
            return {"type": "curse_claim", "cells": cells}
        if rnd.random() < 0.5:
            return {"type": "curse_pass"}
    if ref.phase == "end":
        if rnd.random() < p_done:
            return {"type": "done"}
        moves = [a for a in acts if a["type"] == "move_scarab"]
        if moves and p_done == 0:  # never say done: runs into the 16-move cap
            return rnd.choice(moves)
    if ref.phase == "play":
        # prefer placing explorers (more interaction), sometimes decline
        placing = [a for a in acts if a["explorer"] != "none"]
        if placing:
            if rnd.random() < p_place:
                return rnd.choice(placing)
            return rnd.choice([a for a in acts if a["explorer"] == "none"])
    return rnd.choice(acts)


def _random_illegal(rnd: random.Random, ref: PharaohsWallRef, seat: int) -> dict | None:
    """An action of the current phase's type that the reference deems illegal (or None)."""
    legal = canon(ref.legal(seat))
    for _ in range(20):
        if ref.phase == "play":
            pool = ref.hands[seat] + rnd.sample(CARD_IDS, 2)
            ex = rnd.choice(["none", "reserve", {"from_pillar": rnd.choice(ANIMALS)},
                             {"from_pillar": "DOG"}, "nowhere"])
            a = {"type": "insert", "card": rnd.choice(pool), "column": rnd.randint(-1, 7),
                 "explorer": ex}
        elif ref.phase == "curse_claims":
            cells = [[rnd.randint(0, 6), rnd.randint(0, 6)] for _ in range(3)]
            if tuple(sorted(map(tuple, cells))) in ref.segments():
                continue
            a = {"type": "curse_claim", "cells": cells}
        elif ref.phase == "curse_victim":
            a = {"type": "curse_victim", "seat": rnd.randint(-1, ref.n)}
        elif ref.phase == "curse_give":
            a = {"type": "curse_give", "sarcophagus": rnd.choice(SARC_IDS)}
        elif ref.phase == "end":
            a = {"type": "move_scarab", "from": rnd.choice(ANIMALS), "to": rnd.choice(ANIMALS)}
        else:
            return None
        if json.dumps(a, sort_keys=True) not in legal:
            return a
    return None


def crosscheck_game(game, i: int) -> None:
    from service.engine import NotYourTurn, command
    from service.engine.game import IllegalAction
    from service.engine.local import LocalGame

    rnd = random.Random(i)
    vname, voptions = VARIANTS[i % 4]
    n = 2 + (i // 4) % 3
    seed = _seed(i)
    options = dict(voptions)
    if i % 5 == 2:
        options["setup"] = _random_setup(rnd, n, bool(voptions.get("curse")))
    players = [{"name": f"p{s}"} for s in range(n)]
    p_done = 0.0 if i % 3 == 0 else 0.25  # sometimes play long end phases (16-move cap)
    # sometimes decline almost every explorer: scarabs pile up at empty pillars, the supply
    # runs dry and openings wait for an explorer
    p_place = 0.1 if i % 7 == 3 else 0.7
    where = (f"game #{i} ({vname}, {n} players, seed {seed.hex()[:16]}, "
             f"setup={sorted(options.get('setup', {}))})")

    g = LocalGame(game, players, options, seed)
    ref = PharaohsWallRef(n, options, Rng(seed, 1))
    _compare(g, ref, n, f"{where}, after creation")
    step = 0
    while ref.awaiting():
        step += 1
        if step > 3000:
            pytest.fail(f"{where}: game did not end")
        awaiting = ref.awaiting()
        seat = rnd.choice(awaiting)
        action = _choose(rnd, ref, seat, p_done, p_place)
        if step % 3 == 1:
            bad = {"type": "done"} if ref.phase != "end" else {"type": "curse_pass"}
            with pytest.raises(ValueError):
                ref.act(seat, bad)
            with pytest.raises((IllegalAction, NotYourTurn)):
                command(game, g.state, seat, bad, None)
            for _ in range(3):
                bad = _random_illegal(rnd, ref, seat)
                if bad is None:
                    continue
                with pytest.raises(ValueError):
                    ref.act(seat, bad)
                try:
                    command(game, g.state, seat, bad, None)
                except (IllegalAction, NotYourTurn):
                    pass
                else:
                    pytest.fail(f"{where}, step {step}: production accepted {bad} for seat "
                                f"{seat}, which the reference deems illegal")
            others = [s for s in range(n) if s not in awaiting]
            if others:
                with pytest.raises(ValueError):
                    ref.act(others[0], action)
                with pytest.raises(NotYourTurn):
                    command(game, g.state, others[0], action, None)
        version = g.version
        g.act(seat, action)
        ref.act(seat, action)
        _compare(g, ref, n, f"{where}, step {step} (v{version + 1}, seat {seat} {action})")
    assert game.is_over(g.state), f"{where}: reference over, production not"
    assert len(ref.wall) == 49
    assert ref.supply + sum(ref.scarabs.values()) == 16
    assert all(ref.reserve[s] + sum(1 for a in ANIMALS if ref.occupant[a] == s) == 5
               for s in range(n))
    prod = game.result(g.state)
    mine = ref.result()
    for key in ("scores", "ranks", "winners"):
        assert prod[key] == mine[key], f"{where}: result {key}: production {prod[key]} " \
                                       f"reference {mine[key]}"


N_GAMES = 400
BATCH = 20


@pytest.mark.parametrize("batch", range(N_GAMES // BATCH))
def test_crosscheck_with_production(batch):
    game = _production()
    for i in range(batch * BATCH, (batch + 1) * BATCH):
        crosscheck_game(game, i)
