-- install: publish a coupon state built from the database, atomically.
-- KEYS[1] coupon:{id}:meta
-- KEYS[2] coupon:{id}:reserved
-- KEYS[3] coupon:{id}:staging:<token>  the holders, written beforehand in chunks
-- ARGV    total, startsAt, endsAt, expiresAt (epoch ms)
-- Reserve answers STATE_MISSING until the meta hash exists, so nothing can reserve before the
-- swap; RENAME makes the whole set visible at once in O(1).
-- Returns 1 when installed, 0 when a reservation set already existed (it is kept, the meta is
-- written, and the caller merges the holders into it with add_holders instead).
local function write_meta()
  redis.call('HSET', KEYS[1], 'total', ARGV[1], 'startsAt', ARGV[2], 'endsAt', ARGV[3],
    'expiresAt', ARGV[4])
  redis.call('PEXPIREAT', KEYS[1], ARGV[4])
end
if redis.call('EXISTS', KEYS[2]) == 1 then
  redis.call('DEL', KEYS[3])
  write_meta()
  return 0
end
if redis.call('EXISTS', KEYS[3]) == 1 then
  redis.call('RENAME', KEYS[3], KEYS[2])
  redis.call('PEXPIREAT', KEYS[2], ARGV[4])
end
write_meta()
return 1
