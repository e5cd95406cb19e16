-- End seeks together: every one of them still waiting becomes matched (to one game, each with
-- its seat), cancelled or expired, and leaves every index -- or, if any of them is no longer
-- waiting, nothing changes. The one way a seek leaves 'waiting', so no seek ends twice.
-- KEYS[1] waiting seeks, KEYS[2] seeks to fill with bots, KEYS[3] seeks not yet tried for a
-- match, KEYS[4] the cards of the waiting seeks, then per seek: its record, then its index
-- keys (its player's, its type's, every waiting seek's, its pools)
-- ARGV[1] the new status, ARGV[2] game id ('' = none), ARGV[3] ended ms, ARGV[4] seconds an
-- ended record is kept, ARGV[5] n seeks, then per seek: id, seat ('' = none), n index keys.
-- Returns {'ok'} or {'busy', i, status}: the i-th seek (from 1) is not waiting ('' = no such
-- seek).
local n = tonumber(ARGV[5])
local k, a = 5, 6
for i = 1, n do
  local status = redis.call('HGET', KEYS[k], 'status')
  if status ~= 'waiting' then
    return {'busy', i, status or ''}
  end
  k = k + 1 + tonumber(ARGV[a + 2])
  a = a + 3
end
k, a = 5, 6
for i = 1, n do
  local id, seat, m = ARGV[a], ARGV[a + 1], tonumber(ARGV[a + 2])
  redis.call('HSET', KEYS[k], 'status', ARGV[1], 'ended_ms', ARGV[3])
  if ARGV[2] ~= '' then
    redis.call('HSET', KEYS[k], 'game_id', ARGV[2], 'seat', seat)
  end
  redis.call('EXPIRE', KEYS[k], ARGV[4])
  for j = 1, 3 do
    redis.call('ZREM', KEYS[j], id)
  end
  redis.call('HDEL', KEYS[4], id)
  for j = 1, m do
    redis.call('ZREM', KEYS[k + j], id)
  end
  k = k + 1 + m
  a = a + 3
end
return {'ok'}
