"""A worker stops promptly on SIGTERM: its RQ scheduler runs in one process at a time, a stop
asked at any moment ends the worker with its scheduler, and the thread listening to the
worker's command channel ends at once.

Two things start the scheduler: RQ's loop as it begins (and its maintenance), and this
project's watch (``workers.main.watch_scheduler``), which starts it again when its process is
gone. Were both to start it at once, a worker would have two scheduler processes, stop one on
SIGTERM and wait for the other at exit, for ever. Each case runs in a process of its own (the
watch's thread runs until its process ends) against the test server's Redis, on a database no
other test uses.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap

import pytest
import redis

from tests.conftest import PRIVATE_QUEUE_DB, ROOT

#: Starts the scheduler as RQ's loop does (``_start_scheduler``) ``n`` times while the watch
#: looks every 0.2 ms, and counts the starts that left more than one scheduler process.
TWO_STARTERS = textwrap.dedent("""
    import json, multiprocessing, os, signal, sys, time
    import redis
    from rq import Queue
    from service.jobs import QUEUES
    from workers import main

    url, n = sys.argv[1], int(sys.argv[2])
    conn = redis.Redis.from_url(url)
    watched, doubled = None, 0
    for _ in range(n):
        conn.flushdb()
        worker = main.Worker([Queue(q, connection=conn) for q in QUEUES], connection=conn)
        if watched is None:
            watched = main.Current(worker)
            main.watch_scheduler(watched, 0.0002)
        watched.worker = worker
        worker._start_scheduler(logging_level="WARNING")
        time.sleep(0.05)  # the watch has looked ~250 times
        doubled += len(multiprocessing.active_children()) > 1
        worker.stop_scheduler()
        for child in multiprocessing.active_children():
            os.kill(child.pid, signal.SIGKILL)
            child.join()
    print(json.dumps({"starts": n, "doubled": doubled}))
""")

#: A stop asked before RQ's loop has its own signal handlers (``main._stop``, which SIGTERM sets
#: then): the loop ends at its first turn and stops the scheduler it started.
STOP_BEFORE_THE_LOOP = textwrap.dedent("""
    import json, multiprocessing, os, signal, sys, time
    import redis
    from rq import Queue
    from service.jobs import QUEUES
    from workers import main

    conn = redis.Redis.from_url(sys.argv[1])
    conn.flushdb()
    worker = main.Worker([Queue(q, connection=conn) for q in QUEUES], connection=conn)
    signal.signal(signal.SIGTERM, main._ask_stop)  # as the worker sets it
    os.kill(os.getpid(), signal.SIGTERM)
    started = time.monotonic()
    worker.work(with_scheduler=True, logging_level="WARNING")
    print(json.dumps({"seconds": time.monotonic() - started, "stop_asked": worker.stop_asked,
                      "scheduler_started": worker.scheduler._process is not None,
                      "alive": len(multiprocessing.active_children())}))
""")


#: RQ's teardown of the command channel (``Worker.unsubscribe``), ``n`` times right after the
#: worker subscribed (the subscription's confirmation wakes the listening thread just then) and
#: ``n`` times once the thread waits in its read. Prints the longest teardown of each, and how
#: many subscribers the channel still had after any of them.
TEARDOWN = textwrap.dedent("""
    import json, sys, time
    import redis
    from rq import Queue
    from service.jobs import QUEUES
    from workers import main

    conn = redis.Redis.from_url(sys.argv[1])
    out = {"at_once_s": 0.0, "waiting_s": 0.0, "subscribers_left": 0}
    for key, pause in (("at_once_s", 0.0), ("waiting_s", 0.1)):
        for _ in range(int(sys.argv[2])):
            worker = main.Worker([Queue(q, connection=conn) for q in QUEUES], connection=conn)
            worker.subscribe()
            time.sleep(pause)
            started = time.monotonic()
            worker.unsubscribe()
            out[key] = max(out[key], time.monotonic() - started)
            assert not worker.pubsub_thread.is_alive()
            # the subscription ends with its connection, once the server has read the close
            # (a moment later on a busy machine)
            deadline = time.monotonic() + 2
            while True:
                left = dict(conn.pubsub_numsub(worker.pubsub_channel_name))[
                    worker.pubsub_channel_name.encode()]
                if not left or time.monotonic() > deadline:
                    break
                time.sleep(0.01)
            out["subscribers_left"] += left
    print(json.dumps(out))
""")


#: A SIGTERM that reaches the scheduler's process before it has installed its own handlers
#: (its start is slowed down here by half a second to widen that moment), once with the worker
#: idle and once while it runs a job. Prints, for each, how long the process took to end, its
#: exit code, and how many scheduler locks were left.
STOP_AS_THE_SCHEDULER_STARTS = textwrap.dedent("""
    import json, os, signal, sys, time
    import redis
    import rq.scheduler
    from rq import Queue
    from rq.worker import WorkerStatus
    from service.jobs import QUEUES
    from workers import main

    started_by_rq = rq.scheduler.run

    def slow_start(scheduler):
        time.sleep(0.5)  # meanwhile the process has the worker's handlers
        started_by_rq(scheduler)

    rq.scheduler.run = slow_start
    conn = redis.Redis.from_url(sys.argv[1])
    out = {}
    for state in (WorkerStatus.IDLE, WorkerStatus.BUSY):
        conn.flushdb()
        worker = main.Worker([Queue(q, connection=conn) for q in QUEUES], connection=conn)
        worker._install_signal_handlers()  # as RQ's loop does before it starts the scheduler
        worker.set_state(state)
        worker._start_scheduler(logging_level="CRITICAL")
        process = worker.scheduler._process
        time.sleep(0.1)
        asked = time.monotonic()
        os.kill(process.pid, signal.SIGTERM)
        process.join(10)
        out[state.value] = {"seconds": time.monotonic() - asked, "exitcode": process.exitcode,
                           "locks_left": len(conn.keys("rq:scheduler-lock:*"))}
        if process.is_alive():
            process.kill()
            process.join()
    print(json.dumps(out))
""")


def _run(redis_server, script: str, *args: str) -> dict:
    """``script``'s last line of output; its process group (scheduler processes included) is
    killed if it has not ended within a minute."""
    url = redis_server.url.rsplit("/", 1)[0] + f"/{PRIVATE_QUEUE_DB}"
    proc = subprocess.Popen([sys.executable, "-c", script, url, *args], cwd=ROOT,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            start_new_session=True)
    try:
        out, err = proc.communicate(timeout=60)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.communicate()
        raise AssertionError("the worker did not end within a minute") from None
    finally:
        redis.Redis.from_url(url).flushdb()
    assert proc.returncode == 0, err[-3000:]
    return json.loads(out.strip().splitlines()[-1])


def test_the_watch_never_starts_a_second_scheduler_while_the_loop_starts_its_own(redis_server):
    # without the shared lock, about a third of such starts leave two processes
    assert _run(redis_server, TWO_STARTERS, "30") == {"starts": 30, "doubled": 0}


def test_a_stop_asked_before_the_loop_ends_it_at_once_with_its_scheduler(redis_server):
    out = _run(redis_server, STOP_BEFORE_THE_LOOP)
    assert out["stop_asked"] and out["scheduler_started"]
    assert out["alive"] == 0  # the scheduler process was stopped and waited for
    assert out["seconds"] < 10  # RQ's loop would otherwise wait for jobs until killed


def test_the_command_channels_thread_ends_at_once_when_the_worker_unsubscribes(redis_server):
    out = _run(redis_server, TEARDOWN, "20")
    # the thread is woken, not left to the 1 s wait for it (nor RQ's 60 s read)
    assert out["waiting_s"] < 0.5
    # right after subscribing, the teardown neither fails nor waits
    assert out["at_once_s"] < 0.5
    assert out["subscribers_left"] == 0


def test_a_stop_that_reaches_the_scheduler_before_its_own_handlers_stops_it_cleanly(redis_server):
    out = _run(redis_server, STOP_AS_THE_SCHEDULER_STARTS)
    for state in ("idle", "busy"):
        # it stops at its first turn, releasing its locks (not on an error, its locks left to
        # expire a minute later)
        assert out[state]["exitcode"] == 0, out
        assert out[state]["locks_left"] == 0, out
        assert out[state]["seconds"] < 5, out


def _children(pid: int) -> list[int]:
    found = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/stat") as f:
                    if int(f.read().rsplit(")", 1)[1].split()[1]) == pid:
                        found.append(int(entry))
            except OSError:
                pass
    return found


def _alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="PR_SET_PDEATHSIG is Linux's")
def test_a_worker_killed_with_sigkill_takes_its_scheduler_along(redis_server):
    """Nothing stops the scheduler of a worker killed -9 (a supervisor restarts the worker
    only): the kernel kills it with the worker, and its locks expire for the next one."""
    import time

    url = redis_server.url.rsplit("/", 1)[0] + f"/{PRIVATE_QUEUE_DB}"
    env = dict(os.environ, REDIS_URL=url, QUEUE_URL=url, CARTOUCHE_SWEEP_SECONDS="60")
    worker = subprocess.Popen([sys.executable, "-m", "workers.main", "--with-scheduler"],
                              cwd=ROOT, env=env, stdout=subprocess.DEVNULL,
                              stderr=subprocess.DEVNULL, start_new_session=True)
    try:
        deadline = time.monotonic() + 30
        while not (scheduler := _children(worker.pid)) and time.monotonic() < deadline:
            time.sleep(0.1)
        assert len(scheduler) == 1, "the worker started no scheduler process"
        os.kill(worker.pid, signal.SIGKILL)
        worker.wait(10)
        deadline = time.monotonic() + 5
        while _alive(scheduler[0]) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert not _alive(scheduler[0]), "the scheduler outlived its worker"
    finally:
        try:
            os.killpg(worker.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        redis.Redis.from_url(url).flushdb()
