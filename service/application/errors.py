"""The errors the application layer answers with. Each is a :class:`service.engine.CodedError`
with a stable ``code``; the HTTP status of each class is set in one table
(``service.api.errors.ANSWERS``), never at the raise.

The rules' own errors (``IllegalAction``, ``InvalidOptions``, ``NotYourTurn``) come from
``service.engine`` and are re-exported here with the rest.
"""

from __future__ import annotations

from ..engine import CodedError, IllegalAction, InvalidOptions, NotYourTurn
from ..engine.lobby import InvalidSeat, SeatUnavailable


class NotFound(CodedError):
    """No such game, game type, version, webhook or seek (``game_not_found``,
    ``game_type_not_found``, ``guide_not_found``, ``version_not_found``,
    ``webhook_not_found``, ``seek_not_found``)."""

    @classmethod
    def game(cls, game_id: str) -> NotFound:
        return cls("game_not_found", f"no game {game_id!r}")

    @classmethod
    def version(cls, version: int) -> NotFound:
        return cls("version_not_found", f"version {version} does not exist")


class InvalidToken(CodedError):
    """A bearer token that is malformed or belongs to no seat of the game."""

    def __init__(self, message: str) -> None:
        super().__init__("invalid_token", message)


class Forbidden(CodedError):
    """The caller is known but may not do this (a spectator acting, no platform key ...)."""


class SeatNotHuman(CodedError):
    """The seat is played by a bot (or has left): its token may watch but not act."""

    def __init__(self) -> None:
        super().__init__("seat_not_human", "this seat is played by a bot or has left")


class VersionConflict(CodedError):
    """The game is not at the version the command was decided against."""

    def __init__(self, current: int) -> None:
        super().__init__("version_conflict", f"the game is at version {current}",
                         {"current_version": current})
        self.current = current


class DeadlinePassed(CodedError):
    """The acting seat's clock had run out; its timeout was applied first."""

    def __init__(self) -> None:
        super().__init__("deadline_passed",
                         "this seat's time had run out; its timeout was applied first")


class CannotAbort(CodedError):
    def __init__(self, message: str) -> None:
        super().__init__("cannot_abort", message)


class CannotRematch(CodedError):
    def __init__(self, message: str = "only a finished game can be rematched") -> None:
        super().__init__("cannot_rematch", message)


class GameNotFinished(CodedError):
    """Only a finished (or aborted) game has an export."""

    def __init__(self) -> None:
        super().__init__("game_not_finished", "only finished games can be exported")


class InvalidRequest(CodedError):
    """A well-formed request the service refuses (creation, forks)."""


class SeekEnded(CodedError):
    """A seek that can no longer be cancelled: matched (``seek_matched``, with
    ``details.game_id``) or expired (``seek_expired``)."""

    def __init__(self, status: str, game_id: str | None) -> None:
        super().__init__(f"seek_{status}", f"this seek is {status} already",
                         {"game_id": game_id} if game_id else {})


class TooManySeeks(CodedError):
    """The player has as many waiting seeks as one player may (``too_many_seeks``)."""

    def __init__(self, limit: int) -> None:
        super().__init__("too_many_seeks", f"a player may have {limit} waiting seeks; cancel "
                         "one first", {"max": limit})


class SeeksFull(CodedError):
    """The server holds as many waiting seeks as it may (``seeks_full``): try again soon."""

    def __init__(self, limit: int, retry_after_s: int) -> None:
        super().__init__("seeks_full", "the server holds as many seeks as it may; try again "
                         "later", {"max": limit, "retry_after_s": retry_after_s})


class TournamentsFull(CodedError):
    """The server runs as many tournaments as it may (``tournaments_full``)."""

    def __init__(self, limit: int) -> None:
        super().__init__("tournaments_full", "the server runs as many tournaments as it may; "
                         "try again later", {"max": limit, "retry_after_s": 60})


class IdempotencyKeyReused(CodedError):
    def __init__(self) -> None:
        super().__init__("idempotency_key_reused",
                         "this Idempotency-Key was used with another body")


__all__ = ["CannotAbort", "CannotRematch", "CodedError", "InvalidSeat", "SeatUnavailable",
           "DeadlinePassed", "Forbidden", "GameNotFinished",
           "IdempotencyKeyReused", "IllegalAction", "InvalidOptions", "InvalidRequest",
           "InvalidToken", "NotFound", "NotYourTurn", "SeatNotHuman", "SeekEnded", "SeeksFull",
           "TooManySeeks", "TournamentsFull", "VersionConflict"]
