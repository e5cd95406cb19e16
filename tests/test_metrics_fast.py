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
