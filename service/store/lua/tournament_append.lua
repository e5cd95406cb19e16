-- Append events to a tournament's stream iff it holds exactly the expected number of events.
-- KEYS[1] the stream (a Redis stream: entry <n>-0 holds the n-th event as JSON, field e),
-- KEYS[2] the tournament's record (a hash), KEYS[3] the running index (sorted set; absent on
-- a Redis Cluster, where it lives in another slot and the caller keeps it).
-- ARGV[1] expected length (0: the tournament is being created), ARGV[2] the most events a
-- stream may hold, ARGV[3] the most running tournaments (creation only), ARGV[4] the
-- tournament id, ARGV[5] its score in the running index (ms), ARGV[6] status after the append
-- ('' = unchanged), ARGV[7] seconds a finished tournament is kept, ARGV[8..] events.
-- Returns {'ok', length} | {'conflict', length} | {'too_long', length} | {'full', running}.
local expected = tonumber(ARGV[1])
local length = redis.call('XLEN', KEYS[1])
if length ~= expected then
  return {'conflict', length}
end
local n = #ARGV - 7
if length + n > tonumber(ARGV[2]) then
  return {'too_long', length}
end
local running_key = KEYS[3]
if expected == 0 and running_key then
  local running = redis.call('ZCARD', running_key)
  if running >= tonumber(ARGV[3]) then
    return {'full', running}
  end
  redis.call('ZADD', running_key, ARGV[5], ARGV[4])
end
for i = 8, #ARGV do
  redis.call('XADD', KEYS[1], (length + i - 7) .. '-0', 'e', ARGV[i])
end
if ARGV[6] ~= '' then
  redis.call('HSET', KEYS[2], 'status', ARGV[6])
  if ARGV[6] == 'finished' then
    if running_key then
      redis.call('ZREM', running_key, ARGV[4])
    end
    redis.call('EXPIRE', KEYS[1], tonumber(ARGV[7]))
    redis.call('EXPIRE', KEYS[2], tonumber(ARGV[7]))
  end
end
return {'ok', length + n}
