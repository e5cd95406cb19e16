-- Read one game in one round trip (read-only).
-- KEYS[1] meta hash, KEYS[2] seed, KEYS[3] snapshot versions (sorted set), KEYS[4] snapshots
-- (hash), KEYS[5] events stream.
-- ARGV[1] '1': also the meta hash, the seed and the creation event (version 1);
-- ARGV[2] the highest version wanted ('' = the latest);
-- ARGV[3] read the events after this version ('' = after the newest snapshot at or below
--         ARGV[2], else after version 1).
-- Returns {meta (flat field/value list) | false, seed | false, creation entry | false,
--          snapshot version | false, snapshot | false, entry, entry, ...}
-- (an entry as XRANGE gives it; a game without meta answers {false}).
local out = {false, false, false, false, false}
if ARGV[1] == '1' then
  local meta = redis.call('HGETALL', KEYS[1])
  if #meta == 0 then
    return {false}
  end
  out[1] = meta
  out[2] = redis.call('GET', KEYS[2])
  out[3] = redis.call('XRANGE', KEYS[5], '1-0', '1-0')[1] or false
end
local upto = tonumber(ARGV[2])
local after = tonumber(ARGV[3])
if not after then
  after = 1
  local found = redis.call('ZREVRANGEBYSCORE', KEYS[3], upto or '+inf', '-inf', 'LIMIT', 0, 1)
  if #found > 0 then
    local raw = redis.call('HGET', KEYS[4], found[1])
    if raw then
      out[4], out[5], after = found[1], raw, tonumber(found[1])
    end
  end
end
if upto and upto <= after then
  return out
end
local rows = redis.call('XRANGE', KEYS[5], (after + 1) .. '-0', upto and (upto .. '-0') or '+')
for i = 1, #rows do
  out[5 + i] = rows[i]
end
return out
