"""The import rules of docs/architecture.md, checked on the source (ast, nothing imported):

* a game (``service/games/<game>/``, and any game package such as ``tests/tiny_game``) imports
  nothing of the service but the engine and its own folder; its rules import no I/O, clock or
  global randomness;
* the engine imports nothing of the service outside ``service/engine``, and no framework;
* the API (``service/api``) never reaches the raw Redis client: it imports neither ``redis``
  nor ``rq`` and never touches a store's raw client (``.r``); what it needs of the store
  (rate-limit counters, the streams' blocking reads, readiness, the exceptions answered with a
  503) goes through ``service.store`` or the application layer.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
SERVICE = ROOT / "service"
FRAMEWORKS = {"flask", "flask_smorest", "marshmallow", "redis", "rq", "gunicorn", "gevent",
              "requests"}
#: What the rules may not touch: I/O, the clock, global randomness (data files are read once, at
#: import, with pathlib/json).
IMPURE = {"random", "time", "datetime", "secrets", "uuid", "os", "socket", "threading",
          "subprocess"}


def imports(path: Path, root: Path = ROOT) -> set[str]:
    """Every module ``path`` imports, relative imports resolved to dotted names."""
    package = ".".join(path.relative_to(root).with_suffix("").parts)
    if path.name != "__init__.py":
        package = package.rsplit(".", 1)[0]
    out: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            out.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[:len(base) - node.level + 1]
                name = ".".join(base + ([node.module] if node.module else []))
            else:
                name = node.module or ""
            out.add(name)
            out.update(f"{name}.{alias.name}" for alias in node.names)
    return out


def modules(folder: Path) -> list[Path]:
    return sorted(p for p in folder.rglob("*.py") if "__pycache__" not in p.parts)


def top(name: str) -> str:
    return name.split(".", 1)[0]


def ids(paths):
    return [str(p.relative_to(ROOT)) for p in paths]


GAME_FOLDERS = sorted(p for p in (SERVICE / "games").iterdir() if (p / "__init__.py").exists())
GAME_FOLDERS.append(ROOT / "tests" / "tiny_game")
GAME_MODULES = [m for folder in GAME_FOLDERS for m in modules(folder)]


@pytest.mark.parametrize("path", GAME_MODULES, ids=ids(GAME_MODULES))
def test_a_game_imports_only_the_engine_and_its_own_folder(path):
    own = ".".join(next(f for f in GAME_FOLDERS if f in path.parents).relative_to(ROOT).parts)
    wrong = sorted(n for n in imports(path)
                   if top(n) in ("service", "workers", "tests") or top(n) in FRAMEWORKS
                   if not (n == "service.engine" or n.startswith("service.engine.")
                           or n == own or n.startswith(own + ".")))
    assert wrong == [], f"{path.relative_to(ROOT)} imports {wrong}"


@pytest.mark.parametrize("path", [m for m in GAME_MODULES if m.name == "rules.py"],
                         ids=ids([m for m in GAME_MODULES if m.name == "rules.py"]))
def test_the_rules_are_pure(path):
    wrong = sorted(n for n in imports(path) if top(n) in IMPURE)
    assert wrong == [], f"{path.relative_to(ROOT)} imports {wrong}"


ENGINE_MODULES = modules(SERVICE / "engine")


@pytest.mark.parametrize("path", ENGINE_MODULES, ids=ids(ENGINE_MODULES))
def test_the_engine_imports_nothing_of_the_service(path):
    wrong = sorted(n for n in imports(path)
                   if (top(n) in ("service", "workers", "tests") and not
                       (n == "service.engine" or n.startswith("service.engine.")))
                   or top(n) in FRAMEWORKS)
    assert wrong == [], f"{path.relative_to(ROOT)} imports {wrong}"


API_MODULES = modules(SERVICE / "api")
#: ``EventStore.r``, ``StreamFollower.r``, ``WebhookStore.r``: a store's raw client
RAW_CLIENT_ATTRIBUTE = "r"


def test_the_rules_see_every_layer():
    assert {"games.py", "errors.py", "hub.py", "ratelimit.py", "health.py"} <= \
        {p.name for p in API_MODULES}
    assert {"runner.py", "game.py", "bots.py"} <= {p.name for p in ENGINE_MODULES}
    assert len(GAME_FOLDERS) >= 6 and len(GAME_MODULES) >= 4 * len(GAME_FOLDERS)


@pytest.mark.parametrize("path", API_MODULES, ids=ids(API_MODULES))
def test_the_api_never_reaches_the_raw_redis_client(path):
    wrong = sorted(n for n in imports(path) if top(n) in ("redis", "rq"))
    assert wrong == [], f"{path.relative_to(ROOT)} imports {wrong}: go through service.store"
    raw = [node.lineno for node in ast.walk(ast.parse(path.read_text(encoding="utf-8")))
           if isinstance(node, ast.Attribute) and node.attr == RAW_CLIENT_ATTRIBUTE]
    assert raw == [], f"{path.relative_to(ROOT)} lines {raw} use a store's raw client (.r)"


def test_the_rules_checker_sees_a_violation(tmp_path):
    """The checker itself: a relative import out of a game folder is resolved and caught."""
    fake = tmp_path / "service" / "games" / "diamant" / "probe.py"
    fake.parent.mkdir(parents=True)
    fake.write_text("from ...store import events\nfrom . import rules\nimport random\n")
    assert imports(fake, tmp_path) == {"service.store", "service.store.events", "random",
                                       "service.games.diamant", "service.games.diamant.rules"}
