-- registry_fill: adds coupons the registry lacks, and marks it complete at the end of a load.
-- KEYS[1] coupons:{registry}  hash: coupon id -> expiresAt (epoch ms), 'loading', 'complete'
-- ARGV[1] the load's token, or '' for a chunk that does not end it
-- ARGV[2..] coupon id, expiresAt pairs: each added only if missing (an entry present was
--           written by a create, a change or a build, none of them older than the load's read)
-- A load starts by writing its token in 'loading' (RedisCouponRegistry.begin_load), then reads
-- the database. If Redis lost the registry since (a flush, a failover), the token is gone with
-- it and the load does not mark a registry complete that may miss a coupon created meanwhile.
-- Returns 1 if this call completed the registry, else 0.
for i = 2, #ARGV, 2 do
  redis.call('HSETNX', KEYS[1], ARGV[i], ARGV[i + 1])
end
if ARGV[1] ~= '' and redis.call('HGET', KEYS[1], 'loading') == ARGV[1] then
  redis.call('HDEL', KEYS[1], 'loading')
  redis.call('HSET', KEYS[1], 'complete', ARGV[1])
  return 1
end
return 0
