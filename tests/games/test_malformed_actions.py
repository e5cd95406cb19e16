"""The same malformed actions get the same codes and details in every game
(``service.engine.actions``), through the engine's runner as the server calls it."""

from __future__ import annotations

import pytest

from service.engine import IllegalAction, Rng, command
from service.engine.local import LocalGame
from service.games import GAMES

LONG = "z" * 100


def table(type_id: str):
    """A fresh game of ``type_id``, its awaited seat and a legal action of it that has fields."""
    game = GAMES[type_id]
    n = max(2, game.min_players)
    g = LocalGame(game, [{"name": f"p{i}"} for i in range(n)], {}, b"malformed-" +
                  type_id.encode())
    seat = g.awaiting()[0]
    action = next(a for a in g.legal(seat) if len(a) > 1)
    return g, seat, action


def refusal(g: LocalGame, seat: int, action) -> tuple[str, dict]:
    before = g.state
    with pytest.raises(IllegalAction) as exc:
        command(g.game, g.state, seat, action, Rng(g.seed, g.version + 1))
    assert g.state is before
    return exc.value.code, exc.value.details


def without(action: dict, field: str) -> dict:
    return {k: v for k, v in action.items() if k != field}


def first_scalar_field(action: dict) -> str:
    return next(k for k, v in action.items() if k != "type" and isinstance(v, (str, int)))


CASES = {
    "not_an_object": (lambda a: ["type", a["type"]], "malformed_action", lambda a: {}),
    "a_string": (lambda a: a["type"], "malformed_action", lambda a: {}),
    "null": (lambda a: None, "malformed_action", lambda a: {}),
    "no_type": (lambda a: without(a, "type"), "malformed_action", lambda a: {}),
    "type_not_a_string": (lambda a: {**a, "type": 7}, "malformed_action", lambda a: {}),
    "unknown_type": (lambda a: {**a, "type": "fly"}, "unknown_action", None),
    "unexpected_field": (lambda a: {**a, "zz_b": 1, "zz_a": 2}, "unexpected_field",
                         lambda a: {"fields": ["zz_a"]}),
    "long_unexpected_field": (lambda a: {**a, LONG: 1}, "unexpected_field",
                              lambda a: {"fields": [LONG[:64]]}),
    "missing_field": (lambda a: without(a, [k for k in a if k != "type"][-1]), "missing_field",
                      lambda a: {"fields": [[k for k in a if k != "type"][-1]]}),
    "field_of_a_list": (lambda a: {**a, first_scalar_field(a): []}, "invalid_field",
                        lambda a: {"fields": [first_scalar_field(a)]}),
    "field_of_null": (lambda a: {**a, first_scalar_field(a): None}, "invalid_field",
                      lambda a: {"fields": [first_scalar_field(a)]}),
    "field_of_a_boolean": (lambda a: {**a, first_scalar_field(a): True}, "invalid_field",
                           lambda a: {"fields": [first_scalar_field(a)]}),
}


@pytest.mark.parametrize("case", sorted(CASES))
@pytest.mark.parametrize("type_id", sorted(GAMES))
def test_the_same_mistake_gets_the_same_code_in_every_game(type_id, case):
    g, seat, legal = table(type_id)
    make, code, details = CASES[case]
    got_code, got_details = refusal(g, seat, make(legal))
    assert got_code == code
    if details is not None:  # the field named, with the game's own messages about it
        for messages in got_details.get("fields", {}).values():
            assert messages and all(isinstance(m, str) and m for m in messages)
        assert {k: list(v) if k == "fields" else v for k, v in got_details.items()} == \
            details(legal)
    else:  # unknown_action: the game's action types, the legal ones among them
        assert set(got_details) == {"allowed"}
        allowed = got_details["allowed"]
        assert {a["type"] for a in g.legal(seat)} <= set(allowed) <= set(g.game.action_schemas)


def test_every_game_is_covered():
    assert {"diamant", "papyrus", "pharaohs-wall", "scarabya", "tides-of-time"} <= set(GAMES)
