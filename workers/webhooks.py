"""The webhook delivery job (``workers.webhooks.deliver``), enqueued by
``service.webhooks.Listener`` on the ``cartouche-webhooks`` queue after every append, and by
itself for retries. The work is ``service.webhooks.drain``: idempotent, under a lock per
(subscription, game), so duplicated or stale jobs are harmless."""

from __future__ import annotations

import os


def _queue():
    """The queue this job came from (retries go back to it), else QUEUE_URL's."""
    import redis
    from rq import Queue, get_current_job

    from service.webhooks import QUEUE

    job = get_current_job()
    if job is not None:
        return Queue(job.origin or QUEUE, connection=job.connection)
    url = os.environ.get("QUEUE_URL") or os.environ["REDIS_URL"]
    return Queue(QUEUE, connection=redis.Redis.from_url(url))


def deliver(subscription_id: str, game_id: str, retry: bool = False) -> str:
    """POST the pending deliveries of one game to one subscription, oldest first, those never
    written made from the game's log (``service.webhooks.drain``)."""
    from service.webhooks import drain, filler

    from .jobs import service

    svc = service()
    return drain(svc.store.r, _queue(), subscription_id, game_id, retry, fill=filler(svc))
