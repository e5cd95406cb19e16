-- Open a seek: its record, its card and its places in the indexes, atomically, iff its player
-- has fewer than the per-player limit of waiting seeks and the server fewer than the total.
-- KEYS[1] waiting seeks (sorted set, by expiry), KEYS[2] seeks to fill with bots (by fill
-- time), KEYS[3] seeks not yet tried for a match (by creation time), KEYS[4] the cards of the
-- waiting seeks (hash), KEYS[5] the seek's record (hash), KEYS[6] its player's waiting seeks,
-- KEYS[7] its type's, KEYS[8] every waiting seek's, KEYS[9..] its pools (sorted sets, by
-- creation time)
-- ARGV[1] seek id, ARGV[2] per-player limit, ARGV[3] total limit, ARGV[4] created ms,
-- ARGV[5] expiry ms, ARGV[6] fill ms ('' = never), ARGV[7] its card, then the record's
-- field/value pairs.
-- Returns 'ok', 'player_full' or 'full' (nothing written).
if redis.call('ZCARD', KEYS[6]) >= tonumber(ARGV[2]) then
  return 'player_full'
end
if redis.call('ZCARD', KEYS[1]) >= tonumber(ARGV[3]) then
  return 'full'
end
local id = ARGV[1]
redis.call('HSET', KEYS[5], unpack(ARGV, 8))
redis.call('HSET', KEYS[4], id, ARGV[7])
redis.call('ZADD', KEYS[1], ARGV[5], id)
if ARGV[6] ~= '' then
  redis.call('ZADD', KEYS[2], ARGV[6], id)
end
redis.call('ZADD', KEYS[3], ARGV[4], id)
for i = 6, #KEYS do
  redis.call('ZADD', KEYS[i], ARGV[4], id)
end
return 'ok'
