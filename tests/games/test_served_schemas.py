"""Every game's declared schemas describe what the server serves: the ``state`` of the view of
each seat, a spectator and ``ALL`` after every step, and the ``data`` of every event as each of
them is served it while the game runs (redacted forms included) and once it is over, in random
games of every variant and seat count. The contract (openapi.yaml) is built from these schemas,
so a client generated from it parses what the server sends."""

from __future__ import annotations

import random

import pytest
from jsonschema import Draft202012Validator

from service.engine import ALL, InvalidOptions, visible
from service.engine.local import LocalGame
from service.engine.schemas import SHELL_EVENT_SCHEMAS
from service.games import GAMES

#: options that keep a random game short where the default would let it wander
SHORT = {"papyrus": {"turn_limit": 40}}
SEEDS = (1, 2)


def tables():
    out = []
    for type_id, game in sorted(GAMES.items()):
        for variant in game.variants or [{"id": "default", "options": {}}]:
            options = {**variant["options"], **SHORT.get(type_id, {})}
            for n in range(game.min_players, game.max_players + 1):
                players = [{"name": f"p{i}", "bot": None} for i in range(n)]
                try:
                    game.normalize_options(dict(options), players)
                except InvalidOptions:
                    continue
                for seed in SEEDS:
                    out.append(pytest.param(type_id, n, options, seed,
                                            id=f"{type_id}-{variant['id']}-{n}-{seed}"))
    return out


try:  # the compiled validator (installed with schemathesis): the same verdicts, ~250x faster
    import jsonschema_rs
except ImportError:  # pragma: no cover - the pure-Python validator alone
    jsonschema_rs = None

_validators: dict[int, tuple[Draft202012Validator, object]] = {}


def check(schema: dict, value, where: str) -> None:
    """``value`` is valid under ``schema``; else the assertion says the first error and where.
    The compiled validator answers; the pure-Python one explains a failure."""
    validators = _validators.get(id(schema))
    if validators is None:
        Draft202012Validator.check_schema(schema)
        fast = jsonschema_rs.Draft202012Validator(schema) if jsonschema_rs else None
        validators = _validators[id(schema)] = (Draft202012Validator(schema), fast)
    slow, fast = validators
    if fast is not None and fast.is_valid(value):
        return
    error = next(iter(sorted(slow.iter_errors(value), key=lambda e: e.path)), None)
    assert error is None, f"{where}: {error.message} at {list(error.absolute_path)}"
    assert fast is None, f"{where}: {next(fast.iter_errors(value))}"


def event_schema(game, type_: str) -> dict:
    schema = game.event_schemas.get(type_) or SHELL_EVENT_SCHEMAS.get(type_)
    assert schema is not None, f"{game.type_id} serves {type_} events without a schema"
    return schema


def check_events(game, events: list, viewers: list) -> None:
    """``events`` as each of ``viewers`` is served them while the game runs."""
    for ev in events:
        for viewer in viewers:
            served = visible(game, ev, viewer, False)
            if served is not None:
                check(event_schema(game, served["type"]), served["data"],
                      f"{served['type']} as {viewer!r} sees it")


def check_views(game, g: LocalGame, viewers: list) -> None:
    """The current state as each of ``viewers`` is served it."""
    for viewer in viewers:
        check(game.state_schema, game.view(g.state, viewer),
              f"state at version {g.version} as {viewer!r} sees it")


def check_ended(game, g: LocalGame) -> None:
    """Every event of an ended game as it is served to everybody: unredacted."""
    assert game.is_over(g.state)
    for ev in g.events:
        check(event_schema(game, ev["type"]), ev["data"], f"{ev['type']} after the end")


@pytest.mark.parametrize("type_id,n,options,seed", tables())
def test_served_states_and_events_match_the_declared_schemas(type_id, n, options, seed):
    game = GAMES[type_id]
    players = [{"name": f"p{i}", "bot": None} for i in range(n)]
    g = LocalGame(game, players, dict(options), f"schemas-{type_id}-{seed}".encode())
    viewers = [*range(n), None, ALL]
    rnd = random.Random(seed)
    seen = 0
    for _ in range(5_000):
        check_events(game, g.events[seen:], viewers)
        seen = len(g.events)
        check_views(game, g, viewers)
        if game.is_over(g.state):
            break
        seat = rnd.choice(game.awaiting(g.state))
        g.act(seat, rnd.choice(game.legal_actions(g.state, seat)))
    check_ended(game, g)


@pytest.mark.parametrize("type_id", sorted(GAMES))
def test_every_game_declares_its_state_and_events(type_id):
    game = GAMES[type_id]
    assert game.state_schema.get("properties"), "the state schema names the state's fields"
    for type_, schema in game.event_schemas.items():
        Draft202012Validator.check_schema(schema)
        assert type_ not in SHELL_EVENT_SCHEMAS, f"{type_} is a shell event"
