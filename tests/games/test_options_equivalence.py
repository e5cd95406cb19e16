"""The schema-driven option checks accept exactly what the hand-written checks accepted, with the
same normalized options (key order included: they are stored in the creation event), and refuse
the rest with a code of the documented vocabulary (``service/engine/options.py``).

The inputs and the earlier answers are the corpus ``make_options_corpus.py`` recorded; the
hypothesis tests then check the served schema (``GET /v1/game-types``) against the server on
inputs made up on the spot.
"""

from __future__ import annotations

import copy
import gzip
import json
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from jsonschema import Draft202012Validator

from service import clock
from service.application.creation import Settings
from service.application.errors import InvalidRequest
from service.engine import InvalidOptions
from service.games import GAMES
from service.games.papyrus.rules import DEFAULT_TURN_LIMIT
from service.engine.options import check
from service.options import SHELL_PROPERTIES, served_schema

CORPUS = Path(__file__).resolve().parent / "options_corpus"
#: Every code a refused creation option may carry (README "Options and their errors").
VOCABULARY = {"invalid_options", "unknown_option", "invalid_option", "invalid_setup",
              "invalid_layout", "invalid_board", "invalid_player_count"}


#: Defaults changed since the corpus was recorded, ``(game, option): (then, now)``: an input
#: without the option now gets the new default, everything else the recorded answer.
CHANGED_DEFAULTS = {("papyrus", "turn_limit"): (0, DEFAULT_TURN_LIMIT)}


def recorded(type_id: str, case: dict) -> str:
    """The recorded normalized options, with the defaults changed since."""
    out = json.loads(case["normalized"])
    for (game, option), (then, now) in CHANGED_DEFAULTS.items():
        if game == type_id and option not in case["options"] and out.get(option) == then:
            out[option] = now
    return json.dumps(out)


def load(type_id: str) -> list[dict]:
    path = CORPUS / f"{type_id}.json.gz"
    assert path.exists(), (f"no {path}: record it with `.venv/bin/python -m "
                           f"tests.games.make_options_corpus {type_id}` and commit it")
    return json.loads(gzip.decompress(path.read_bytes()))


def players(n: int) -> list[dict]:
    return [{"name": f"P{i}", "bot": None} for i in range(n)]


@pytest.mark.parametrize("type_id", list(GAMES))
def test_the_corpus_gets_the_same_answers(type_id):
    cases = load(type_id)
    assert len(cases) >= 500 and 0 < sum(c["accepted"] for c in cases) < len(cases)
    for i, case in enumerate(cases):
        options = copy.deepcopy(case["options"])
        try:
            out = GAMES[type_id].normalize_options(options, players(case["players"]))
        except InvalidOptions as exc:
            assert not case["accepted"], (i, case["players"], case["options"], exc.code,
                                          exc.details)
            assert exc.code in VOCABULARY, (i, exc.code)
            assert exc.details.get("option") is not None, (i, exc.code, exc.details)
            continue
        assert case["accepted"], (i, case["players"], case["options"], case["code"])
        assert json.dumps(out) == recorded(type_id, case), (i, case["options"])
        assert options == case["options"], "normalize_options changed its argument"


# -- the served schema against the server, on inputs hypothesis makes up --------------------

LEAVES = (st.none() | st.booleans() | st.integers(-2, 40) | st.sampled_from([2.0, 1.5, 10 ** 30])
          | st.text(max_size=3) | st.sampled_from(["standard", "solo", "duel", "auto", "bot",
                                                   "forfeit", "random", "heuristic"]))
JSON = st.recursive(LEAVES, lambda inner: st.lists(inner, max_size=3)
                    | st.dictionaries(st.text(max_size=4), inner, max_size=3), max_leaves=5)
CLOCK_FIELDS = ["per_decision_ms", "initial_ms", "increment_ms", "timeout", "bot_level"]
CLOCKS = st.none() | st.dictionaries(
    st.sampled_from(CLOCK_FIELDS + ["colour"]),
    st.none() | st.sampled_from([0, 50, 100, 1000, 60000, 10 ** 12, 1000.0, "auto", "bot",
                                 "forfeit", "random", "mcts", "sleep", True]), max_size=4)


def server_refusal(game, n: int, options: dict) -> InvalidRequest | None:
    """What POST /v1/games answers, without the store: the shell's options (``rated``,
    ``on_decline``, ``clock``) taken out and checked, the game checking the rest, by the
    server's own ``Settings.of``; None when it accepts."""
    try:
        Settings.of(game, players(n), options, table=False)
    except InvalidRequest as exc:
        return exc
    return None


def edits(draw, doc):
    """``doc`` changed in one place hypothesis picks: a key set, removed or added, a list item
    replaced, removed or added, at any depth."""
    doc = copy.deepcopy(doc)
    spots = [doc]
    for box in spots:
        spots.extend(v for v in (box.values() if isinstance(box, dict) else box)
                     if isinstance(v, (dict, list)))
    box = draw(st.sampled_from(spots))
    if isinstance(box, dict):
        key = draw(st.sampled_from(sorted(box)) | st.text(max_size=8)) if box else \
            draw(st.text(max_size=8))
        if key in box and draw(st.booleans()):
            del box[key]
        else:
            box[key] = draw(JSON | st.sampled_from([v for v in box.values()] or [None]))
    elif box and draw(st.booleans()):
        i = draw(st.integers(0, len(box) - 1))
        if draw(st.booleans()):
            del box[i]
        else:
            box[i] = draw(JSON | st.sampled_from(box))
    else:
        box.append(draw(JSON | st.sampled_from(box or [None])))
    return doc


@pytest.mark.parametrize("type_id", list(GAMES))
def test_the_served_schema_and_the_server_agree(type_id):
    """Whatever the server accepts passes the served schema; whatever the served schema refuses
    the server refuses (the schema may accept more: rules only code checks, and 2.0 where an
    integer is expected)."""
    game = GAMES[type_id]
    validator = Draft202012Validator(served_schema(game))
    starts = [(c["players"], c["options"]) for c in load(type_id) if c["accepted"]]

    @settings(max_examples=120, deadline=None, derandomize=True,
              suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
    @given(data=st.data())
    def check(data):
        n, options = data.draw(st.sampled_from(starts))
        for _ in range(data.draw(st.integers(0, 2))):
            options = edits(data.draw, options)
        clock_option = data.draw(CLOCKS)
        if clock_option is not None or data.draw(st.booleans()):
            options = dict(options, clock=clock_option)
        schema_ok = not list(validator.iter_errors(options))
        refusal = server_refusal(game, n, options)
        if refusal is None:
            assert schema_ok, options
        elif schema_ok:  # refused by a rule only code checks, or an integral float
            details = refusal.details
            assert "reason" in details or details["code"] == "invalid_player_count" or \
                details.get("expected") == {"type": "integer"} or \
                details["code"] == "invalid_clock" and "1000.0" in repr(options["clock"]) or \
                details.get("option") in ("rated", "on_decline"), (options, details)

    check()


@settings(max_examples=400, deadline=None, derandomize=True)
@given(value=CLOCKS | JSON)
def test_the_clock_schema_says_what_clock_normalize_checks(value):
    try:
        clock.normalize(value)
        accepted = True
    except clock.ClockError:
        accepted = False
    try:
        check(clock.SCHEMA, value)
        passes = True
    except InvalidOptions:
        passes = False
    assert accepted == passes, value


def test_no_game_declares_an_option_of_the_shell():
    for game in GAMES.values():
        assert not set(SHELL_PROPERTIES) & set(game.options_schema.get("properties", {}))
        assert served_schema(game)["properties"]["clock"] == clock.SCHEMA


@pytest.mark.parametrize("type_id", list(GAMES))
def test_the_shell_options_are_accepted_as_the_served_schema_says(type_id):
    """``rated`` and ``clock`` beside a game's own options: the schema and the server agree
    (the property test above meets them only when hypothesis draws their names)."""
    game = GAMES[type_id]
    validator = Draft202012Validator(served_schema(game))
    n, options = next((c["players"], c["options"]) for c in load(type_id)
                      if c["accepted"] and c["players"] >= 2 and "setup" not in c["options"])
    for shell in ({"rated": False}, {"clock": {"initial_ms": 60_000}}):
        both = {**options, **shell}
        assert not list(validator.iter_errors(both)) and server_refusal(game, n, both) is None
    # rated: true is refused by both, or taken by both (a game cut short is never rated)
    for case in (c for c in load(type_id) if c["accepted"] and c["players"] >= 2):
        rated = {**case["options"], "rated": True}
        assert validator.is_valid(rated) == (server_refusal(game, case["players"], rated)
                                             is None), rated
    # a deal a client fixed is never rated: a rule the schema does not say
    for case in (c for c in load(type_id) if c["accepted"] and c["players"] >= 2
                 and "setup" in c["options"]):
        fixed = {**case["options"], "rated": True}
        assert server_refusal(game, case["players"], fixed).details["option"] == "rated"
        assert server_refusal(game, case["players"], {**fixed, "rated": False}) is None
        break
    # the default, sent, is as if not sent; "abort" is for tables only: a rule the schema
    # cannot say
    assert server_refusal(game, n, {**options, "on_decline": "open"}) is None
    assert server_refusal(game, n, {**options, "on_decline": "abort"}).details["option"] == \
        "on_decline"
