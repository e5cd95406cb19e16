"""Each game's guide (``service/games/<game>/guide.md``, linked from ``docs/games/<type>.md``)
is exact: its action examples are valid actions, it names every action type and every refusal
code the game's rules can answer, and its worked turn is a real one, replayed here.

Fences the guides use:

* ```` ```json action ````: one action exactly as posted (``{"type": ...}``), checked against
  the game's ``action_schemas``;
* ```` ```json worked-turn ````: ``create`` (the ``POST /v1/games`` body, with a ``seed``),
  ``viewer`` (the seat whose token reads the views), ``before``/``after`` (``version``,
  ``awaiting`` and a part of ``state`` of ``GET /v1/games/{id}``) and ``steps``: each a seat's
  ``action`` and the ``events`` the 201 answers it with (without ``at``).
"""

from __future__ import annotations

import ast
import json
import re
from pathlib import Path

import jsonschema
import pytest

from service.engine.fold import visible
from service.engine.local import LocalGame
from service.games import GAMES, PACKAGES, guide_path

ROOT = Path(__file__).resolve().parents[2]
TYPES = [t for t in GAMES if PACKAGES[t].startswith("service.games.")]
FENCE = re.compile(r"^```json ([a-z-]+)\n(.*?)^```$", re.S | re.M)

#: The calls that refuse an action, and which argument holds the code.
REFUSALS = {"IllegalAction": 0, "illegal": 0, "require": 1, "NotYourTurn": 0}
#: The shared checks of service.engine.actions, and the codes they answer with.
SHARED = {"action_type": ("malformed_action", "unknown_action"),
          "check_fields": ("unexpected_field", "missing_field"),
          "invalid_field": ("invalid_field",)}


def guide(type_id: str) -> str:
    return guide_path(type_id).read_text(encoding="utf-8")


def blocks(type_id: str, kind: str) -> list:
    return [json.loads(body) for k, body in FENCE.findall(guide(type_id)) if k == kind]


def refusal_codes(folder: Path) -> set[str]:
    """Every code the game's rules modules can refuse an action with: the literal codes of
    their refusals, the reasons ``not_awaited_reason`` returns (409 ``details.code``) and the
    codes of the shared malformed-action checks they call."""
    codes: set[str] = set()
    for path in folder.glob("*.py"):
        if path.name in ("bots.py", "render.py"):
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.FunctionDef) and node.name == "not_awaited_reason":
                codes |= {r.value.value for r in ast.walk(node) if isinstance(r, ast.Return)
                          and isinstance(r.value, ast.Constant)}
            if not isinstance(node, ast.Call):
                continue
            f = node.func
            name = f.id if isinstance(f, ast.Name) else getattr(f, "attr", None)
            codes.update(SHARED.get(name, ()))
            if name in REFUSALS and len(node.args) > REFUSALS[name]:
                arg = node.args[REFUSALS[name]]
                if isinstance(arg, ast.Constant):
                    codes.add(arg.value)
                else:  # a computed code: only not_awaited_reason's, collected above
                    assert "not_awaited_reason" in ast.unparse(arg), (path, node.lineno)
    return codes


def part_of(shown, served, where="state") -> None:
    """``shown`` (from a guide) is ``served`` with some object keys left out (lists keep
    their length and order)."""
    if isinstance(shown, dict):
        assert isinstance(served, dict), where
        for key, value in shown.items():
            assert key in served, f"{where}.{key} is not served"
            part_of(value, served[key], f"{where}.{key}")
    elif isinstance(shown, list) and isinstance(served, list) and len(shown) == len(served):
        for i, (a, b) in enumerate(zip(shown, served)):
            part_of(a, b, f"{where}[{i}]")
    else:
        assert shown == served, f"{where}: the guide shows {shown!r}, the game serves {served!r}"


@pytest.mark.parametrize("type_id", TYPES)
def test_the_guide_lives_in_the_game_folder_and_docs_links_to_it(type_id):
    path = guide_path(type_id)
    assert path is not None and path.parent.name == PACKAGES[type_id].rsplit(".", 1)[1]
    link = ROOT / "docs" / "games" / f"{type_id}.md"
    folder = path.parent.relative_to(ROOT) if path.is_relative_to(ROOT) else path.parent
    assert link.is_symlink() and not Path(link.readlink()).is_absolute(), (
        f"docs/games links to every guide: `ln -s ../../{folder}/guide.md "
        f"docs/games/{type_id}.md` and commit the link")
    assert link.resolve() == path.resolve()


@pytest.mark.parametrize("type_id", TYPES)
def test_every_action_example_is_valid_and_every_action_type_has_one(type_id):
    game = GAMES[type_id]
    fences = [line for line in guide(type_id).splitlines() if line.startswith("```")]
    assert len(fences) % 2 == 0, "a fence is left open"
    examples = blocks(type_id, "action")
    for example in examples:
        assert example.get("type") in game.action_schemas, example
        jsonschema.Draft202012Validator(game.action_schemas[example["type"]]).validate(example)
    assert {e["type"] for e in examples} == set(game.action_schemas)
    for kind in game.action_schemas:
        assert f"`{kind}`" in guide(type_id)


@pytest.mark.parametrize("type_id", TYPES)
def test_every_refusal_code_of_the_rules_is_named(type_id):
    codes = refusal_codes(guide_path(type_id).parent)
    assert "invalid_field" in codes  # the collection finds something
    named = set(re.findall(r"`([a-z_]+)`", guide(type_id)))
    assert sorted(codes - named) == []


@pytest.mark.parametrize("type_id", TYPES)
def test_the_worked_turn_is_a_real_one(type_id):
    turns = blocks(type_id, "worked-turn")
    assert len(turns) == 1, "one worked turn per guide"
    turn = turns[0]
    game = GAMES[type_id]
    create = turn["create"]
    assert create["type"] == type_id
    local = LocalGame(game, [{"name": p["name"], "bot": None} for p in create["players"]],
                      create.get("options", {}), bytes.fromhex(create["seed"]))
    viewer = turn["viewer"]

    def check_view(shown):
        assert local.version == shown["version"]
        assert local.awaiting() == shown["awaiting"]
        part_of(shown["state"], game.view(local.state, viewer))

    check_view(turn["before"])
    for step in turn["steps"]:
        assert step["action"] in local.legal(step["seat"])
        first = local.version + 1
        events = local.act(step["seat"], step["action"])
        served = []
        for version, ev in enumerate(events, first):
            seen = visible(game, ev, step["seat"], game.is_over(local.state))
            if seen is not None:
                served.append({"version": version, "type": seen["type"], "seat": seen["seat"],
                               "data": seen["data"], **({"forced": True} if ev.get("forced")
                                                        else {})})
        assert step["events"] == served
    check_view(turn["after"])
