-- rebuild_gate: how long a lost coupon state must wait before it is rebuilt.
-- KEYS[1] coupon:{id}:rebuild  the server time (ms) from which the rebuild may start
-- ARGV[1] the wait (ms): the longest a produce that began before the loss can still take
-- The first caller after a loss starts the wait; the callers after it see what is left of it.
-- A produce that was under way when Redis lost the state is acknowledged, or has failed, by the
-- end of the wait, so the records in flight read after it include every reservation made
-- before the loss. install.lua ends the wait once the state is whole. Returns the milliseconds
-- left (0: rebuild now).
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local from = tonumber(redis.call('GET', KEYS[1]) or '0')
if from == 0 then
  from = now + tonumber(ARGV[1])
  redis.call('SET', KEYS[1], from, 'PX', tonumber(ARGV[1]) * 10 + 60000)
end
if now >= from then
  return 0
end
return from - now
