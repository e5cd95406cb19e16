"""Malformed actions: one vocabulary of error codes for every game.

A refused action is HTTP 422 ``illegal_action`` with the reason in ``details.code``
(docs/design/api.md, "Errors"). Whatever the game, a malformed action gets one of these codes,
checked in this order (the first failing check decides):

* ``malformed_action``: the action is not a JSON object, or has no string ``type``;
* ``unknown_action``: ``type`` is not one of the game's action types (``details.allowed``);
* ``unexpected_field``: a field the action type does not take (``details.fields``: the first
  one in sorted order, at most 64 characters);
* ``missing_field``: a field the action type requires is absent (``details.fields``);
* ``invalid_field``: a field has the wrong JSON type or a value out of its range
  (``details.fields``).

``details.fields`` is ``{field name: [message]}``, the shape of every refusal that names fields
(a request the schema refuses, ``not_an_integer``, ``invalid_text``, rule codes about a field).

Everything else a game refuses has a rule-specific code (``card_not_in_hand``, ``wrong_phase``,
...), listed in each rules spec. None of these messages or details carries anything but what the
client sent and the public action vocabulary.
"""

from __future__ import annotations

from typing import Any, Collection, Sequence

from .game import Action, IllegalAction, fields_detail

MALFORMED_ACTION = "malformed_action"
UNKNOWN_ACTION = "unknown_action"
UNEXPECTED_FIELD = "unexpected_field"
MISSING_FIELD = "missing_field"
INVALID_FIELD = "invalid_field"
#: The longest field name echoed back in ``details.fields``.
MAX_FIELD_NAME = 64


def action_type(action: Any, allowed: Collection[str] | None = None) -> str:
    """The ``type`` of ``action``: ``malformed_action`` unless it is an object with a string
    ``type``; with ``allowed`` (the action types, listed in that order in ``details.allowed``),
    ``unknown_action`` unless ``type`` is one of them."""
    if not isinstance(action, dict):
        raise IllegalAction(MALFORMED_ACTION, "an action is an object with a string 'type'")
    kind = action.get("type")
    if not isinstance(kind, str):
        raise IllegalAction(MALFORMED_ACTION, "an action is an object with a string 'type'")
    if allowed is not None and kind not in allowed:
        raise IllegalAction(UNKNOWN_ACTION,
                            f"unknown action type; expected one of: {', '.join(allowed)}",
                            {"allowed": list(allowed)})
    return kind


def check_fields(action: Action, fields: Sequence[str]) -> None:
    """``action`` (an object with a ``type``, see :func:`action_type`) has exactly ``type`` and
    ``fields``: ``unexpected_field``, then ``missing_field`` in ``fields`` order."""
    if len(action) == len(fields) + 1:
        for name in fields:
            if name not in action:
                break
        else:
            return  # "type" and every field, nothing else
    extra = sorted(str(k) for k in action if k != "type" and k not in fields)
    if extra:
        name = extra[0][:MAX_FIELD_NAME]
        message = f"unexpected field {name!r}"
        raise IllegalAction(UNEXPECTED_FIELD, message, fields_detail(name, message))
    for name in fields:
        if name not in action:
            message = f"missing field {name!r}"
            raise IllegalAction(MISSING_FIELD, message, fields_detail(name, message))


def invalid_field(field: str, message: str) -> IllegalAction:
    """The error for a field of the wrong JSON type or out of its range."""
    return IllegalAction(INVALID_FIELD, message, fields_detail(field, message))
