-- restore_requests: give holders back the request id that holds their reservation, after a
-- rebuild, so that a client's retry of that request (its Idempotency-Key makes the same request
-- id) answers its own SUCCESS again, as before the loss, and not DUPLICATE.
-- KEYS[1] coupon:{id}:reserved
-- KEYS[2] coupon:{id}:requests  (written by install, with its expiry)
-- ARGV    pairs of (user id, request id): from the issued rows and the records in flight
-- A user not in the set, or whose request id Redis still knows, is left alone.
-- Returns the number of request ids restored.
local restored = 0
for i = 1, #ARGV, 2 do
  if redis.call('ZSCORE', KEYS[1], ARGV[i]) and redis.call('HSETNX', KEYS[2], ARGV[i], ARGV[i + 1]) == 1 then
    restored = restored + 1
  end
end
return restored
