-- release: fenced removal of reservations.
-- KEYS[1] coupon:{id}:reserved
-- KEYS[2] coupon:{id}:requests  (the released user's request id goes with its reservation)
-- ARGV    pairs of (user id, reservation time in ms)
-- A member is removed only if its score equals the given reservation time, so a stale
-- dead letter never frees a newer reservation of the same user. Idempotent.
-- Returns one answer per pair, named as the domain's ReleaseOutcome: RELEASED, NOT_HELD, or STALE
-- (held with another time).
local codes = {}
for i = 1, #ARGV, 2 do
  local held = redis.call('ZSCORE', KEYS[1], ARGV[i])
  if not held then
    codes[#codes + 1] = 'NOT_HELD'
  elseif tonumber(held) == tonumber(ARGV[i + 1]) then
    redis.call('ZREM', KEYS[1], ARGV[i])
    redis.call('HDEL', KEYS[2], ARGV[i])
    codes[#codes + 1] = 'RELEASED'
  else
    codes[#codes + 1] = 'STALE'
  end
end
return codes
