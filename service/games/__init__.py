"""The games this server hosts: one package per game in this folder, each exposing ``GAME``.

The registry is derived from the folders (nothing lists the game ids by hand): every package
here is loaded, then any package named in ``CARTOUCHE_GAME_PACKAGES`` (comma-separated dotted
names, e.g. a game kept outside this tree), through the same :func:`load_package`.
"""

from __future__ import annotations

import importlib
import os
import pkgutil
import re
from functools import lru_cache
from pathlib import Path
from types import ModuleType

from ..engine import Game

#: type id -> game, in catalog order (``Game.catalog_position``, then id).
GAMES: dict[str, Game] = {}
#: type id -> the package the game lives in (its ``render`` module is looked up there).
PACKAGES: dict[str, str] = {}


def load_package(name: str) -> Game:
    """Import the game package ``name`` (dotted) and register its ``GAME``."""
    module: ModuleType = importlib.import_module(name)
    game = getattr(module, "GAME", None)
    if not isinstance(game, Game) or not game.type_id:
        raise TypeError(f"{name} has no GAME (a service.engine.Game with a type_id)")
    known = PACKAGES.get(game.type_id)
    if known is not None and known != name:
        raise ValueError(f"game type {game.type_id!r} is declared by {known} and {name}")
    PACKAGES[game.type_id] = name
    everything = {**GAMES, game.type_id: game}
    GAMES.clear()
    GAMES.update(sorted(everything.items(), key=lambda kv: (kv[1].catalog_position, kv[0])))
    return game


def render_module(type_id: str) -> ModuleType | None:
    """The game's text rendering for the CLI (``<package>.render``), or None."""
    package = PACKAGES.get(type_id)
    if package is None:
        return None
    try:
        return importlib.import_module(f"{package}.render")
    except ModuleNotFoundError as exc:
        if exc.name != f"{package}.render":
            raise
        return None


#: A game's guide for client developers: ``guide.md`` in its package folder (optional for a
#: game kept outside this tree; ``docs/games/<type>.md`` links to each built-in one).
GUIDE_FILE = "guide.md"


def guide_path(type_id: str) -> Path | None:
    """The file of the game's guide, or None (an unknown type, or a game without one)."""
    package = PACKAGES.get(type_id)
    if package is None:
        return None
    path = Path(importlib.import_module(package).__file__).parent / GUIDE_FILE
    return path if path.is_file() else None


@lru_cache(maxsize=64)  # one entry per game type asked about; bounded whoever asks
def guide_text(type_id: str) -> str | None:
    """The game's guide (Markdown), or None."""
    path = guide_path(type_id)
    return None if path is None else path.read_text(encoding="utf-8")


_MARKUP = [(re.compile(r"\[([^\]]*)\]\([^)]*\)"), r"\1"),  # [text](url) -> text
           (re.compile(r"(\*\*|`)"), "")]


@lru_cache(maxsize=64)  # the catalog serves every game's summary on each request
def guide_summary(type_id: str) -> str | None:
    """The guide's first paragraph after its title, as plain text on one line, or None."""
    text = guide_text(type_id)
    if text is None:
        return None
    paragraph: list[str] = []
    for line in text.splitlines():
        line = line.strip()
        if line.startswith("#") and not paragraph:
            continue
        if not line:
            if paragraph:
                break
            continue
        paragraph.append(line)
    summary = " ".join(paragraph)
    for pattern, replacement in _MARKUP:
        summary = pattern.sub(replacement, summary)
    return summary


for _info in pkgutil.iter_modules(__path__):
    if _info.ispkg:
        load_package(f"{__name__}.{_info.name}")
for _name in filter(None, (n.strip() for n in
                           os.environ.get("CARTOUCHE_GAME_PACKAGES", "").split(","))):
    load_package(_name)
