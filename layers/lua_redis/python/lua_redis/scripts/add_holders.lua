-- add_holders: put users who hold a copy back into the reservation set: the users the database
-- has issued, and those whose record is still in Kafka.
-- KEYS[1] coupon:{id}:reserved
-- KEYS[2] coupon:{id}:meta
-- KEYS[3] coupon:{id}:holders  the holders' filter: every user added goes in (holders.lua)
-- ARGV    pairs of (user id, reservation time in ms)
-- A user already present is left alone. A user is added only while the set holds fewer
-- members than the coupon's total, so reconcile itself never pushes Redis past it; the rest
-- is deferred to a later run, once dead letters have freed their places.
-- Returns {added, deferred}.
local meta = redis.call('HMGET', KEYS[2], 'total', 'holdersEpoch', 'holdersBits')
local total = tonumber(meta[1])
if not total then
  return redis.error_reply('coupon state missing: ' .. KEYS[2])
end
local occupied = redis.call('ZCOUNT', KEYS[1], 1, '+inf')  -- not the sentinel (score 0)
local added, deferred = 0, 0
local members = {}
for i = 1, #ARGV, 2 do
  if not redis.call('ZSCORE', KEYS[1], ARGV[i]) then
    if occupied < total then
      redis.call('ZADD', KEYS[1], ARGV[i + 1], ARGV[i])
      occupied = occupied + 1
      added = added + 1
      members[added] = ARGV[i]
    else
      deferred = deferred + 1
    end
  end
end
if added > 0 then
  redis.call('PEXPIREAT', KEYS[1], redis.call('HGET', KEYS[2], 'expiresAt'))
  add_to_filter(KEYS[2], KEYS[3], meta[2] and tonumber(meta[3]), members)
end
return {added, deferred}
