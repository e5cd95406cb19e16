"""Who is calling: a seat's bearer token, a platform key, or nobody (a spectator). Only digests
are kept: seat tokens' in each game's meta, platform keys' in the configuration."""

from __future__ import annotations

import hashlib
import hmac
import secrets
from functools import lru_cache
from typing import Sequence

import orjson

from ..engine import ALL, Viewer
from .errors import InvalidToken
from .model import Table

#: Player tokens start with this, so that a token names the kind of credential it is.
TOKEN_PREFIX = "cp_"


#: How many tokens' digests are kept (a token's requests come in runs; an entry is under 400
#: bytes with the token itself).
DIGEST_CACHE_SIZE = 4096


@lru_cache(maxsize=DIGEST_CACHE_SIZE)
def token_digest(token: str) -> str:
    """A token's SHA-256 (hex): what is stored and compared, never the token. The digests of
    the last :data:`DIGEST_CACHE_SIZE` tokens used are kept (the rate limiter names its
    counters by it too)."""
    return hashlib.sha256(token.encode()).hexdigest()


def _seat_token() -> str:
    """32 random bytes, URL-safe, never starting with :data:`TOKEN_PREFIX`: one in 64**3 of
    them would, and would then be read as a player token first (stored games may hold such
    seat tokens: :meth:`Identity.viewer_for` still finds their seat)."""
    while True:
        token = secrets.token_urlsafe(32)
        if not token.startswith(TOKEN_PREFIX):
            return token


def new_seat_tokens(n: int, unfilled: Sequence[int] = ()) -> tuple[list[str | None], str]:
    """``n`` fresh seat tokens (returned once, at creation; None for the ``unfilled`` seats of
    a table) and their digests as the game's meta stores them (``""``: no token yet)."""
    tokens = [None if i in unfilled else _seat_token() for i in range(n)]
    return tokens, orjson.dumps([token_digest(t) if t else "" for t in tokens]).decode()


def new_seat_token() -> tuple[str, str]:
    """One fresh seat token and its digest (a table's seat, when someone joins)."""
    token = _seat_token()
    return token, token_digest(token)


class Identity:
    def __init__(self, platform_key_digests: Sequence[str] = (), players=None) -> None:
        self.platform_key_digests = tuple(platform_key_digests)
        #: ``Players`` (player tokens); None: seat tokens and platform keys only
        self.players = players

    def is_platform_key(self, token: str, digest: str | None = None) -> bool:
        if not self.platform_key_digests:
            return False
        digest = digest or token_digest(token)
        return any(hmac.compare_digest(digest, d) for d in self.platform_key_digests)

    def viewer_for(self, table: Table, token: str | None) -> Viewer:
        """The seat a bearer token acts as, ALL for a platform key, None without a token.

        A player token acts for the seats its player holds (the first the game awaits that
        its human still plays, else the first awaited, else the lowest); a player who holds no
        seat of the game is a spectator."""
        if token is None:
            return None
        try:
            player = self.player_for_token(token)
        except InvalidToken:
            # a prefixed token of no player is a seat's when this game holds it (stored games
            # may have such seat tokens); any other is refused
            seat = self._seat_of(table, token_digest(token))
            if seat is None:
                raise
            return seat
        if player is not None:
            seats = table.seats_of(player)
            if not seats:
                return None
            played = [s for s in table.awaiting_humans() if s in seats]
            awaited = [s for s in table.awaiting() if s in seats]
            return (played or awaited or seats)[0]
        digest = token_digest(token)
        if self.is_platform_key(token, digest):
            return ALL
        seat = self._seat_of(table, digest)
        if seat is None:
            raise InvalidToken("this token belongs to no seat of this game")
        return seat

    def key_scope(self, table: Table, token: str, seat: int) -> str:
        """The seats a token acting as ``seat`` holds in ``table``, which its Idempotency-Keys
        are scoped to: ``seat`` for a seat token or a player holding that one seat; all of
        them (``"0,1"``) for a player holding several, whose retry may find another seat
        awaited than its original did."""
        try:
            player = self.player_for_token(token)
        except InvalidToken:  # a prefixed seat token (viewer_for accepted it)
            return str(seat)
        seats = table.seats_of(player) if player is not None else []
        return ",".join(map(str, seats)) if len(seats) > 1 else str(seat)

    @staticmethod
    def _seat_of(table: Table, digest: str) -> int | None:
        """The seat of ``table`` whose token has ``digest``, if any."""
        seat = None
        for i, d in enumerate(table.meta["tokens"]):
            if d and hmac.compare_digest(digest, d):  # constant time, and no early exit
                seat = i
        return seat

    def player_for_token(self, token: str) -> str | None:
        """The player a player token belongs to; None for other tokens (a platform key that an
        operator chose with the same prefix included). InvalidToken for a player token of
        nobody."""
        if self.players is None or not token.startswith(TOKEN_PREFIX) \
                or self.is_platform_key(token):
            return None
        player = self.players.player_for_token(token)
        if player is None:
            raise InvalidToken("this player token belongs to nobody")
        return player
