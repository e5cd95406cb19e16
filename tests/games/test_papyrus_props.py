"""Papyrus: property tests (random legal play ends, conservation), a goal-directed playout that
reaches the final round, hostile actions and information leaks."""

from __future__ import annotations

import random
from collections import deque

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from service.engine import ALL, IllegalAction
from service.engine.fold import clone
from service.engine.local import LocalGame
from service.games.papyrus import GAME
from service.games.papyrus.data import BUILTIN_BOARD, GLYPHS, GODS, KINDS, SPELLING

from tests.games.harness import illegal, random_playout
from tests.games.test_papyrus_helpers import conservation, players

SETTINGS = settings(max_examples=6, deadline=None,
                    suppress_health_check=[HealthCheck.too_slow])


def _check(g: LocalGame) -> None:
    conservation(g.state)
    s = g.state
    if not GAME.is_over(s):
        # holders never above capacity except while the capacity decision is pending
        for i, p in enumerate(s["seats"]):
            size = sum(p["holder"].values())
            if size > 20:
                assert s["pending"] and s["pending"]["kind"] == "capacity"
                assert s["pending"]["seat"] == i


@SETTINGS
@given(seed=st.binary(min_size=4, max_size=8), n=st.integers(2, 5),
       pick=st.integers(0, 10**6))
def test_random_standard_playout(seed, n, pick):
    g = random_playout(GAME, players(n), {"turn_limit": 40 * n, "god_deck_size": 3 * n + 1},
                       seed, pick_seed=pick, check=_check)
    assert GAME.is_over(g.state)


@SETTINGS
@given(seed=st.binary(min_size=4, max_size=8), n=st.integers(1, 5),
       pick=st.integers(0, 10**6))
def test_random_solo_playout(seed, n, pick):
    g = random_playout(GAME, players(n), {"variant": "solo", "god_deck_size": 3 * n,
                                          "turn_limit": 150 * n},
                       seed, pick_seed=pick, check=_check)
    res = GAME.result(g.state)
    for seat, d in enumerate(res["details"]["seats"]):
        assert (seat in res["winners"]) == (d["total"] > d["paid"])


# ---------------------------------------------------------------------------------------------
# a goal-directed player: reaches conquests, the final round and the end


def _distances(target: str) -> dict[str, int]:
    dist = {target: 0}
    q = deque([target])
    while q:
        here = q.popleft()
        for pid in BUILTIN_BOARD.adjacent[here]:
            nxt = BUILTIN_BOARD.other_end(pid, here)
            if nxt not in dist:
                dist[nxt] = dist[here] + 1
                q.append(nxt)
    return dist


DIST = {n: _distances(n) for n in BUILTIN_BOARD.nodes}
PYRAMID = {n["god"]: n["id"] for n in BUILTIN_BOARD.doc["nodes"] if n["kind"] == "pyramid"}


def bot(state: dict, seat: int, actions: list[dict], rnd: random.Random) -> dict:
    p = state["seats"][seat]
    if state["pending"] is not None or state["variant"] == "solo":
        forms = [a for a in actions if a["type"] == "form_god"]
        return forms[0] if forms else rnd.choice(actions)
    holder = p["holder"]
    ready = [g for g in p["gods"] if all(holder[x] >= k for x, k in SPELLING[g].items())]
    missing: dict[str, int] = {}
    for g in p["gods"]:
        for x, k in SPELLING[g].items():
            missing[x] = max(missing.get(x, 0), k - holder[x])
    needed = {x for x, k in missing.items() if k > 0}
    useless = [x for x in GLYPHS if holder[x] and x not in
               {y for g in p["gods"] for y in SPELLING[g]}]
    moves = [a for a in actions if a["type"] == "move"]
    if ready:
        targets = [PYRAMID[g] for g in ready]
        best = min(DIST[t][p["pawn"]] for t in targets)
        good = [a for a in moves if min(DIST[t][BUILTIN_BOARD.other_end(a["path"], p["pawn"])]
                                        for t in targets) < best]
        if good:
            return rnd.choice(good)
        return {"type": "draw_movement"}
    ex = [a for a in actions if a["type"] == "exchange" and a["take"] in needed
          and (a["pay"] in useless)]
    if ex:
        return rnd.choice(ex)
    ex = [a for a in actions if a["type"] == "exchange" and a["take"] == "bag"
          and a["pay"] in useless]
    if ex and rnd.random() < 0.7:
        return rnd.choice(ex)
    ev = [a for a in moves if BUILTIN_BOARD.nodes[BUILTIN_BOARD.other_end(
        a["path"], p["pawn"])]["kind"] == "event"]
    if ev and rnd.random() < 0.5:
        return rnd.choice(ev)
    if moves and rnd.random() < 0.3:
        return rnd.choice(moves)
    return {"type": "draw_movement"}


def bot_game(n: int, seed: bytes, options: dict, pick: int = 0, max_steps: int = 6000):
    rnd = random.Random(pick)
    g = LocalGame(GAME, players(n), options, seed)
    for _ in range(max_steps):
        conservation(g.state)
        if GAME.is_over(g.state):
            return g
        seat = GAME.awaiting(g.state)[0]
        actions = GAME.legal_actions(g.state, seat)
        assert len(actions) >= 2
        g.act(seat, bot(g.state, seat, actions, rnd))
    raise AssertionError("bot game did not end")


def test_bot_games_reach_the_final_round():
    reasons = []
    for i, n in enumerate((2, 3, 4, 5, 2, 3)):
        g = bot_game(n, bytes([i, 7, 7]), {"god_deck_size": 3 * n + 2, "turn_limit": 1500},
                     pick=i)
        s = g.state
        reasons.append(s["end_reason"])
        if s["end_reason"] == "final_round":
            trig = s["final"]["trigger"]
            assert s["seats"][trig]["gods"] == [] and s["god_deck"] == []
            # everybody else played exactly one more turn after the trigger
            log = g.events
            k = next(j for j, e in enumerate(log) if e["type"] == "FinalRoundStarted")
            later = [e["seat"] for e in log[k:] if e["type"] in ("TurnStarted", "TurnSkipped")]
            assert sorted(later) == sorted(x for x in range(n) if x != trig)
        res = GAME.result(s)
        assert sorted(res["ranks"])[0] == 1
        assert sum(p["scarabs"] for p in s["seats"]) == len(s["owners"])
    assert reasons.count("final_round") >= 4, reasons


def test_bot_full_game_36_gods():
    g = bot_game(3, b"full", {}, pick=3, max_steps=20000)
    assert g.state["end_reason"] == "final_round"
    conservation(g.state)


def test_solo_full_game_ends():
    rnd = random.Random(5)
    # the rules' own end, past the default turn cap: no cap (the seat is not a bot's)
    g = LocalGame(GAME, players(1), {"variant": "solo", "turn_limit": 0}, b"solo-full")
    while not GAME.is_over(g.state):
        seat = GAME.awaiting(g.state)[0]
        g.act(seat, bot(g.state, seat, GAME.legal_actions(g.state, seat), rnd))
    assert g.state["end_reason"] == "final_round"
    assert len(g.state["seats"][0]["conquered"]) == 36
    conservation(g.state)


# ---------------------------------------------------------------------------------------------
# hidden information


PRIVATE_EVENTS = {"HandDealt", "MovementDrawn", "GlyphsDrawn", "GodDrawn", "GodSwapped"}
SECRET_ORDER_EVENTS = {"DecksShuffled", "MovementReshuffled", "BagRefilled",
                       "EventDeckReshuffled"}


def _has_list(value) -> bool:
    if isinstance(value, list):
        return True
    if isinstance(value, dict):
        return any(_has_list(v) for v in value.values())
    return False


def test_leaks_in_views_and_events():
    g = bot_game(3, b"leak", {"god_deck_size": 11, "turn_limit": 400}, pick=1)
    replay = GAME.initial(players(3), g.events[0]["data"]["options"])
    for ev in g.events[1:]:
        GAME.apply(replay, ev)
        for viewer in (None, 0, 1, 2):
            v = GAME.visible(ev, viewer)
            assert v is not None
            assert ev["data"] is not v["data"] or v == ev
            if ev["type"] in SECRET_ORDER_EVENTS:
                assert not _has_list(v["data"])
            if ev["type"] in PRIVATE_EVENTS and ev["seat"] != viewer:
                assert not _has_list(v["data"])
                assert "god" not in v["data"] and "put" not in v["data"]
        if GAME.is_over(replay):
            continue
        for viewer in (None, 0, 1, 2):
            view = GAME.view(replay, viewer)
            assert "hidden" not in view
            for i, seat in enumerate(view["seats"]):
                secret = {"movement", "gods", "holder"} & set(seat)
                assert (secret == {"movement", "gods", "holder"}) == (viewer == i)
        full = GAME.view(replay, ALL)
        assert "hidden" in full and all("holder" in x for x in full["seats"])
    # after the end everything is visible
    end = GAME.view(g.state, None)
    assert "hidden" in end and all("gods" in x for x in end["seats"]) and end["result"]


def test_legal_actions_do_not_depend_on_hidden_information():
    rnd = random.Random(11)
    g = LocalGame(GAME, players(3), {"turn_limit": 150}, b"hidden")
    while not GAME.is_over(g.state):
        s = g.state
        seat = GAME.awaiting(s)[0]
        legal = GAME.legal_actions(s, seat)
        other = clone(s)
        for key in ("movement_deck", "bag", "god_deck", "event_deck"):
            rnd.shuffle(other[key])
        others = [i for i in range(3) if i != seat]
        a, b = others
        for key in ("movement", "gods", "holder"):
            other["seats"][a][key], other["seats"][b][key] = \
                other["seats"][b][key], other["seats"][a][key]
        assert GAME.legal_actions(other, seat) == legal
        g.act(seat, bot(s, seat, legal, rnd))


# ---------------------------------------------------------------------------------------------
# hostile actions


HOSTILE = [
    {"type": "nope"}, {"type": "move"}, {"type": "move", "path": 13, "cards": {}},
    {"type": "move", "path": "p01", "cards": []}, {"type": "move", "path": "p01",
                                                   "cards": {"eye": True, "water": 1}},
    {"type": "move", "path": "p01", "cards": {"eye": "2"}},
    {"type": "move", "path": "p01", "cards": {"eye": -1, "water": 3}},
    {"type": "move", "path": "p01", "cards": {"eye": 10**30}},
    {"type": "move", "path": "p01", "cards": {"gold": 2}},
    {"type": "move", "path": {"id": "p01"}, "cards": {"eye": 2}},
    {"type": "move", "path": "p01", "cards": {"eye": 2}, "extra": 1},
    {"type": "move", "path": ["p01"], "cards": {"eye": 2}},
    {"type": "draw_movement", "n": 5},
    {"type": "exchange", "pay": ["reed"], "take": "bag"},
    {"type": "exchange", "pay": "reed"}, {"type": "exchange", "pay": "gold", "take": "bag"},
    {"type": "exchange", "pay": "reed", "take": {"x": 1}},
    {"type": "exchange", "pay": None, "take": "bag"},
    {"type": "event_choice", "take": "reed"}, {"type": "discard_excess", "glyphs": ["reed"]},
    {"type": "form_god", "god": "horus"}, {"type": "buy_glyph"},
    {"type": "discard_glyph", "glyph": "reed"},
    {"type": ["move"]},
]


def test_hostile_actions_standard():
    s = LocalGame(GAME, players(2), {}, b"hostile").state
    seat = GAME.awaiting(s)[0]
    for a in HOSTILE:
        exc = illegal(GAME, s, seat, a)
        assert exc.code and isinstance(exc.message, str)
    assert illegal(GAME, s, seat, {"type": "event_choice", "take": "reed"}).code == \
        "nothing_pending"
    assert illegal(GAME, s, seat, {"type": "form_god", "god": "x"}).code == "unknown_action"
    assert illegal(GAME, s, seat, {"type": "draw_movement", "x": 1}).code == "unexpected_field"
    assert illegal(GAME, s, seat, {"type": "exchange", "pay": "reed"}).code == "missing_field"
    assert illegal(GAME, s, 1 - seat, {"type": "draw_movement"}).code == "not_your_turn"


def test_hostile_actions_solo():
    s = LocalGame(GAME, players(1), {"variant": "solo"}, b"hostile-solo").state
    for a in HOSTILE + [{"type": "form_god", "god": ["horus"]}, {"type": "form_god"},
                        {"type": "form_god", "god": "zeus"}, {"type": "buy_glyph", "n": 2}]:
        if a in GAME.legal_actions(s, 0):
            continue
        illegal(GAME, s, 0, a)
    if s["pending"] is None:
        notmine = next(g for g in GODS if g not in s["seats"][0]["gods"])
        assert illegal(GAME, s, 0, {"type": "form_god", "god": notmine}).code == \
            "card_not_in_hand"
        unformable = [g for g in s["seats"][0]["gods"]
                      if {"type": "form_god", "god": g} not in GAME.legal_actions(s, 0)]
        for g in unformable:
            assert illegal(GAME, s, 0, {"type": "form_god", "god": g}).code == "not_formable"
        assert illegal(GAME, s, 0, {"type": "discard_glyph", "glyph": "reed"}).code == \
            "nothing_pending"


json_values = st.recursive(
    st.none() | st.booleans() | st.integers(-10**20, 10**20) | st.text(max_size=12)
    | st.sampled_from(list(GLYPHS) + list(KINDS) + ["bag", "p01", "p13", "horus"]),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(
        st.sampled_from(list(KINDS) + ["take", "return", "path", "x"]), inner, max_size=4),
    max_leaves=8)


@settings(max_examples=300, deadline=None)
@given(t=st.sampled_from(["move", "exchange", "event_choice", "discard_excess",
                          "draw_movement"]),
       fields=st.dictionaries(st.sampled_from(["path", "cards", "pay", "take", "return",
                                               "glyphs", "god", "discard"]), json_values,
                              max_size=3))
def test_fuzzed_actions_never_crash(t, fields):
    s = _FUZZ_STATE
    action = {"type": t, **fields}
    try:
        GAME.decide(clone(s), 0, action, None)
    except IllegalAction:
        return
    # accepted: it must be (up to zero counts / list order) a legal action
    legal = GAME.legal_actions(s, 0)
    norm = dict(action)
    if isinstance(norm.get("cards"), dict):
        norm["cards"] = {k: v for k, v in norm["cards"].items() if v}
    assert norm in legal or action in legal


def _fuzz_state():
    from tests.games.test_papyrus_helpers import fresh, hand
    s = fresh(2)
    s["seats"][0]["movement"] = hand(light=1, water=1, eye=2)
    s["movement_deck"] = s["movement_deck"][4:]  # keep counts honest enough for decide
    return s


_FUZZ_STATE = _fuzz_state()
