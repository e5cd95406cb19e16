-- Create a game: meta, seed and the first events, atomically, iff the id is unused; and list
-- it in the game index when its index keys are given.
-- KEYS[1] events stream, KEYS[2] meta hash, KEYS[3] seed key, then the index sets it joins
-- (none on a cluster, where they live in other slots).
-- ARGV[1] seed (hex), ARGV[2] the game id and ARGV[3] its index score (creation ms), ARGV[4]
-- number of meta field/value pairs, then the pairs, then one JSON envelope per event.
if redis.call('EXISTS', KEYS[2]) == 1 or redis.call('EXISTS', KEYS[1]) == 1 then
  return {'exists', 0}
end
redis.call('SET', KEYS[3], ARGV[1])
local pairs_n = tonumber(ARGV[4])
local fields = {}
for i = 5, 4 + 2 * pairs_n do
  fields[#fields + 1] = ARGV[i]
end
local first = 5 + 2 * pairs_n
local v = 0
for i = first, #ARGV do
  v = v + 1
  redis.call('XADD', KEYS[1], v .. '-0', 'e', ARGV[i])
end
fields[#fields + 1] = 'version'
fields[#fields + 1] = v
redis.call('HSET', KEYS[2], unpack(fields))
for i = 4, #KEYS do
  redis.call('ZADD', KEYS[i], ARGV[3], ARGV[2])
end
return {'ok', v}
