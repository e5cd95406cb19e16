-- Replace a game that is over by its archive document, atomically: either nothing changes or
-- the document is set and the stream, seed and snapshots are gone.
-- KEYS[1] meta hash, KEYS[2] events stream, KEYS[3] seed, KEYS[4] snapshots (hash),
-- KEYS[5] snapshot versions (sorted set), KEYS[6] the archive document
-- ARGV[1] the version the document holds, ARGV[2] the document
-- Returns 'ok' (archived now), 'done' (archived before: nothing changed), 'missing' (no such
-- game), 'live' (not over) or 'stale' (the stream is not at ARGV[1]: nothing changed).
if redis.call('EXISTS', KEYS[6]) == 1 then
  return 'done'
end
local status = redis.call('HGET', KEYS[1], 'status')
if not status then
  return 'missing'
end
if status ~= 'finished' and status ~= 'aborted' then
  return 'live'
end
local v = tonumber(ARGV[1])
if redis.call('XLEN', KEYS[2]) ~= v or tonumber(redis.call('HGET', KEYS[1], 'version')) ~= v then
  return 'stale'
end
redis.call('SET', KEYS[6], ARGV[2])
redis.call('DEL', KEYS[2], KEYS[3], KEYS[4], KEYS[5])
return 'ok'
