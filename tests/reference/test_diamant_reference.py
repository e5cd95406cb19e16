"""The Diamant reference implementation: (a) proven on the spec's worked examples
(rules/diamant.md section 10), (b) cross-checked step by step against the production module
``service.games.diamant`` played through ``LocalGame`` with the same random streams.

Part (b) is skipped while ``service.games.diamant`` does not exist.
"""

from __future__ import annotations

import hashlib
import importlib
import importlib.util
import random
from collections import Counter

import pytest

from service.engine.rng import NoRandomness, Rng
from tests.reference.diamant_ref import (CANONICAL, RELIC_IDS, TRAP_IDS, TREASURE_IDS,
                                         DiamantRef, trap_type)

C = {"type": "decide", "choice": "continue"}
R = {"type": "decide", "choice": "return"}
NO_RNG = NoRandomness()


def deck(*top: str) -> list[str]:
    """A full permutation of the 35 ids: ``top`` first, then the rest in canonical order."""
    assert len(set(top)) == len(top)
    return list(top) + [c for c in CANONICAL if c not in top]


def decide(ref: DiamantRef, choices: dict[int, dict], rng=NO_RNG) -> None:
    """Every seat in ``choices`` commits, in seat order (the last act resolves)."""
    assert sorted(choices) == ref.awaiting()
    for seat in sorted(choices):
        ref.act(seat, choices[seat], rng)


def pockets(ref):
    return [p["pocket"] for p in ref.view("all")["players"]]


def chests(ref):
    return [p["chest"] for p in ref.view("all")["players"]]


# ---------------------------------------------------------------------------------------------
# (a) the worked examples, reference alone
# ---------------------------------------------------------------------------------------------

def test_example_1_sharing_a_treasure():
    ref = DiamantRef(5, NO_RNG, [deck("T9")])
    v = ref.view(None)
    assert v["path"] == ["T9"] and v["round"] == 1 and v["phase"] == "decision"
    assert pockets(ref) == [1] * 5
    assert v["path_rubies"] == 4
    assert ref.awaiting() == [0, 1, 2, 3, 4]


def test_example_2_full_round():
    A, B, Cs, D = range(4)
    ref = DiamantRef(4, NO_RNG, [deck("T14", "R1", "T9", "T4", "T7a", "SPIDER1", "SPIDER2")])
    assert pockets(ref) == [3, 3, 3, 3] and ref.view(None)["path_rubies"] == 2
    decide(ref, {A: C, B: C, Cs: C, D: C})                      # step 2: relic
    assert ref.view(None)["path"] == ["T14", "R1"]
    assert pockets(ref) == [3, 3, 3, 3] and ref.view(None)["path_rubies"] == 2
    decide(ref, {A: C, B: C, Cs: C, D: C})                      # step 3: T9
    assert pockets(ref) == [5, 5, 5, 5] and ref.view(None)["path_rubies"] == 3
    decide(ref, {A: R, B: R, Cs: C, D: C})                      # A, B leave; step 4: T4
    v = ref.view("all")
    assert chests(ref) == [6, 6, 0, 0]
    assert [p["in_cave"] for p in v["players"]] == [False, False, True, True]
    assert v["path"] == ["T14", "R1", "T9", "T4"]               # relic stayed (two left)
    assert pockets(ref) == [0, 0, 7, 7] and v["path_rubies"] == 1
    assert ref.awaiting() == [Cs, D]
    decide(ref, {Cs: R, D: C})                                  # C alone; step 5: T7
    v = ref.view("all")
    assert chests(ref) == [6, 6, 13, 0]
    assert v["relics_brought_back"] == 1 and v["players"][Cs]["relics"] == 1
    assert "R1" not in v["path"] and v["path_rubies"] == 0
    assert pockets(ref) == [0, 0, 0, 14]
    decide(ref, {D: C})                                         # step 6: SPIDER
    assert ref.view(None)["traps_on_path"] == {"SPIDER": 1} and pockets(ref)[D] == 14
    decide(ref, {D: C}, Rng(b"example-2", 9))                  # step 7: second SPIDER
    v = ref.view("all")
    assert chests(ref) == [6, 6, 13, 0]
    assert v["round"] == 2 and v["removed"] == ["SPIDER2"]
    # the round-2 deck (round 2 has started: its first card is on the path)
    round2 = Counter(("T" if c in TREASURE_IDS else "R" if c in RELIC_IDS else trap_type(c))
                     for c in v["path"] + ref.deck)
    assert len(v["path"]) + v["deck_size"] == 33
    assert round2["T"] == 15 and round2["R"] == 4 and round2["SPIDER"] == 2
    assert sum(round2[t] for t in ("SPIDER", "SNAKE", "LAVA", "BOULDER", "RAM")) == 14
    assert all(p["in_cave"] and p["committed"] is False for p in v["players"])


def test_example_3_pooled_split():
    E, F, G = range(3)
    ref = DiamantRef(3, NO_RNG, [deck("T7a", "T4", "T13", "SPIDER1")])
    decide(ref, {E: C, F: C, G: C})
    decide(ref, {E: C, F: C, G: C})
    assert pockets(ref) == [7, 7, 7] and ref.view(None)["path_rubies"] == 3
    decide(ref, {E: R, F: R, G: C})  # then SPIDER1 is turned: no effect
    assert chests(ref) == [8, 8, 0]
    assert pockets(ref) == [0, 0, 7]
    assert ref.view(None)["path_rubies"] == 1
    assert ref.awaiting() == [G]


def test_example_4_relic_order_and_removal():
    Aa, Bb, Cc, G, H = 0, 1, 2, 6, 7
    everyone = list(range(8))
    decks = [
        deck("R1", "SPIDER1", "SPIDER2"),
        deck("R2", "SNAKE1", "SNAKE2"),
        deck("R3", "R4", "LAVA1", "LAVA2"),
        deck("R5", "BOULDER1", "BOULDER2"),
        deck("T1"),
    ]
    ref = DiamantRef(8, NO_RNG, decks)
    # Round 1: C brings back relic #1 -> 5
    decide(ref, {s: (R if s == Cc else C) for s in everyone})
    assert chests(ref)[Cc] == 5 and ref.view(None)["relics_brought_back"] == 1
    assert ref.view(None)["path"] == ["SPIDER1"]                # the taken relic left the path
    decide(ref, {s: C for s in everyone if s != Cc})            # SPIDER2 ends round 1
    assert ref.view(None)["round"] == 2 and ref.view(None)["path"] == ["R2"]
    # Round 2: two players return together, the relic stays and is removed
    decide(ref, {s: (R if s in (Aa, Bb) else C) for s in everyone})
    assert chests(ref)[Aa] == 0 and chests(ref)[Bb] == 0
    rest = [s for s in everyone if s not in (Aa, Bb)]
    decide(ref, {s: C for s in rest})                           # SNAKE2 ends round 2
    v = ref.view(None)
    assert v["round"] == 3 and v["relics_brought_back"] == 1
    assert v["removed"] == ["SPIDER2", "R2", "SNAKE2"]
    assert sum(1 for c in v["path"] + ref.deck if c in RELIC_IDS) == 3
    # Round 3: G returns alone with two relics on the path -> #2 and #3 = 10
    decide(ref, {s: C for s in everyone})                       # R4 turned
    assert ref.view(None)["path"] == ["R3", "R4"]
    decide(ref, {s: (R if s == G else C) for s in everyone})
    assert chests(ref)[G] == 10 and ref.view(None)["relics_brought_back"] == 3
    assert ref.view(None)["players"][G]["relics"] == 2
    decide(ref, {s: C for s in everyone if s != G})             # LAVA2 ends round 3
    # Round 4: H returns alone with the last relic -> #4 = 10
    assert ref.view(None)["round"] == 4 and ref.view(None)["path"] == ["R5"]
    decide(ref, {s: (R if s == H else C) for s in everyone})
    assert chests(ref)[H] == 10 and ref.view(None)["relics_brought_back"] == 4
    decide(ref, {s: C for s in everyone if s != H})             # BOULDER2 ends round 4
    v = ref.view(None)
    assert v["round"] == 5
    assert not any(c in RELIC_IDS for c in v["path"] + ref.deck)  # no 5th relic, ever
    decide(ref, {s: R for s in everyone})                       # round 5: all return
    v = ref.view(None)
    assert v["phase"] == "game_over" and v["relics_brought_back"] == 4
    assert ref.result()["scores"] == [0, 0, 5, 0, 0, 0, 10, 10]
    assert ref.result()["winners"] == [G, H] and ref.result()["ranks"] == [4, 4, 3, 4, 4, 4, 1, 1]


def test_example_5_same_trap_ends_two_rounds():
    decks = [deck("T1"), deck("SNAKE1", "SNAKE2"), deck("T1"), deck("SNAKE1", "SNAKE3"),
             deck("SNAKE1", "T1", "T2")]
    ref = DiamantRef(3, NO_RNG, decks)
    everyone = [0, 1, 2]
    decide(ref, {s: R for s in everyone})                       # round 1: all return
    decide(ref, {s: C for s in everyone})                       # SNAKE2 ends round 2
    v = ref.view(None)
    assert v["round"] == 3 and v["removed"] == ["SNAKE2"]
    assert sum(1 for c in v["path"] + ref.deck if trap_type(c) == "SNAKE") == 2
    decide(ref, {s: R for s in everyone})                       # round 3: all return
    decide(ref, {s: C for s in everyone})                       # SNAKE3 ends round 4
    v = ref.view(None)
    assert v["round"] == 5 and v["removed"] == ["SNAKE2", "SNAKE3"]
    before5 = v["path"] + ref.deck
    assert len(before5) == 33
    kinds = Counter("T" if c in TREASURE_IDS else "R" if c in RELIC_IDS else trap_type(c)
                    for c in before5)
    assert kinds == {"T": 15, "R": 5, "SNAKE": 1, "SPIDER": 3, "LAVA": 3, "BOULDER": 3,
                     "RAM": 3}
    assert v["path"] == ["SNAKE1"] and v["traps_on_path"] == {"SNAKE": 1}
    decide(ref, {s: C for s in everyone})                       # T1: the lone snake is harmless
    decide(ref, {s: C for s in everyone})                       # T2
    assert ref.view(None)["path"] == ["SNAKE1", "T1", "T2"]
    decide(ref, {s: R for s in everyone})
    assert ref.result() is not None and ref.view(None)["removed"] == ["SNAKE2", "SNAKE3"]


def test_example_6_tie_is_a_shared_win():
    A, B, Cc = 0, 1, 2
    decks = [
        deck("T17", "R1", "T15"),
        deck("T3", "SPIDER1", "SPIDER2"),
        deck("T2", "SNAKE1", "SNAKE2"),
        deck("T4", "LAVA1", "LAVA2"),
        deck("T13", "T14", "T11a", "T9", "T7a", "T17", "T5a"),
    ]
    ref = DiamantRef(3, NO_RNG, decks)
    # round 1: A leaves alone with the relic (5 + 2 + relic 5); B, C share T15
    decide(ref, {A: C, B: C, Cc: C})
    decide(ref, {A: R, B: C, Cc: C})
    decide(ref, {B: R, Cc: R})
    assert chests(ref) == [12, 12, 12]
    # rounds 2-4: A and B leave with a little, C stays and is caught by a trap pair
    for _ in range(3):
        decide(ref, {A: R, B: R, Cc: C})                        # first trap turned
        decide(ref, {Cc: C})                                    # second: C loses the pocket
    assert chests(ref) == [15, 15, 12]
    assert ref.view(None)["round"] == 5
    for _ in range(6):
        decide(ref, {A: C, B: C, Cc: C})
    assert pockets(ref) == [22, 22, 22] and ref.view(None)["path_rubies"] == 10
    decide(ref, {A: R, B: R, Cc: R})
    res = ref.result()
    assert res == {"scores": [40, 40, 37], "ranks": [1, 1, 3], "winners": [0, 1]}
    assert ref.view(None)["players"][A]["relics"] == 1


def test_views_hide_chests_and_choices():
    ref = DiamantRef(3, NO_RNG, [deck("T9", "T1")])
    ref.act(1, R, NO_RNG)
    assert ref.awaiting() == [0, 2]
    assert ref.view(1)["players"][1]["choice"] == "return"
    assert ref.view(0)["players"][1] == {"seat": 1, "in_cave": True, "pocket": 3, "chest": None,
                                         "relics": 0, "committed": True, "choice": None}
    assert ref.view(0)["players"][0]["chest"] == 0 and ref.view(None)["players"][0]["chest"] is None
    assert ref.view("all")["players"][1]["choice"] == "return"
    with pytest.raises(ValueError):
        ref.act(1, C, NO_RNG)                          # already committed
    with pytest.raises(ValueError):
        ref.act(0, {"type": "decide", "choice": "maybe"}, NO_RNG)
    with pytest.raises(ValueError):
        ref.act(7, C, NO_RNG)
    assert ref.legal(1) == [] and ref.legal(0) == [C, R]
    ref.act(0, C, NO_RNG)
    ref.act(2, C, NO_RNG)                              # resolves: seat 1 banks 3, T1 turned
    assert ref.view(1)["players"][1]["chest"] == 3 and ref.view(None)["path"] == ["T9", "T1"]
    assert [p["committed"] for p in ref.view("all")["players"]] == [False] * 3


def test_game_over_view_and_no_shuffle_after_round_5():
    # Rounds 1-4 shuffled from the stream, round 5 too; the command ending round 5 must not draw.
    seed = b"diamant-ref-game-over"
    ref = DiamantRef(3, Rng(seed, 1))
    version = 2
    while ref.view(None)["round"] < 5:
        ref.act(ref.awaiting()[0], R, Rng(seed, version))
        version += 1
    while ref.awaiting():
        ref.act(ref.awaiting()[0], R, NO_RNG)
    v = ref.view(None)
    assert v["phase"] == "game_over" and v["path"] == [] and v["path_rubies"] == 0
    assert all(p["chest"] is not None and p["pocket"] == 0 for p in v["players"])
    assert v["deck_size"] == 35 - len(v["removed"]) - v["relics_brought_back"]
    assert ref.legal(0) == [] and ref.result()["scores"] == [p["chest"] for p in v["players"]]


def test_shuffle_consumption_is_canonical_then_one_shuffle():
    seed = b"\x01" * 32
    ref = DiamantRef(4, Rng(seed, 1))
    expected = Rng(seed, 1).shuffled(CANONICAL)
    assert ref.view(None)["path"] + ref.deck == expected
    assert len(TRAP_IDS) == 15


# ---------------------------------------------------------------------------------------------
# (b) the cross-check against the production module
# ---------------------------------------------------------------------------------------------

def _production():
    if importlib.util.find_spec("service.games.diamant") is None:
        pytest.skip("service.games.diamant does not exist yet")
    return importlib.import_module("service.games.diamant").GAME


VIEWERS_EXTRA = [None, "all"]


def _compare(game, g, ref, n, where):
    assert g.awaiting() == ref.awaiting(), f"{where}: awaiting"
    for seat in range(n):
        assert g.legal(seat) == ref.legal(seat), f"{where}: legal actions of seat {seat}"
    for viewer in list(range(n)) + VIEWERS_EXTRA:
        prod = game.view(g.state, viewer)
        mine = ref.view(viewer)
        if prod != mine:
            miss = "<missing>"
            diff = {k: (prod.get(k, miss), mine.get(k, miss))
                    for k in set(prod) | set(mine) if prod.get(k, miss) != mine.get(k, miss)}
            pytest.fail(f"{where}: view for viewer {viewer!r} differs (production, reference): "
                        f"{diff}")


def _seed(i: int) -> bytes:
    return hashlib.sha256(f"diamant-crosscheck-{i}".encode()).digest()


def _random_round_decks(rnd: random.Random) -> list[list[str]]:
    k = rnd.randint(1, 5)
    decks = []
    for _ in range(k):
        d = list(CANONICAL)
        rnd.shuffle(d)
        decks.append(d)
    return decks


def crosscheck_game(game, i: int) -> None:
    from service.engine import NotYourTurn, command
    from service.engine.game import IllegalAction
    from service.engine.local import LocalGame

    rnd = random.Random(i)
    n = 3 + i % 6
    seed = _seed(i)
    round_decks = _random_round_decks(rnd) if i % 7 == 3 else None
    options = {"setup": {"round_decks": round_decks}} if round_decks else {}
    players = [{"name": f"p{s}"} for s in range(n)]
    p_return = [0.08, 0.2, 0.35, 0.5][i % 4]

    g = LocalGame(game, players, options, seed)
    ref = DiamantRef(n, Rng(seed, 1), round_decks)
    step = 0
    where = f"seed #{i} ({seed.hex()[:16]}), {n} players, round_decks={bool(round_decks)}"
    _compare(game, g, ref, n, f"{where}, after creation")
    while ref.awaiting():
        step += 1
        if step > 2000:
            pytest.fail(f"{where}: game did not end")
        awaiting = ref.awaiting()
        seat = rnd.choice(awaiting)
        action = R if rnd.random() < p_return else C
        if step % 5 == 1:
            # both reject the same illegal actions
            bad = {"type": "decide", "choice": "maybe"}
            with pytest.raises(ValueError):
                ref.act(seat, bad, NO_RNG)
            with pytest.raises((IllegalAction, NotYourTurn)):
                command(game, g.state, seat, bad, None)
            others = [s for s in range(n) if s not in awaiting]
            if others:
                with pytest.raises(ValueError):
                    ref.act(others[0], C, NO_RNG)
                with pytest.raises(NotYourTurn):
                    command(game, g.state, others[0], C, None)
        version = g.version
        g.act(seat, action)
        ref.act(seat, action, Rng(seed, version + 1))
        _compare(game, g, ref, n, f"{where}, step {step} (seat {seat} {action['choice']})")
    assert game.is_over(g.state), f"{where}: reference over, production not"
    prod = game.result(g.state)
    mine = ref.result()
    for key in ("scores", "ranks", "winners"):
        assert prod[key] == mine[key], f"{where}: result {key}"


N_GAMES = 960
BATCH = 40


@pytest.mark.parametrize("batch", range(N_GAMES // BATCH))
def test_crosscheck_with_production(batch):
    game = _production()
    for i in range(batch * BATCH, (batch + 1) * BATCH):
        crosscheck_game(game, i)
