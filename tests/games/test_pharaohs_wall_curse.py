"""Pharaoh's Wall, variant "Pharaoh's Curse" (spec section 7, example 6)."""

from __future__ import annotations

import random

import orjson
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from service.engine import NotYourTurn, visible
from service.engine.local import LocalGame
from service.games.pharaohs_wall import CURSE_IDS, CURSES, GAME, segment_matches, segments
from tests.games.harness import illegal, random_playout
from tests.games.test_pharaohs_wall import (BLUE, GREEN, RED, SARCOPHAGI, Table, check_no_leak,
                                            insert, invariants, players)

EX6_WALL = [["SNAKE-R"], ["IBIS-L", "MULE-L"], ["CAT-R", "FALCON-L", "CAMEL-R"]]


def example_6_table(curse_card: str = "C1", **kw) -> Table:
    opts = dict(curse=True, wall=EX6_WALL, hands=[["CROCODILE-L", "CROCODILE-R", "CAT-L"],
                                                   ["MULE-R", "CAT-L", "IBIS-R"],
                                                   ["SNAKE-L", "SNAKE-R", "FALCON-R"]],
                owned={RED: [4, 8], GREEN: [5], BLUE: [6]}, main=[curse_card, "CAMEL-L"])
    opts.update(kw)
    t = Table(**opts)
    # Red inserts a card away from everything; the draw reveals the curse.
    t.act(RED, insert(t.hand_card(RED, "CROCODILE-L"), 6))
    return t


def claim(*cells) -> dict:
    return {"type": "curse_claim", "cells": [list(c) for c in cells]}


PASS = {"type": "curse_pass"}


def test_example_6_pharaohs_curse():
    t = example_6_table()
    s = t.state
    assert s["phase"] == "curse" and s["curse"]["card"] == "C1"
    assert GAME.awaiting(s) == [RED, BLUE, GREEN]
    assert len(s["hands"][RED]) == 2
    t.act(BLUE, claim((2, 2), (1, 1), (0, 0)))
    s = t.state
    assert s["phase"] == "curse_victim" and GAME.awaiting(s) == [BLUE]
    assert GAME.legal_actions(s, BLUE) == [{"type": "curse_victim", "seat": RED},
                                           {"type": "curse_victim", "seat": GREEN}]
    assert illegal(GAME, s, BLUE, {"type": "curse_victim", "seat": BLUE}).code == "invalid_victim"
    t.act(BLUE, {"type": "curse_victim", "seat": RED})
    assert GAME.awaiting(t.state) == [RED]
    gives = GAME.legal_actions(t.state, RED)
    assert len(gives) == 2
    four = next(a for a in gives if SARCOPHAGI[a["sarcophagus"]]["value"] == 4)
    t.act(RED, four)
    assert t.values(RED) == [8] and t.values(BLUE) == [6, 4] and t.values(GREEN) == [5]
    assert t.state["curses_done"] == ["C1"]
    assert len(t.state["hands"][RED]) == 3  # kept drawing: the next card is a hieroglyph
    assert t.state["phase"] == "play" and t.state["turn"] == BLUE
    # The finder now sees the value; Green does not.
    sid = four["sarcophagus"]
    assert sid in orjson.dumps(GAME.view(t.state, BLUE)).decode()
    assert sid not in orjson.dumps(GAME.view(t.state, GREEN)).decode()
    given_ev = next(e for e in t.events if e["type"] == "SarcophagusGiven")
    assert "sarcophagus" not in visible(GAME, given_ev, GREEN, False)["data"]
    assert visible(GAME, given_ev, BLUE, False) == given_ev


def test_example_6_nobody_correct_no_effect():
    t = example_6_table()
    t.act(GREEN, claim((0, 0), (1, 0), (2, 0)))  # SNAKE IBIS CAT: wrong = pass
    t.act(RED, PASS)
    t.act(BLUE, PASS)
    assert t.values(RED) == [4, 8] and t.values(BLUE) == [6]
    assert [e["type"] for e in t.events[-5:-2]] == ["CursePassed", "CurseRoundClosed",
                                                    "CurseDiscarded"]
    assert t.events[-4]["data"] == {"card": "C1", "finder": None}
    assert t.state["turn"] == BLUE and len(t.state["hands"][RED]) == 3


def test_first_correct_claim_in_server_order_wins():
    t = example_6_table()
    t.act(GREEN, claim((0, 0), (1, 1), (2, 2)))
    assert t.state["curse"]["finder"] == GREEN
    with pytest.raises(NotYourTurn):
        t.act(BLUE, claim((2, 2), (1, 1), (0, 0)))


def test_claim_compared_as_set_and_read_in_either_direction():
    t = example_6_table()
    t.act(RED, claim((1, 1), (0, 0), (2, 2)))
    assert t.state["curse"]["finder"] == RED


def test_wrong_claim_and_pass_look_the_same():
    a = example_6_table()
    b = example_6_table()
    ev_a = a.act(GREEN, claim((0, 0), (1, 0), (2, 0)))
    ev_b = b.act(GREEN, PASS)
    assert [e["type"] for e in ev_a] == ["CurseClaimed"]
    assert [e["type"] for e in ev_b] == ["CursePassed"]
    assert "correct" not in orjson.dumps(ev_a).decode()
    for t in (a, b):
        assert GAME.awaiting(t.state) == [RED, BLUE]
        assert GAME.legal_actions(t.state, GREEN) == []
        assert GAME.not_awaited_reason(t.state, GREEN) == "already_committed"


def strip_card(view: dict) -> dict:
    view = orjson.loads(orjson.dumps(view))
    view["curse"].pop("card")
    view["curse"].pop("sequence")
    return view


def test_nothing_tells_whether_a_match_exists():
    # C1 has a match on this wall; C2 (IBIS, CROCODILE, FALCON) has none.
    yes, no = example_6_table("C1"), example_6_table("C2")
    assert segment_matches(yes.state["wall"], [[0, 0], [1, 1], [2, 2]], CURSES["C1"])
    assert not any(segment_matches(no.state["wall"], c, CURSES["C2"])
                   for c in segments(no.state["wall"]))
    for step in range(3):
        for seat in (RED, BLUE, GREEN):
            assert GAME.legal_actions(yes.state, seat) == GAME.legal_actions(no.state, seat)
            for viewer in (RED, BLUE, GREEN, None):
                assert strip_card(GAME.view(yes.state, viewer)) == strip_card(
                    GAME.view(no.state, viewer))
            assert GAME.timeout_action(yes.state, seat) == {"type": "curse_pass"} or \
                seat not in GAME.awaiting(yes.state)
        # Same errors for the same bad claims.
        for bad in (claim((0, 0), (1, 1), (3, 3)), claim((0, 0), (0, 1), (0, 2)),
                    claim((0, 0), (2, 0), (1, 1)), claim((9, 9), (1, 1), (2, 2))):
            for seat in GAME.awaiting(yes.state):
                ea, eb = illegal(GAME, yes.state, seat, bad), illegal(GAME, no.state, seat, bad)
                assert (ea.code, ea.message, ea.details) == (eb.code, eb.message, eb.details)
                assert ea.code == "not_a_segment"
        if step == 2:
            break
        # A wrong claim in both games: identical events.
        seat = GAME.awaiting(yes.state)[0]
        wrong = claim((0, 0), (1, 0), (2, 0))
        assert yes.act(seat, wrong) == no.act(seat, wrong)


def test_claim_legal_actions_list_every_segment_once():
    t = example_6_table()
    acts = GAME.legal_actions(t.state, GREEN)
    assert acts[-1] == PASS
    cells = [a["cells"] for a in acts[:-1]]
    # (0,0)(1,0)(2,0) row; (1,0)(1,1)? no; (2,0)(2,1)(2,2) column; (0,0)(1,1)(2,2) diagonal;
    # (6,0) was added by Red, far away.
    assert cells == [[[0, 0], [1, 0], [2, 0]], [[0, 0], [1, 1], [2, 2]],
                     [[2, 0], [2, 1], [2, 2]]]
    assert all(c == sorted(c) for c in cells)


def test_hostile_claims():
    t = example_6_table()
    for bad, code in [
        ({"type": "curse_claim"}, "missing_field"),
        ({"type": "curse_claim", "cells": "a"}, "invalid_field"),
        ({"type": "curse_claim", "cells": [[0, 0], [1, 0]]}, "invalid_field"),
        ({"type": "curse_claim", "cells": [[0, 0], [1, 0], [2, "0"]]}, "invalid_field"),
        ({"type": "curse_claim", "cells": [[0, 0], [1, 0], [2, True]]}, "invalid_field"),
        ({"type": "curse_claim", "cells": [[0, 0], [1, 0], [2, 0, 0]]}, "invalid_field"),
        ({"type": "curse_claim", "cells": [[0, 0], [0, 0], [0, 0]]}, "not_a_segment"),
        ({"type": "curse_claim", "cells": [[0, 0], [1, 0], [2, 10 ** 40]]}, "not_a_segment"),
        ({"type": "curse_pass", "cells": []}, "unexpected_field"),
        ({"type": "curse_victim", "seat": 0}, "wrong_phase"),
        ({"type": "insert", "card": "H-CAMEL-1", "column": 0, "explorer": "none"},
         "wrong_phase"),
    ]:
        assert illegal(GAME, t.state, GREEN, bad).code == code, bad
    t.act(BLUE, claim((2, 2), (1, 1), (0, 0)))
    for bad, code in [({"type": "curse_victim", "seat": "0"}, "invalid_field"),
                      ({"type": "curse_victim", "seat": 7}, "invalid_victim"),
                      ({"type": "curse_victim", "seat": False}, "invalid_field")]:
        assert illegal(GAME, t.state, BLUE, bad).code == code
    t.act(BLUE, {"type": "curse_victim", "seat": GREEN})
    # Green has one sarcophagus: the give was forced.
    assert t.events[-1]["type"] != "SarcophagusGiven"
    assert any(e["type"] == "SarcophagusGiven" and e.get("forced") for e in t.events)


def test_victim_give_errors():
    t = example_6_table()
    t.act(BLUE, claim((2, 2), (1, 1), (0, 0)))
    t.act(BLUE, {"type": "curse_victim", "seat": RED})
    for bad, code in [({"type": "curse_give", "sarcophagus": "S21"}, "not_your_sarcophagus"),
                      ({"type": "curse_give", "sarcophagus": 3}, "invalid_field"),
                      ({"type": "curse_give"}, "missing_field")]:
        assert illegal(GAME, t.state, RED, bad).code == code


def test_finder_without_victims_no_effect():
    t = example_6_table(owned={BLUE: [6]})
    t.act(BLUE, claim((2, 2), (1, 1), (0, 0)))
    assert t.state["phase"] == "play" and t.state["turn"] == BLUE
    assert t.values(BLUE) == [6]
    assert t.events[-4]["data"] == {"card": "C1", "finder": BLUE}


def test_single_victim_forced():
    t = example_6_table(owned={GREEN: [5, 7]})
    t.act(BLUE, claim((2, 2), (1, 1), (0, 0)))
    forced = [e for e in t.events if e.get("forced")]
    assert forced[0]["type"] == "CurseVictimChosen" and forced[0]["data"]["victim"] == GREEN
    assert GAME.awaiting(t.state) == [GREEN]


def test_consecutive_curses():
    t = example_6_table(main=["C1", "C5", "CAMEL-L"])
    for seat in (RED, BLUE, GREEN):
        t.act(seat, PASS)
    assert t.state["phase"] == "curse" and t.state["curse"]["card"] == "C5"
    for seat in (RED, BLUE, GREEN):
        t.act(seat, PASS)
    assert t.state["curses_done"] == ["C1", "C5"]
    assert len(t.state["hands"][RED]) == 3 and t.state["turn"] == BLUE


def test_no_segment_on_wall_passes_are_forced():
    t = Table(curse=True, wall=[["SNAKE-R"]], hands=[["CAT-L", "CAT-R", "IBIS-L"],
                                                      ["MULE-R"], ["MULE-L"]],
              main=["C1", "CAMEL-L"])
    t.act(RED, insert(t.hand_card(RED, "CAT-L"), 4))
    passes = [e for e in t.events if e["type"] == "CursePassed"]
    assert len(passes) == 3 and all(e.get("forced") for e in passes)
    assert t.state["turn"] == BLUE and t.state["curses_done"] == ["C1"]


def test_start_pile_first_then_main_and_curses_left_at_the_bottom():
    t = Table(curse=True, hands=[["CAT-L", "CAT-R", "IBIS-L"], ["MULE-R", "MULE-L", "IBIS-R"],
                                 ["SNAKE-L", "SNAKE-R", "FALCON-R"]])
    s = t.state
    rest = s["piles"]["start"]
    s["piles"] = {"start": rest[:1], "main": [rest[1], "C3"]}
    s["wall"][0] = rest[2:9]  # park the other cards on the wall (consistent counts not needed)
    t.act(RED, insert(t.hand_card(RED, "CAT-L"), 1))
    assert rest[0] in t.state["hands"][RED]
    v = GAME.view(t.state, BLUE)
    assert v["pile_sizes"] == {"start": 0, "main": 2} and v["main_top_is_curse"] is False
    t.act(BLUE, insert(t.hand_card(BLUE, "MULE-R"), 1))
    assert rest[1] in t.state["hands"][BLUE]
    assert GAME.view(t.state, GREEN)["main_top_is_curse"] is True
    t.act(GREEN, insert(t.hand_card(GREEN, "SNAKE-L"), 2))
    assert t.state["phase"] == "curse" and t.state["curse"]["card"] == "C3"
    for seat in (RED, BLUE, GREEN):
        if seat in GAME.awaiting(t.state):
            t.act(seat, PASS)
    assert t.state["piles"]["main"] == [] and len(t.state["hands"][GREEN]) == 2
    assert t.state["turn"] == RED


def test_timeout_in_curse_round_is_a_pass():
    t = example_6_table()
    assert GAME.timeout_action(t.state, GREEN) == PASS


def test_view_during_curse_round():
    t = example_6_table()
    t.act(GREEN, claim((0, 0), (1, 0), (2, 0)))
    v = GAME.view(t.state, None)
    assert v["curse"]["card"] == "C1" and v["curse"]["sequence"] == ["CAMEL", "MULE", "SNAKE"]
    assert v["curse"]["claims"] == [{"seat": GREEN, "cells": [[0, 0], [1, 0], [2, 0]]}]
    assert v["curse"]["responded"] == [False, False, True]
    assert v["awaiting"] == [RED, BLUE]


# ---------------------------------------------------------------------------------------------
# Property tests
# ---------------------------------------------------------------------------------------------

def curse_checks(g: LocalGame, seen: dict) -> None:
    invariants(g)
    check_no_leak(g, seen)
    s = g.state
    if not GAME.is_over(s):
        unrevealed = [c for c in s["piles"]["main"] if c in CURSE_IDS]
        for viewer in (0, 1, None):
            blob = orjson.dumps(GAME.view(s, viewer)).decode()
            for c in unrevealed:
                assert f'"{c}"' not in blob


@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(n=st.integers(2, 4), sphinx=st.booleans(), seed=st.binary(min_size=1, max_size=8),
       pick=st.integers(0, 10 ** 6))
def test_random_playouts_curse(n, sphinx, seed, pick):
    random_playout(GAME, players(n), {"curse": True, "sphinx": sphinx}, seed, pick_seed=pick,
                   check=invariants)


def biased_playout(n: int, sphinx: bool, seed: bytes, pick: int) -> LocalGame:
    """Random play where seats often find the matching segment, to exercise transfers."""
    rnd = random.Random(pick)
    g = LocalGame(GAME, players(n), {"curse": True, "sphinx": sphinx}, seed)
    seen: dict = {}
    while not GAME.is_over(g.state):
        curse_checks(g, seen)
        seat = rnd.choice(g.awaiting())
        acts = g.legal(seat)
        assert len(acts) >= 2 or GAME.only_action(g.state, seat) is None  # a last card's play
        if g.state["phase"] == "curse" and rnd.random() < 0.6:
            seq = CURSES[g.state["curse"]["card"]]
            good = [a for a in acts if a["type"] == "curse_claim"
                    and segment_matches(g.state["wall"], a["cells"], seq)]
            if good:
                g.act(seat, rnd.choice(good))
                continue
        g.act(seat, rnd.choice(acts))
    return g


def test_biased_curse_playouts_transfer_sarcophagi():
    transfers = rounds = 0
    for i in range(12):
        g = biased_playout(2 + i % 3, i % 2 == 1, b"curse%d" % i, i)
        types = [e["type"] for e in g.events]
        transfers += types.count("SarcophagusGiven")
        rounds += types.count("CurseRoundClosed")
        assert types.count("CurseRevealed") == 6 == types.count("CurseDiscarded")
        assert GAME.result(g.state) is not None
    assert rounds == 72
    assert transfers > 0
