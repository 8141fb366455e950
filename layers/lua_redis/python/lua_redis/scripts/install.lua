-- install: publish a coupon state built from its holders, atomically.
-- KEYS[1] coupon:{id}:meta
-- KEYS[2] coupon:{id}:reserved
-- KEYS[3] coupon:{id}:staging:<token>  the holders, written beforehand in chunks
-- KEYS[4] coupon:{id}:requests
-- KEYS[5] coupon:{id}:rebuild  the wait before a lost state's rebuild: over, the state is whole
-- KEYS[6] coupon:{id}:holders  the holders' filter (lua_redis/holders.py)
-- KEYS[7] coupon:{id}:staging:<token>:holders  the filter of the same holders, and of the keys
--         the idempotency hash still has, written beforehand
-- ARGV    total, startsAt, endsAt, expiresAt (epoch ms), closed ('1' or '0'), then the new
--         filter's epoch (a token no earlier filter of the coupon had) and size in bits
-- Reserve answers STATE_MISSING until the meta hash and both sentinels exist (member 0 of the
-- set, field 0 of the requests hash), so nothing can reserve before the swap; RENAME makes
-- the whole set visible at once in O(1). Every key expires at expiresAt.
-- A new set gets the new filter, at version (epoch, 0). Returns 1 when installed, 0 when a
-- reservation set already existed (it is kept with its filter, the meta and the sentinels are
-- written, and the caller merges the holders into it with add_holders).
local function finish()
  redis.call('HSET', KEYS[1], 'total', ARGV[1], 'startsAt', ARGV[2], 'endsAt', ARGV[3],
    'expiresAt', ARGV[4], 'closed', ARGV[5])
  redis.call('ZADD', KEYS[2], 'NX', 0, '0')
  redis.call('HSETNX', KEYS[4], '0', 'sentinel')
  for _, key in ipairs({KEYS[1], KEYS[2], KEYS[4], KEYS[6]}) do
    redis.call('PEXPIREAT', key, ARGV[4])
  end
  redis.call('DEL', KEYS[5])  -- a later loss starts a wait of its own
end
if redis.call('EXISTS', KEYS[2]) == 1 then
  redis.call('DEL', KEYS[3], KEYS[7])
  finish()
  return 0
end
if redis.call('EXISTS', KEYS[3]) == 1 then
  redis.call('RENAME', KEYS[3], KEYS[2])
end
if redis.call('EXISTS', KEYS[7]) == 1 then
  redis.call('RENAME', KEYS[7], KEYS[6])
  redis.call('HSET', KEYS[1], 'holdersEpoch', ARGV[6], 'holdersAdded', 0, 'holdersBits', ARGV[7])
else  -- its staging copy expired: no filter rather than a wrong one
  redis.call('DEL', KEYS[6])
  redis.call('HDEL', KEYS[1], 'holdersEpoch', 'holdersAdded', 'holdersBits')
end
finish()
return 1
