-- A page of a pool: the ids of its waiting seeks, oldest first, and their cards, in one read.
-- KEYS[1] the pool (sorted set, by creation time), KEYS[2] the cards of the waiting seeks
-- ARGV[1] offset, ARGV[2] limit
-- Returns {size of the pool, id, card, id, card, ...} (card false: the seek has just ended).
local ids = redis.call('ZRANGE', KEYS[1], ARGV[1], tonumber(ARGV[1]) + tonumber(ARGV[2]) - 1)
local out = {redis.call('ZCARD', KEYS[1])}
if #ids == 0 then
  return out
end
local cards = redis.call('HMGET', KEYS[2], unpack(ids))
for i, id in ipairs(ids) do
  out[2 * i] = id
  out[2 * i + 1] = cards[i]
end
return out
