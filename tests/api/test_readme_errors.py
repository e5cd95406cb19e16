"""The README's error table is the server's: every ``(status, code)`` row of its "Errors" table is
an answer the server can give, and every answer the server can give has its row.

What the server can answer is read from its source, not from a list kept beside it: every
:class:`service.engine.CodedError` subclass, the codes it is raised with (the literal in its own
``__init__``, or at each ``raise``, found with ``ast`` across ``service/``), the status and wire
code ``service.api.errors.ANSWERS`` gives its class (``illegal_action`` and ``invalid_options``
carry the raised code in ``details.code``: those are the README's other tables), and the codes
of Werkzeug's own errors, of the literal ``error_response`` calls in ``errors.py`` and of the
HTTP server's own answers (``_json_answer`` in ``service/webserver.py``). The
README's two ``details.code`` tables (refused options, malformed actions) are checked the same
way against the options vocabulary and ``service/engine/actions.py``.
"""

from __future__ import annotations

import ast
import functools
import re
from pathlib import Path

import service.app  # noqa: F401  (imports every route, so every error class is defined)
from service.api import errors
from service.engine import CodedError

ROOT = Path(__file__).resolve().parents[2]
SERVICE = ROOT / "service"
SECTION = "### Errors"

#: Codes built at run time where the scan cannot read them, each checked to be a literal of the
#: raising module: ``SeekEnded`` formats ``seek_{status}``, the lobby passes ``started``, the
#: tournament picks one of two codes.
RUNTIME = {"SeekEnded": ("service/application/seeks.py", {"seek_matched", "seek_expired"}),
           "SeatUnavailable": ("service/application/tables.py", {"game_started", "game_full"}),
           "TournamentRefused": ("service/engine/tournament.py",
                                 {"game_recorded", "game_not_in_round"})}
#: The statuses Werkzeug raises by itself: no route (404), a wrong method (405), a body over
#: MAX_CONTENT_LENGTH (413), a static file's range it does not have (416). The other rows of
#: ``errors._HTTP_CODES`` would answer an ``abort(status)``, which nothing in the service calls
#: (checked below); its 400 is shadowed by ``malformed_json``.
WERKZEUG = {404, 405, 413, 416}


def _classes() -> dict[str, type[CodedError]]:
    """The server's error classes (not those a test defines: they exist only in the process
    that ran it, before or after this one)."""
    out, todo = {}, [CodedError]
    while todo:
        for sub in todo.pop().__subclasses__():
            if not sub.__module__.startswith("tests."):
                out[sub.__name__] = sub
            todo.append(sub)
    return out


@functools.cache
def _scan() -> tuple[dict[str, set[str]], set[str]]:
    return _raised_codes(_classes())


def _raised_codes(classes) -> tuple[dict[str, set[str]], set[str]]:
    """Class name -> its codes: the literal its own ``__init__`` passes up (``super().__init__``
    in its body: then the arguments of its raises are messages), else the literals it is
    raised with anywhere in ``service/`` (``cls(...)`` in its classmethods too); and the
    classes also raised with a code the scan cannot read."""
    own: dict[str, set[str]] = {name: set() for name in classes}
    raised: dict[str, set[str]] = {name: set() for name in classes}
    unresolved: set[str] = set()
    for path in SERVICE.rglob("*.py"):
        tree = ast.parse(path.read_text())
        for node in ast.walk(tree):
            if isinstance(node, ast.ClassDef) and node.name in classes:
                for call in ast.walk(node):
                    if isinstance(call, ast.Call) and call.args and \
                            isinstance(call.args[0], ast.Constant):
                        if _is_super_init(call.func):
                            own[node.name].add(call.args[0].value)
                        elif getattr(call.func, "id", "") == "cls":  # a classmethod's raise
                            raised[node.name].add(call.args[0].value)
            if not isinstance(node, ast.Call) or not node.args:
                continue
            func = node.func
            name = func.id if isinstance(func, ast.Name) else getattr(func, "attr", None)
            if name not in classes:
                continue
            first = node.args[0]
            if isinstance(first, ast.Constant) and isinstance(first.value, str):
                raised[name].add(first.value)
            else:
                unresolved.add(name)
    codes = {name: own[name] or raised[name] for name in classes}
    return codes, {name for name in unresolved if not own[name]}


def _is_super_init(func) -> bool:
    return (isinstance(func, ast.Attribute) and func.attr == "__init__"
            and isinstance(func.value, ast.Call) and getattr(func.value.func, "id", "") == "super")


@functools.cache
def server_answers() -> frozenset[tuple[int, str]]:
    classes = _classes()
    found, unresolved = _scan()
    found = {name: set(codes) for name, codes in found.items()}
    for name, (module, codes) in RUNTIME.items():
        text = (ROOT / module).read_text()
        assert all(f'"{c}"' in text or f"'{c}'" in text or c.startswith("seek_") for c in codes)
        found[name] |= codes
    answers = set()
    for name, cls in classes.items():
        answer = errors._find(cls)
        assert answer is not None, f"{name} has no row in ANSWERS"
        if answer.code:  # the raised code is details.code
            answers.add((answer.status, answer.code))
            continue
        assert name not in unresolved or name in RUNTIME, \
            f"{name} is raised with a code the scan cannot read: add it to RUNTIME"
        answers |= {(answer.status, code) for code in found[name]}
    for path in SERVICE.rglob("*.py"):
        assert not re.search(r"\babort\(\s*\d", path.read_text()), f"{path} aborts with a status"
    answers |= {(status, code) for status, code in errors._HTTP_CODES.items()
                if status in WERKZEUG}
    tree = ast.parse((SERVICE / "api" / "errors.py").read_text())
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and getattr(node.func, "id", "") == "error_response" \
                and all(isinstance(a, ast.Constant) for a in node.args[:2]):
            answers.add((node.args[0].value, node.args[1].value))
    tree = ast.parse((SERVICE / "webserver.py").read_text())
    for node in ast.walk(tree):  # the HTTP server's own answers (a request body it cannot read)
        if isinstance(node, ast.Call) and getattr(node.func, "id", "") == "_json_answer":
            status, code = (arg.value for arg in node.args[:2])
            answers.add((int(status.split()[0]), code))
    return frozenset(answers)


def readme_answers() -> set[tuple[int, str]]:
    text = (ROOT / "README.md").read_text()
    assert SECTION in text, "README.md has no section " + SECTION
    section = re.split(r"\n#{2,3} ", text[text.index(SECTION) + len(SECTION):], maxsplit=1)[0]
    rows = re.findall(r"^\|\s*(\d{3})\s*\|\s*`([a-z_]+)`\s*\|", section, re.M)
    assert len(rows) == len(set(rows)), "a row is repeated"
    return {(int(status), code) for status, code in rows}


def test_every_error_the_readme_lists_is_one_the_server_answers():
    extra = readme_answers() - server_answers()
    assert not extra, f"in the README's table but never answered: {sorted(extra)}"


def test_every_error_the_server_answers_is_in_the_readme():
    missing = server_answers() - readme_answers()
    assert not missing, f"answered by the server but not in the README's table: {sorted(missing)}"


def test_the_scan_sees_the_codes_clients_meet_most():
    answers = server_answers()
    assert {(404, "game_not_found"), (404, "not_found"), (409, "not_your_turn"),
            (422, "illegal_action"), (422, "invalid_options"), (400, "invalid_request"),
            (405, "method_not_allowed"), (500, "internal_error"), (429, "rate_limited"),
            (503, "store_unavailable")} <= answers
    assert (422, "card_not_in_hand") not in answers  # a details.code, not a wire code


def test_a_game_id_of_no_game_and_a_path_that_is_no_game_id(client):
    """What the table says of the two 404s: a well-formed id of no game is ``game_not_found``;
    ``/v1/games/zzz`` (not lowercase hex, so no game id at all) is no route: ``not_found``."""
    missing = client.get("/v1/games/0123abcd")
    assert missing.status_code == 404
    assert missing.get_json()["error"]["code"] == "game_not_found"
    malformed = client.get("/v1/games/zzz")
    assert malformed.status_code == 404
    assert malformed.get_json()["error"]["code"] == "not_found"


def _table(after: str) -> set[str]:
    """The first column's codes of the first table after the README's line starting ``after``."""
    text = (ROOT / "README.md").read_text()
    assert after in text, after
    rest = text[text.index(after):]
    table = re.search(r"\n(\|.*\|\n)+", rest).group(0)
    return set(re.findall(r"^\|\s*`([a-z_]+)`\s*\|", table, re.M))


#: The engine's guard for ``options`` that are not an object: over HTTP the request schema
#: refuses those first (400 ``invalid_request``), so the README's table leaves it out.
ENGINE_ONLY = {"invalid_options"}


def test_the_readme_options_table_is_the_options_vocabulary():
    """``details.code`` of a 422 ``invalid_options``: what ``InvalidOptions`` and ``ClockError``
    are raised with, the ``invalid(...)`` helper's codes, the schemas' ``x-error`` annotations,
    and free text refused inside ``options`` (``InvalidText`` re-raised by service/schemas)."""
    found, _ = _scan()
    codes = found["InvalidOptions"] | found["ClockError"]
    for path in SERVICE.rglob("*.py"):
        text = path.read_text()
        codes |= set(re.findall(r'"x-error": \{"code": "([a-z_]+)"', text))
        for node in ast.walk(ast.parse(text)):
            if isinstance(node, ast.Call) and getattr(node.func, "id", "") == "invalid" \
                    and node.args and isinstance(node.args[0], ast.Constant):
                codes.add(node.args[0].value)
    assert "InvalidOptions(exc.code" in (SERVICE / "schemas" / "__init__.py").read_text()
    codes |= found["InvalidText"]
    readme = _table("A refused `options` is a 422 `invalid_options`")
    assert readme == codes - ENGINE_ONLY


def test_the_readme_malformed_action_table_is_the_engine_s():
    from service.engine import actions

    codes = {v for k, v in vars(actions).items() if k.isupper() and isinstance(v, str)
             and re.fullmatch(r"[a-z_]+", v)}
    assert codes == {"malformed_action", "unknown_action", "unexpected_field", "missing_field",
                     "invalid_field"}
    assert _table("A malformed action from an awaited seat") == codes
