"""A client generated from the served contract plays every game: openapi-python-client turns
/openapi.yaml into a package, and with nothing but that package (over the app in process: the
Flask app as an httpx WSGI transport) a game of each type is created with its typed options,
read as its typed view and state, played to the end with typed legal actions chosen at random
(seeded), and its event pages and export are read as its typed events. Every typed response
also gives back exactly the JSON it was parsed from, so the types lose nothing the server
sends."""

from __future__ import annotations

import importlib
import json
import random
import subprocess
import sys
from datetime import datetime

import httpx
import pytest

from service.api.contract import camel
from service.app import create_app
from service.config import Config
from service.games import GAMES
from tests.conftest import _db

PACKAGE = "cartouche_generated"
#: options that keep a random game short where the default would let it wander
SHORT = {"papyrus": {"turn_limit": 8}}
MAX_STEPS = 2_000


@pytest.fixture(scope="module")
def app(redis_server):
    # the store and queues of conftest's fixtures, not emptied: the games here are new ones
    return create_app(Config(redis_url=_db(redis_server.url, 0),
                             queue_url=_db(redis_server.url, 1)))


@pytest.fixture(scope="module")
def generated(app, tmp_path_factory):
    """The package openapi-python-client generates from the served /openapi.yaml."""
    root = tmp_path_factory.mktemp("generated")
    spec = root / "openapi.yaml"
    served = app.test_client().get("/openapi.yaml")
    assert served.status_code == 200
    spec.write_bytes(served.get_data())
    config = root / "config.yaml"
    config.write_text("post_hooks: []\n")  # no formatter run over the generated code
    cli = [sys.executable, "-c", "from openapi_python_client.cli import app; app()"]
    out = subprocess.run([*cli, "generate", "--path", str(spec), "--output-path",
                          str(root / PACKAGE), "--meta", "none", "--config", str(config)],
                         capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stdout + out.stderr
    # a schema the generator cannot type is dropped with a warning: none is
    assert "Warning" not in out.stdout, out.stdout
    sys.path.insert(0, str(root))
    try:
        yield importlib.import_module(PACKAGE)
    finally:
        sys.path.remove(str(root))
        for name in [m for m in sys.modules if m.split(".")[0] == PACKAGE]:
            del sys.modules[name]


def instants(value):
    """``value`` with each RFC 3339 timestamp as a datetime: the generated models parse the
    contract's ``date-time`` strings and write them back in another (equal) form."""
    if isinstance(value, dict):
        return {k: instants(v) for k, v in value.items()}
    if isinstance(value, list):
        return [instants(v) for v in value]
    if isinstance(value, str) and len(value) >= 20 and value[10:11] == "T":
        try:
            return datetime.fromisoformat(value)
        except ValueError:
            return value
    return value


def call(module, expected=None, *, client, **kwargs):
    """An endpoint's typed answer (of class ``expected`` when given), checked to give back the
    JSON it was parsed from."""
    try:
        response = module.sync_detailed(client=client, **kwargs)
    except ValueError:
        if expected is None:
            raise
        # the union tried each member and the last one's refusal surfaced: show the right one's
        raw = module._get_kwargs(**kwargs)
        body = client.get_httpx_client().request(**raw).json()
        expected.from_dict(body)
        raise
    if expected is not None:
        assert type(response.parsed) is expected, response.content[:300]
    assert 200 <= response.status_code < 300, response.content
    parsed = response.parsed
    assert instants(parsed.to_dict()) == instants(json.loads(response.content)), \
        type(parsed).__name__
    return parsed


@pytest.mark.parametrize("type_id", list(GAMES))
def test_a_generated_client_plays_a_whole_game_typed(app, generated, type_id):
    from importlib import import_module

    models = import_module(f"{PACKAGE}.models")
    Client = generated.Client
    AuthenticatedClient = generated.AuthenticatedClient
    ops = {name: import_module(f"{PACKAGE}.api.games.{name}") for name in (
        "create_game", "get_game", "get_legal_actions", "post_action", "get_events",
        "export_game")}
    game, prefix = GAMES[type_id], camel(type_id)
    transport = httpx.WSGITransport(app=app)
    base = "http://cartouche.test"
    anyone = Client(base_url=base, httpx_args={"transport": transport})
    n = game.min_players if game.min_players > 1 else min(2, game.max_players)

    options_class = getattr(models, f"{prefix}Options")
    options = options_class.from_dict(SHORT.get(type_id, {}))
    body = getattr(models, f"{prefix}CreateGame")(
        type_=type_id, options=options,
        players=[models.NamedSeat(name=f"p{i}") for i in range(n)],
        seed="ab" * 16)
    created = call(ops["create_game"], client=anyone, body=body)
    seats = [AuthenticatedClient(base_url=base, token=s.token,
                                 httpx_args={"transport": transport}) for s in created.seats]
    gid = created.id

    action_classes = {name for name in dir(models) if name.startswith(f"{prefix}Action")}
    rnd = random.Random(f"generated-{type_id}")
    for _ in range(MAX_STEPS):
        view = call(ops["get_game"], getattr(models, f"{prefix}GameView"), client=anyone,
                    game_id=gid)
        assert type(view.state) is getattr(models, f"{prefix}State")
        assert type(view.options) is options_class
        untyped = getattr(view.state, "additional_properties", {})
        assert not untyped, f"{prefix}State leaves {sorted(untyped)} untyped"
        if view.status != "active":
            break
        seat = rnd.choice([a.seat for a in view.awaiting])
        legal = call(ops["get_legal_actions"], client=seats[seat], game_id=gid)
        assert legal.actions and {type(a).__name__ for a in legal.actions} <= action_classes
        action = rnd.choice(legal.actions)
        done = call(ops["post_action"], client=seats[seat], game_id=gid,
                    body=models.ActionRequest(action=action, expected_version=legal.version))
        assert done.version > legal.version
    assert view.status == "finished", f"{type_id} did not finish in {MAX_STEPS} steps"
    assert view.result.winners

    typed_events = {f"{prefix}Event{t}" for t in game.event_schemas}
    after, read = 0, []
    while True:
        page = call(ops["get_events"], getattr(models, f"{prefix}EventPage"), client=anyone,
                    game_id=gid, after=after, limit=100)
        read += page.events
        if page.next_after >= page.version:
            break
        after = page.next_after
    assert [e.version for e in read] == list(range(1, view.version + 1))
    export = call(ops["export_game"], getattr(models, f"{prefix}Export"), client=anyone,
                  game_id=gid)
    assert type(export.options) is options_class
    for ev in read + export.events:
        name = type(ev).__name__
        assert name in typed_events or name == f"ShellEvent{ev.type_}", name
        assert type(ev.data).__name__.startswith(f"{name}Data"), type(ev.data).__name__
        assert not getattr(ev.data, "additional_properties", {}), f"{name}: untyped data"

    # the export, stored as the generated client writes it back, verifies: its instants are
    # text the signature covers as written, not dates the client would spell otherwise
    raw = json.loads(anyone.get_httpx_client().get(f"/v1/games/{gid}/export").content)
    assert export.to_dict() == raw
    verify = import_module(f"{PACKAGE}.api.replays.verify_replay")
    verdict = call(verify, client=anyone, body=models.VerifiableGame.from_dict(export.to_dict()))
    assert verdict.valid is True, verdict.to_dict()
    # a stream's operation answers its text (the generated code parsed it as a JSON object)
    stream = import_module(f"{PACKAGE}.api.stream.stream_events")
    text = stream.sync_detailed(client=anyone, game_id=gid).parsed
    assert isinstance(text, str), type(text)
    assert text.count("event: game_event") == view.version and "event: end" in text


def test_a_generated_client_types_the_clock_and_the_literals(app, generated):
    """Every game's ``options.clock`` is one typed ``Clock`` (its fields attributes, not a
    union of one-field types), and a game created with it keeps it."""
    from importlib import import_module

    models = import_module(f"{PACKAGE}.models")
    create_game = import_module(f"{PACKAGE}.api.games.create_game")
    clock = models.Clock.from_dict({"per_decision_ms": 60000, "timeout": "bot"})
    assert (clock.per_decision_ms, clock.timeout.value) == (60000, "bot")
    options = models.DiamantOptions(clock=clock)
    body = models.DiamantCreateGame(type_="diamant", options=options,
                                    players=[models.NamedSeat(name=f"p{i}") for i in range(3)])
    anyone = generated.Client(base_url="http://cartouche.test",
                              httpx_args={"transport": httpx.WSGITransport(app=app)})
    created = create_game.sync_detailed(client=anyone, body=body)
    assert created.status_code == 201, created.content
    view = anyone.get_httpx_client().get(f"/v1/games/{created.parsed.id}").json()
    assert view["options"]["clock"]["per_decision_ms"] == 60000
