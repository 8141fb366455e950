-- advance_watermark: record the newest reservation time the worker has processed.
-- KEYS[1] coupon:{id}:watermark
-- KEYS[2] coupon:{id}:meta  (its expiresAt bounds the watermark's life)
-- ARGV[1] reservation time in ms
-- ARGV[2] how long the watermark lives (ms) when the meta hash is gone (lost, evicted)
-- Never moves backwards. Returns the watermark after the call.
local current = tonumber(redis.call('GET', KEYS[1]) or '0')
local candidate = tonumber(ARGV[1])
if candidate <= current then
  return current
end
redis.call('SET', KEYS[1], ARGV[1])
local expires = redis.call('HGET', KEYS[2], 'expiresAt')
if expires then
  redis.call('PEXPIREAT', KEYS[1], expires)
else
  redis.call('PEXPIRE', KEYS[1], ARGV[2])
end
return candidate
