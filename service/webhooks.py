"""Webhooks: subscriptions, the outbox the command path fills, signing, and the delivery step.

No HTTP routes here (``service.api.webhooks``) and no RQ worker loop (``workers.webhooks``).

Flow. After every append, :func:`listener` (one of ``GameService.listeners``) finds the
subscriptions whose filter matches the game, adds one *delivery* per subscription to that
subscription's outbox for the game (a sorted set scored by the first version, so deliveries stay
in version order even when two commands' listeners run out of order) and enqueues
``workers.webhooks.deliver(subscription_id, game_id)`` on RQ (its own queue, the last a worker
takes from: :data:`QUEUE`). The job takes a short lock per
(subscription, game), POSTs the oldest pending delivery, and on success moves to the next; on a
failure it records the attempt, leaves the delivery at the head (later deliveries of that game
wait behind it) and schedules itself after ``base * 2**(attempt-1)`` seconds. After
``max_attempts`` the delivery is abandoned (logged) and the next one goes. A receiver that
fails :data:`PAUSE_AFTER` attempts in a row is paused: its deliveries wait, then one attempt
probes it (:func:`gate`). Guarantee:
at-least-once, in version order per (subscription, game) on the happy path; a receiver dedupes by
``Cartouche-Delivery`` (or the versions).

Signature: ``Cartouche-Signature: t=<unix seconds>,v1=<hex HMAC-SHA256(secret, "<t>." + body)>``
where the key is the subscription's secret string as UTF-8 bytes and ``body`` the exact bytes
sent. The secret is stored in clear (it must sign), returned once at creation.
"""

from __future__ import annotations

import hashlib
import hmac
import logging
import os
import secrets
import time
import urllib.error
import urllib.request
import uuid
from datetime import timedelta
from typing import Any, Callable, Mapping

import orjson
import redis

from . import metrics
from .config import env_count, env_seconds
from .timestamps import rfc3339
from .engine import ALL, CodedError
from .store import connect, due

log = logging.getLogger("cartouche.webhooks")

QUEUE = "cartouche-webhooks"  # service.jobs.WEBHOOK_QUEUE
JOB = "workers.webhooks.deliver"
TIMEOUT_S = 5.0
MAX_SUBSCRIPTIONS = 100
LOG_SIZE = 100
LOCK_MS = 30_000
#: How long a queued delivery job stands for the later deliveries of its (subscription, game),
#: the sweep's included: past it (a job lost before it started, a queue more than this far
#: behind) one more is queued.
QUEUED_MS = 3_600_000
#: How long an outbox with deliveries may see no job before the sweep queues one (its job
#: lost with a worker killed, or with the store's last writes), unless a queued job stands
#: for it: :func:`stale`.
STALE_MS = 300_000
OUTBOX_TTL_S = 7 * 24 * 3600
#: The most deliveries waiting for one subscription and game (CARTOUCHE_WEBHOOK_PENDING_MAX):
#: past it, the oldest are dropped (a receiver that is down for long sees the gap in
#: ``first_version``, as after an abandoned delivery).
PENDING_MAX = 1000
#: Deliveries one job sends before it hands over to a fresh job (other jobs get a turn).
BATCH = 20
#: Seconds of attempts after which one job hands over (after its first attempt): a worker
#: looks at its other queues (bots, clocks, expiries) between two attempts to a slow receiver.
BATCH_S = 1.0
#: The most versions one gap-filling delivery carries (:func:`filler`): a larger gap (the
#: oldest deliveries dropped past PENDING_MAX) stays a gap.
FILL_MAX = 500
USER_AGENT = "Cartouche-Webhooks/1"
#: A receiver down: after PAUSE_AFTER failed attempts in a row to one subscription (any of its
#: games; CARTOUCHE_WEBHOOK_PAUSE_AFTER) its deliveries wait PAUSE_S (CARTOUCHE_WEBHOOK_PAUSE_S),
#: then one attempt goes (the probe): its failure doubles the wait, up to PAUSE_MAX_S
#: (CARTOUCHE_WEBHOOK_PAUSE_MAX_S), its success lets every game's deliveries go again. A dead
#: receiver so holds a worker for one attempt a wait, not one a game and retry (:func:`gate`).
PAUSE_AFTER = 5
PAUSE_S = 30.0
PAUSE_MAX_S = 600.0

# Webhook keys are global, not per-game slot keys: they carry no ``{<game_id>}`` hash tag, and
# every command below touches one key, so they work on a Redis Cluster one key at a time.
PREFIX = "cartouche:webhooks"


def key_subscriptions() -> str:
    return f"{PREFIX}:subs"  # hash: subscription id -> JSON (secret included)


def key_subscription_count() -> str:
    return f"{PREFIX}:subs:count"  # integer: subscriptions ever created, orders those of one ms


def key_log(sub_id: str) -> str:
    return f"{PREFIX}:log:{sub_id}"  # list of attempts, newest first, LOG_SIZE at most


def key_outbox(sub_id: str, game_id: str) -> str:
    return f"{PREFIX}:outbox:{sub_id}:{game_id}"  # zset: delivery JSON scored by first version


def key_head(sub_id: str, game_id: str) -> str:
    return f"{PREFIX}:head:{sub_id}:{game_id}"  # hash: retry state of the outbox's head


def key_lock(sub_id: str, game_id: str) -> str:
    return f"{PREFIX}:lock:{sub_id}:{game_id}"


def key_sent(sub_id: str, game_id: str) -> str:
    """The last version of (subscription, game) delivered or abandoned: a delivery starting
    past the next one finds a gap (:func:`filler`), one ending at or before it is covered."""
    return f"{PREFIX}:sent:{sub_id}:{game_id}"


def key_end(sub_id: str, game_id: str) -> str:
    """A game over's last version, set when (subscription, game) was not sent it (:func:`ended`):
    a job that drains the outbox fills the versions up to it."""
    return f"{PREFIX}:end:{sub_id}:{game_id}"


def key_pending() -> str:
    """Sorted set: ``<subscription id> <game id>`` of every outbox that may hold deliveries,
    scored by when the sweep is to look at it (:func:`stale`): :data:`STALE_MS` after its
    last delivery was added or its job ran. Removed once a job found the outbox empty."""
    return f"{PREFIX}:pending"


def key_health(sub_id: str) -> str:
    """Hash of a subscription's receiver: ``failures`` (failed attempts in a row), and once
    paused ``until`` (ms), ``level`` (pauses in a row) and ``probe`` (ms: the end of the lease
    of the one attempt let through after a pause). Deleted by a success (:func:`attempted`)."""
    return f"{PREFIX}:health:{sub_id}"


def key_queued(sub_id: str, game_id: str) -> str:
    """Set while a delivery job of (subscription, game) waits in the queue, for QUEUED_MS at
    most: nothing queues a second one meanwhile (the job, once started, sends every pending
    delivery, those added while it waited included)."""
    return f"{PREFIX}:queued:{sub_id}:{game_id}"


# -- signing ----------------------------------------------------------------------------------
def signature(secret: str, timestamp: int, body: bytes) -> str:
    mac = hmac.new(secret.encode(), f"{timestamp}.".encode() + body, hashlib.sha256)
    return f"t={timestamp},v1={mac.hexdigest()}"


def verify(secret: str, header: str, body: bytes, tolerance_s: int = 300,
           now: float | None = None) -> bool:
    """The receiver's check (docs/webhooks.md's recipe, as a function)."""
    try:
        parts = dict(p.split("=", 1) for p in header.split(","))
        t = int(parts["t"])
    except (ValueError, KeyError):
        return False
    if abs((time.time() if now is None else now) - t) > tolerance_s:
        return False
    expected = signature(secret, t, body).split("v1=", 1)[1]
    return hmac.compare_digest(expected, parts.get("v1", ""))


# -- subscriptions ----------------------------------------------------------------------------
class TooManySubscriptions(CodedError):
    def __init__(self) -> None:
        super().__init__("too_many_webhooks", f"at most {MAX_SUBSCRIPTIONS} webhooks")


#: Add a subscription (ARGV: id, JSON, the most there may be) unless that many exist: 1 or 0.
_ADD = """
if redis.call('hlen', KEYS[1]) >= tonumber(ARGV[3]) then return 0 end
redis.call('hset', KEYS[1], ARGV[1], ARGV[2])
return 1
"""


class WebhookStore:
    """Subscriptions and delivery logs in the event store's Redis."""

    def __init__(self, client: redis.Redis) -> None:
        self.r = client
        self._add = client.register_script(_ADD)

    def create(self, url: str, game_types: list[str] | None, game_ids: list[str] | None,
               description: str | None, now_ms: int) -> dict:
        if self.r.hlen(key_subscriptions()) >= MAX_SUBSCRIPTIONS:  # (no number drawn)
            raise TooManySubscriptions()
        sub = {"id": "wh_" + uuid.uuid4().hex[:20], "url": url,
               "game_types": sorted(set(game_types)) if game_types else None,
               "game_ids": sorted(set(game_ids)) if game_ids else None,
               "description": description, "created_at": rfc3339(now_ms),
               "secret": "whsec_" + secrets.token_hex(32),
               "seq": self.r.incr(key_subscription_count())}
        # counted and written in one script: concurrent creations cannot pass the limit
        if not self._add(keys=[key_subscriptions()],
                         args=[sub["id"], orjson.dumps(sub), MAX_SUBSCRIPTIONS]):
            raise TooManySubscriptions()
        return sub

    def get(self, sub_id: str) -> dict | None:
        raw = self.r.hget(key_subscriptions(), sub_id)
        return orjson.loads(raw) if raw is not None else None

    def all(self, raw: dict | None = None) -> list[dict]:
        """Every subscription, oldest first; ``raw``: the subscriptions hash as already read."""
        if raw is None:
            raw = self.r.hgetall(key_subscriptions())
        subs = [orjson.loads(v) for v in raw.values()]
        return sorted(subs, key=lambda s: (s["created_at"], s.get("seq", 0), s["id"]))

    def delete(self, sub_id: str) -> bool:
        """Removes the subscription and its log; pending outboxes are dropped by their jobs
        (which find no subscription, and delete what an attempt under way wrote since) or
        expire."""
        removed = self.r.hdel(key_subscriptions(), sub_id)
        self.r.delete(key_log(sub_id))
        self.r.delete(key_health(sub_id))
        return bool(removed)

    def health(self, sub_id: str) -> dict:
        """``consecutive_failures`` of the subscription's receiver, and ``pause_ends_at`` (null:
        its deliveries go as they come; else when the next, single, attempt may go)."""
        failures, until, level = self.r.hmget(key_health(sub_id), "failures", "until", "level")
        return {"consecutive_failures": int(failures or 0),
                "pause_ends_at": rfc3339(int(until)) if level is not None and until else None}

    def deliveries(self, sub_id: str) -> list[dict]:
        return [orjson.loads(x) for x in self.r.lrange(key_log(sub_id), 0, LOG_SIZE - 1)]

    def logged_upto(self, sub_id: str, game_id: str) -> int:
        """The last version of ``game_id`` its log says was delivered or abandoned (0: none in
        its last :data:`LOG_SIZE` attempts): sent by any worker, one of an earlier version
        that kept no :func:`key_sent` included."""
        last = 0
        for raw in self.r.lrange(key_log(sub_id), 0, -1):
            entry = orjson.loads(raw)
            if entry.get("game_id") == game_id and entry.get("outcome") != "retry_scheduled":
                last = max(last, int(str(entry["versions"]).rpartition("-")[2]))
        return last

    def record(self, sub_id: str, entry: dict) -> None:
        pipe = self.r.pipeline(transaction=False)
        pipe.lpush(key_log(sub_id), orjson.dumps(entry))
        pipe.ltrim(key_log(sub_id), 0, LOG_SIZE - 1)
        pipe.execute()


def public(sub: dict) -> dict:
    return {k: v for k, v in sub.items() if k not in ("secret", "seq")}


def matches(sub: dict, game_id: str, game_type: str) -> bool:
    """No filter: every game. Otherwise a game matches when its type is in ``game_types`` or its
    id is in ``game_ids`` (each list widens the subscription)."""
    types, ids = sub.get("game_types"), sub.get("game_ids")
    if not types and not ids:
        return True
    return bool(types and game_type in types) or bool(ids and game_id in ids)


# -- the listener (command path) ----------------------------------------------------------------
def new_delivery(sub_id: str, table, first_version: int, last_version: int,
                 events: list[dict]) -> dict:
    """A delivery of ``events`` (versions ``first_version``-``last_version``, as the platform
    key reads them) of the game ``table`` is at ``last_version``."""
    return {"id": "dl_" + uuid.uuid4().hex[:24], "subscription_id": sub_id,
            "game_id": table.id, "game_type": table.game.type_id,
            "version": last_version, "status": table.status,
            "first_version": first_version, "last_version": last_version, "events": events}


def filler(service) -> Callable[[str, str, int, int], dict | None]:
    """``fill(sub_id, game_id, first, last)``: the outbox item of versions ``first``-``last``
    of the game (whole commands: a gap between two deliveries, or up to the end) read from its
    log, as ``service``'s listener would have written it; None past :data:`FILL_MAX`
    versions, or when ``service`` has no webhook listener."""
    listener = next((each for each in service.listeners if isinstance(each, Listener)), None)

    def fill(sub_id: str, game_id: str, first: int, last: int) -> dict | None:
        if listener is None or last - first + 1 > FILL_MAX:  # (a service without webhooks)
            return None
        table = service.load(game_id, last)
        stored = service.store.read(game_id, first - 1, last)
        events = service.served_events(table, [e.envelope for e in stored], first, ALL)
        return listener.item(new_delivery(sub_id, table, first, last, events))
    return fill


class Listener:
    """``GameService.listeners`` entry: queue one delivery per matching subscription.

    Never raises and never fails the command: a lost delivery is logged.
    """

    def __init__(self, service, queue_connection: redis.Redis, *, retry_base_s: float = 1.0,
                 max_attempts: int = 8, timeout_s: float = TIMEOUT_S,
                 pending_max: int = PENDING_MAX, pause_after: int = PAUSE_AFTER,
                 pause_s: float = PAUSE_S, pause_max_s: float = PAUSE_MAX_S) -> None:
        from rq import Queue

        self.service = service
        self.store = WebhookStore(service.store.r)
        self.queue = Queue(QUEUE, connection=queue_connection)
        self.retry_base_s = retry_base_s
        self.max_attempts = max_attempts
        self.timeout_s = timeout_s
        self.pending_max = pending_max
        self.pause_after, self.pause_s, self.pause_max_s = pause_after, pause_s, pause_max_s

    def item(self, delivery: dict) -> dict:
        """The outbox's entry for ``delivery``: it and how it is to be tried."""
        return {"delivery": delivery, "base_s": self.retry_base_s,
                "max_attempts": self.max_attempts, "timeout_s": self.timeout_s,
                "pause": [self.pause_after, self.pause_s, self.pause_max_s]}

    def reads_after_append(self) -> list[tuple]:
        """The subscriptions are read in the append's own round trip (GameService), after the
        append: a subscription created before the command was stored sees its events."""
        return [("HGETALL", key_subscriptions())]

    def __call__(self, table, first_version: int, envelopes: list[dict], *,
                 reads: list | None = None) -> None:
        try:
            raw = reads[0] if reads else None  # None: not given, or that read failed
            subs = [s for s in self.store.all(raw)
                    if matches(s, table.id, table.game.type_id)]
            if not subs:
                return
            events = self.service.served_events(table, envelopes, first_version, ALL)
            last = first_version + len(envelopes) - 1
        except Exception:
            log.exception("webhooks: could not prepare deliveries for game %s", table.id)
            return
        for sub in subs:
            try:
                item = self.item(new_delivery(sub["id"], table, first_version, last, events))
                outbox = key_outbox(sub["id"], table.id)
                pipe = self.store.r.pipeline(transaction=False)
                pipe.zadd(outbox, {orjson.dumps(item): first_version})
                pipe.zremrangebyrank(outbox, 0, -self.pending_max - 1)  # the oldest past it
                pipe.expire(outbox, OUTBOX_TTL_S)
                pipe.zadd(key_pending(), {f"{sub['id']} {table.id}": _ms() + STALE_MS})
                job_id = new_job_id()
                pipe.set(key_queued(sub["id"], table.id), job_id, nx=True, px=QUEUED_MS)
                if not pipe.execute()[-1]:
                    continue  # a job is waiting in the queue: it sends this one too
                enqueue(self.store.r, self.queue, sub["id"], table.id, job_id)
            except Exception:
                log.exception("webhooks: could not queue delivery of %s v%s-%s to %s",
                              table.id, first_version, first_version + len(envelopes) - 1,
                              sub.get("id"))


#: The most attempts of one delivery (its last retry waits the base times 2^(attempts - 2)).
MAX_ATTEMPTS_MAX = 30
#: The longest base of the retries' backoff, in seconds.
RETRY_BASE_MAX_S = 3600.0


def settings(env: Mapping[str, str]) -> dict[str, Any]:
    """The listener's options from ``env`` (:func:`attach`); SettingError, naming the
    variable and its range, for a value out of it."""
    return {
        "retry_base_s": env_seconds(env, "CARTOUCHE_WEBHOOK_RETRY_BASE_S", 1.0,
                                    most=RETRY_BASE_MAX_S),
        "max_attempts": env_count(env, "CARTOUCHE_WEBHOOK_MAX_ATTEMPTS", 8, least=1,
                                  most=MAX_ATTEMPTS_MAX),
        "pending_max": env_count(env, "CARTOUCHE_WEBHOOK_PENDING_MAX", PENDING_MAX, least=1),
        "pause_after": env_count(env, "CARTOUCHE_WEBHOOK_PAUSE_AFTER", PAUSE_AFTER, least=1),
        "pause_s": env_seconds(env, "CARTOUCHE_WEBHOOK_PAUSE_S", PAUSE_S),
        "pause_max_s": env_seconds(env, "CARTOUCHE_WEBHOOK_PAUSE_MAX_S", PAUSE_MAX_S),
    }


def attach(service, queue_connection: redis.Redis, **options: Any) -> Listener:
    """Add the webhook listener to ``service`` (the API's and the worker's GameService).

    Options default from the environment: CARTOUCHE_WEBHOOK_RETRY_BASE_S (1),
    CARTOUCHE_WEBHOOK_MAX_ATTEMPTS (8), CARTOUCHE_WEBHOOK_PENDING_MAX (:data:`PENDING_MAX`),
    CARTOUCHE_WEBHOOK_PAUSE_AFTER, _PAUSE_S and _PAUSE_MAX_S (:data:`PAUSE_AFTER`...).
    """
    for name, value in settings(os.environ).items():
        options.setdefault(name, value)
    for existing in service.listeners:
        if isinstance(existing, Listener):
            return existing
    listener = Listener(service, queue_connection, **options)
    service.listeners.append(listener)
    return listener


# -- delivery (run by workers.webhooks.deliver) -----------------------------------------------
class _NoRedirect(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, req, fp, code, msg, headers, newurl):
        return None  # a 3xx is not a success; never re-send the body elsewhere


_opener = urllib.request.build_opener(_NoRedirect)


def post(url: str, body: bytes, headers: dict[str, str], timeout_s: float
         ) -> tuple[int | None, str | None]:
    """POST once; returns (status code or None, error or None)."""
    req = urllib.request.Request(url, data=body, method="POST", headers=headers)
    try:
        with _opener.open(req, timeout=timeout_s) as resp:
            resp.read(65536)
            return resp.status, None
    except urllib.error.HTTPError as exc:
        return exc.code, f"HTTP {exc.code}"
    except Exception as exc:  # refused, timeout, DNS, TLS ...
        reason = getattr(exc, "reason", None) or exc
        return None, f"{type(exc).__name__}: {reason}"[:300]


_RELEASE = """
if redis.call('get', KEYS[1]) == ARGV[1] then return redis.call('del', KEYS[1]) end
return 0
"""


def _ms() -> int:
    return int(time.time() * 1000)


#: Before an attempt (KEYS[1]: :func:`key_health`; ARGV: now ms, the probe's lease ms): 0 to
#: send, else when (ms) to look again: the pause's end, or the lease's of the probe under way.
#: After a pause, the first caller takes the probe.
_GATE = """
local h = redis.call('HMGET', KEYS[1], 'until', 'level', 'probe')
if not h[2] then return 0 end
local now = tonumber(ARGV[1])
if tonumber(h[1]) > now then return tonumber(h[1]) end
if tonumber(h[3] or 0) > now then return tonumber(h[3]) end
redis.call('HSET', KEYS[1], 'probe', now + tonumber(ARGV[2]))
return 0
"""

#: After a failed attempt (KEYS[1]: :func:`key_health`; ARGV: now ms, failures before a pause,
#: the first pause ms, the longest ms, the key's TTL s): the end (ms) of the pause this failure
#: starts, 0 when it starts none (too few failures yet, or paused already).
_FAILED = """
local failures = redis.call('HINCRBY', KEYS[1], 'failures', 1)
redis.call('EXPIRE', KEYS[1], tonumber(ARGV[5]))
if failures < tonumber(ARGV[2]) then return 0 end
local now = tonumber(ARGV[1])
local h = redis.call('HMGET', KEYS[1], 'until', 'level')
if tonumber(h[1] or 0) > now then return 0 end
local level = tonumber(h[2] or 0) + 1
local untl = math.floor(now + math.min(tonumber(ARGV[3]) * 2 ^ (level - 1), tonumber(ARGV[4])))
redis.call('HSET', KEYS[1], 'until', untl, 'level', level)
redis.call('HDEL', KEYS[1], 'probe')
return untl
"""


def gate(client: redis.Redis, sub_id: str, lease_s: float) -> int:
    """Whether an attempt to the subscription's receiver may go now (0), or when (ms) to look
    again: while it is paused (:data:`PAUSE_AFTER`), and after the pause while another
    attempt is the probe (leased ``lease_s``: the attempt's timeout and a margin)."""
    return int(connect.script(client, _GATE)(keys=[key_health(sub_id)],
                                             args=[_ms(), int(lease_s * 1000)]))


def attempted(client: redis.Redis, sub_id: str, ok: bool, pause: list) -> int:
    """Record an attempt's outcome for the receiver's health; the end (ms) of the pause a
    failure starts (0: none). ``pause``: failures before a pause, its first and longest
    seconds (an outbox item's ``pause``)."""
    if ok:
        client.delete(key_health(sub_id))
        return 0
    after, first_s, most_s = pause
    return int(connect.script(client, _FAILED)(
        keys=[key_health(sub_id)],
        args=[_ms(), int(after), int(first_s * 1000), int(most_s * 1000), OUTBOX_TTL_S]))


def stale(client: redis.Redis, queue, limit: int) -> int:
    """The sweep's backstop: queue a delivery job (a retry's, so that a head waiting for its
    next attempt waits on) for each outbox no job has looked at in :data:`STALE_MS`, at most
    ``limit``, each claimed and put off :data:`STALE_MS` again in one step (another worker's
    sweep does not queue it too), unless a queued job stands for it. How many it queued."""
    queued = 0
    for member in due.claim(client, key_pending(), _ms(), limit, STALE_MS):
        sub_id, game_id = member.split(" ", 1)
        marker = key_queued(sub_id, game_id)
        job_id = client.get(marker)
        if job_id is not None:
            if queue.connection.lpos(queue.key, job_id) is not None:
                continue  # its job waits in the queue: a long queue, not a lost job
            client.eval(_RELEASE, 1, marker, job_id)  # the marker of a lost job
        queued += _queue_job(client, queue, sub_id, game_id, True)
    return queued


def _queue_job(client: redis.Redis, queue, sub_id: str, game_id: str, *args) -> bool:
    """Queue a delivery job of (subscription, game) unless one waits in the queue already
    (:func:`key_queued`); whether it did."""
    job_id = new_job_id()
    if not client.set(key_queued(sub_id, game_id), job_id, nx=True, px=QUEUED_MS):
        return False
    enqueue(client, queue, sub_id, game_id, job_id, *args)
    return True


def new_job_id() -> str:
    return "wh-" + uuid.uuid4().hex


def enqueue(client: redis.Redis, queue, sub_id: str, game_id: str, job_id: str, *args) -> None:
    """Queue the delivery job ``job_id`` its :func:`key_queued` marker names (the marker goes
    when the job could not be queued)."""
    try:
        queue.enqueue(JOB, sub_id, game_id, *args, job_id=job_id, result_ttl=60,
                      failure_ttl=24 * 3600, job_timeout=600)
    except Exception:
        client.eval(_RELEASE, 1, key_queued(sub_id, game_id), job_id)
        raise


def ended(client: redis.Redis, queue, game_id: str, last_version: Callable[[], int]) -> int:
    """A game over (its archive's turn): for each subscription that was sent some of its
    versions but not its ``last_version()`` (the last deliveries never written, or still
    waiting), record that end (:func:`key_end`) and queue a delivery job: once the outbox is
    drained, the versions up to it are filled. How many it queued."""
    store = WebhookStore(client)
    subs = [sub["id"] for sub in store.all()]
    if not subs:
        return 0
    pipe = client.pipeline(transaction=False)
    for sub_id in subs:
        pipe.get(key_sent(sub_id, game_id))
    followed = [(sub_id, int(done)) for sub_id, done in zip(subs, pipe.execute()) if done]
    if not followed:
        return 0
    last = last_version()
    behind = [sub_id for sub_id, done in followed if done < last]
    for sub_id in behind:
        client.set(key_end(sub_id, game_id), last, ex=OUTBOX_TTL_S)
        _queue_job(client, queue, sub_id, game_id)  # (none when one waits already: it fills)
    return len(behind)


def drain(client: redis.Redis, queue, sub_id: str, game_id: str, retry: bool = False, *,
          fill: Callable[[str, str, int, int], dict | None] | None = None) -> str:
    """Send the pending deliveries of (subscription, game) in version order.

    ``retry``: this run was scheduled for the head's next attempt (it may wake up to a second
    early: RQ's scheduler has whole seconds). Runs triggered by new events leave a head that is
    waiting for its retry alone. ``fill`` (:func:`filler`) makes the delivery of versions
    missing before the head, since the last one delivered (their delivery never written, or not
    yet), and, the outbox drained, those up to a game's end not sent (:func:`ended`); a
    delivery whose versions were delivered so is dropped. Returns what happened (for logs and
    tests).
    """
    store = WebhookStore(client)
    client.delete(key_queued(sub_id, game_id))  # deliveries from now on queue a job again
    token = uuid.uuid4().hex
    lock, outbox, head = key_lock(sub_id, game_id), key_outbox(sub_id, game_id), \
        key_head(sub_id, game_id)
    for _ in range(3):  # re-check after releasing: an event may have arrived meanwhile
        if not client.set(lock, token, nx=True, px=LOCK_MS):
            if retry:  # the holder may be a run that leaves waiting heads alone: come back
                queue.enqueue_in(timedelta(seconds=1), JOB, sub_id, game_id, True,
                                 result_ttl=60, failure_ttl=24 * 3600, job_timeout=600)
            return "busy"
        try:
            outcome = _drain_locked(client, store, queue, sub_id, game_id, retry, lock, outbox,
                                    head, fill)
        finally:
            client.eval(_RELEASE, 1, lock, token)
        if outcome in ("empty", "gone"):
            client.zrem(key_pending(), f"{sub_id} {game_id}")
            if outcome == "empty" and client.zcard(outbox):  # one came meanwhile
                client.zadd(key_pending(), {f"{sub_id} {game_id}": _ms() + STALE_MS})
        elif outcome != "paused":  # (a paused outbox is due at the pause's end)
            client.zadd(key_pending(), {f"{sub_id} {game_id}": _ms() + STALE_MS}, xx=True)
        if outcome != "empty" or not client.zcard(outbox):
            return outcome
        retry = False
    return "empty"


def _drain_locked(client, store, queue, sub_id, game_id, retry, lock, outbox, head,
                  fill) -> str:
    sent, started = 0, time.monotonic()
    done_key, end_key = key_sent(sub_id, game_id), key_end(sub_id, game_id)
    while True:
        sub = store.get(sub_id)
        if sub is None:
            client.delete(outbox)  # one key per command: the keys may sit on two slots
            client.delete(head)
            client.delete(done_key)
            client.delete(end_key)
            # what an attempt under way when the subscription was deleted wrote after it
            client.delete(key_log(sub_id))
            client.delete(key_health(sub_id))
            return "gone"
        first = client.zrange(outbox, 0, 0)
        done = int(client.get(done_key) or 0)
        if not first:
            end = client.get(end_key)
            client.delete(end_key)
            if end is not None and done and fill is not None and done < int(end):
                if gap := _gap(client, store, fill, sub_id, game_id, done, int(end)):
                    client.zadd(outbox, {orjson.dumps(gap): gap["delivery"]["first_version"]})
                    continue
            client.delete(head)
            return "empty"
        raw = first[0]
        item = orjson.loads(raw)
        delivery = item["delivery"]
        if done and delivery["first_version"] <= done:  # sent within a gap's delivery
            client.zrem(outbox, raw)
            continue
        if done and fill is not None and delivery["first_version"] > done + 1:
            if gap := _gap(client, store, fill, sub_id, game_id, done,
                           delivery["first_version"] - 1):
                client.zadd(outbox, {orjson.dumps(gap): gap["delivery"]["first_version"]})
                continue
        state = client.hgetall(head)
        if state.get(b"id", b"").decode() != delivery["id"]:
            state = {}
        attempts = int(state.get(b"attempts", 0))
        wait = float(state.get(b"next_at", 0)) - time.time()
        if wait > 0:
            if not retry:
                return "waiting"
            if wait > 2:
                queue.enqueue_in(timedelta(seconds=wait), JOB, sub_id, game_id, True,
                                 result_ttl=60, failure_ttl=24 * 3600, job_timeout=600)
                return "waiting"
            time.sleep(wait)
        retry = False
        if sent >= BATCH or (sent and time.monotonic() - started >= BATCH_S):
            # let other jobs run; a fresh job continues (or one queued since)
            _queue_job(client, queue, sub_id, game_id)
            return "continued"
        timeout_s = float(item.get("timeout_s", TIMEOUT_S))
        wake = gate(client, sub_id, timeout_s + 2)
        if wake:  # the receiver is down: the sweep queues this outbox's job when it is due
            client.zadd(key_pending(), {f"{sub_id} {game_id}": wake})
            return "paused"
        attempt = attempts + 1
        body = orjson.dumps(delivery)
        versions = f"{delivery['first_version']}-{delivery['last_version']}"
        t = int(time.time())
        status, error = post(sub["url"], body, {
            "Content-Type": "application/json",
            "User-Agent": USER_AGENT,
            "Cartouche-Signature": signature(sub["secret"], t, body),
            "Cartouche-Delivery": delivery["id"],
            "Cartouche-Event-Versions": versions,
        }, timeout_s)
        ok = status is not None and 200 <= status < 300
        until = attempted(client, sub_id, ok, item.get("pause") or [PAUSE_AFTER, PAUSE_S,
                                                                   PAUSE_MAX_S])
        outcome = ("delivered" if ok else "abandoned" if attempt >= int(item["max_attempts"])
                   else "retry_scheduled")
        metrics.WEBHOOK_ATTEMPTS.labels(outcome).inc()
        if until:
            metrics.WEBHOOK_PAUSES.inc()
            log.warning("webhooks: %s failed attempts in a row to %s: its deliveries wait "
                        "until %s", int(client.hget(key_health(sub_id), "failures") or 0),
                        sub_id, rfc3339(until))
        entry = {"at": rfc3339(int(time.time() * 1000)), "delivery_id": delivery["id"],
                 "game_id": game_id, "versions": versions, "attempt": attempt,
                 "status_code": status, "error": None if ok else (error or f"HTTP {status}"),
                 "outcome": outcome}
        sent += 1
        client.pexpire(lock, LOCK_MS)
        if outcome != "retry_scheduled":
            if outcome == "abandoned":
                log.warning("webhooks: abandoned delivery %s of %s v%s to %s after %s attempts",
                            delivery["id"], game_id, versions, sub_id, attempt)
            store.record(sub_id, entry)
            client.set(done_key, max(done, delivery["last_version"]), ex=OUTBOX_TTL_S)
            client.zrem(outbox, raw)
            client.delete(head)
            continue
        delay = float(item["base_s"]) * 2 ** (attempt - 1)
        entry["next_attempt_in_s"] = delay
        store.record(sub_id, entry)
        client.hset(head, mapping={"id": delivery["id"], "attempts": attempt,
                                   "next_at": time.time() + delay})
        client.expire(head, OUTBOX_TTL_S)
        queue.enqueue_in(timedelta(seconds=delay), JOB, sub_id, game_id, True,
                         result_ttl=60, failure_ttl=24 * 3600, job_timeout=600)
        return "retrying"


def _gap(client, store, fill, sub_id: str, game_id: str, done: int, last: int) -> dict | None:
    """The outbox item of the versions after ``done`` up to ``last`` (None: nothing to fill,
    or it cannot be). ``done`` is first checked against the subscription's log: a worker of an
    earlier version (during a rolling upgrade) sends without recording :func:`key_sent`."""
    logged = store.logged_upto(sub_id, game_id)
    if logged > done:
        client.set(key_sent(sub_id, game_id), logged, ex=OUTBOX_TTL_S)
        done = logged
    if done >= last:
        return None
    return _fill(fill, sub_id, game_id, done + 1, last)


def _fill(fill, sub_id: str, game_id: str, first: int, last: int) -> dict | None:
    """``fill``'s outbox item of the gap, or None (too large, or the game could not be read:
    the gap stays, and the receiver sees it in ``first_version``)."""
    try:
        return fill(sub_id, game_id, first, last)
    except Exception:
        log.exception("webhooks: could not fill versions %s-%s of %s for %s", first, last,
                      game_id, sub_id)
        return None
