-- availability: what a shop's page may know of a coupon's sale, read in one round trip.
-- KEYS[1] coupon:{id}:meta      hash: total, startsAt, endsAt (epoch ms), closed
-- KEYS[2] coupon:{id}:reserved  sorted set of reservations, with reserve.lua's sentinel (member 0)
-- KEYS[3] coupon:{id}:requests  hash, with reserve.lua's sentinel (field 0)
-- Returns {now, total, startsAt, endsAt, closed, taken}: the server's time (TIME, epoch ms), the
-- meta's numbers, closed 1 or 0, and the reservations held (the sentinel not counted); or {now}
-- alone when the state is missing as reserve.lua sees it (no meta, or a sentinel lost: it would
-- answer STATE_MISSING), for the caller to ask the registry of coupons. It writes nothing.
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local meta = redis.call('HMGET', KEYS[1], 'total', 'startsAt', 'endsAt', 'closed')
if not meta[1] or not redis.call('ZSCORE', KEYS[2], '0') or redis.call('HEXISTS', KEYS[3], '0') == 0 then
  return {now}
end
return {now, tonumber(meta[1]), tonumber(meta[2]), tonumber(meta[3]), meta[4] == '1' and 1 or 0,
  redis.call('ZCARD', KEYS[2]) - 1}
