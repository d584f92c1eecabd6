/**
 * The Lua scripts of {@link RedisDedupStore}. Every script takes the owner's index keys first
 * (`m` of them, one per hash-tag bucket the call touches) and then the entry keys, so one call
 * can serve a whole batch on a standalone Redis, and one call per bucket (one Redis Cluster
 * slot each) on a cluster.
 *
 * Entry values: a claim is `c|<owner>|<offset>` (TTL: the claim TTL), a confirmed key is `d`
 * (TTL: the dedup window). An index is a sorted set of the owner's unconfirmed entry keys,
 * scored by the offset of the record that claimed them.
 *
 * @module
 */

/**
 * Claims entry keys for an owner.
 * KEYS: index_1..index_m, entry_1..entry_n.
 * ARGV: owner, claim TTL (ms), m, offset_1..offset_n, index position (1..m) of entry_1..entry_n.
 * Returns one status per entry: `claimed`, `duplicate` or `busy`.
 */
export const CLAIM_SCRIPT = `
local owner, ttl, m = ARGV[1], tonumber(ARGV[2]), tonumber(ARGV[3])
local n = #KEYS - m
local out = {}
for i = 1, n do
  local key, offset, index = KEYS[m + i], tonumber(ARGV[3 + i]), KEYS[tonumber(ARGV[3 + n + i])]
  local value = redis.call('GET', key)
  if value == 'd' then
    out[i] = 'duplicate'
  elseif not value then
    redis.call('SET', key, 'c|' .. owner .. '|' .. offset, 'PX', ttl)
    redis.call('ZADD', index, offset, key)
    out[i] = 'claimed'
  else
    local holder, held = string.match(value, '^c|(.*)|(%-?%d+)$')
    if holder == owner then
      local keep = math.min(tonumber(held), offset)
      redis.call('SET', key, 'c|' .. owner .. '|' .. keep, 'PX', ttl)
      redis.call('ZADD', index, keep, key)
      out[i] = 'claimed'
    else
      out[i] = 'busy'
    end
  end
end
for j = 1, m do
  if redis.call('PTTL', KEYS[j]) < ttl then redis.call('PEXPIRE', KEYS[j], ttl) end
end
return out`;

/**
 * Confirms entry keys: they become `d` for the dedup window and leave the owner's index.
 * KEYS: index_1..index_m, entry_1..entry_n.
 * ARGV: dedup window (ms), m, index position (1..m) of entry_1..entry_n.
 * Returns n.
 */
export const MARK_DONE_SCRIPT = `
local ttl, m = ARGV[1], tonumber(ARGV[2])
local n = #KEYS - m
for i = 1, n do
  local key = KEYS[m + i]
  redis.call('SET', key, 'd', 'PX', ttl)
  redis.call('ZREM', KEYS[tonumber(ARGV[2 + i])], key)
end
return n`;

/**
 * Crash recovery: the owner's claims made by records below the committed offset are confirmed;
 * the rest stay claimed.
 * KEYS: index_1..index_m.
 * ARGV: committed offset, dedup window (ms), owner.
 * Returns how many keys were confirmed.
 */
export const RECOVER_SCRIPT = `
local below = '(' .. ARGV[1]
local prefix = 'c|' .. ARGV[3] .. '|'
local n = 0
for j = 1, #KEYS do
  for _, key in ipairs(redis.call('ZRANGEBYSCORE', KEYS[j], '-inf', below)) do
    local value = redis.call('GET', key)
    if value and string.sub(value, 1, #prefix) == prefix then
      redis.call('SET', key, 'd', 'PX', ARGV[2])
      n = n + 1
    end
  end
  redis.call('ZREMRANGEBYSCORE', KEYS[j], '-inf', below)
end
return n`;
