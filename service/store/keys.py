"""Redis key names. Every key of one game carries the hash tag ``{<game_id>}``, so a game lives
in one Redis Cluster slot and the Lua scripts may touch all of its keys."""

from __future__ import annotations

PREFIX = "cartouche"


def events(game_id: str) -> str:
    return f"{PREFIX}:{{{game_id}}}:events"


def meta(game_id: str) -> str:
    return f"{PREFIX}:{{{game_id}}}:meta"


def seed(game_id: str) -> str:
    return f"{PREFIX}:{{{game_id}}}:seed"


def snapshots(game_id: str) -> str:
    return f"{PREFIX}:{{{game_id}}}:snap"


def snapshot_versions(game_id: str) -> str:
    return f"{PREFIX}:{{{game_id}}}:snapv"


def archive(game_id: str) -> str:
    """A game over, archived: its events and seed as one compressed document (``archive.py``)."""
    return f"{PREFIX}:{{{game_id}}}:archive"


def idempotency(game_id: str, key_digest: str) -> str:
    return f"{PREFIX}:{{{game_id}}}:idem:{key_digest}"


def all_of_game(game_id: str) -> list[str]:
    return [events(game_id), meta(game_id), seed(game_id), snapshots(game_id),
            snapshot_versions(game_id), archive(game_id)]


# The game index is global. Each index key is one key (one slot); see docs/architecture.md's
# design notes.
def index_all() -> str:
    return f"{PREFIX}:index:all"


def index_type(game_type: str) -> str:
    return f"{PREFIX}:index:type:{game_type}"


def index_status(status: str) -> str:
    return f"{PREFIX}:index:status:{status}"


def index_type_status(game_type: str, status: str) -> str:
    return f"{PREFIX}:index:type-status:{game_type}:{status}"


def index_rebuild_lock() -> str:
    return f"{PREFIX}:index:type-status-rebuild"


# The workers' sweep of the active games: where its rotation stands, and who sweeps a window.
def sweep_cursor() -> str:
    return f"{PREFIX}:sweep:cursor"


def sweep_window(window: int) -> str:
    return f"{PREFIX}:sweep:window:{window}"
