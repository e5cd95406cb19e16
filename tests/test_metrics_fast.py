"""The request and command counts (``service.metrics.counting`` and ``observing``) change
prometheus-client's values directly: what ``/metrics`` serves must be exactly what the library's
own ``inc`` and ``observe`` give, in one process and in multiprocess mode (gunicorn's)."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap

from service.metrics import counting, observing

BUCKETS = (.001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10)
#: every bound itself, just below and above each, zero, a negative amount, beyond the last bound
AMOUNTS = [a for b in BUCKETS for a in (b, b * 0.999, b * 1.001)] + [0.0, -1.0, 0.0004, 60.0]

#: Observes AMOUNTS with the library on metrics named ``lib_*`` and with the shortcuts on the
#: same metrics named ``fast_*``, then prints the exposition.
SCRIPT = textwrap.dedent("""
    import os, sys
    from prometheus_client import CollectorRegistry, Counter, Histogram, generate_latest
    from service.metrics import counting, observing

    registry = CollectorRegistry()
    if os.environ.get("PROMETHEUS_MULTIPROC_DIR"):
        from prometheus_client import multiprocess
        multiprocess.MultiProcessCollector(registry)
        made = None
    else:
        made = registry
    buckets, amounts = eval(sys.argv[1]), eval(sys.argv[2])
    for name in ("lib", "fast"):
        c = Counter(f"{name}_requests", "requests", ["route"], registry=made)
        h = Histogram(f"{name}_seconds", "seconds", ["route"], buckets=buckets, registry=made)
        for route in ("a", "b"):
            count = c.labels(route).inc if name == "lib" else counting(c.labels(route))
            observe = h.labels(route).observe if name == "lib" else observing(h.labels(route))
            for amount in amounts[::1 if route == "a" else 2]:
                count()
                observe(amount)
    sys.stdout.write(generate_latest(registry).decode())
""")


def _exposition(env: dict) -> dict[str, list[str]]:
    out = subprocess.run([sys.executable, "-c", SCRIPT, repr(BUCKETS), repr(AMOUNTS)],
                         env=env, capture_output=True, text=True, check=True).stdout
    lines = {"lib": [], "fast": []}
    for line in out.splitlines():
        name = line.split()[2] if line.startswith("#") else line
        for kind in lines:
            if name.startswith(f"{kind}_"):
                lines[kind].append(line.replace(f"{kind}_", "", 1).replace(f" {kind}_", " "))
    return lines


def _env(**extra) -> dict:
    env = {k: v for k, v in os.environ.items() if k != "PROMETHEUS_MULTIPROC_DIR"}
    return {**env, "PYTHONPATH": os.getcwd(), **extra}


def test_the_counts_are_the_librarys_in_one_process():
    lines = _exposition(_env())
    assert lines["lib"] and sorted(lines["fast"]) == sorted(lines["lib"])
    # 0.001, just below it, 0, -1 and 0.0004; every amount once
    assert 'seconds_bucket{le="0.001",route="a"} 5.0' in lines["fast"]
    assert f'seconds_count{{route="a"}} {float(len(AMOUNTS))}' in lines["fast"]


def test_the_counts_are_the_librarys_in_multiprocess_mode(tmp_path):
    lines = _exposition(_env(PROMETHEUS_MULTIPROC_DIR=str(tmp_path)))
    assert lines["lib"] and sorted(lines["fast"]) == sorted(lines["lib"])
    assert 'seconds_bucket{le="0.001",route="a"} 5.0' in lines["fast"]


def test_a_child_without_the_expected_internals_gets_the_librarys_calls():
    class Child:
        def __init__(self):
            self.calls = []

        def inc(self):
            self.calls.append("inc")

        def observe(self, amount):
            self.calls.append(amount)

    child = Child()
    counting(child)()
    observing(child)(0.5)
    assert child.calls == ["inc", 0.5]


# -- a gunicorn worker's writes, held for an interval (DeferredWrites) --------------------------

#: In multiprocess mode under gevent's patches: counts one request and observes one latency with
#: the writes held, and prints, as JSON, what the files hold (what any worker's scrape reads) at
#: each step.
HELD = textwrap.dedent("""
    from gevent import monkey
    monkey.patch_all()
    import json, os, sys
    import gevent
    from prometheus_client import CollectorRegistry, Counter, Histogram, generate_latest
    from prometheus_client import multiprocess
    from service import metrics

    def files():
        registry = CollectorRegistry()
        multiprocess.MultiProcessCollector(registry)
        text = generate_latest(registry).decode()
        return sorted(l for l in text.splitlines() if l.startswith("held_") and " 0.0" not in l)

    c = Counter("held_requests", "requests", ["route"])
    h = Histogram("held_seconds", "seconds", ["route"], buckets=(0.1, 1))
    count, observe = metrics.counting(c.labels("a")), metrics.observing(h.labels("a"))
    steps = {"started": metrics.DEFERRED.start(float(sys.argv[1]))}
    for _ in range(3):
        count()
        observe(0.05)
    steps["held"] = files()
    gevent.sleep(float(sys.argv[2]))
    steps["after_wait"] = files()
    count()
    steps["counted_again"] = files()
    metrics.exposition(None)  # what /metrics serves: this process's held counts first
    steps["after_exposition"] = files()
    count()
    if os.fork() == 0:  # a forked child holds nothing and writes at once
        count()
        os._exit(0 if metrics.DEFERRED.interval is None else 3)
    steps["child"] = os.wait()[1]
    steps["after_child"] = files()
    metrics.DEFERRED.stop()  # the worker's exit
    steps["after_stop"] = files()
    print(json.dumps(steps))
""")


def _held(tmp_path, interval: float, wait: float) -> dict:
    import json

    out = subprocess.run([sys.executable, "-c", HELD, str(interval), str(wait)],
                         env=_env(PROMETHEUS_MULTIPROC_DIR=str(tmp_path)), capture_output=True,
                         text=True, check=True).stdout
    return json.loads(out)


def _counted(n: int) -> list[str]:
    return sorted([f'held_requests_total{{route="a"}} {float(n)}',
                   f'held_seconds_bucket{{le="0.1",route="a"}} {float(n)}',
                   f'held_seconds_bucket{{le="1.0",route="a"}} {float(n)}',
                   f'held_seconds_bucket{{le="+Inf",route="a"}} {float(n)}',
                   f'held_seconds_count{{route="a"}} {float(n)}',
                   f'held_seconds_sum{{route="a"}} {0.05 * n}'])


def test_a_gevent_worker_writes_its_counts_every_interval_on_a_scrape_and_at_its_exit(tmp_path):
    steps = _held(tmp_path, 0.2, 0.5)
    assert steps["started"] is True
    assert steps["held"] == []  # nothing in the files yet
    assert steps["after_wait"] == _counted(3)  # written by the background greenlet
    assert steps["counted_again"] == _counted(3)  # held again
    assert steps["after_exposition"] == [line.replace("requests_total{route=\"a\"} 3.0",
                                                      "requests_total{route=\"a\"} 4.0")
                                         for line in _counted(3)]
    assert steps["child"] == 0
    # the parent's held count is its own; the child's was written at once
    child_and_parent = [line.replace("requests_total{route=\"a\"} 3.0",
                                     "requests_total{route=\"a\"} 5.0") for line in _counted(3)]
    assert steps["after_child"] == child_and_parent
    assert steps["after_stop"] == [line.replace("5.0", "6.0") for line in child_and_parent]


def test_a_longer_interval_holds_the_counts_until_the_exit(tmp_path):
    steps = _held(tmp_path, 10, 0.3)
    assert steps["held"] == steps["after_wait"] == []
    assert steps["after_stop"][-1] == 'held_seconds_sum{route="a"} 0.15000000000000002'


def test_without_gevents_patches_or_with_an_interval_of_0_every_count_is_written_at_once(
        tmp_path):
    steps = _held(tmp_path, 0, 0)
    assert steps["started"] is False
    assert steps["held"] == _counted(3)
    script = ("import sys; from service import metrics; "
              "sys.exit(metrics.DEFERRED.start(1) is not False)")
    assert subprocess.run([sys.executable, "-c", script], env=_env(), check=False).returncode == 0


def test_the_interval_setting_is_parsed_and_bounded():
    import pytest

    from service.metricsdir import MAX_WRITE_SECONDS, write_seconds

    assert write_seconds({}) == 1.0
    assert write_seconds({"WEB_METRICS_WRITE_SECONDS": " 0 "}) == 0.0
    assert write_seconds({"WEB_METRICS_WRITE_SECONDS": "2.5"}) == 2.5
    for bad in ("-1", "abc", "nan", "inf", str(MAX_WRITE_SECONDS + 1)):
        with pytest.raises(ValueError, match="WEB_METRICS_WRITE_SECONDS"):
            write_seconds({"WEB_METRICS_WRITE_SECONDS": bad})


def test_a_failed_write_is_logged_and_the_later_counts_are_still_written(tmp_path):
    script = textwrap.dedent("""
        from gevent import monkey
        monkey.patch_all()
        import logging, sys
        import gevent
        from service import metrics

        logging.basicConfig(stream=sys.stdout, format="%(name)s %(message)s")

        class Value:
            def __init__(self, fails):
                self.fails, self.total = fails, 0.0
            def inc(self, amount):
                if self.fails:
                    self.fails -= 1
                    raise OSError("disk full")
                self.total += amount

        broken, fine = Value(1), Value(0)
        assert metrics.DEFERRED.start(0.1)
        metrics.DEFERRED.add(broken, 1.0)
        gevent.sleep(0.35)
        metrics.DEFERRED.add(fine, 2.0)
        metrics.DEFERRED.add(broken, 3.0)
        gevent.sleep(0.35)
        print("totals", broken.total, fine.total)
    """)
    out = subprocess.run([sys.executable, "-c", script],
                         env=_env(PROMETHEUS_MULTIPROC_DIR=str(tmp_path)), capture_output=True,
                         text=True, check=True).stdout
    assert "cartouche.metrics writing the metric counts failed" in out
    assert out.strip().endswith("totals 3.0 2.0")
