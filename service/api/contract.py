"""The typed contract: every game's declared schemas composed into openapi.yaml's components,
so that a generated client parses actions, states, events and options as the game's own types.

From each game of the registry (``service.games.GAMES``; a game added there appears with no
other change), ``<Game>`` being its type id in CamelCase (``pharaohs-wall`` ->
``PharaohsWall``):

- ``<Game>Options`` (``service.options.served_schema``: what the server validates with; its
  ``clock`` the one ``Clock`` component, or null) and
  ``<Game>CreateGame``: the creation request of that type (``type`` a ``const``);
  ``CreateGame`` is the ``oneOf`` of them, discriminated by ``type``.
- ``<Game>Action<Name>`` (``Game.action_schemas``); ``Action`` is the ``oneOf`` of every game's,
  discriminated by the action's ``type`` (action types are unique across games; should two games
  share one, ``Action`` becomes a plain ``anyOf``). ``ActionRequest.action`` and
  ``LegalActions.actions`` reference it.
- ``<Game>State`` (``Game.state_schema``) and ``<Game>GameView``: the common view with ``type`` a
  ``const``, ``options`` a ``<Game>Options`` and ``state`` a ``<Game>State`` (or null while a
  table waits); ``GameView`` is the
  ``oneOf`` of them, discriminated by the game type.
- ``<Game>Event<Type>Data`` (``Game.event_schemas``) and ``<Game>Event<Type>`` (the envelope,
  ``type`` a ``const``, ``data``); the shell's ``ShellEvent<Type>`` likewise
  (``service.engine.schemas``). ``<Game>Event`` is the ``oneOf`` of the game's and the shell's,
  discriminated by the event type within that game (event type names repeat across games).
  A game that declares no event schemas gets the untyped ``Event`` (``ExportedEvent`` in
  exports).
- ``<Game>EventPage`` and ``<Game>Export`` (``type`` a ``const``, ``events`` of ``<Game>Event``;
  an export's ``options`` a ``<Game>Options``);
  ``EventPage`` and ``Export`` are the ``oneOf`` of them, discriminated by the game type.

The per-type unions are what openapi-python-client handles: it tries each member in turn and a
member whose ``const`` differs refuses the value, so the one that parses is the right one.
"""

from __future__ import annotations

import copy
import json

from ..clock import SCHEMA as CLOCK_SCHEMA
from ..engine.schemas import (EVENT_ENVELOPE, EVENT_REQUIRED, SHELL_EVENT_SCHEMAS,
                              typed_literals)

REF = "#/components/schemas/"


def camel(text: str) -> str:
    return "".join(part.capitalize() for part in text.replace("_", "-").split("-"))


def ref(name: str) -> dict:
    return {"$ref": REF + name}


def _literals_as_enums(node):
    """``node`` with each ``const`` member of a ``oneOf``/``anyOf`` written as a one-value
    ``enum`` (the same schema): openapi-python-client parses a union's ``const`` member without
    trying the next member when the value differs, an ``enum`` member with."""
    if isinstance(node, list):
        return [_literals_as_enums(item) for item in node]
    if not isinstance(node, dict):
        return node
    out = {key: _literals_as_enums(value) for key, value in node.items()}
    for key in ("oneOf", "anyOf"):
        if isinstance(out.get(key), list):
            out[key] = [{**{k: v for k, v in member.items() if k != "const"},
                         "enum": [member["const"]]}
                        if isinstance(member, dict) and "const" in member else member
                        for member in out[key]]
    return out


def _union(names: dict[str, str], prop: str, description: str) -> dict:
    """``oneOf`` the components ``names`` (discriminator value -> component name)."""
    return {"description": description,
            "oneOf": [ref(n) for n in names.values()],
            "discriminator": {"propertyName": prop,
                              "mapping": {k: REF + n for k, n in names.items()}}}


def _event(type_: str, data_component: str, description: str | None) -> dict:
    schema = {"type": "object",
              "properties": {**copy.deepcopy(EVENT_ENVELOPE), "type": {"const": type_},
                             "data": ref(data_component)},
              "required": list(EVENT_REQUIRED), "additionalProperties": False}
    if description:
        schema["description"] = description
    return schema


def _typed(common: dict, type_id: str, **properties: dict) -> dict:
    """``common`` (a component as marshmallow documents it) for one game type: its ``type`` a
    ``const``, and ``properties`` replacing the free-form ones."""
    out = copy.deepcopy(common)
    out["properties"]["type"] = {"const": type_id,
                                 "description": out["properties"]["type"].get(
                                     "description", "the game type")}
    out["properties"].update(properties)
    return out


def document_games(api) -> None:
    """Compose the games' schemas into ``api``'s components (after every blueprint is
    registered: it types the components the routes reference)."""
    from ..games import GAMES
    from ..options import served_schema

    components = api.spec.components
    schemas = components.schemas

    def add(name: str, schema: dict) -> None:
        # a copy sharing nothing: YAML prints a sub-schema used twice as an anchor and alias
        components.schema(name, typed_literals(_literals_as_enums(
            json.loads(json.dumps(schema)))))

    def add_typed(name: str, schema: dict) -> None:
        """``add``, with each object a top-level ``oneOf``/``anyOf`` lists inline (a state or
        event data served in several forms: full, redacted) made a component of its own,
        ``<name><Title>`` or ``<name>Form<n>``: openapi-python-client writes no model for an
        inline object member of a component that is a union."""
        schema = json.loads(json.dumps(schema))
        for key in ("oneOf", "anyOf"):
            for i, member in enumerate(schema.get(key, [])):
                if "$ref" not in member and ("properties" in member
                                             or member.get("type") == "object"):
                    title = member.get("title")
                    part = f"{name}{camel(title) if title else f'Form{i + 1}'}"
                    add(part, member)
                    schema[key][i] = ref(part)
        add(name, schema)

    shell_events: dict[str, str] = {}
    for type_, data in SHELL_EVENT_SCHEMAS.items():
        add_typed(f"ShellEvent{type_}Data", data)
        add(f"ShellEvent{type_}", _event(type_, f"ShellEvent{type_}Data",
                                         data.get("description")))
        shell_events[type_] = f"ShellEvent{type_}"

    actions: dict[str, str] = {}
    shared_actions = False
    creations, views, pages, exports = {}, {}, {}, {}
    create_common = schemas["CreateGame"]
    view_common, page_common = schemas["GameView"], schemas["EventPage"]
    export_common = schemas["Export"]
    # one component for the seats of every type's creation request
    seat = json.loads(json.dumps(create_common["properties"]["players"]["items"]))
    named = next(shape for shape in seat["oneOf"] if "name" in shape["properties"])
    bot = named["properties"]["bot"]
    add("BotRequest", next(s for s in bot["anyOf"] if s.get("type") == "object"))
    named["properties"]["bot"] = {"anyOf": [ref("BotRequest"), {"type": "null"}]}
    add("SeatRequest", seat)
    players = {**create_common["properties"]["players"], "items": ref("SeatRequest")}

    # one component for every game's options.clock: generated clients get one clock type
    add("Clock", {**CLOCK_SCHEMA, "type": "object"})
    clock = {"anyOf": [ref("Clock"), {"type": "null"}],
             "description": CLOCK_SCHEMA["description"]}
    for game in GAMES.values():
        prefix, type_id = camel(game.type_id), game.type_id
        options = served_schema(game)
        add(f"{prefix}Options", {**options, "properties": {**options["properties"],
                                                           "clock": clock}})
        for action, schema in game.action_schemas.items():
            name = f"{prefix}Action{camel(action)}"
            add(name, schema)
            shared_actions |= action in actions
            actions[action] = name
        creations[type_id] = f"{prefix}CreateGame"
        add(creations[type_id], _typed(create_common, type_id, players=players,
                                       options=ref(f"{prefix}Options")))

        add_typed(f"{prefix}State", {"description": f"The state of a {game.name} game as a "
                                                    "viewer is served it.", **game.state_schema})
        views[type_id] = f"{prefix}GameView"
        # the options a game serves are its creation's, normalized: they pass its schema
        # (tests/api/test_catalog_options.py)
        typed_options = {**ref(f"{prefix}Options"),
                         "description": "the game's options, normalized (defaults filled in)"}
        add(views[type_id], _typed(view_common, type_id, options=typed_options, state={
            "anyOf": [ref(f"{prefix}State"), {"type": "null"}],
            "description": view_common["properties"]["state"].get("description", "")}))

        if game.event_schemas:
            members = {}
            for type_, data in game.event_schemas.items():
                add_typed(f"{prefix}Event{type_}Data", data)
                members[type_] = f"{prefix}Event{type_}"
                add(members[type_], _event(type_, f"{prefix}Event{type_}Data",
                                           data.get("description")))
            add(f"{prefix}Event", _union({**members, **shell_events}, "type",
                                         f"An event of a {game.name} game, as served."))
            served = exported = ref(f"{prefix}Event")
        else:
            served, exported = ref("Event"), ref("ExportedEvent")
        pages[type_id] = f"{prefix}EventPage"
        add(pages[type_id], _typed(page_common, type_id,
                                   events={"type": "array", "items": served}))
        exports[type_id] = f"{prefix}Export"
        add(exports[type_id], _typed(export_common, type_id, options=typed_options,
                                     events={"type": "array", "items": exported}))

    if shared_actions:
        schemas["Action"] = {"description": "one action of a game's vocabulary",
                             "anyOf": [ref(n) for n in dict.fromkeys(actions.values())]}
    else:
        add("Action", _union(actions, "type", "one action of a game's vocabulary"))
    schemas["ActionRequest"]["properties"]["action"] = {
        **ref("Action"), "description": schemas["ActionRequest"]["properties"]["action"].get(
            "description", "")}
    schemas["LegalActions"]["properties"]["actions"]["items"] = ref("Action")
    schemas["CreateGame"] = _union(creations, "type", "a new game of one of the game types")
    schemas["GameView"] = _union(views, "type", "a game as the caller is served it")
    schemas["EventPage"] = _union(pages, "type", "a page of a game's event log")
    schemas["Export"] = _union(exports, "type", "a finished game's self-contained record")
    # POST /v1/replays/verify takes either export (their ``format`` tells them apart), each
    # in the shape the server reads before verifying it (events of any game: not the typed
    # ``Export``, which a body the server then finds invalid need not match)
    schemas["VerifiableGame"] = schemas["Verifiable"]
    tournament = json.loads(json.dumps(schemas["TournamentExport"]))
    tournament["properties"]["games"]["items"] = ref("VerifiableGame")
    schemas["VerifiableTournament"] = tournament
    schemas["Verifiable"] = {"description": "a game's export or a tournament's",
                             "oneOf": [ref("VerifiableGame"), ref("VerifiableTournament")]}
