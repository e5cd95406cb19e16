"""What the application reports as it runs, to whoever measures it (``service.metrics``).

The application calls its :class:`Observer` at three points, explicitly: a seat's command
finished (:meth:`Observer.command`, ``Commands.act``), an append refused because the game moved
on since it was read (:meth:`Observer.append_conflict`, ``Appender.append``: every writer), and a
bot chose its action (:meth:`Observer.bot_decided`, ``Autoplay``). The default observer does
nothing; ``GameService.observe`` installs another (``service.metrics.OBSERVER`` in the API and
the RQ workers). An observer only counts: what it raises is the caller's bug, not a refusal.
"""

from __future__ import annotations

from contextvars import ContextVar

#: The conflicts met by the command running in this context (None outside commands): a
#: command's retries, whichever of its appends (its own, a clock's it settled) lost a race.
CONFLICTS: ContextVar[list[int] | None] = ContextVar("cartouche_command_conflicts",
                                                     default=None)


class Observer:
    """Does nothing: subclass and override what you count."""

    def command(self, game_type: str, exc: BaseException | None, conflicts: int) -> None:
        """A seat's command ended: appended (``exc`` None) or refused/failed with ``exc``,
        after meeting ``conflicts`` append conflicts (``game_type`` ``"unknown"`` when the
        game was never loaded)."""

    def append_conflict(self, game_type: str) -> None:
        """An append found the game moved on since it was read."""

    def bot_decided(self, game_type: str, level: str, seconds: float) -> None:
        """A bot of ``level`` took ``seconds`` to choose its action."""


NULL_OBSERVER = Observer()
