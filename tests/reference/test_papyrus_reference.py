"""The Papyrus reference implementation: (a) proven on the spec's worked examples
(rules/papyrus.md section 13) and the spec's own data tables, (b) cross-checked step by step
against the production module ``service.games.papyrus`` played through ``LocalGame`` with the same
random streams (creation: ``Rng(seed, 1)``; a command: ``Rng(seed, version + 1)``).

Part (b) is skipped while ``service.games.papyrus`` does not exist.
"""

from __future__ import annotations

import importlib.util
import json
import random
from collections import Counter, deque
from pathlib import Path

import pytest

from service.engine.rng import NoRandomness, Rng
from tests.reference.papyrus_ref import (CAPACITY, EVENT_SPACES, GLYPHS, GOD_IDS, GOD_SON,
                                         GOD_VALUE, PATHS, PATHS_AT, SPELLING, PapyrusRef,
                                         canonical_bag, canonical_events, canonical_movement, cj)

NO_RNG = NoRandomness()


def seq(top, canonical):
    """A full setup list: ``top`` first, then the rest of ``canonical`` (as a multiset)."""
    rest = Counter(canonical)
    rest.subtract(Counter(top))
    assert all(v >= 0 for v in rest.values()), "more than the box holds"
    tail = []
    for x in canonical:
        if rest[x] > 0:
            tail.append(x)
            rest[x] -= 1
    return list(top) + tail


def setup(n, movement=(), gods=(), events=(), bag=()):
    """options.setup with the given tops; each seat's deal is taken from the tops in seat order."""
    return {
        "movement_deck": seq(movement, canonical_movement()),
        "god_deck": seq(gods, GOD_IDS),
        "event_deck": seq(events, canonical_events()),
        "bag": seq(bag, canonical_bag()),
    }


def H(*pairs) -> Counter:
    return Counter({k: v for k, v in pairs})


def ms(**kw) -> Counter:
    return Counter({k.replace("_", "-"): v for k, v in kw.items() if v})


def move(path, **cards):
    return {"type": "move", "path": path, "cards": {k: v for k, v in cards.items() if v}}


def legal_set(ref, seat):
    return {cj(a) for a in ref.legal(seat)}


def fresh(n=2, **kw):
    return PapyrusRef(n, {"setup": setup(n, **kw)}, NO_RNG)


# ---------------------------------------------------------------------------------------------
# (a) the spec's own tables and worked examples, reference alone
# ---------------------------------------------------------------------------------------------

LETTER_GLYPH = {"A": "vulture", "B": "foot", "C": "basket", "K": "basket", "Q": "basket",
                "D": "hand", "E": "reed", "I": "reed", "Y": "reed", "F": "viper", "V": "viper",
                "G": "jar-stand", "H": "flax", "J": "cobra", "M": "owl", "N": "ripple",
                "O": "lasso", "P": "stool", "R": "mouth", "L": "mouth", "S": "cloth", "Z": "cloth",
                "T": "bread", "U": "quail", "W": "quail"}


def spell(name: str) -> Counter:
    out = Counter()
    for ch in name.upper():
        if ch == "X":
            out.update(["basket", "cloth"])
        elif ch.isalpha():
            out[LETTER_GLYPH[ch]] += 1
    return out


def test_spec_tables_are_consistent():
    from tests.reference.papyrus_ref import GLYPH_LETTERS, GOD_NAMES
    assert {g: set(ls) for g, ls in GLYPH_LETTERS.items()} == \
        {g: {l for l, gg in LETTER_GLYPH.items() if gg == g} for g in GLYPHS}
    for god in GOD_IDS:
        assert spell(GOD_NAMES[god]) == SPELLING[god], god          # 2.3 spelling rule
        assert GOD_VALUE[god] == sum(SPELLING[god].values()) + 1, god  # 2.4 value rule
    assert sum(sum(s.values()) for s in SPELLING.values()) == 191
    assert sum(GOD_VALUE.values()) == 227
    demand = Counter()
    for s in SPELLING.values():
        demand.update(s)
    assert demand == Counter(reed=38, bread=25, flax=19, cloth=17, quail=15, vulture=13,
                             ripple=12, owl=10, basket=9, lasso=8, mouth=7, foot=7, stool=4,
                             viper=3, hand=2, **{"jar-stand": 1}, cobra=1)
    assert [g for g in GOD_IDS if GOD_SON[g]] == ["hapi", "duamutef", "imsety", "qebehsenuef"]
    bag = Counter(canonical_bag())
    assert len(canonical_bag()) == 300 and all(bag[g] >= 4 for g in GLYPHS)
    assert all(bag[g] >= max(s[g] for s in SPELLING.values()) for g in GLYPHS)
    assert len(canonical_movement()) == 110 and len(canonical_events()) == 40
    # 2.6 board facts
    assert len(PATHS) == 96 and len(PATHS_AT) == 45
    totals = Counter()
    for a, b, need in PATHS.values():
        totals.update(need)
    assert totals == Counter(light=71, darkness=67, nature=69, water=72)
    lengths = Counter(sum(need.values()) for _, _, need in PATHS.values())
    assert lengths == {2: 24, 3: 59, 4: 12, 6: 1}
    assert PATHS["p13"] == ("horus", "anubis", {"light": 2, "darkness": 0, "nature": 0,
                                                "water": 4})
    dist = _bfs("golden-pyramid")
    assert max(dist[g] for g in GOD_IDS) <= 3
    assert {s for s in PATHS_AT if s not in GOD_VALUE} == EVENT_SPACES | {"golden-pyramid"}
    assert set(GOD_IDS) <= set(PATHS_AT)


def _bfs(src):
    dist = {src: 0}
    q = deque([src])
    while q:
        x = q.popleft()
        for pid in PATHS_AT[x]:
            a, b, _ = PATHS[pid]
            y = b if a == x else a
            if y not in dist:
                dist[y] = dist[x] + 1
                q.append(y)
    return dist


DIST = {s: _bfs(s) for s in PATHS_AT}

SPEC = Path("/work/shared/rules/papyrus.md")
DATA = Path(__file__).resolve().parents[2] / "service" / "games" / "papyrus" / "data"


def _md_table(text, header_start):
    lines = text.splitlines()
    i = next(i for i, l in enumerate(lines) if l.startswith(header_start))
    rows = []
    for l in lines[i + 2:]:
        if not l.startswith("|"):
            break
        rows.append([c.strip() for c in l.strip().strip("|").split("|")])
    return rows


@pytest.mark.skipif(not SPEC.exists(), reason="spec not available")
def test_reference_tables_match_the_spec_text():
    text = SPEC.read_text()
    paths = _md_table(text, "| path | space A")
    assert len(paths) == 96
    for pid, a, b, l, d, n, w, tot in paths:
        assert PATHS[pid] == (a, b, {"light": int(l), "darkness": int(d), "nature": int(n),
                                     "water": int(w)})
    gods = _md_table(text, "| # | id | name")
    assert [r[1] for r in gods] == GOD_IDS
    for r in gods:
        assert int(r[6]) == GOD_VALUE[r[1]] and (r[7] == "yes") == GOD_SON[r[1]]


@pytest.mark.skipif(not (DATA / "game.json").exists(), reason="production data not available")
def test_production_data_files_match_the_spec():
    """The data files are data, not logic: they must say what the spec's tables say."""
    from tests.reference import papyrus_ref as R
    game = json.loads((DATA / "game.json").read_text())
    assert [(g["id"], g["tiles"]) for g in game["glyphs"]] == R.GLYPH_TILES
    assert {g["id"]: "".join(g["letters"]) for g in game["glyphs"]} == R.GLYPH_LETTERS
    assert game["x_spelling"] == ["basket", "cloth"]
    assert [g["id"] for g in game["gods"]] == GOD_IDS
    for g in game["gods"]:
        assert g["name"] == R.GOD_NAMES[g["id"]]
        assert g["value"] == GOD_VALUE[g["id"]]
        assert g["son_of_horus"] == GOD_SON[g["id"]]
        assert Counter(g["spelling"]) == SPELLING[g["id"]]
    assert game["tiebreak_god"] == "amon-ra"
    assert [(e["id"], e["count"]) for e in game["events"]] == R.EVENT_COUNTS
    assert game["movement_cards"] == R.MOVEMENT_COUNTS
    assert list(game["movement_cards"]) == R.KINDS
    assert game["scarab_points"] == 5
    assert {int(k): v for k, v in game["sons_bonus"].items()} == {2: 5, 3: 8, 4: 10}
    assert game["holder_capacity"] == CAPACITY
    assert game["start"] == {"movement": 4, "gods": 3, "glyphs": 10}
    assert game["draw_movement"] == 2
    board = json.loads((DATA / "nile-rings-v1.json").read_text())
    assert board["id"] == "nile-rings-v1"
    assert board["colours"] == ["light", "darkness", "nature", "water"]
    got = {p["id"]: (p["a"], p["b"], {c: p["squares"].get(c, 0) for c in R.COLOURS})
           for p in board["paths"]}
    assert got == PATHS
    kinds = {n["id"]: n["kind"] for n in board["nodes"]}
    assert kinds == {s: ("start" if s == "golden-pyramid" else
                         "event" if s in EVENT_SPACES else "pyramid") for s in PATHS_AT}
    assert all(n.get("god") == n["id"] for n in board["nodes"] if n["kind"] == "pyramid")
    if SPEC.exists():
        spaces = _md_table(SPEC.read_text(), "| id | name | kind | god card")
        want = {r[0]: (r[1], r[2], r[4], int(r[5]), int(r[6])) for r in spaces}
        have = {n["id"]: (n["name"], n["kind"], n.get("ring"), n["x"], n["y"])
                for n in board["nodes"]}
        assert have == want
        gods = _md_table(SPEC.read_text(), "| # | id | name")
        assert {r[1]: r[8] for r in gods} == {g["id"]: g["ring"] for g in game["gods"]}


def test_setup_deals_from_the_tops():
    ref = PapyrusRef(2, {"setup": setup(2, movement=["light"] * 4 + ["eye"] * 4,
                                         gods=["horus", "bes", "seth", "min", "mut", "nut"],
                                         bag=["reed"] * 10 + ["owl"] * 10)}, NO_RNG)
    p0, p1 = ref.players
    assert p0.cards == Counter(light=4) and p1.cards == Counter(eye=4)
    assert p0.hand == ["horus", "bes", "seth"] and p1.hand == ["min", "mut", "nut"]
    assert p0.holder == Counter(reed=10) and p1.holder == Counter(owl=10)
    assert p0.pos == p1.pos == "golden-pyramid"
    assert len(ref.gdeck) == 30 and len(ref.mdeck) == 102 and len(ref.bag) == 280
    assert ref.awaiting() == [0] and ref.legal(1) == []
    assert not +ref.market


def test_setup_consumes_the_rng_in_the_documented_order():
    for opts, order in (({}, ["m", "g", "e", "b"]), ({"variant": "solo"}, ["g", "b"])):
        ref = PapyrusRef(1 if opts else 2, opts, Rng(b"order", 1))
        rng = Rng(b"order", 1)
        decks = {}
        for k in order:
            decks[k] = rng.shuffled({"m": canonical_movement(), "g": GOD_IDS,
                                     "e": canonical_events(), "b": canonical_bag()}[k])
        n = ref.n
        assert ref.gdeck == decks["g"][3 * n:]
        assert ref.bag == decks["b"][10 * n:]
        if "m" in decks:
            assert ref.mdeck == decks["m"][4 * n:] and ref.edeck == decks["e"]


def test_example_1_spellings_and_values():
    assert SPELLING["horus"] == Counter(flax=1, lasso=1, mouth=1, quail=1, cloth=1)
    assert GOD_VALUE["horus"] == 6 and GOD_VALUE["amon-ra"] == 7
    assert GOD_VALUE["imsety"] == 7 and SPELLING["imsety"]["reed"] == 3
    assert GOD_VALUE["qebehsenuef"] == 12 and sum(SPELLING["qebehsenuef"].values()) == 11


def test_example_2_paying_for_a_path():
    ref = fresh(2, movement=["water"] * 3 + ["light", "eye", "eye", "darkness", "nature"])
    p = ref.players[0]
    p.cards = Counter(water=3, light=1, eye=2, darkness=1, nature=1)
    p.pos = "horus"
    moves13 = [a for a in ref.legal(0) if a["type"] == "move" and a["path"] == "p13"]
    assert moves13 == [move("p13", light=1, water=3, eye=2)]
    assert cj(move("p13", water=3, light=1, eye=1, nature=1)) not in legal_set(ref, 0)
    assert cj(move("p13", water=3, light=1, eye=1)) not in legal_set(ref, 0)
    ref.act(0, moves13[0], NO_RNG)
    assert ref.players[0].cards == Counter(darkness=1, nature=1) + Counter()
    assert ref.players[0].pos == "anubis"
    # p05 with water 2 + eye 1
    ref = fresh(2)
    p = ref.players[0]
    p.cards = Counter(water=2, eye=1)
    m05 = {cj(a) for a in ref.legal(0) if a["type"] == "move" and a["path"] == "p05"}
    assert cj(move("p05", water=1, eye=1)) in m05
    assert cj(move("p05", water=2)) not in m05
    assert m05 == {cj(move("p05", water=1, eye=1))}


def test_example_3_arrival_and_conquest():
    holder = ["flax", "lasso", "mouth", "quail", "cloth", "reed", "reed", "bread", "vulture",
              "owl"]
    ref = PapyrusRef(2, {"setup": setup(
        2, movement=["nature", "eye", "darkness", "darkness"],
        gods=["horus", "bes", "seth", "min", "mut", "nut", "khnum"],
        bag=holder + ["reed"] * 10 + ["ripple", "reed", "basket", "bread", "owl"])}, NO_RNG)
    ref.act(0, move("p05", nature=1, eye=1), NO_RNG)
    p = ref.players[0]
    assert p.pos == "horus" and p.conquered == ["horus"]
    assert p.track == 6 and p.scarabs == 1 and ref.score(0) == 11
    assert p.hand == ["bes", "seth", "khnum"]
    assert p.holder == Counter(reed=3, bread=2, owl=2, vulture=1, ripple=1, basket=1)
    assert ref.gdiscard == Counter(flax=1, lasso=1, mouth=1, quail=1, cloth=1)
    assert p.cards == Counter(darkness=2)
    assert ref.mdiscard == Counter(nature=1, eye=1)
    assert ref.awaiting() == [1]


def test_example_3_incomplete_spelling_does_nothing_and_no_later_conquest():
    holder = ["flax", "lasso", "mouth", "reed", "cloth", "reed", "reed", "bread", "vulture",
              "owl"]
    ref = PapyrusRef(2, {"setup": setup(
        2, movement=["nature", "eye", "darkness", "darkness"],
        gods=["horus", "bes", "seth"], bag=holder)}, NO_RNG)
    ref.act(0, move("p05", nature=1, eye=1), NO_RNG)
    assert ref.players[0].pos == "horus" and ref.players[0].conquered == []
    ref.players[0].holder["quail"] += 1        # completing it later changes nothing in place
    ref.act(1, {"type": "draw_movement"}, NO_RNG)
    ref.act(0, {"type": "draw_movement"}, NO_RNG)
    assert ref.players[0].conquered == []


def test_example_4a_exchange():
    ref = fresh(2)
    p = ref.players[0]
    p.holder = Counter(reed=4, cloth=1, bread=2, vulture=1, owl=1, **{"jar-stand": 1})
    ref.market = Counter(foot=1, stool=1)
    acts = legal_set(ref, 0)
    assert cj({"type": "exchange", "pay": "jar-stand", "take": "stool"}) in acts
    assert cj({"type": "exchange", "pay": "jar-stand", "take": "jar-stand"}) not in acts
    assert cj({"type": "exchange", "pay": "reed", "take": "bag"}) in acts
    ref.act(0, {"type": "exchange", "pay": "jar-stand", "take": "stool"}, NO_RNG)
    assert ref.market == Counter(foot=1, **{"jar-stand": 1})
    assert p.holder == Counter(reed=4, cloth=1, bread=2, vulture=1, owl=1, stool=1)


def test_example_4b_event_and_capacity():
    ref = PapyrusRef(2, {"setup": setup(2, events=["scribes-gift"])}, NO_RNG)
    g = ref.players[0]
    g.pos = "amon-ra"
    g.cards = Counter(nature=1, water=2)
    g.holder = Counter(reed=5, bread=3, flax=2, cloth=2, quail=2, vulture=2, ripple=1, owl=1,
                       basket=1, foot=1)
    ref.bag = ["owl"] + ref.bag
    ref.act(0, move("p18", nature=1, water=1), NO_RNG)
    assert g.pos == "ev-marshes" and g.cards == Counter(water=1)
    assert sum(g.holder.values()) == 21 and ref.awaiting() == [0]
    acts = ref.legal(0)
    assert all(a["type"] == "discard_excess" and len(a["glyphs"]) == 1 for a in acts)
    assert len(acts) == len(+g.holder)
    ref.act(0, {"type": "discard_excess", "glyphs": ["reed"]}, NO_RNG)
    assert g.holder == Counter(reed=4, bread=3, flax=2, cloth=2, quail=2, vulture=2, owl=2,
                               ripple=1, basket=1, foot=1)
    assert ref.market == Counter(reed=1) and ref.awaiting() == [1]
    assert ref.ediscard == Counter({"scribes-gift": 1})


def _give(ref, seat, conquered):
    p = ref.players[seat]
    p.conquered = list(conquered)
    p.track = sum(GOD_VALUE[g] for g in conquered)
    p.scarabs = len(conquered)


def test_example_5_final_round_and_tie_breaks():
    # God deck of 12 (3 x 4 players dealt, deck empty from the start); Blue (seat 1) holds only
    # Qebehsenuef with its 11 tiles on Serket.
    hands = ["maat", "geb", "ptah",  "qebehsenuef", "nut", "mut",
             "seth", "shu", "heqet",  "neith", "atum", "isis"]
    ref = PapyrusRef(4, {"god_deck_size": 12, "first_player": 1,
                         "setup": setup(4, gods=hands)}, NO_RNG)
    blue = ref.players[1]
    blue.hand = ["qebehsenuef"]
    blue.holder = Counter(SPELLING["qebehsenuef"])
    blue.pos = "serket"
    blue.cards = Counter(light=2, darkness=2)
    ref.players[3].skip = True          # Yellow drew Lost in the Desert earlier
    _give(ref, 0, ["hapi", "imsety", "osiris", "hathor", "bes"])
    _give(ref, 1, ["duamutef", "amon-ra", "anubis"])
    _give(ref, 2, ["nephthys", "sekhmet", "taweret", "thoth", "nut"])
    _give(ref, 3, ["khnum", "sobek", "min"])
    assert ref.awaiting() == [1]
    ref.act(1, move("p72", light=2, darkness=2), NO_RNG)
    assert blue.conquered[-1] == "qebehsenuef" and blue.hand == []
    assert ref.final_left == [3, 0] and ref.awaiting() == [2]
    ref.act(2, {"type": "draw_movement"}, NO_RNG)
    assert ref.awaiting() == [0]                    # Yellow's final turn skipped
    ref.act(0, {"type": "draw_movement"}, NO_RNG)
    assert ref.over and ref.awaiting() == []
    res = ref.result()
    assert res["scores"] == [60, 60, 60, 31]
    assert res["ranks"] == [2, 1, 3, 4] and res["winners"] == [1]
    # Khepri instead of Amon-Ra: Red and Blue share first place
    blue.conquered[blue.conquered.index("amon-ra")] = "khepri"
    res = ref.result()
    assert res["scores"] == [60, 60, 60, 31]
    assert res["ranks"] == [1, 1, 3, 4] and res["winners"] == [0, 1]
    # ...also when Yellow holds Amon-Ra
    ref.players[3].conquered.append("amon-ra")
    assert ref.result()["ranks"][:3] == [1, 1, 3]


def test_sons_bonus_table():
    ref = fresh(2)
    for sons, bonus in ((0, 0), (1, 0), (2, 5), (3, 8), (4, 10)):
        _give(ref, 0, ["hapi", "duamutef", "imsety", "qebehsenuef"][:sons])
        assert ref.score(0) == ref.players[0].track + 5 * sons + bonus


def test_example_6_solo_result():
    gods = ["horus", "bes", "isis", "thoth", "osiris", "nut"]
    start = list(SPELLING["horus"].elements()) + list(SPELLING["bes"].elements()) + ["reed"] * 2
    for paid, wins in ((61, True), (62, False)):
        ref = PapyrusRef(1, {"variant": "solo", "god_deck_size": 6,
                             "setup": {"god_deck": seq(gods, GOD_IDS),
                                       "bag": seq(start, canonical_bag())}}, NO_RNG)
        assert ref.awaiting() == [0]          # Horus and Bes can be formed: a real choice
        p = ref.players[0]
        p.holder = sum((SPELLING[g] for g in gods), Counter())
        for g in gods:
            assert {"type": "form_god", "god": g} in ref.legal(0)
            ref.act(0, {"type": "form_god", "god": g}, NO_RNG)
        assert ref.over and p.paid == 0
        p.paid = paid
        res = ref.result()
        assert res["scores"] == [62]
        assert res["winners"] == ([0] if wins else [])


def test_example_6_solo_capacity():
    ref = PapyrusRef(1, {"variant": "solo", "setup": {
        "god_deck": seq(["isis", "qebehsenuef", "duamutef", "wadjet"], GOD_IDS),
        "bag": seq(["reed"] * 8 + ["cloth"] * 2 + ["owl"], canonical_bag())}}, NO_RNG)
    assert ref.awaiting() == [0] and len(ref.legal(0)) == 2     # form Isis or buy
    p = ref.players[0]
    p.holder = Counter(reed=19, bread=1)
    p.hand = ["qebehsenuef", "duamutef", "wadjet"]     # nothing formable
    ref.act(0, {"type": "buy_glyph"}, NO_RNG)
    assert sum(p.holder.values()) == 21 and p.paid == 1
    assert {cj(a) for a in ref.legal(0)} == {cj({"type": "discard_glyph", "glyph": g})
                                            for g in ("reed", "bread", "owl")}
    ref.act(0, {"type": "discard_glyph", "glyph": "owl"}, NO_RNG)
    assert ref.gdiscard == Counter(owl=1)
    # next turn: still nothing formable, so the engine buys at once (forced) -> 21 again
    assert p.paid == 2 and sum(p.holder.values()) == 21 and ref.counts["forced:buy_glyph"] == 1
    assert ref.pending == {"kind": "solo_discard", "seat": 0}


def test_solo_purchases_without_a_formable_god_are_forced():
    ref = PapyrusRef(1, {"variant": "solo", "turn_limit": 3, "setup": {
        "god_deck": seq(["qebehsenuef", "duamutef", "wadjet"], GOD_IDS),
        "bag": seq(["reed"] * 13, canonical_bag())}}, NO_RNG)
    # nothing formable from reed x10: the engine buys three times and the limit ends the game
    assert ref.over and ref.players[0].paid == 3 and ref.counts["forced:buy_glyph"] == 3


def test_sacred_barque_chains_and_is_discarded_first():
    ref = PapyrusRef(2, {"setup": setup(2, events=["sacred-barque", "gift-of-the-nile"])},
                     NO_RNG)
    p = ref.players[0]
    p.pos = "amon-ra"
    p.cards = Counter(nature=1, water=1)
    ref.act(0, move("p18", nature=1, water=1), NO_RNG)
    acts = ref.legal(0)
    assert {a["path"] for a in acts} == set(PATHS_AT["ev-marshes"]) | {None}
    ref.act(0, {"type": "event_choice", "path": "p58"}, NO_RNG)        # to Neith: nothing
    assert p.pos == "neith" and ref.awaiting() == [1]
    ref.players[1].pos = "ev-marshes"
    ref.players[1].cards = Counter()
    ref.act(1, {"type": "draw_movement"}, NO_RNG)
    p.pos = "hathor"
    p.cards = Counter(light=1, nature=1)
    ref.act(0, move("p19", light=1, nature=1), NO_RNG)                 # Gift of the Nile
    assert sum(p.cards.values()) == 2
    assert ref.ediscard == Counter({"sacred-barque": 1, "gift-of-the-nile": 1})


def test_events_with_nothing_to_choose_resolve_without_action():
    ref = PapyrusRef(2, {"setup": setup(2, events=["temple-offering", "sandstorm",
                                                   "tomb-robbers", "wisdom-of-thoth"])},
                     NO_RNG)
    p = ref.players[0]
    p.pos = "amon-ra"
    p.cards = Counter(nature=1, water=1)
    n_before = sum(p.holder.values())
    ref.act(0, move("p18", nature=1, water=1), NO_RNG)    # Temple Offering, market empty: bag
    assert sum(p.holder.values()) == n_before + 1 and ref.awaiting() == [1]
    ref.act(1, {"type": "draw_movement"}, NO_RNG)
    assert p.cards == Counter()
    p.pos = "hathor"
    p.cards = Counter(light=1, nature=1)
    ref.act(0, move("p19", light=1, nature=1), NO_RNG)    # Sandstorm with no cards: nothing
    assert ref.awaiting() == [1] and ref.counts["event:sandstorm"] == 1


def test_divine_revelation_swaps_with_the_bottom():
    ref = PapyrusRef(2, {"setup": setup(2, events=["divine-revelation"],
                                        gods=["horus", "bes", "seth", "min", "mut", "nut",
                                              "geb"])}, NO_RNG)
    p = ref.players[0]
    p.pos = "amon-ra"
    p.cards = Counter(nature=1, water=1)
    ref.act(0, move("p18", nature=1, water=1), NO_RNG)
    assert {cj(a) for a in ref.legal(0)} == {
        cj({"type": "event_choice", "god": g}) for g in ("horus", "bes", "seth", None)}
    ref.act(0, {"type": "event_choice", "god": "bes"}, NO_RNG)
    assert sorted(p.hand) == ["geb", "horus", "seth"] and ref.gdeck[-1] == "bes"


# ---------------------------------------------------------------------------------------------
# (b) cross-check against production
# ---------------------------------------------------------------------------------------------

HAVE_PROD = importlib.util.find_spec("service.games.papyrus") is not None


NEAREST_EVENT = {s: min(DIST[s][e] for e in EVENT_SPACES) for s in PATHS_AT}


def policy(ref: PapyrusRef, seat: int, pick: random.Random, style: str = "goal") -> dict:
    """A crude goal-directed player (so that conquests, events and the end actually happen).

    ``style="events"`` keeps visiting Event spaces and drawing blind from the bag, so that the
    event deck and the bag run out and get reshuffled and holders grow past the capacity.
    """
    acts = sorted(ref.legal(seat), key=cj)
    if pick.random() < 0.15 or ref.pending is not None:
        return pick.choice(acts)
    p = ref.players[seat]
    if style == "events" and not ref.solo:
        moves = [a for a in acts if a["type"] == "move"]
        blind = [a for a in acts if a["type"] == "exchange" and a["take"] == "bag"]
        if blind and pick.random() < 0.6:
            return pick.choice(blind)

        def dest(a):
            x, y, _ = PATHS[a["path"]]
            return y if x == p.pos else x

        if p.pos in EVENT_SPACES:
            good = moves
        else:
            good = [a for a in moves if NEAREST_EVENT[dest(a)] < NEAREST_EVENT[p.pos]]
        if good:
            return pick.choice(good)
        return {"type": "draw_movement"}
    if ref.solo:
        forms = [a for a in acts if a["type"] == "form_god"]
        return pick.choice(forms) if forms and pick.random() < 0.9 else {"type": "buy_glyph"}
    moves = [a for a in acts if a["type"] == "move"]

    def dest(a):
        x, y, _ = PATHS[a["path"]]
        return y if x == p.pos else x

    ready = [g for g in p.hand if ref._formable(p, g)]
    if ready:
        target = min(ready, key=lambda g: DIST[p.pos][g] if p.pos != g else 99)
        if p.pos == target:
            return pick.choice(moves) if moves else {"type": "draw_movement"}
        closer = [a for a in moves if DIST[dest(a)][target] < DIST[p.pos][target]]
        if closer:
            return pick.choice(closer)
        return {"type": "draw_movement"}
    if style == "churn" and pick.random() < 0.6:
        blind = [a for a in acts if a["type"] == "exchange" and a["take"] == "bag"]
        if blind:
            return pick.choice(blind)
    want = Counter()
    for g in p.hand:
        for k, n in SPELLING[g].items():
            want[k] = max(want[k], n)
    missing = [g for g in GLYPHS if want[g] > p.holder[g]]
    spare = [g for g in GLYPHS if p.holder[g] > want[g]]
    exch = [a for a in acts if a["type"] == "exchange"]
    good = [a for a in exch if a["pay"] in spare and a["take"] in missing]
    if good:
        return pick.choice(good)
    if pick.random() < 0.35:
        to_event = [a for a in moves if dest(a) in EVENT_SPACES]
        if to_event:
            return pick.choice(to_event)
    blind = [a for a in exch if a["pay"] in spare and a["take"] == "bag"]
    if blind and pick.random() < 0.6:
        return pick.choice(blind)
    if moves and pick.random() < 0.5:
        return pick.choice(moves)
    return {"type": "draw_movement"}


class Mismatch(AssertionError):
    pass


def cross_check(seed_int: int, n: int, options: dict, max_steps: int = 5000,
                style: str = "goal") -> PapyrusRef:
    from service.engine.local import LocalGame
    from service.games.papyrus import GAME

    seed = seed_int.to_bytes(8, "big")
    players = [{"name": f"p{i}"} for i in range(n)]
    lg = LocalGame(GAME, players, options, seed)
    ref = PapyrusRef(n, options, Rng(seed, 1))
    pick = random.Random(seed_int * 7919 + n)
    where = f"seed={seed_int} n={n} options={options}"
    for step in range(max_steps):
        aw = lg.awaiting()
        if aw != ref.awaiting():
            raise Mismatch(f"{where} step {step}: awaiting prod={aw} ref={ref.awaiting()}")
        for s in range(n):
            a = {cj(x) for x in lg.legal(s)}
            b = {cj(x) for x in ref.legal(s)}
            if a != b:
                raise Mismatch(f"{where} step {step} seat {s}: legal actions differ; prod only "
                               f"{sorted(a - b)[:4]} ref only {sorted(b - a)[:4]}")
        if not aw:
            break
        seat = aw[0]
        action = policy(ref, seat, pick, style)
        rng_version = lg.version + 1
        lg.act(seat, action)
        ref.act(seat, action, Rng(seed, rng_version))
    else:
        raise Mismatch(f"{where}: no end after {max_steps} steps")
    res = GAME.result(lg.state)
    mine = ref.result()
    assert res is not None and mine is not None, where
    for k in ("scores", "ranks", "winners"):
        if res[k] != mine[k]:
            raise Mismatch(f"{where}: result {k} prod={res[k]} ref={mine[k]}")
    return ref


STANDARD = [(seed, 2 + seed % 4, {"turn_limit": 240 + 40 * (seed % 4)}) for seed in range(12)]
SMALL = [(100 + seed, n, {"god_deck_size": 3 * n + seed % 3, "turn_limit": 1500,
                          "first_player": seed % n})
         for seed, n in enumerate([2, 2, 3, 3, 4, 5, 2, 3])]
SOLO = [(200 + seed, 1 + seed % 5, {"variant": "solo", "turn_limit": 150 + 30 * seed % 100,
                                    "god_deck_size": [36, 6, 9, 12, 15][seed % 5]})
        for seed in range(10)]
SOLO_END = [(300 + seed, n, {"variant": "solo", "god_deck_size": 3 * n + seed % 2,
                             "turn_limit": 3000})
            for seed, n in enumerate([1, 1, 2, 3, 2, 4])]


def _perm(seed, canonical):
    out = list(canonical)
    random.Random(seed).shuffle(out)
    return out


# options.setup with only some keys: the other shuffles still use the rng, in documented order
PARTIAL = [
    (400, 3, {"turn_limit": 150, "setup": {"god_deck": _perm(1, GOD_IDS)}}),
    (401, 2, {"turn_limit": 150, "setup": {"bag": _perm(2, canonical_bag())}}),
    (402, 4, {"turn_limit": 150, "setup": {"movement_deck": _perm(3, canonical_movement()),
                                           "event_deck": _perm(4, canonical_events())}}),
    (403, 2, {"turn_limit": 150, "first_player": 1,
              "setup": {"event_deck": canonical_events()}}),
    (404, 2, {"variant": "solo", "turn_limit": 100,
              "setup": {"movement_deck": _perm(5, canonical_movement()),
                        "event_deck": _perm(6, canonical_events())}}),
    (405, 1, {"variant": "solo", "god_deck_size": 5,
              "setup": {"bag": _perm(7, canonical_bag()), "event_deck": canonical_events()}}),
]
# Event spaces visited over and over (event deck reshuffles, holders past the capacity), with
# event decks where the kinds come in clusters
EVENTS = [
    (500, 2, {"turn_limit": 700, "setup": {"event_deck": canonical_events()}}),
    (501, 3, {"turn_limit": 700, "setup": {"event_deck": canonical_events()[::-1]}}),
    (502, 2, {"turn_limit": 700}),
]
# Blind draws and conquests (bag refills from the glyph discard pile, a long full-deck game)
CHURN = [(600, 2, {"turn_limit": 900}), (601, 3, {"turn_limit": 700})]


@pytest.mark.skipif(not HAVE_PROD, reason="service.games.papyrus not present")
@pytest.mark.parametrize("seed,n,options", STANDARD + SMALL + SOLO + SOLO_END + PARTIAL)
def test_cross_check(seed, n, options):
    cross_check(seed, n, options)


@pytest.mark.skipif(not HAVE_PROD, reason="service.games.papyrus not present")
@pytest.mark.parametrize("seed,n,options", EVENTS)
def test_cross_check_event_heavy(seed, n, options):
    ref = cross_check(seed, n, options, max_steps=20000, style="events")
    assert ref.counts["reshuffle:events"] >= 1


@pytest.mark.skipif(not HAVE_PROD, reason="service.games.papyrus not present")
@pytest.mark.parametrize("seed,n,options", CHURN)
def test_cross_check_bag_churn(seed, n, options):
    ref = cross_check(seed, n, options, max_steps=20000, style="churn")
    assert ref.counts["reshuffle:bag"] >= 1


# ---------------------------------------------------------------------------------------------
# (a') edge rules of sections 4, 6, 7, 8 and 12.7, reference alone
# ---------------------------------------------------------------------------------------------

def _on_marshes_next(ref, seat=0):
    p = ref.players[seat]
    p.pos = "amon-ra"
    p.cards = Counter(nature=1, water=1)
    return move("p18", nature=1, water=1)


def test_wisdom_of_thoth_with_one_tile_drawn_and_no_capacity_discard():
    ref = PapyrusRef(2, {"setup": setup(2, events=["wisdom-of-thoth"])}, NO_RNG)
    p = ref.players[0]
    p.holder = Counter(reed=19, owl=1)
    ref.bag = ["cobra"]
    a = _on_marshes_next(ref)
    ref.act(0, a, NO_RNG)
    assert sum(p.holder.values()) == 21
    assert {cj(x) for x in ref.legal(0)} == {
        cj({"type": "event_choice", "return": [g]}) for g in ("reed", "cobra", "owl")}
    ref.act(0, {"type": "event_choice", "return": ["cobra"]}, NO_RNG)
    assert sum(p.holder.values()) == 20 and ref.awaiting() == [1]     # 12.7.8: no discard
    assert ref.market == Counter(cobra=1)


def test_wisdom_of_thoth_two_tiles_listed_in_table_order():
    ref = PapyrusRef(2, {"setup": setup(2, events=["wisdom-of-thoth"])}, NO_RNG)
    p = ref.players[0]
    p.holder = Counter(reed=2)
    ref.bag = ["owl", "vulture"] + ref.bag
    ref.act(0, _on_marshes_next(ref), NO_RNG)
    assert {cj(x) for x in ref.legal(0)} == {cj({"type": "event_choice", "return": r}) for r in (
        ["vulture", "reed"], ["vulture", "owl"], ["reed", "reed"], ["reed", "owl"])}


def test_exchange_sources():
    ref = fresh(2)
    p = ref.players[0]
    ref.bag = []
    ref.gdiscard = Counter(flax=2)
    assert cj({"type": "exchange", "pay": p.holder.most_common(1)[0][0], "take": "bag"}) \
        in legal_set(ref, 0)
    ref.act(0, {"type": "exchange", "pay": "vulture", "take": "bag"}, Rng(b"x", 3))
    assert p.holder["flax"] == 1 and ref.counts["reshuffle:bag"] == 1 and ref.bag == ["flax"]
    ref.bag, ref.gdiscard, ref.market = [], Counter(), Counter()
    assert all(a["type"] != "exchange" for a in ref.legal(1))


def test_a_turn_with_only_draw_movement_is_forced():
    ref = fresh(2)
    ref.players[1].cards = Counter()
    ref.players[1].holder = Counter()
    ref.act(0, {"type": "draw_movement"}, NO_RNG)
    # seat 1 could only draw: played by the engine, seat 0 is awaited again
    assert ref.awaiting() == [0] and ref.counts["forced:draw_movement"] == 1
    assert sum(ref.players[1].cards.values()) == 2


def test_lost_in_the_desert_skip_counts_as_a_turn():
    ref = PapyrusRef(3, {"turn_limit": 4, "setup": setup(3, events=["lost-in-the-desert"])},
                     NO_RNG)
    ref.act(0, _on_marshes_next(ref), NO_RNG)
    assert ref.players[0].skip and ref.awaiting() == [1]
    ref.act(1, {"type": "draw_movement"}, NO_RNG)
    ref.act(2, {"type": "draw_movement"}, NO_RNG)
    # seat 0's turn (the 4th) is skipped: the limit is reached at once
    assert ref.over and ref.turns == 4 and not ref.players[0].skip


def test_trigger_by_sacred_barque_ends_the_triggering_players_turns():
    ref = PapyrusRef(3, {"god_deck_size": 9,
                         "setup": setup(3, events=["sacred-barque"])}, NO_RNG)
    p = ref.players[0]
    p.hand = ["neith"]
    p.holder = Counter(SPELLING["neith"]) + Counter(owl=5)
    ref.act(0, _on_marshes_next(ref), NO_RNG)
    ref.act(0, {"type": "event_choice", "path": "p58"}, NO_RNG)       # Marshes -> Neith
    assert p.conquered == ["neith"] and ref.final_left == [2]
    assert ref.awaiting() == [1]
    ref.act(1, {"type": "draw_movement"}, NO_RNG)
    ref.act(2, {"type": "draw_movement"}, NO_RNG)
    assert ref.over and ref.result()["winners"] == [0]


def test_solo_two_seats_last_god_ends_the_turn_without_a_buy():
    gods = ["bes", "min", "mut", "nut", "shu", "geb"]
    ref = PapyrusRef(2, {"variant": "solo", "god_deck_size": 6,
                         "setup": {"god_deck": seq(gods, GOD_IDS),
                                   "bag": seq(["foot", "reed", "cloth"], canonical_bag())}},
                     NO_RNG)
    p = ref.players[0]
    assert p.hand == ["bes", "min", "mut"] and ref.awaiting() == [0]
    p.holder = SPELLING["bes"] + SPELLING["min"] + SPELLING["mut"]
    for g in ("bes", "min", "mut"):
        ref.act(0, {"type": "form_god", "god": g}, NO_RNG)
    assert p.paid == 0 and ref.final_left == [] and ref.current == 1
