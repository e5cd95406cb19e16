"""service/store/quota.py: how long a refused request waits (``wait``, the ``Retry-After``
header). The promise a client relies on: the same request, tried again after ``Retry-After``
seconds with no other request by its identities meanwhile, passes; one second sooner it is
still refused. The retry is charged before it is checked, like every request, and the previous
window's count still weighs in the next window.

The arithmetic first, then the same promise against the charge script on a real Redis."""

from __future__ import annotations

import math
import random

import pytest
import redis

from service.store.quota import BYTES, TIE_S, WRITES, Charged, Counters, Quota, retry_after, wait

W = 60  # s


def _quota(limits, elapsed, cost=1, kinds=(), stored=0, before=0, window=W):
    counters = tuple((f"c{i}", f"p{i}") for i in range(len(limits)))
    return Quota(counters, tuple(limits), window * 1000, elapsed, cost, tuple(kinds), stored,
                 before=before)


def _passes(limit, cost, current, previous, elapsed, t, window=W):
    """The script's check, exactly, for a retry of ``cost`` ``t`` seconds after a charge that
    left ``current`` and ``previous`` at ``elapsed``, nothing charged in between."""
    rest = (1 - elapsed) * window
    if t < rest:  # the same window
        return previous * (1 - elapsed - t / window) + current + cost <= limit
    if t < rest + window:  # the next one: this window's count is the previous one
        return current * (1 - (t - rest) / window) + cost <= limit
    return cost <= limit  # both have slid out


def test_over_on_this_window_alone_waits_for_its_count_to_slide_in_the_next():
    """Limit 3, a 4th write 10.5 s into a fresh window: the rest of the window (49.5 s) does
    not do, the 4 writes then weigh 4 × (1 − e) and the retry adds 1: 4 × (1 − e) + 1 <= 3 at
    e = 1/2, 30 s later. (The rest of the window alone, 50 s, is too soon.)"""
    e = 10.5 / W
    q = _quota([3], e)
    charged = Charged(True, ((4, 0),))
    assert wait(q, charged) == pytest.approx(49.5 + 30)
    assert retry_after(q, charged) == 80
    assert not _passes(3, 1, 4, 0, e, 50)  # the rest of the window alone
    assert not _passes(3, 1, 4, 0, e, 79) and _passes(3, 1, 4, 0, e, 80)


def test_over_by_the_previous_windows_weight_waits_for_it_to_slide_below_the_room_left():
    """Limit 3, 3 writes in the previous window, one now, 15 s in: 3 × 0.75 + 1 > 3. The retry
    makes 2 writes in this window, so the previous 3 must weigh at most 1: e = 2/3, 25 s later
    (not 5, until 3 × (1 − e) + 1 <= 3: that forgets the retry's own write)."""
    q = _quota([3], 0.25)
    charged = Charged(True, ((1, 3),))
    assert wait(q, charged) == pytest.approx(25)
    assert not _passes(3, 1, 1, 3, 0.25, 5)  # the old answer
    assert not _passes(3, 1, 1, 3, 0.25, 24.9) and _passes(3, 1, 1, 3, 0.25, 25.0)
    # 25 is a tie: the script may find the retry a rounding error over, so the header says 26
    assert retry_after(q, charged) == 26
    q = _quota([3], 0.25 + 0.5 / W)  # half a second later: 24.5 s, not a tie
    assert wait(q, charged) == pytest.approx(24.5) and retry_after(q, charged) == 25


def test_a_retry_that_fills_this_window_waits_for_the_previous_one_to_slide_out():
    """Limit 3, 2 writes now and 4 in the previous window, 45 s in: the retry makes 3, the
    limit, so the previous window must weigh nothing: until this window's end, 15 s."""
    q = _quota([3], 0.75)
    charged = Charged(True, ((2, 4),))
    assert wait(q, charged) == pytest.approx(15)
    assert retry_after(q, charged) == 16  # a tie (see above)


def test_every_identity_the_retry_is_charged_counts_even_one_not_over_now():
    """The address is over, the token exactly at its limit (not over): the retry puts the
    token over too, so it waits for the token as well."""
    q = _quota([3, 100], 0.5)
    charged = Charged(True, ((3, 0), (101, 0)))
    token = 30 + W * (1 - 2 / 3)  # 50 s
    address = 30 + W * (1 - 99 / 101)  # ~31.2 s
    assert wait(q, charged) == pytest.approx(max(token, address)) == pytest.approx(50)
    # an identity that needs no wait adds none (a previous count of 0 and room to spare)
    q = _quota([10, 100], 0.5)
    charged = Charged(True, ((11, 0), (5, 0)))
    assert wait(q, charged) == pytest.approx(30 + W * (1 - 9 / 11))


def test_a_previous_count_of_zero():
    """Nothing in the previous window: over means over on this window alone."""
    q = _quota([5], 0.0)
    assert wait(q, Charged(True, ((6, 0),))) == pytest.approx(60 + W * (1 - 4 / 6))
    q = _quota([5], 0.999)
    assert wait(q, Charged(True, ((6, 0),))) == pytest.approx(0.06 + W * (1 - 4 / 6))


def test_a_request_whose_cost_alone_is_over_the_limit_is_told_when_the_limit_is_all_free():
    """It can never pass (a bulk of 11 games against 10 writes a window): the answer is when
    a request of the whole limit would, once everything counted so far has slid out."""
    q = _quota([10], 0.25, cost=11)
    charged = Charged(True, ((11, 0),))
    assert wait(q, charged) == pytest.approx(45 + 60)
    assert retry_after(q, charged) == 106  # 105 is a tie (the window's end)
    assert not _passes(10, 11, 11, 0, 0.25, 10_000)
    assert _passes(10, 10, 11, 0, 0.25, 105) and not _passes(10, 10, 11, 0, 0.25, 104.9)


def test_a_bulk_retry_is_charged_the_write_counted_before_its_body_was_read():
    """A bulk of 5: its first write is charged when the request comes, the other 4 when its
    body has been read (that charge is refused): its retry is 5 writes, not 4."""
    q = _quota([10], 0.175, cost=4, before=1)
    charged = Charged(True, ((11, 0),))
    assert q.retry_costs() == [5]
    assert wait(q, charged) == pytest.approx(49.5 + W * (1 - 5 / 11))
    assert retry_after(q, charged) == 83


def test_the_bytes_budget_is_solved_the_same_way_with_the_bytes_stored_as_the_cost():
    """Writes and bytes in one quota (an action): a budget of 6,000 bytes; the retry stores
    1,500 bytes again (``stored``), and what it was charged ``before`` are writes, not
    bytes."""
    q = _quota([100, 6000], 0.5, cost=1, kinds=(WRITES, BYTES), stored=1500, before=1)
    assert q.retry_costs() == [2, 1500]
    # 5,000 now: 5,000 + 1,500 > 6,000 on this window alone: 30 s, then 5,000 × (1 − e) <= 4,500
    charged = Charged(True, ((3, 0), (5000, 4000)))
    assert wait(q, charged) == pytest.approx(30 + W * (1 - 4500 / 5000))
    # 2,000 now and 4,000 before: 2,000 + 1,500 + 4,000 × (1 − e) <= 6,000 at e = 3/8
    # ... which is past: 4,000 × 0.5 + 3,500 = 5,500, the retry passes at once
    charged = Charged(True, ((3, 0), (2000, 4000)))
    assert wait(q, charged) == 0 and retry_after(q, charged) == 1
    # 3,000 now: 4,500 + 4,000 × (1 − e) <= 6,000 at e = 5/8, 7.5 s
    charged = Charged(True, ((3, 0), (3000, 4000)))
    assert wait(q, charged) == pytest.approx(7.5) and retry_after(q, charged) == 8
    # an identity not charged (cost 0: an action's bytes before they are known) is not waited
    # for
    q = _quota([3, 6000], 0.5, cost=1, kinds=(WRITES, BYTES), stored=0)
    assert wait(q, Charged(True, ((4, 0), (0, 0)))) == pytest.approx(30 + W * (1 - 2 / 4))


def test_retry_after_is_whole_seconds_rounded_up_and_at_least_one():
    q = _quota([3], 0.9995)  # 0.03 s before the window's end
    charged = Charged(True, ((2, 4),))  # the retry passes once the 4 have slid out
    assert 0 < wait(q, charged) < 1 and retry_after(q, charged) == 1
    assert retry_after(_quota([3], 0.0), Charged(True, ((0, 0),))) == 1  # nothing to wait for
    # 30 + 60 × (1 − 2/3): 50 s exactly, a tie: the next second
    assert retry_after(_quota([3], 0.5), Charged(True, ((3, 3),))) == 51
    assert TIE_S < 0.001


def test_the_answer_is_the_first_whole_second_that_passes_on_random_counts():
    """On counts, limits, costs, windows and times drawn at random (no tie): the retry after
    Retry-After seconds passes, and one second sooner it does not."""
    rng = random.Random(16)
    checked = 0
    for _ in range(20_000):
        window = rng.choice([1, 7, 10, 60, 3600])
        limit = rng.randint(1, 50)
        cost = rng.randint(1, limit)
        elapsed = rng.random()
        current = rng.randint(cost, 3 * limit)
        previous = rng.choice([0, rng.randint(0, 3 * limit)])
        if previous * (1 - elapsed) + current <= limit:
            continue  # not refused
        q = _quota([limit], elapsed, cost=cost, window=window)
        charged = Charged(True, ((current, previous),))
        exact, header = wait(q, charged), retry_after(q, charged)
        if abs(exact - round(exact)) < 1e-6:
            continue  # a tie (tested above)
        assert header == max(1, math.ceil(exact))
        assert _passes(limit, cost, current, previous, elapsed, header, window)
        assert not _passes(limit, cost, current, previous, elapsed, header - 1, window)
        checked += 1
    assert checked > 5_000


# ------------------------------------------------------------------ the script, on real Redis


class Limiter:
    """Names counters per window as ``service.api.ratelimit`` does, at a clock of its own."""

    def __init__(self, client, tag, limits, window=W, kinds=()):
        self.counters, self.tag, self.limits = Counters(client), tag, tuple(limits)
        self.window, self.kinds = window, tuple(kinds)

    def charge(self, now, cost=1, stored=0):
        index = int(now // self.window)
        elapsed = (now - index * self.window) / self.window
        names = tuple((f"cartouche:rl:{{{self.tag}{i}}}:{index}",
                       f"cartouche:rl:{{{self.tag}{i}}}:{index - 1}")
                      for i in range(len(self.limits)))
        q = Quota(names, self.limits, self.window * 1000, elapsed, cost, self.kinds, stored)
        return q, self.counters.charge(q)


@pytest.fixture
def r(redis_url):
    return redis.Redis.from_url(redis_url)


def _promise_kept(client, tag, limits, history, at, cost=1, stored=0, kinds=(), window=W):
    """Two identical sets of identities charged the same ``history`` ((time, cost, stored)
    each), then refused at ``at`` with the same Retry-After: one tries again a second sooner
    (refused), the other after exactly Retry-After (passes). Returns Retry-After, or None
    when the request at ``at`` was not refused."""
    pair = [Limiter(client, f"{tag}-{name}-", limits, window, kinds) for name in ("e", "x")]
    headers = []
    for lim in pair:
        for when, c, b in history:
            lim.charge(when, c, b)
        q, charged = lim.charge(at, cost, stored)
        if not charged.over:
            return None
        headers.append(retry_after(q, charged))
    header = headers[0]
    assert headers[1] == header
    early, exact = pair
    assert early.charge(at + header - 1, cost, stored)[1].over, header
    assert not exact.charge(at + header, cost, stored)[1].over, header
    return header


@pytest.mark.parametrize("case", [
    # over on this window alone: limit 3, 3 writes then a 4th, 10.5 s into a fresh window:
    # 49.5 s + 60 × (1 − 2/4) (not the rest of the window alone, 50)
    {"limits": [3], "history": [(6010.5, 1, 0)] * 3, "at": 6010.5, "expect": 80},
    # over by the previous window's weight: 3 writes at 6000, one at 6075.5: 24.5 s (the
    # retry's own write counted)
    {"limits": [3], "history": [(6000, 1, 0)] * 3, "at": 6075.5, "expect": 25},
    # a token at its write limit, not over, and its bytes budget over: the retry puts the
    # writes over too: 19.9 + 60 × (1 − 2/3) for the writes, not 19.9 + 60 × (1 − 800/1040)
    # for the bytes
    {"limits": [3, 1000], "kinds": [WRITES, BYTES], "history": [(6001.3, 1, 420)] * 2,
     "at": 6040.1, "stored": 200, "expect": 40},
    # a cost of 4 writes: 49.5 + 60 × (1 − 6/11)
    {"limits": [10], "history": [(6010.5, 7, 0)], "at": 6010.5, "cost": 4, "expect": 77},
    # bytes, over by the previous window's weight: 2,000 + 5,000 × (1 − 11.9/60) > 6,000
    {"limits": [6000], "kinds": [BYTES], "history": [(5990.2, 0, 5000)], "at": 6011.9,
     "stored": 2000, "expect": None},
    # bytes, over on this window alone with the retry's 2,500
    {"limits": [6000], "kinds": [BYTES], "history": [(5990.2, 0, 2500), (6003.7, 0, 1700)],
     "at": 6011.9, "stored": 2500, "expect": None},
    # a short window
    {"limits": [2], "window": 1, "history": [(6000.1, 1, 0)] * 2, "at": 6000.35, "expect": None},
], ids=["this window", "previous weight", "an identity not over", "cost 4",
        "bytes previous weight", "bytes this window", "1 s window"])
def test_waiting_retry_after_passes_and_a_second_less_does_not(r, case, request):
    case = dict(case)
    expect = case.pop("expect")
    header = _promise_kept(r, request.node.callspec.id, **case)
    assert header is not None
    if expect is not None:
        assert header == expect


def test_the_promise_on_random_histories(r):
    """Random limits, costs, windows and histories (times not on whole seconds: no tie),
    written and checked by the script."""
    rng = random.Random(7)
    refused = 0
    for n in range(300):
        window = rng.choice([1, 10, 60])
        limit = rng.randint(1, 20)
        kinds = [rng.choice([WRITES, BYTES])]
        start = 6000 * window + rng.random() * window
        history = []
        for _ in range(rng.randint(0, 12)):
            start += rng.random() * window / 3
            history.append((start, rng.randint(1, 4), rng.randint(1, 4)))
        at = start + rng.random() * window / 2
        cost = rng.randint(1, limit)
        header = _promise_kept(r, f"r{n}", [limit], history, at, cost, cost, kinds,
                               window)
        refused += header is not None
    assert refused > 50


def test_a_cost_over_the_limit_is_told_when_the_whole_limit_is_free(r):
    """It never passes; a request of the whole limit passes after its Retry-After."""
    early, exact = Limiter(r, "whole-e-", [10]), Limiter(r, "whole-x-", [10])
    for lim in (early, exact):
        q, charged = lim.charge(6010.5, cost=11)
        assert charged.over and retry_after(q, charged) == 110  # 49.5 + 60
    assert early.charge(6010.5 + 109, cost=10)[1].over
    assert not exact.charge(6010.5 + 110, cost=10)[1].over


def test_a_wait_of_whole_seconds_is_answered_the_next_second(r):
    """Limit 2, 12 writes at a window's start: the retry passes at 60 + 60 × (1 − 1/12) =
    115 s exactly, where the script's floating point finds 12 × (1 − e) + 1 =
    2.0000000000000004 > 2. Retry-After says 116 (``TIE_S``)."""
    tie, after = Limiter(r, "tie-t-", [2]), Limiter(r, "tie-a-", [2])
    for lim in (tie, after):
        lim.charge(6000.0, cost=11)
        q, charged = lim.charge(6000.0)
        assert charged.over and wait(q, charged) == pytest.approx(115)
        assert retry_after(q, charged) == 116
    assert tie.charge(6115.0)[1].over
    assert not after.charge(6116.0)[1].over
