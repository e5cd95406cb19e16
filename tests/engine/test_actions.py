"""The engine's malformed-action vocabulary (``service.engine.actions``) and its one shuffle."""

from __future__ import annotations

import random

import pytest

from service.engine import IllegalAction, Rng, is_int
from service.engine.actions import MAX_FIELD_NAME, action_type, check_fields, invalid_field
from service.engine.rng import SimRng, fisher_yates


def refused(fn, *args) -> IllegalAction:
    with pytest.raises(IllegalAction) as exc:
        fn(*args)
    return exc.value


@pytest.mark.parametrize("action", [None, "pick", 3, [], ["pick"], {}, {"type": None},
                                    {"type": 3}, {"type": ["pick"]}, {"card": 1}])
def test_not_an_object_with_a_string_type_is_malformed(action):
    exc = refused(action_type, action, ("pick",))
    assert (exc.code, exc.details) == ("malformed_action", {})
    assert refused(action_type, action).code == "malformed_action"


def test_an_unknown_type_lists_the_allowed_ones_in_the_order_given():
    exc = refused(action_type, {"type": "PICK"}, ("pick", "relic"))
    assert (exc.code, exc.details) == ("unknown_action", {"allowed": ["pick", "relic"]})
    assert action_type({"type": "relic", "keep": 1}, ("pick", "relic")) == "relic"
    assert action_type({"type": "anything"}) == "anything"  # no list: any string type


def test_fields_unexpected_first_then_missing_in_order():
    check_fields({"type": "t", "a": 1, "b": 2}, ("a", "b"))
    check_fields({"type": "t"}, ())
    exc = refused(check_fields, {"type": "t", "zeta": 1, "alpha": 2}, ("a",))
    assert (exc.code, exc.details) == ("unexpected_field", {"fields": {"alpha": ["unexpected field 'alpha'"]}})
    exc = refused(check_fields, {"type": "t", "b": 1}, ("a", "b", "c"))
    assert (exc.code, exc.details) == ("missing_field", {"fields": {"a": ["missing field 'a'"]}})
    # one unexpected and one missing field, same length as a good action: unexpected wins
    exc = refused(check_fields, {"type": "t", "x": 1}, ("a",))
    assert (exc.code, exc.details) == ("unexpected_field", {"fields": {"x": ["unexpected field 'x'"]}})


def test_an_unexpected_field_name_is_cut_to_64_characters():
    name = "f" * 500
    exc = refused(check_fields, {"type": "t", name: 1}, ())
    assert list(exc.details) == ["fields"]
    assert list(exc.details["fields"]) == ["f" * MAX_FIELD_NAME]
    assert len(exc.message) < 100


def test_invalid_fields():
    exc = invalid_field("card", "card must be an integer")
    assert (exc.code, exc.details, exc.message) == ("invalid_field", {"fields": {"card": ["card must be an integer"]}},
                                                    "card must be an integer")
    assert is_int(0) and is_int(-3) and is_int(10 ** 40)
    for bad in (True, False, 7.0, "7", None, [7]):
        assert not is_int(bad)


def test_fisher_yates_is_the_engine_shuffle():
    items = list(range(52))
    fisher_yates(items, Rng(b"seed", 3).below)
    assert items == Rng(b"seed", 3).shuffled(range(52))
    # the draws: below(52), below(51), ..., below(2), from the top index down
    calls = []

    def below(n: int) -> int:
        calls.append(n)
        return 0

    short = ["a", "b", "c", "d"]
    fisher_yates(short, below)
    assert calls == [4, 3, 2] and short == ["b", "c", "d", "a"]


def test_simulation_shuffle_draws_as_before():
    def by_hand(rnd: random.Random, items: list) -> list:
        out = list(items)
        for i in range(len(out) - 1, 0, -1):
            j = rnd.randrange(i + 1)
            out[i], out[j] = out[j], out[i]
        return out

    assert SimRng(random.Random(5)).shuffled(range(30)) == by_hand(random.Random(5), range(30))
