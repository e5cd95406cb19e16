"""Creation options checked against the JSON Schema a game declares (``Game.options_schema``).

One validator for every game: :func:`validate_options` checks ``options`` with the
``jsonschema`` package (draft 2020-12), answers the shallowest failure (the first found among
equals) with an :class:`InvalidOptions` from a fixed vocabulary, then fills in the top-level
defaults the schema declares. A game's
``normalize_options`` calls it first and keeps in code only the rules a schema cannot say (a
list that must be a permutation of a multiset, counts that depend on the number of players,
rules joining two fields).

The vocabulary (``InvalidOptions.code``; the HTTP API serves it as ``details.code`` of a 422
``invalid_options``):

* ``invalid_options`` — ``options`` is not an object.
* ``unknown_option`` — a key the schema does not declare, at any depth.
* ``invalid_option`` — a value the schema refuses (wrong type, not one of the allowed values,
  out of range, too short or long, repeated items, a required key missing), or a rule between
  options that only code checks.
* the code a schema names for one of its parts with the annotation ``x-error`` (``{"code": ...,
  more details}``): every game's ``options.setup`` says ``invalid_setup``, Scarabya's layout
  ``invalid_layout`` (rule V1), Papyrus' board ``invalid_board``. The rules of those parts that
  code checks answer with the same code.
* ``invalid_player_count`` — the options do not fit the number of players.

``details`` always has ``option``, the dotted path of the offending value or key
(``"setup.deck_order.3"``, ``"colour"``; list items by index). A schema failure adds
``expected``: the schema keyword that failed and its value (``{"type": "boolean"}``,
``{"maxItems": 5}``, ``{"enum": [...]}``, ``{"required": ["id"]}``); a rule checked in code adds
``reason`` (a snake_case word) and its own facts. Messages and details never quote what the
caller sent beyond the path to it.

The integer type is Python's ``int`` (not ``bool``, not a float such as ``2.0``, which JSON Schema
would count as an integer): the checks refuse ``2.0`` where a count is expected.
"""

from __future__ import annotations

from typing import Any, Iterable

from jsonschema import Draft202012Validator, validators
from jsonschema.exceptions import ValidationError

from .game import InvalidOptions

#: The annotation naming the error code of a part of a schema (see the module docstring).
ERROR_ANNOTATION = "x-error"
MAX_KEY_SHOWN = 40

_TYPES = Draft202012Validator.TYPE_CHECKER.redefine(
    "integer", lambda _checker, value: isinstance(value, int) and not isinstance(value, bool))
_Validator = validators.extend(Draft202012Validator, type_checker=_TYPES)
_compiled: dict[int, tuple[dict, Any]] = {}


def _validator(schema: dict):
    entry = _compiled.get(id(schema))
    if entry is None or entry[0] is not schema:
        _Validator.check_schema(schema)
        entry = _compiled[id(schema)] = (schema, _Validator(schema))
    return entry[1]


def dotted(path: Iterable[Any]) -> str:
    """``["setup", "round_decks", 2]`` -> ``"setup.round_decks.2"`` (long keys cut short)."""
    return ".".join(str(part)[:MAX_KEY_SHOWN] for part in path)


def invalid(code: str, option: str, message: str, **details: Any) -> InvalidOptions:
    """The error of a rule checked in code: ``code`` from the vocabulary, ``option`` the dotted
    path, ``details`` such as ``reason``."""
    return InvalidOptions(code, f"options.{option}: {message}", {"option": option, **details})


def validate_options(schema: dict, options: Any) -> dict:
    """``options`` checked against ``schema`` (raises :class:`InvalidOptions`), as a new dict:
    the caller's keys in the caller's order, then every absent top-level property that has a
    ``default``, in the schema's order."""
    if not isinstance(options, dict):
        raise InvalidOptions("invalid_options", "options must be an object",
                             {"option": "", "expected": {"type": "object"}})
    check(schema, options)
    out = dict(options)
    for key, prop in schema.get("properties", {}).items():
        if key not in out and isinstance(prop, dict) and "default" in prop:
            out[key] = prop["default"]
    return out


def check(schema: dict, value: Any) -> None:
    """Raise the :class:`InvalidOptions` of the shallowest failure of ``value`` against
    ``schema``, the first found among equals (``details.option`` is relative to ``value``)."""
    errors = list(_validator(schema).iter_errors(value))
    if errors:
        raise _translate(schema, min(errors, key=lambda error: len(error.absolute_path)))


def _annotation(schema: dict, error: ValidationError) -> dict:
    """The innermost ``x-error`` on the way from ``schema`` to the failed keyword."""
    found: dict = {}
    node: Any = schema
    for step in error.absolute_schema_path:
        if isinstance(node, dict) and isinstance(node.get(ERROR_ANNOTATION), dict):
            found = node[ERROR_ANNOTATION]
        try:
            node = node[step]
        except (KeyError, IndexError, TypeError):
            break
    return found


def _translate(schema: dict, error: ValidationError) -> InvalidOptions:
    path = list(error.absolute_path)
    keyword, value = error.validator, error.validator_value
    if keyword == "additionalProperties":
        declared = error.schema.get("properties", {})
        key = sorted(str(k) for k in error.instance if k not in declared)[0]
        option = dotted(path + [key])
        return InvalidOptions("unknown_option", f"options.{option} is not an option",
                              {"option": option})
    if keyword in ("required", "dependentRequired"):
        needed = value if keyword == "required" else \
            [k for trigger, keys in value.items() if trigger in error.instance for k in keys]
        path.append(next(k for k in needed if k not in error.instance))
    extra = dict(_annotation(schema, error))
    code = extra.pop("code", "invalid_option")
    option = dotted(path)
    expected = {str(keyword): value}
    return InvalidOptions(code, f"options.{option}: {_explain(str(keyword), value)}",
                          {"option": option, "expected": expected, **extra})


def _explain(keyword: str, value: Any) -> str:
    if keyword == "type":
        return f"must be of type {' or '.join(value) if isinstance(value, list) else value}"
    if keyword in ("enum", "const"):
        allowed = value if keyword == "enum" else [value]
        shown = ", ".join(repr(v) for v in allowed[:8]) + (", ..." if len(allowed) > 8 else "")
        return f"must be one of {shown}"
    phrases = {
        "minimum": "must be at least {}", "maximum": "must be at most {}",
        "minItems": "must hold at least {} items", "maxItems": "must hold at most {} items",
        "minLength": "must be at least {} characters long",
        "maxLength": "must be at most {} characters long",
        "uniqueItems": "must not hold the same item twice", "pattern": "must match {}",
        "required": "is required", "dependentRequired": "is required",
        "not": "must not match {}",
    }
    return phrases.get(keyword, "is not accepted here ({})").format(value)
