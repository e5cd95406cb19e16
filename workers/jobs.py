"""RQ jobs. Each is idempotent: it re-reads the game and acts only if the game is still where
the job was scheduled (``version``); anything else means somebody moved first."""

from __future__ import annotations

import logging
import time

log = logging.getLogger("cartouche.jobs")

_service = None


def service():
    """One GameService per worker process, built from the environment."""
    global _service
    if _service is None:
        from service.application import GameService
        from service.config import Config
        from service.jobs import RqScheduler
        from service.store import connect
        from service.store.events import EventStore
        from service.store.players import PlayerStore
        from service.store.ratings import RatingStore
        from service.webhooks import attach

        config = Config.from_env()
        store = connect.client(config.redis_url)
        queue = connect.queue_client(config.queue_url)

        _service = GameService(
            EventStore(store), snapshot_every=config.snapshot_every,
            cache_size=config.cache_size, scheduler=RqScheduler(queue),
            lobby_ttl_s=config.lobby_ttl_s,
            player_store=PlayerStore(store, stream_max=config.player_stream_max),
            rating_store=RatingStore(store, min_games=config.rating_min_games))
        attach(_service, queue)  # moves played here are delivered to webhooks too
    return _service


def bot_turn(game_id: str, seat: int, version: int) -> bool:
    """A bot (or the clock's automatic move) plays ``seat`` if the game still awaits it."""
    from service.application.errors import IllegalAction, NotYourTurn, VersionConflict

    try:
        return service().play_bot(game_id, seat, version)
    except (VersionConflict, NotYourTurn):
        return False  # somebody moved first; the new version scheduled its own jobs
    except IllegalAction:
        log.exception("bot produced an illegal action in %s seat %s", game_id, seat)
        return False


def clock_due(game_id: str, version: int, deadline_ms: int) -> list[int]:
    """Apply overdue timeouts if the game is still at ``version``.

    RQ's scheduler stores whole seconds, so a job may wake a little early: wait for the real
    deadline (a short sleep) before settling.
    """
    svc = service()
    early = deadline_ms - svc.now_ms()
    if early > 0:
        time.sleep(min(early, 5000) / 1000)
    return svc.settle_timeouts(game_id, version)


def rate_game(game_id: str) -> bool:
    """Rate a finished rated game; True when this job recorded it (a duplicate or a retry
    of a job that did finds it rated and changes nothing)."""
    return service().rate(game_id) is not None


def sweep(limit: int = 10_000) -> int:
    """The backstop for lost jobs (a worker killed mid-job, a queue briefly down): settle the
    overdue clocks of every active game and re-schedule the jobs it needs. Idempotent, like
    every job here; returns how many games it looked at."""
    svc = service()
    ids, _ = svc.store.list_ids(None, "active", 0, limit)
    for game_id in ids:
        try:
            svc.settle_timeouts(game_id)
            table = svc.load(game_id)
            if not table.over:
                svc.scheduler.changed(table)
        except Exception:  # one broken game must not stop the sweep of the others
            log.exception("sweep failed for game %s", game_id)
    return len(ids)
