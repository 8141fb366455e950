-- holders: the holders' filter's one function, put before the scripts that add holders
-- (reserve, add_holders) when they are loaded (scripts.py); lua_redis/holders.py is its twin.
-- add_to_filter(meta, filter, bits, members): set each member's five bits (the SHA-1 of its text
-- in five 32-bit words, each modulo the filter's size) and count the adds in holdersAdded, which
-- with holdersEpoch is the filter's version, the one a container compares with its copy.
-- bits is nil for a state without a filter (no holdersEpoch in the meta hash): none is kept. A
-- filter lost alone is not made again here, half empty, where a container would read it as
-- whole: its fields are dropped, and the coupon's refusals all run the script until its state
-- is next rebuilt.
local function add_to_filter(meta, filter, bits, members)
  if not bits then
    return
  end
  if redis.call('EXISTS', filter) == 0 then
    redis.call('HDEL', meta, 'holdersEpoch', 'holdersAdded', 'holdersBits')
    return
  end
  for _, member in ipairs(members) do
    local hash = redis.sha1hex(member)
    local ops = {}
    for i = 0, 4 do
      ops[#ops + 1] = 'SET'
      ops[#ops + 1] = 'u1'
      ops[#ops + 1] = tonumber(string.sub(hash, i * 8 + 1, i * 8 + 8), 16) % bits
      ops[#ops + 1] = 1
    end
    redis.call('BITFIELD', filter, unpack(ops))
  end
  redis.call('HINCRBY', meta, 'holdersAdded', #members)
end
