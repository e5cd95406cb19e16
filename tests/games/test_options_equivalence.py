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

from service.engine import InvalidOptions
from service.games import GAMES

CORPUS = Path(__file__).resolve().parent / "options_corpus"
#: Every code a refused creation option may carry (README "Options and their errors").
VOCABULARY = {"invalid_options", "unknown_option", "invalid_option", "invalid_setup",
              "invalid_layout", "invalid_board", "invalid_player_count"}


def load(type_id: str) -> list[dict]:
    return json.loads(gzip.decompress((CORPUS / f"{type_id}.json.gz").read_bytes()))


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
        assert json.dumps(out) == case["normalized"], (i, case["options"])
        assert options == case["options"], "normalize_options changed its argument"
