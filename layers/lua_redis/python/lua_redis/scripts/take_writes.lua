-- take_writes: the cluster-wide limit on database writes, a token bucket every worker shares.
-- KEYS[1] the bucket, a hash: tokens (may be negative: writes admitted ahead), at (ms)
-- ARGV[1] rate (writes per second), ARGV[2] burst (the bucket's size), ARGV[3] the writes
-- asked for, ARGV[4] the longest the caller will wait (ms)
-- Returns how long the caller waits (ms) before it writes, with the writes taken; or -1 when
-- that would be longer than it will wait, with nothing taken. The bucket refills at the rate
-- on the server's clock (TIME): callers sleeping what they are told write, together, at most
-- the rate on average and the burst at once, however many they are.
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local rate, burst = tonumber(ARGV[1]), tonumber(ARGV[2])
local writes, max_wait = tonumber(ARGV[3]), tonumber(ARGV[4])
local bucket = redis.call('HMGET', KEYS[1], 'tokens', 'at')
local tokens = tonumber(bucket[1]) or burst
local at = tonumber(bucket[2]) or now
tokens = math.min(burst, tokens + math.max(0, now - at) * rate / 1000)
local after = tokens - writes
local wait = 0
if after < 0 then
  wait = math.ceil(-after * 1000 / rate)
end
if wait > max_wait then
  return -1
end
redis.call('HSET', KEYS[1], 'tokens', tostring(after), 'at', now)
redis.call('PEXPIRE', KEYS[1], wait + math.ceil(burst * 1000 / rate) + 60000)
return wait
