"""Sorted sets of work scored by when it is due (ms), swept by every worker: a sweep claims
the entries due by re-scoring them to the end of a lease in the same atomic step, so two
sweeps never take the same entry, and an entry whose work is not done comes due again."""
from __future__ import annotations

from . import connect

#: Up to ARGV[2] members of KEYS[1] scored at most ARGV[1] (now), oldest first, each re-scored
#: to ARGV[3] (the lease's end).
_CLAIM = """
local due = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', ARGV[1], 'LIMIT', 0, tonumber(ARGV[2]))
for _, member in ipairs(due) do redis.call('ZADD', KEYS[1], 'XX', ARGV[3], member) end
return due
"""


def claim(client, key: str, now_ms: int, limit: int, lease_ms: int) -> list[str]:
    """The members of ``key`` due at ``now_ms``, oldest first, ``limit`` at most, each put off
    until ``now_ms + lease_ms``."""
    found = connect.script(client, _CLAIM)(keys=[key], args=[now_ms, limit, now_ms + lease_ms])
    return [m.decode() if isinstance(m, bytes) else m for m in found]
