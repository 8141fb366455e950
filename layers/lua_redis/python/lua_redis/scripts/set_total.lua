-- set_total: a coupon's total, as the database now counts it (a cancel that keeps its user's
-- reservation to block a second take adds a copy for the others).
-- KEYS[1] coupon:{id}:meta  hash: total, startsAt, endsAt, expiresAt
-- ARGV[1] the total
-- Returns 1 if set, 0 if the state is missing: it is then rebuilt whole from the database, and
-- must not be half-created here (a meta hash with a total and no window).
if redis.call('EXISTS', KEYS[1]) == 0 then
  return 0
end
redis.call('HSET', KEYS[1], 'total', ARGV[1])
return 1
