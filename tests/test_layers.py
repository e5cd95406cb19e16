"""The layering rule of the HTTP shell: no module under service/api reaches Redis itself.

What the API needs of the store (rate-limit counters, the event streams' blocking reads, the
readiness check, the exception classes it answers 503 for) goes through ``service.store`` or
the application layer. Checked on the source (ast), so a new module is covered as it lands.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

API = Path(__file__).resolve().parent.parent / "service" / "api"
MODULES = sorted(API.rglob("*.py"))
#: top-level packages the API may not import: the Redis client and RQ (which talks to Redis)
FORBIDDEN = {"redis", "rq"}
#: ``EventStore.r``, ``StreamFollower.r``, ``WebhookStore.r``: the store's raw client
RAW_CLIENT_ATTRIBUTE = "r"


def imported(tree: ast.AST) -> list[tuple[int, str]]:
    """(line, top-level package) of every absolute import in ``tree``."""
    out = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            out += [(node.lineno, alias.name.split(".")[0]) for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            out.append((node.lineno, node.module.split(".")[0]))
    return out


def test_the_rule_sees_the_api_modules():
    names = {p.name for p in MODULES}
    assert {"games.py", "errors.py", "hub.py", "ratelimit.py", "health.py"} <= names


@pytest.mark.parametrize("path", MODULES, ids=[p.name for p in MODULES])
def test_no_api_module_imports_redis(path):
    tree = ast.parse(path.read_text(), filename=str(path))
    found = [(line, name) for line, name in imported(tree) if name in FORBIDDEN]
    assert not found, f"{path.name} imports {found}: go through service.store"


@pytest.mark.parametrize("path", MODULES, ids=[p.name for p in MODULES])
def test_no_api_module_uses_a_stores_raw_client(path):
    tree = ast.parse(path.read_text(), filename=str(path))
    found = [node.lineno for node in ast.walk(tree)
             if isinstance(node, ast.Attribute) and node.attr == RAW_CLIENT_ATTRIBUTE]
    assert not found, f"{path.name} lines {found} use a store's raw client (.r)"


def test_the_rule_catches_what_it_forbids():
    tree = ast.parse("import redis\nfrom redis.cluster import RedisCluster\nimport rq.job\n"
                     "from .. import store\nfrom ..store import connect\n")
    assert [name for _, name in imported(tree) if name in FORBIDDEN] == ["redis", "redis", "rq"]
