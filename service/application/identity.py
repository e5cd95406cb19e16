"""Who is calling: a seat's bearer token, a platform key, or nobody (a spectator). Only digests
are kept: seat tokens' in each game's meta, platform keys' in the configuration."""

from __future__ import annotations

import hashlib
import hmac
import secrets
from typing import Sequence

import orjson

from ..engine import ALL, Viewer
from .errors import InvalidToken
from .model import Table


def token_digest(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


def new_seat_tokens(n: int) -> tuple[list[str], str]:
    """``n`` fresh seat tokens (returned once, at creation) and their digests as the game's
    meta stores them."""
    tokens = [secrets.token_urlsafe(32) for _ in range(n)]
    return tokens, orjson.dumps([token_digest(t) for t in tokens]).decode()


class Identity:
    def __init__(self, platform_key_digests: Sequence[str] = ()) -> None:
        self.platform_key_digests = tuple(platform_key_digests)

    def is_platform_key(self, token: str, digest: str | None = None) -> bool:
        if not self.platform_key_digests:
            return False
        digest = digest or token_digest(token)
        return any(hmac.compare_digest(digest, d) for d in self.platform_key_digests)

    def viewer_for(self, table: Table, token: str | None) -> Viewer:
        """The seat a bearer token acts as, ALL for a platform key, None without a token."""
        if token is None:
            return None
        digest = token_digest(token)
        if self.is_platform_key(token, digest):
            return ALL
        seat = None
        for i, d in enumerate(table.meta["tokens"]):
            if hmac.compare_digest(digest, d):  # constant time, and no early exit
                seat = i
        if seat is None:
            raise InvalidToken("this token belongs to no seat of this game")
        return seat
