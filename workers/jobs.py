"""RQ jobs. Each is idempotent: it re-reads the game and acts only if the game is still where
the job was scheduled (``version``); anything else means somebody moved first."""

from __future__ import annotations

import logging
import time

import redis

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
        from service.webhooks import attach

        config = Config.from_env()
        store = connect.client(config.redis_url)
        queue = connect.queue_client(config.queue_url)

        _service = GameService.configured(
            config, store, scheduler=RqScheduler(queue, archive_after_s=config.archive_delay_s,
                                                 sweep_max=config.archive_sweep_max))
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


def _wait_for(at_ms: int) -> None:
    """RQ's scheduler stores whole seconds, so a job may wake a little early: wait for the
    real time (a short sleep) before acting."""
    early = at_ms - service().now_ms()
    if early > 0:
        time.sleep(min(early, 5000) / 1000)


def clock_due(game_id: str, version: int, deadline_ms: int) -> list[int]:
    """Apply overdue timeouts if the game is still at ``version``."""
    from service.application.errors import NotYourTurn

    _wait_for(deadline_ms)
    try:
        return service().settle_timeouts(game_id, version)
    except NotYourTurn:
        return []  # the timeout move met the game's event cap: the game was aborted instead


def lobby_due(game_id: str, deadline_ms: int) -> bool:
    """Abort the table if nobody completed it by its deadline (``GameService.expire_table``
    leaves a table that started, ended or is not due yet alone)."""
    _wait_for(deadline_ms)
    return service().expire_table(game_id)


def seek_fill(seek_id: str, at_ms: int) -> str:
    """Bots for a seek still waiting at its fill time (``Seeks.fill``: nothing for a seek
    that was matched, cancelled or expired meanwhile); the seek's status after."""
    _wait_for(at_ms)
    return service().seeks.fill(seek_id).status


def seek_expiry(seek_id: str, at_ms: int) -> bool:
    """Expire a seek still waiting at its expiry time."""
    _wait_for(at_ms)
    return service().seeks.expire(seek_id)


def rate_game(game_id: str) -> bool:
    """Rate a finished rated game; True when this job recorded it (a duplicate or a retry
    of a job that did finds it rated and changes nothing)."""
    return service().rate(game_id) is not None


def archive_game(game_id: str) -> str:
    """Archive a game over (``EventStore.archive``: idempotent, crash-safe); its answer. The
    game leaves the due set unless it changed while read (``stale``: it comes due again when
    the sweep's claim runs out); its webhooks' last deliveries never written are queued."""
    svc = service()
    outcome = svc.archive(game_id)
    if outcome != "stale":
        _deliver_the_end(svc, game_id)
        svc.scheduler.archived(game_id)
    return outcome


def _webhook_queue(svc):
    """The webhook delivery jobs' queue; None for a scheduler without queues (tests)."""
    from rq import Queue

    from service import webhooks

    queues = getattr(svc.scheduler, "r", None)
    return None if queues is None else Queue(webhooks.QUEUE, connection=queues)


def _deliver_the_end(svc, game_id: str) -> None:
    """Queue the deliveries of a game's last versions its webhooks were never sent
    (``webhooks.ended``)."""
    from service import webhooks

    queue = _webhook_queue(svc)
    if queue is None:
        return
    try:
        webhooks.ended(svc.store.r, queue, game_id, lambda: svc.load(game_id).version)
    except Exception:
        log.exception("the webhook deliveries of game %s could not be checked", game_id)


def tournament_advance(tid: str) -> str:
    """Record a tournament's games that are over and pair its next round once the round is
    over (``Tournaments.advance``: a duplicate or a retry pairs nothing twice)."""
    return service().tournaments.advance(tid)


#: Active games whose versions and jobs' states the sweep reads in one round trip each.
SWEEP_BATCH = 500

#: Active games one sweep looks at (CARTOUCHE_SWEEP_GAMES): a page of the rotation through
#: all of them (``EventStore.sweep_page``).
SWEEP_GAMES = 2000


def _each(ids: list[str], work) -> None:
    """``work(id)`` for every id; one broken game or seek must not stop the sweep of the
    others. The store failing (a restart; a cluster's node) is told in one line."""
    for one in ids:
        try:
            work(one)
        except redis.RedisError as exc:
            log.warning("sweep of %s: the store failed (%s)", one, type(exc).__name__)
        except Exception:
            log.exception("sweep failed for %s", one)


def sweep(limit: int = 10_000, games: int = SWEEP_GAMES) -> int:
    """The backstop for lost jobs (a worker killed mid-job, a queue briefly down), and the
    archiver. First the next ``games`` active games of a rotation through all of them
    (``EventStore.sweep_page``; none with ``games`` 0): settle the overdue clocks, queue again
    the jobs they need that are not waiting already (``RqScheduler.resume``), and end the
    wait of the games without a clock idle past their limit (``GameService.settle_idle``:
    their idle seats resign in a rated game, else the game is aborted). Their versions
    and jobs' states are read :data:`SWEEP_BATCH` games at a time, a game this process holds
    at its stream's version is not read again, and only the games found overdue are settled.
    Then expire the tables waiting past their time (the oldest first); expire the seeks past
    their time, fill the ones whose bots are due, and match the ones whose opening request
    died before it tried (at most ``limit`` of each); archive the games over whose archive is
    due (``sweep_max`` of the scheduler at most); queue a delivery job for each webhook outbox
    no job has looked at for a while (``webhooks.stale``); rebuild the game index by type and status
    if it disagrees with the others (``EventStore.repair_type_status_index``). Idempotent,
    like every job here; returns how many games, tables and seeks it looked at."""
    from service import metrics

    svc = service()

    page = svc.store.sweep_page(games) if games else []
    metrics.SWEPT_GAMES.inc(len(page))
    for start in range(0, len(page), SWEEP_BATCH):
        batch = page[start:start + SWEEP_BATCH]
        tables = [t for t in svc.latest([game_id for game_id, _ in batch]) if t is not None]
        due = [t.id for t in tables if svc.overdue(t)]
        if due:
            _each(due, svc.settle_timeouts)
            settled = {t.id: t for t in svc.latest(due) if t is not None}
            tables = [settled.get(t.id, t) for t in tables]
        svc.scheduler.resume(tables)
        _each(svc.idle_games(tables, dict(batch)), svc.settle_idle)
    overdue = svc.overdue_tables(limit)
    _each(overdue, svc.expire_table)
    seeks = svc.seeks
    todo = [(seeks.expiring(limit), seeks.expire), (seeks.filling(limit), seeks.fill),
            (seeks.untried(limit), seeks.first_match)]
    todo.append((svc.scheduler.claim_archives(), archive_game))
    todo.append((svc.tournaments.running(limit), tournament_advance))
    for ids, work in todo:
        _each(ids, work)
    redelivered = _redeliver(svc, limit)
    try:
        if svc.store.repair_type_status_index():
            log.info("the game index by type and status was rebuilt")
    except Exception:
        log.exception("the game index by type and status could not be checked or rebuilt")
    return len(page) + len(overdue) + sum(len(ids) for ids, _ in todo) + redelivered


def _redeliver(svc, limit: int) -> int:
    """A delivery job for each webhook outbox no job has looked at for a while
    (``webhooks.stale``); how many were queued."""
    from service import webhooks

    queue = _webhook_queue(svc)
    if queue is None:
        return 0
    try:
        return webhooks.stale(svc.store.r, queue, limit)
    except Exception:
        log.exception("the webhook outboxes could not be swept")
        return 0


def sweep_window(every_s: float, games: int = SWEEP_GAMES) -> int:
    """One turn of a worker's sweeper (every ``every_s`` seconds in every worker): the whole
    :func:`sweep`, but the page of active games only in the worker that claims the window of
    ``every_s`` seconds first (``EventStore.claim_sweep_window``), so that however many
    workers run, the active games are read at the rate of one worker's sweep. What the other
    parts do is claimed item by item or found due, and stays in every worker."""
    from service import metrics

    svc = service()
    started = time.perf_counter()
    mine = svc.store.claim_sweep_window(every_s, svc.now_ms() / 1000)
    looked = sweep(games=games if mine else 0)
    metrics.SWEEP_SECONDS.observe(time.perf_counter() - started)
    return looked
