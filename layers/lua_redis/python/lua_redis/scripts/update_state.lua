-- update_state: a coupon's meta as the database now has it (a top-up, a cancel that keeps its
-- reservation, a new window, closed or reopened), with its keys' expiry; the reservations are
-- left as they are.
-- KEYS[1] coupon:{id}:meta, KEYS[2] coupon:{id}:reserved, KEYS[3] coupon:{id}:requests,
-- KEYS[4] coupon:{id}:idempotency, KEYS[5] coupon:{id}:holders
-- ARGV    total, startsAt, endsAt, expiresAt (epoch ms), closed ('1' or '0')
-- Returns 1 if updated, 0 if the state is missing: it is then rebuilt whole from the database,
-- and must not be half-created here (a meta hash without its reservations).
if redis.call('EXISTS', KEYS[1]) == 0 or redis.call('EXISTS', KEYS[2]) == 0 then
  return 0
end
redis.call('HSET', KEYS[1], 'total', ARGV[1], 'startsAt', ARGV[2], 'endsAt', ARGV[3],
  'expiresAt', ARGV[4], 'closed', ARGV[5])
for _, key in ipairs(KEYS) do
  redis.call('PEXPIREAT', key, ARGV[4])  -- no-op for a key that does not exist
end
return 1
