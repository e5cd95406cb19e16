"""Players: identities across games. A player has a public profile and one secret token (shown
once, stored hashed) that acts for every seat the player holds. The built-in bot levels are
players too (``bot-random``, ``bot-heuristic``, ``bot-mcts``), without a token: the server plays
their seats."""

from __future__ import annotations

import re
import secrets
import threading
from collections import OrderedDict
from typing import Callable

from ..engine.bots import LEVELS
from ..store.players import PlayerStore
from ..timestamps import rfc3339
from .errors import InvalidRequest, NotFound
from .identity import TOKEN_PREFIX, token_digest

BOT_PREFIX = "bot-"
#: The creator of games made with a platform key: it seats every player it names.
PLATFORM = "platform"
_ID = re.compile(r"(p-[0-9a-f]{16}|bot-[a-z]{1,20})")


def valid_player_id(player_id: str) -> bool:
    return isinstance(player_id, str) and _ID.fullmatch(player_id) is not None


def bot_player_id(level: str) -> str:
    return f"{BOT_PREFIX}{level}"


def bot_name(level: str) -> str:
    """The name the built-in bot player of ``level`` plays under."""
    return f"{level.capitalize()} bot"


def bot_level(player_id: str) -> str | None:
    """The bot level a built-in bot player plays (None: not a built-in bot)."""
    if player_id.startswith(BOT_PREFIX) and player_id[len(BOT_PREFIX):] in LEVELS:
        return player_id[len(BOT_PREFIX):]
    return None


class PlayerNotFound(NotFound):
    def __init__(self, player_id: str) -> None:
        super().__init__("player_not_found", f"no player {player_id!r}")


class ExternalIdTaken(InvalidRequest):
    def __init__(self, player_id: str) -> None:
        super().__init__("external_id_taken", "this platform already has a player with that "
                         "external_id", {"player_id": player_id})


class Players:
    def __init__(self, store: PlayerStore, now_ms: Callable[[], int],
                 memo_size: int = 10_000) -> None:
        self.store = store
        self.now_ms = now_ms
        # token digest -> player id: tokens never change owner, so this is never stale
        self._by_token: OrderedDict[str, str] = OrderedDict()
        self._memo_size = memo_size
        self._lock = threading.Lock()

    def ensure_bots(self) -> None:
        """Write the built-in bot players (idempotent; on first use, see :meth:`record`)."""
        now = str(self.now_ms())
        for level in LEVELS:
            self.store.create(bot_player_id(level), {
                "name": bot_name(level), "kind": "bot", "created_ms": now,
                "level": level}, None)

    def create(self, name: str, kind: str, *, external_id: str | None = None,
               platform: str | None = None, charge: Callable[[int], None] | None = None
               ) -> dict:
        """A new player and its token (returned this once). ``charge``: called with the bytes
        the player stores just before it is written; it raises to refuse it."""
        player_id = f"p-{secrets.token_hex(8)}"
        token = TOKEN_PREFIX + secrets.token_urlsafe(32)
        fields = {"name": name, "kind": kind, "created_ms": str(self.now_ms())}
        if external_id is not None:
            fields["external_id"] = external_id
        if charge is not None:  # its fields, id and token digest (and external id's key)
            charge(sum(len(k) + len(v) for k, v in fields.items()) + len(player_id) + 64
                   + (len(external_id) + len(platform or "") if external_id else 0))
        taken = self.store.create(player_id, fields, token_digest(token),
                                  (platform, external_id) if external_id is not None else None)
        if taken is not None:
            raise ExternalIdTaken(taken)
        out = {"id": player_id, "name": name, "kind": kind, "token": token}
        if external_id is not None:
            out["external_id"] = external_id
        return out

    def find_external(self, platform: str, external_id: str) -> dict:
        player_id = self.store.id_for_external(platform, external_id)
        if player_id is None:
            raise NotFound("player_not_found", "no player with that external_id")
        return self.profile(player_id)

    def record(self, player_id: str) -> dict[str, str]:
        """The stored profile fields; PlayerNotFound."""
        found = self.store.get(player_id) if valid_player_id(player_id) else None
        if found is None and bot_level(player_id) is not None:
            self.ensure_bots()  # first use of this store
            found = self.store.get(player_id)
        if found is None:
            raise PlayerNotFound(player_id)
        return found

    def profile(self, player_id: str, private: bool = False) -> dict:
        """The public profile: name, kind, created time and counts per rating type (the
        ratings themselves are added by ``GameService.player_profile``); ``private`` (the
        player itself, or the platform that found it by it): its ``external_id`` too."""
        rec = self.record(player_id)
        per_type: dict[str, dict] = {}
        for key, value in self.store.stats(player_id).items():
            game_type, _, what = key.rpartition(":")
            entry = per_type.setdefault(game_type, {"games": 0, "wins": 0, "rating": None})
            entry[what] = value
        out = {"id": player_id, "name": rec["name"], "kind": rec["kind"],
               "created_at": rfc3339(int(rec["created_ms"])), "stats": per_type}
        if private and "external_id" in rec:
            out["external_id"] = rec["external_id"]
        return out

    def player_for_token(self, token: str) -> str | None:
        """The id of the player a player token (``TOKEN_PREFIX``, checked by ``Identity``)
        belongs to; None: nobody's."""
        digest = token_digest(token)
        with self._lock:
            known = self._by_token.get(digest)
        if known is not None:
            return known
        found = self.store.id_for_token(digest)
        if found is not None:
            with self._lock:
                self._by_token[digest] = found
                while len(self._by_token) > self._memo_size:
                    self._by_token.popitem(last=False)
        return found
