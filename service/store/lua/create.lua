-- Create a game: meta, seed and the first events, atomically, iff the id is unused.
-- KEYS[1] events stream, KEYS[2] meta hash, KEYS[3] seed key
-- ARGV[1] seed (hex), ARGV[2] number of meta field/value pairs, then the pairs,
-- then one JSON envelope per event.
if redis.call('EXISTS', KEYS[2]) == 1 or redis.call('EXISTS', KEYS[1]) == 1 then
  return {'exists', 0}
end
redis.call('SET', KEYS[3], ARGV[1])
local pairs_n = tonumber(ARGV[2])
for i = 0, pairs_n - 1 do
  redis.call('HSET', KEYS[2], ARGV[3 + 2 * i], ARGV[4 + 2 * i])
end
local first = 3 + 2 * pairs_n
local v = 0
for i = first, #ARGV do
  v = v + 1
  redis.call('XADD', KEYS[1], v .. '-0', 'e', ARGV[i])
end
redis.call('HSET', KEYS[2], 'version', v)
return {'ok', v}
