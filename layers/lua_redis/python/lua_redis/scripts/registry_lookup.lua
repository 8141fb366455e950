-- registry_lookup: what the registry of coupons says of a coupon whose state reserve found
-- missing, and for one whose state must be built, which caller of the fleet has it built.
-- KEYS[1] coupons:{registry}              hash: coupon id -> expiresAt (epoch ms); 'complete'
--                                         once it holds every coupon the database has
-- KEYS[2] coupons:{registry}:build:<id>   the claim on building coupon <id>'s state
-- ARGV[1] coupon id
-- ARGV[2] how long a claim holds (ms)
-- Returns 0 BUILD (a coupon whose state lives, or an id the registry cannot rule out: this
-- caller holds the claim and has the state built), 1 COUPON_NOT_FOUND (no such id in a
-- complete registry), 2 ENDED (its state has expired: the build would answer ENDED), 3 BUILDING
-- (another caller holds the claim: nothing to do but retry shortly). So a coupon's state is
-- asked for at most once per claim, whatever the number of intake containers asking.
local expires = redis.call('HGET', KEYS[1], ARGV[1])
if expires then
  local t = redis.call('TIME')
  local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
  if now >= tonumber(expires) then
    return 2
  end
elseif redis.call('HEXISTS', KEYS[1], 'complete') == 1 then
  return 1
end
if redis.call('SET', KEYS[2], '1', 'NX', 'PX', ARGV[2]) then
  return 0
end
return 3
