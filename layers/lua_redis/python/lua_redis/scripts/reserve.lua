-- reserve: one user takes one copy of one coupon, atomically.
-- KEYS[1] coupon:{id}:reserved  sorted set, member = user id, score = reservation time (ms)
-- KEYS[2] coupon:{id}:meta      hash: total, startsAt, endsAt, expiresAt (epoch ms)
-- ARGV[1] user id
-- Returns {code, reservedAt}: 0 SUCCESS, 1 DUPLICATE, 2 SOLD_OUT, 3 NOT_OPEN, 4 ENDED,
-- 5 STATE_MISSING (meta absent: the caller initialises it from the database and retries).
-- The clock is the server's (TIME), so every reservation time and watermark of a coupon
-- comes from one clock, whatever the skew between the callers' hosts.
local meta = redis.call('HMGET', KEYS[2], 'total', 'startsAt', 'endsAt', 'expiresAt')
if not meta[1] then
  return {5, 0}
end
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
if now < tonumber(meta[2]) then
  return {3, 0}
end
if now >= tonumber(meta[3]) then
  return {4, 0}
end
local held = redis.call('ZSCORE', KEYS[1], ARGV[1])
if held then
  return {1, tonumber(held)}
end
local occupied = redis.call('ZCARD', KEYS[1])
if occupied >= tonumber(meta[1]) then
  return {2, 0}
end
redis.call('ZADD', KEYS[1], now, ARGV[1])
if occupied == 0 then
  redis.call('PEXPIREAT', KEYS[1], meta[4])
end
return {0, now}
