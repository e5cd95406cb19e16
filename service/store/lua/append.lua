-- Append all events of one command atomically, iff the stream is at the expected version.
-- Runs after service/store/quota.py's PROLOGUE (EventStore prepends it), which charges the
-- command's rate-limit counters, if any, and says how many KEYS (K) and ARGV (A) it used.
-- KEYS[K+1] events stream, KEYS[K+2] meta hash, KEYS[K+3] idempotency key (only with a
-- record prefix), then x index keys (the game's listing: the index of all games, of its type, of
-- its new status and of both, which it joins, then those of the other statuses, which it
-- leaves: EventStore's _listing_keys), and
-- the last r KEYS: the keys of the reads.
-- ARGV[A+1] expected version, ARGV[A+2] m = number of meta fields the command sets (its
-- status, a table's seats ...), ARGV[A+3..A+2+2m] their field/value pairs; then, with
-- B = A + 2m: ARGV[B+3] idempotency record prefix ('' = none), ARGV[B+4] idempotency TTL
-- seconds, ARGV[B+5] x (0: the listing does not change), ARGV[B+6] the game's id and
-- ARGV[B+7] its score in the indexes, ARGV[B+8] r = number of reads, ARGV[B+9..B+8+r] their
-- commands (read-only, one key each), ARGV[B+9+r..] one JSON envelope per event, in order.
-- Returns {'ok', last_version} | {'conflict', current_version} | {'idem', stored_record}
--         | {'missing', 0}, followed by the r read replies (false for a read that failed; the
--         reads run after the append, whatever its outcome);
--      or {'limited', 0, current, previous, ...} when the quota is over: nothing appended,
--         nothing read.
if quota_over then
  return {'limited', 0, unpack(quota_counts)}
end
local events, meta, idem = KEYS[K + 1], KEYS[K + 2], KEYS[K + 3]
local expected, m = ARGV[A + 1], tonumber(ARGV[A + 2])
local B = A + 2 * m
local prefix, ttl = ARGV[B + 3], ARGV[B + 4]
local x = tonumber(ARGV[B + 5])
local r = tonumber(ARGV[B + 8])
local first_envelope = B + 9 + r

local function answer(outcome, value)
  local out = {outcome, value}
  for j = 1, r do
    local reply = redis.pcall(ARGV[B + 8 + j], KEYS[#KEYS - r + j])
    if type(reply) == 'table' and reply.err then
      reply = false
    end
    out[2 + j] = reply
  end
  return out
end

if redis.call('EXISTS', meta) == 0 then
  return answer('missing', 0)
end
if prefix ~= '' then
  local prior = redis.call('GET', idem)
  if prior then
    return answer('idem', prior)
  end
end
local current = redis.call('XLEN', events)
if current == 0 then  -- no stream: an archived game (over, its events in its document)
  current = tonumber(redis.call('HGET', meta, 'version') or '0')
  if current > 0 then
    return answer('conflict', current)
  end
end
if current ~= tonumber(expected) then
  return answer('conflict', current)
end
local n = #ARGV - first_envelope + 1
for i = 1, n do
  redis.call('XADD', events, (current + i) .. '-0', 'e', ARGV[first_envelope + i - 1])
end
local last = current + n
local fields = {'version', last}
for i = 1, 2 * m do
  fields[2 + i] = ARGV[A + 2 + i]
end
redis.call('HSET', meta, unpack(fields))
if prefix ~= '' then
  redis.call('SET', idem, prefix .. '|' .. (current + 1) .. '|' .. last, 'EX', tonumber(ttl))
end
local index = #KEYS - r - x
for i = 1, x do
  if i <= 4 then
    redis.call('ZADD', KEYS[index + i], ARGV[B + 7], ARGV[B + 6])
  else
    redis.call('ZREM', KEYS[index + i], ARGV[B + 6])
  end
end
return answer('ok', last)
