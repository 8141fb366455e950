-- install: publish a coupon state built from its holders, atomically.
-- KEYS[1] coupon:{id}:meta
-- KEYS[2] coupon:{id}:reserved
-- KEYS[3] coupon:{id}:staging:<token>  the holders, written beforehand in chunks
-- KEYS[4] coupon:{id}:requests
-- KEYS[5] coupon:{id}:rebuild  the wait before a lost state's rebuild: over, the state is whole
-- ARGV    total, startsAt, endsAt, expiresAt (epoch ms), closed ('1' or '0')
-- Reserve answers STATE_MISSING until the meta hash and both sentinels exist (member 0 of the
-- set, field 0 of the requests hash), so nothing can reserve before the swap; RENAME makes
-- the whole set visible at once in O(1). Every key expires at expiresAt.
-- Returns 1 when installed, 0 when a reservation set already existed (it is kept, the meta and
-- the sentinels are written, and the caller merges the holders into it with add_holders).
local function finish()
  redis.call('HSET', KEYS[1], 'total', ARGV[1], 'startsAt', ARGV[2], 'endsAt', ARGV[3],
    'expiresAt', ARGV[4], 'closed', ARGV[5])
  redis.call('ZADD', KEYS[2], 'NX', 0, '0')
  redis.call('HSETNX', KEYS[4], '0', 'sentinel')
  for _, key in ipairs({KEYS[1], KEYS[2], KEYS[4]}) do
    redis.call('PEXPIREAT', key, ARGV[4])
  end
  redis.call('DEL', KEYS[5])  -- a later loss starts a wait of its own
end
if redis.call('EXISTS', KEYS[2]) == 1 then
  redis.call('DEL', KEYS[3])
  finish()
  return 0
end
if redis.call('EXISTS', KEYS[3]) == 1 then
  redis.call('RENAME', KEYS[3], KEYS[2])
end
finish()
return 1
