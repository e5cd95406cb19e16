-- Read one game in one round trip (read-only).
-- KEYS[1] meta hash, KEYS[2] seed, KEYS[3] snapshot versions (sorted set), KEYS[4] snapshots
-- (hash), KEYS[5] events stream, KEYS[6] archive document.
-- ARGV[1] '1': also the meta hash, the seed and the creation event (version 1);
-- ARGV[2] the highest version wanted ('' = the latest);
-- ARGV[3] read the events after this version ('' = after the newest snapshot at or below
--         ARGV[2], else after version 1);
-- ARGV[4] the most events returned here: more are left to a plain XRANGE by the caller (a
--         script's reply passes through Lua tables, slower than XRANGE's for long ranges).
-- Returns {meta (flat field/value list) | false, seed | false, creation envelope | false,
--          snapshot version | false, snapshot | false, 1 if the events follow else 0,
--          envelope, envelope, ...}: the envelopes of the versions after the base, in order
-- (versions are dense: entry ids are <version>-0); a game without meta answers {false};
-- an archived game (no stream, a document) answers {'archived', meta (ARGV[1] '1') | false,
-- document}.
if redis.call('EXISTS', KEYS[5]) == 0 then
  local doc = redis.call('GET', KEYS[6])
  if doc then
    return {'archived', ARGV[1] == '1' and redis.call('HGETALL', KEYS[1]) or false, doc}
  end
end
local out = {false, false, false, false, false, 1}
if ARGV[1] == '1' then
  local meta = redis.call('HGETALL', KEYS[1])
  if #meta == 0 then
    return {false}
  end
  out[1] = meta
  out[2] = redis.call('GET', KEYS[2])
  local first = redis.call('XRANGE', KEYS[5], '1-0', '1-0')[1]
  out[3] = first and first[2][2] or false
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
if (upto or redis.call('XLEN', KEYS[5])) - after > tonumber(ARGV[4]) then
  out[6] = 0
  return out
end
local rows = redis.call('XRANGE', KEYS[5], (after + 1) .. '-0', upto and (upto .. '-0') or '+')
for i = 1, #rows do
  out[6 + i] = rows[i][2][2]
end
return out
