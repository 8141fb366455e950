-- reserve: one user takes one copy of one coupon, atomically; idempotent per request.
-- KEYS[1] coupon:{id}:reserved  sorted set, member = user id, score = reservation time (ms)
-- KEYS[2] coupon:{id}:meta      hash: total, startsAt, endsAt, expiresAt (epoch ms), closed
-- KEYS[3] coupon:{id}:requests  hash: user id -> the request id that holds its reservation
-- KEYS[4] coupon:{id}:idempotency  hash: Idempotency-Key -> the user it was first used for
-- KEYS[5] coupon:{id}:holders   the holders' filter (holders.lua, put before this script)
-- ARGV[1] user id
-- ARGV[2] request id
-- ARGV[3] the client's Idempotency-Key, or '' without one
-- Returns {code, reservedAt, decidedAt}: 0 SUCCESS, 1 DUPLICATE, 2 SOLD_OUT, 3 NOT_OPEN, 4 ENDED,
-- 5 STATE_MISSING (a key lost, or no such coupon: the caller asks the registry of coupons),
-- 6 KEY_REUSED (the Idempotency-Key was used for another user of this coupon: nothing changes),
-- 7 CLOSED (an operator closed the coupon: the kill switch).
-- decidedAt is the server's time of the answer (TIME, epoch ms): when the decision was made, for
-- the measure of first come, first served (docs/design.md, Arrival order).
-- Every answer but STATE_MISSING says for how long it holds, as a fourth value: the ms until
-- the window's next edge that would change it (NOT_OPEN until startsAt; SOLD_OUT, SUCCESS,
-- DUPLICATE and KEY_REUSED until endsAt), or -1 for none (ENDED, CLOSED). CLOSED, NOT_OPEN and
-- ENDED hold for every caller; SUCCESS, DUPLICATE and KEY_REUSED for this caller (its user and
-- its key); SOLD_OUT for every caller the holders' filter clears, and it adds the filter's
-- version: {2, 0, decidedAt, ms, holdersEpoch, holdersAdded} ('' and 0 without one). An intake container
-- remembers such answers for at most a second (docs/design.md).
-- The reservation set and the requests hash each carry a sentinel written by install (member 0,
-- score 0; field 0), and the meta hash is never empty, so that the loss of any of the three
-- (eviction, a flush, a failover) is seen here, on the hot path, without another round trip: an
-- empty set and a lost one look alike otherwise. The idempotency hash has none: its loss only
-- forgets which user each key was first used for.
-- The same request sent again (a client retry after a dropped connection, when the first
-- call ran but its answer was lost) gets its own SUCCESS back, with the same time; another
-- request of a user who holds a reservation is DUPLICATE.
-- The clock is the server's (TIME), so every reservation time of a coupon comes from one
-- clock, whatever the skew between the callers' hosts.
local meta = redis.call('HMGET', KEYS[2], 'total', 'startsAt', 'endsAt', 'expiresAt', 'closed',
  'holdersEpoch', 'holdersAdded', 'holdersBits')
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
if not meta[1] or not redis.call('ZSCORE', KEYS[1], '0') or redis.call('HEXISTS', KEYS[3], '0') == 0 then
  return {5, 0, now}
end
if meta[5] == '1' then
  return {7, 0, now, -1}
end
if now < tonumber(meta[2]) then
  return {3, 0, now, tonumber(meta[2]) - now}
end
if now >= tonumber(meta[3]) then
  return {4, 0, now, -1}
end
local left = tonumber(meta[3]) - now
if ARGV[3] ~= '' then
  local owner = redis.call('HGET', KEYS[4], ARGV[3])
  if owner and owner ~= ARGV[1] then
    return {6, 0, now, left}
  end
end
local held = redis.call('ZSCORE', KEYS[1], ARGV[1])
if held then
  if redis.call('HGET', KEYS[3], ARGV[1]) == ARGV[2] then
    return {0, tonumber(held), now, left}
  end
  return {1, tonumber(held), now, left}
end
local occupied = redis.call('ZCARD', KEYS[1]) - 1  -- the sentinel holds no copy
if occupied >= tonumber(meta[1]) then
  return {2, 0, now, left, meta[6] or '', meta[7] or 0}
end
redis.call('ZADD', KEYS[1], now, ARGV[1])
redis.call('HSET', KEYS[3], ARGV[1], ARGV[2])
if ARGV[3] ~= '' and redis.call('HSET', KEYS[4], ARGV[3], ARGV[1]) == 1 and redis.call('PTTL', KEYS[4]) == -1 then
  redis.call('PEXPIREAT', KEYS[4], meta[4])
end
add_to_filter(KEYS[2], KEYS[5], meta[6] and tonumber(meta[8]), ARGV[3] ~= '' and {ARGV[1], ARGV[3]} or {ARGV[1]})
return {0, now, now, left}
