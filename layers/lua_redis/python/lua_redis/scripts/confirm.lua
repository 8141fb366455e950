-- confirm: run before a WAIT, in one pipeline with it, on the connection that then asks WAIT.
-- WAIT counts the replicas that have this connection's own writes; a connection opened after the
-- reserve's (a retry, a renewed token, a failover) has none, and would be answered at once. So
-- the primary this connection reaches is asked whether it holds the reservation, and if it does,
-- a write follows it here, which WAIT then waits for: the reservation is before it in the
-- primary's replication stream.
-- KEYS[1] coupon:{id}:reserved    sorted set of reservations
-- KEYS[2] coupon:{id}:replicated  the write WAIT waits for (a second's TTL)
-- ARGV[1] user id
-- ARGV[2] the reservation's time (epoch ms)
-- Returns 1 if the user's reservation is there, made at that time (and writes KEYS[2]); else 0,
-- writing nothing: this primary lost it (a failover), and no WAIT can make it durable.
local held = redis.call('ZSCORE', KEYS[1], ARGV[1])
if not held or tonumber(held) ~= tonumber(ARGV[2]) then
  return 0
end
redis.call('SET', KEYS[2], ARGV[2], 'PX', 1000)
return 1
