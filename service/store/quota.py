"""Sliding-window write counters, charged in Redis (the rate limiter's arithmetic).

A :class:`Quota` names, for each identity it limits, the counter of the current window and the
counter of the previous one, the identity's limit, the window's length, how far into the
current window the request is, and what each identity counts (``kinds``): writes (the
``cost``: one, or a bulk creation's number of games) or bytes stored (``stored``: the size of
what the write stores; ``EventStore.append`` sets it from the envelopes it serializes).
Charging it adds each identity's cost to its current counter, whatever the outcome (an
identity whose cost is 0 is left alone), and an identity is over when

    previous × (1 − elapsed) + current  >  limit

The same Lua prologue (:data:`PROLOGUE`) does it alone (:func:`charge`) or at the head of the
append script (``EventStore.append(quota=...)``), where an identity over its limit stops the
script before anything is appended: check and append are then one atomic call, one round trip.
A quota is charged at most once (``charged``), however many appends a command's retries make.

The counters are written in memory only: the prologue keeps its writes out of the AOF and off
replicas (``redis.set_repl``; only a counter's expiry reaches them, one ``UNLINK`` per counter
and window), so a server restarted from its AOF, or a replica promoted, starts every window
again (they expire within two windows anyway), and an action's AOF record is its events and
version alone.

The over-limit arithmetic is done in the script only; the counts it returns say how long to
wait (:func:`retry_after`). :class:`Counters` charges a quota alone, on the client it is given;
the rate limiter (``service.api.ratelimit``) builds the quotas.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import redis
from redis.cluster import RedisCluster

from ..engine import CodedError
from . import connect

#: KEYS[1..2n]: per identity, its current window's counter then its previous window's counter.
#: ARGV[1] n (0: no quota; then nothing else of ARGV belongs to it); with n > 0: ARGV[2] window
#: length (ms), ARGV[3] elapsed fraction of the current window, ARGV[4..3+n] the limits,
#: ARGV[4+n..3+2n] the costs (writes, or bytes stored, counted; an identity whose cost is 0 is
#: neither charged nor checked).
#: Leaves ``quota_over`` (boolean), ``quota_counts`` ({current, previous} per identity,
#: flattened) and ``K``, ``A``: how many KEYS and ARGV the quota used (the caller's start after).
PROLOGUE = """
local quota_n = tonumber(ARGV[1])
local quota_over, quota_counts = false, {}
local K, A = 0, 1
if quota_n > 0 then
  local elapsed = tonumber(ARGV[3])
  local charged, previous_keys = {}, {}
  redis.set_repl(redis.REPL_NONE)  -- counters stay in memory: not in the AOF, not on replicas
  for i = 1, quota_n do
    local cost = tonumber(ARGV[3 + quota_n + i])
    local n = 0
    if cost > 0 then
      n = redis.call('INCRBY', KEYS[2 * i - 1], cost)
      if n == cost then
        redis.call('PEXPIRE', KEYS[2 * i - 1], 2 * tonumber(ARGV[2]))
      end
      charged[#charged + 1] = i
      previous_keys[#previous_keys + 1] = KEYS[2 * i]
    end
    quota_counts[2 * i - 1] = n
    quota_counts[2 * i] = 0
  end
  if #charged > 0 then  -- every previous window's count in one call (false: no such key)
    local previous = redis.call('MGET', unpack(previous_keys))
    for j, i in ipairs(charged) do
      local count = tonumber(previous[j] or '0')
      quota_counts[2 * i] = count
      if count * (1 - elapsed) + quota_counts[2 * i - 1] > tonumber(ARGV[3 + i]) then
        quota_over = true
      end
    end
  end
  redis.set_repl(redis.REPL_ALL)
  K, A = 2 * quota_n, 3 + 2 * quota_n
end
"""

#: The quota alone. Returns {1 if over else 0, current, previous, ...}.
CHARGE_LUA = PROLOGUE + """
return {quota_over and 1 or 0, unpack(quota_counts)}
"""


#: What an identity's counter counts (``Quota.kinds``).
WRITES, BYTES = "writes", "bytes"


@dataclass
class Quota:
    #: (current window's counter, previous window's counter) per identity
    counters: tuple[tuple[str, str], ...]
    limits: tuple[int, ...]
    window_ms: int
    #: how much of the current window has gone, in [0, 1)
    elapsed: float
    #: how many writes one charge counts
    cost: int = 1
    #: per identity, what it counts: :data:`WRITES` (``cost`` per charge) or :data:`BYTES`
    #: (``stored`` per charge); all writes when empty
    kinds: tuple[str, ...] = ()
    #: the bytes the charged write stores (set by the store, which serializes it)
    stored: int = 0
    #: set once the counters have been charged (a quota is charged at most once)
    charged: bool = field(default=False, compare=False)
    #: writes the same request was charged before, by another quota (a bulk creation's first
    #: write, counted before its body was read): its retry is charged them again (:func:`wait`)
    before: int = 0
    #: per identity, whose limit it is (``token``, ``address``: ``details.per`` of a refusal);
    #: ``address`` when empty
    owners: tuple[str, ...] = ()

    def keys(self) -> list[str]:
        return [k for pair in self.counters for k in pair]

    def costs(self) -> list[int]:
        kinds = self.kinds or (WRITES,) * len(self.limits)
        return [self.stored if kind == BYTES else self.cost for kind in kinds]

    def retry_costs(self) -> list[int]:
        """What a retry of the request charges each identity in all (:func:`wait`): its cost,
        and, for writes, the writes it was charged :attr:`before`."""
        kinds = self.kinds or (WRITES,) * len(self.limits)
        return [cost + self.before if cost and kind == WRITES else cost
                for cost, kind in zip(self.costs(), kinds)]

    def args(self) -> list:
        return [len(self.limits), self.window_ms, repr(self.elapsed), *self.limits,
                *self.costs()]

    def split(self) -> list[Quota]:
        """One quota per identity (a cluster keeps each identity's counters in its own slot)."""
        kinds = self.kinds or (WRITES,) * len(self.limits)
        owners = self.owners or ("address",) * len(self.limits)
        return [Quota((c,), (lim,), self.window_ms, self.elapsed, self.cost, (kind,),
                      self.stored, owners=(owner,))
                for c, lim, kind, owner in zip(self.counters, self.limits, kinds, owners)]

    def over(self, charged: Charged) -> list[int]:
        """The identities (their indexes) over their limit after ``charged``."""
        return [i for i, ((current, previous), limit) in enumerate(zip(charged.counts,
                                                                       self.limits))
                if previous * (1.0 - self.elapsed) + current > limit]

    def over_bytes(self, charged: Charged) -> bool:
        """An identity counting bytes stored is over its budget."""
        kinds = self.kinds or (WRITES,) * len(self.limits)
        return any(kinds[i] == BYTES for i in self.over(charged))


#: no quota: the prologue's ARGV when the script is called without one
NO_QUOTA_ARGS = [0]


@dataclass(frozen=True)
class Charged:
    over: bool
    #: (current count after this request, previous window's count) per identity
    counts: tuple[tuple[int, int], ...]


def pairs(flat) -> tuple[tuple[int, int], ...]:
    flat = [int(x) for x in flat]
    return tuple(zip(flat[0::2], flat[1::2]))


def wait(quota: Quota, charged: Charged) -> float:
    """Seconds until the same request, tried again, passes every identity's check: the
    script's arithmetic solved for time, assuming the identities make no other request
    meanwhile. The retry is charged before it is checked (its cost per identity:
    :meth:`Quota.retry_costs`), and every identity it is charged counts, over now or not.

    Per identity, with ``n`` its current count (the refused request included), ``p`` the
    previous window's, ``L`` its limit, ``c`` the retry's cost, ``e`` the elapsed fraction and
    ``W`` the window (s), a retry ``t`` seconds from now passes when its estimate is within
    ``L``; the estimate only falls with ``t`` (it is continuous at the window's end, where
    ``n`` becomes the previous count), so the earliest such ``t`` is:

    - ``n + c <= L`` (within the limit on this window alone): as soon as the previous
      window's weight has slid down to ``L - n - c``: ``W × (1 − e − (L − n − c) / p)``, 0
      if it already has (or ``p`` is 0);
    - ``n + c > L`` (over on this window alone): the rest of this window, then as much of
      the next as it takes ``n``, now its previous count, to slide down to ``L − c``:
      ``W × (1 − e) + W × (1 − (L − c) / n)``.

    A retry whose cost alone is over the limit (a bulk creation of more games than the limit)
    never passes: it is answered as if it cost ``L``, the time until the whole limit is free
    again (everything counted so far has slid out: the rest of this window and the next
    one). 0 when no identity has to wait (:func:`retry_after` still says 1)."""
    window = quota.window_ms / 1000
    rest = 1.0 - quota.elapsed
    waits = []
    for (current, previous), limit, cost in zip(charged.counts, quota.limits,
                                                  quota.retry_costs()):
        if cost <= 0:  # not charged, so never checked
            continue
        cost = min(cost, limit)  # more than the limit can never pass (see above)
        if current + cost <= limit:  # until the previous window's weight is low enough
            room = limit - current - cost
            if previous > room:
                waits.append(window * (rest - room / previous))
        else:  # the rest of this window, then until the current count slides down enough
            waits.append(window * rest + window * (1.0 - (limit - cost) / current))
    return max([0.0, *waits])


#: A retry at the very instant its estimate comes down to the limit passes in exact arithmetic,
#: but the script's floating point may find it a rounding error over (limit 2, 12 writes at a
#: window's start: at 115 s, 12 × (1 − e) + 1 = 2.0000000000000004): a wait of whole seconds,
#: or up to this much (s) short of them, is answered one second more.
TIE_S = 1e-6


def retry_after(quota: Quota, charged: Charged) -> int:
    """:func:`wait` in whole seconds, rounded up, at least 1 (the ``Retry-After`` header): the
    same request, tried again that many seconds later with nothing else charged to its
    identities meanwhile, passes, and a second sooner it would not (but at a tie:
    :data:`TIE_S`). A request whose cost alone is over a limit never passes (:func:`wait`)."""
    return max(1, math.ceil(wait(quota, charged) + TIE_S))


def whose(quota: Quota, charged: Charged) -> str:
    """Whose limit is spent (:attr:`Quota.owners`): ``token``, or ``address``; the token's
    when both are."""
    owners = quota.owners or ("address",) * len(quota.limits)
    return "token" if any(owners[i] == "token" for i in quota.over(charged)) else "address"


class QuotaExceeded(CodedError):
    """Nothing was done: the quota is over (``charged.counts`` say by how much);
    ``details.retry_after_s`` says when to come back, ``details.per`` whose limit it is."""

    def __init__(self, quota: Quota, charged: Charged) -> None:
        details = {"retry_after_s": retry_after(quota, charged), "per": whose(quota, charged)}
        if quota.over_bytes(charged):  # the budget of bytes stored per minute
            super().__init__("rate_limited", "too many bytes stored; retry after the number "
                             "of seconds in Retry-After", {**details, "limit": "stored_bytes"})
        else:
            super().__init__("rate_limited", "too many writes; retry after the number of "
                             "seconds in Retry-After", details)
        self.quota = quota
        self.charged = charged


def charge(script, quota: Quota, *, cluster: bool = False) -> Charged:
    """Charge ``quota`` with ``script`` (``connect.script(client, CHARGE_LUA)``): one call, or
    one per identity on a cluster."""
    parts = quota.split() if cluster else [quota]
    quota.charged = True  # attempted once: a failed call is not repeated
    over, counts = False, ()
    for part in parts:
        reply = script(keys=part.keys(), args=part.args())
        over = over or bool(int(reply[0]))
        counts += pairs(reply[1:])
    return Charged(over, counts)


def register(client: redis.Redis):
    """The charge script on ``client``."""
    return connect.script(client, CHARGE_LUA)


class Counters:
    """The rate-limit counters on one Redis (or cluster): charges a quota alone."""

    def __init__(self, client: redis.Redis) -> None:
        self.client = client
        self._script = register(client)
        #: the counters of different identities live in different cluster slots
        self.cluster = isinstance(client, RedisCluster)

    def charge(self, quota: Quota) -> Charged:
        """Raises :data:`service.store.errors.StoreError` when the store fails."""
        return charge(self._script, quota, cluster=self.cluster)
