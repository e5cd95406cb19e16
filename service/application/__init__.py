"""The application layer: games as event streams, between the HTTP shell (``service.api``) and
the rules (``service.engine``, ``service.games``). :class:`GameService` is its one entry.

Modules, one concern each:

- ``facade``     :class:`GameService`, composed from the parts below
- ``model``      the values: ``Table``, ``Shell``, ``Controller``, ``Cached``, append outcomes
- ``errors``     every error the layer answers with (``CodedError`` subclasses)
- ``envelopes``  the stored envelope of an event, reading it back (upcast)
- ``loading``    the state cache, the meta and seed memos, snapshot-plus-replay loads
- ``commands``   deciding and appending a command; a seat's command with retries and
                 Idempotency-Key
- ``listeners``  the bus of listeners told about every append (webhooks)
- ``seats``      resigning, forfeiting, aborting
- ``autoplay``   clocks running out and bots' turns
- ``creation``   new games, one or many; the new-game builder forks share
- ``exports``    exports and forks
- ``reads``      views, the served log, legal actions, the game list
- ``identity``   seat tokens and platform keys
- ``players``    identities across games; ``tables`` open seats, joins, rematches; ``seeks``
                 matchmaking; ``notices`` the players' streams; ``ratings`` OpenSkill ratings
"""

from .commands import body_digest
from .facade import GameService, NullScheduler
from .model import Table

__all__ = ["GameService", "NullScheduler", "Table", "body_digest"]
