-- Append all events of one command atomically, iff the stream is at the expected version.
-- KEYS[1] events stream, KEYS[2] meta hash, KEYS[3] idempotency key (may be absent)
-- ARGV[1] expected version, ARGV[2] status after the command ('' = unchanged),
-- ARGV[3] idempotency record prefix ('' = none), ARGV[4] idempotency TTL seconds,
-- ARGV[5..] one JSON envelope per event, in order.
-- Returns {'ok', last_version} | {'conflict', current_version} | {'idem', stored_record}
--         | {'missing', 0}
if redis.call('EXISTS', KEYS[2]) == 0 then
  return {'missing', 0}
end
if ARGV[3] ~= '' then
  local prior = redis.call('GET', KEYS[3])
  if prior then
    return {'idem', prior}
  end
end
local current = redis.call('XLEN', KEYS[1])
if current ~= tonumber(ARGV[1]) then
  return {'conflict', current}
end
local n = #ARGV - 4
for i = 1, n do
  redis.call('XADD', KEYS[1], (current + i) .. '-0', 'e', ARGV[4 + i])
end
local last = current + n
redis.call('HSET', KEYS[2], 'version', last)
if ARGV[2] ~= '' then
  redis.call('HSET', KEYS[2], 'status', ARGV[2])
end
if ARGV[3] ~= '' then
  redis.call('SET', KEYS[3], ARGV[3] .. '|' .. (current + 1) .. '|' .. last,
             'EX', tonumber(ARGV[4]))
end
return {'ok', last}
