-- Record one rated game: its update on the ledger and the players' new ratings, atomically,
-- iff the game is not rated yet and every player's rating is still the one it was computed from.
-- KEYS[1] ledger stream, KEYS[2] current ratings hash, KEYS[3] rated games hash, KEYS[4] board
-- (sorted set), KEYS[5] provisional board (sorted set)
-- ARGV[1] game id, ARGV[2] the update (JSON), ARGV[3] games before a player leaves the
-- provisional board, ARGV[4] n players, then per player: id, rating read ('' = none), new
-- rating (JSON), new ordinal, games played with this one.
-- Returns 'ok', 'done' (rated before: nothing changed) or 'stale' (a rating moved: retry).
if redis.call('HEXISTS', KEYS[3], ARGV[1]) == 1 then
  return 'done'
end
local n, min_games = tonumber(ARGV[4]), tonumber(ARGV[3])
for i = 0, n - 1 do
  local b = 5 + 5 * i
  if (redis.call('HGET', KEYS[2], ARGV[b]) or '') ~= ARGV[b + 1] then
    return 'stale'
  end
end
local id = redis.call('XADD', KEYS[1], '*', 'e', ARGV[2])
redis.call('HSET', KEYS[3], ARGV[1], id)
for i = 0, n - 1 do
  local b = 5 + 5 * i
  local player = ARGV[b]
  redis.call('HSET', KEYS[2], player, ARGV[b + 2])
  if tonumber(ARGV[b + 4]) >= min_games then
    redis.call('ZREM', KEYS[5], player)
    redis.call('ZADD', KEYS[4], ARGV[b + 3], player)
  else
    redis.call('ZADD', KEYS[5], ARGV[b + 3], player)
  end
end
return 'ok'
