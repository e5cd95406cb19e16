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


def start_sweeper(every_s: float) -> None:
    """Run ``workers.jobs.sweep`` every ``every_s`` seconds in a daemon thread."""
    import threading
    import time

    from workers import jobs

    def loop():
        while True:
            time.sleep(every_s)
            try:
                jobs.sweep()
            except Exception:  # the store may be down for a while: try again next time
                jobs.log.exception("sweep failed")

    threading.Thread(target=loop, name="cartouche-sweep", daemon=True).start()


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
    if not args.burst:  # every worker sweeps: a killed worker must not take the backstop along
        start_sweeper(float(os.environ.get("CARTOUCHE_SWEEP_SECONDS", "5")))
    worker.work(with_scheduler=args.with_scheduler, burst=args.burst)
    return 0


if __name__ == "__main__":
    sys.exit(main())
