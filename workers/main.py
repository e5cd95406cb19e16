"""``python -m workers.main``: one RQ worker on the ``cartouche`` queues.

Jobs (clock timeouts, bot turns, webhook deliveries) are added by later issues; the worker is
already part of every deployment so that they need no new process.
"""

from __future__ import annotations

import argparse
import os
import sys

import redis
from rq import Queue, SimpleWorker

from service.jobs import QUEUES


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--with-scheduler", action="store_true",
                        help="also run RQ's scheduler (jobs enqueued for later)")
    parser.add_argument("--burst", action="store_true", help="stop when the queues are empty")
    parser.add_argument("--name", default=None, help="worker name (default: random)")
    args = parser.parse_args(argv)
    url = os.environ.get("QUEUE_URL") or os.environ.get("REDIS_URL")
    if not url:
        print("worker: REDIS_URL (or QUEUE_URL) is not set", file=sys.stderr)
        return 2
    conn = redis.Redis.from_url(url)
    # SimpleWorker runs jobs in this process: bot turns and clock checks take milliseconds,
    # and forking a work horse per job would cost more than the job itself.
    worker = SimpleWorker([Queue(name, connection=conn) for name in QUEUES], connection=conn,
                    name=args.name)
    worker.work(with_scheduler=args.with_scheduler, burst=args.burst)
    return 0


if __name__ == "__main__":
    sys.exit(main())
