import { Cluster, Redis } from 'ioredis';
import { DedupStoreError } from '../errors.js';
import type { ClaimStatus, DedupClaim, DedupStore } from '../runtime/ports.js';
import { dedupBucketOf, dedupKeyLayout } from './dedup-key-layout.js';

/** A claim: `c|<owner>|<offset>`; a confirmed key: `d`. The owner index is a sorted set by offset. */
const CLAIM = `
local owner, ttl, out = ARGV[1], tonumber(ARGV[2]), {}
for i = 2, #KEYS do
  local key, offset = KEYS[i], tonumber(ARGV[i + 1])
  local value = redis.call('GET', key)
  if value == 'd' then
    out[#out + 1] = 'duplicate'
  elseif not value then
    redis.call('SET', key, 'c|' .. owner .. '|' .. offset, 'PX', ttl)
    redis.call('ZADD', KEYS[1], offset, key)
    out[#out + 1] = 'claimed'
  else
    local holder, held = string.match(value, '^c|(.*)|(%-?%d+)$')
    if holder == owner then
      local keep = math.min(tonumber(held), offset)
      redis.call('SET', key, 'c|' .. owner .. '|' .. keep, 'PX', ttl)
      redis.call('ZADD', KEYS[1], keep, key)
      out[#out + 1] = 'claimed'
    else
      out[#out + 1] = 'busy'
    end
  end
end
if redis.call('PTTL', KEYS[1]) < ttl then redis.call('PEXPIRE', KEYS[1], ttl) end
return out`;

const MARK_DONE = `
for i = 2, #KEYS do
  redis.call('SET', KEYS[i], 'd', 'PX', ARGV[1])
  redis.call('ZREM', KEYS[1], KEYS[i])
end
return #KEYS - 1`;

const RECOVER = `
local below = '(' .. ARGV[1]
local prefix = 'c|' .. ARGV[3] .. '|'
local n = 0
for _, key in ipairs(redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', below)) do
  local value = redis.call('GET', key)
  if value and string.sub(value, 1, #prefix) == prefix then
    redis.call('SET', key, 'd', 'PX', ARGV[2])
    n = n + 1
  end
end
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', below)
return n`;

type ScriptClient = (Redis | Cluster) & {
  weirClaim(...args: Array<string | number>): Promise<string[]>;
  weirMarkDone(...args: Array<string | number>): Promise<number>;
  weirRecover(...args: Array<string | number>): Promise<number>;
};

/** Options of {@link RedisDedupStore}. */
export interface RedisDedupStoreOptions {
  readonly applicationId: string;
  /** A `redis://` URL (standalone), or cluster nodes for ioredis `Cluster`. */
  readonly redis: string | { readonly clusterNodes: ReadonlyArray<{ host: string; port: number }> };
  /** Hash-tag buckets the keys are spread over (Redis Cluster slots); default 16. */
  readonly buckets?: number;
  /** Command timeout, ms; default 2 000. */
  readonly commandTimeoutMs?: number;
}

/**
 * The Redis {@link DedupStore} (ioredis). Each call runs one Lua script per hash-tag bucket,
 * all sent at once (auto-pipelined: one round trip per batch on a standalone Redis). Keys are
 * `weir:dedup:{<application.id>:<bucket>}:k:<dedup key>` with a TTL; each owner has an index
 * of its claims by offset, in the same bucket, for crash recovery. The hash tags keep every
 * script's keys in one Redis Cluster slot while spreading an application over many slots.
 */
export class RedisDedupStore implements DedupStore {
  private readonly client: ScriptClient;
  private readonly buckets: number;
  private readonly layout: ReturnType<typeof dedupKeyLayout>;

  constructor(options: RedisDedupStoreOptions) {
    const commandTimeout = options.commandTimeoutMs ?? 2_000;
    const common = { enableAutoPipelining: true, maxRetriesPerRequest: 1, commandTimeout, lazyConnect: true };
    const client =
      typeof options.redis === 'string'
        ? new Redis(options.redis, common)
        : new Cluster([...options.redis.clusterNodes], { enableAutoPipelining: true, redisOptions: { maxRetriesPerRequest: 1, commandTimeout } });
    client.defineCommand('weirClaim', { lua: CLAIM });
    client.defineCommand('weirMarkDone', { lua: MARK_DONE });
    client.defineCommand('weirRecover', { lua: RECOVER });
    client.on('error', () => undefined); // failures surface as rejected calls (DedupStoreError)
    this.client = client as ScriptClient;
    this.buckets = options.buckets ?? 16;
    this.layout = dedupKeyLayout(options.applicationId);
  }

  async claim(claims: readonly DedupClaim[], owner: string, claimTtlMs: number): Promise<ClaimStatus[]> {
    const statuses: ClaimStatus[] = new Array(claims.length);
    const groups = this.byBucket(claims.map((c, i) => ({ ...c, i })));
    await this.run('claim', [...groups].map(async ([bucket, group]) => {
      const keys = [this.layout.index(bucket, owner), ...group.map((c) => this.layout.entry(bucket, c.key))];
      const result = await this.client.weirClaim(keys.length, ...keys, owner, Math.ceil(claimTtlMs), ...group.map((c) => c.offset));
      group.forEach((c, j) => {
        statuses[c.i] = result[j] as ClaimStatus;
      });
    }));
    return statuses;
  }

  async markDone(keys: readonly string[], owner: string, ttlMs: number): Promise<void> {
    const groups = this.byBucket(keys.map((key) => ({ key })));
    await this.run('markDone', [...groups].map(([bucket, group]) => {
      const redisKeys = [this.layout.index(bucket, owner), ...group.map((c) => this.layout.entry(bucket, c.key))];
      return this.client.weirMarkDone(redisKeys.length, ...redisKeys, Math.ceil(ttlMs));
    }));
  }

  async recover(owner: string, committedOffset: number, ttlMs: number): Promise<number> {
    const counts = await this.run('recover', Array.from({ length: this.buckets }, (_, bucket) =>
      this.client.weirRecover(1, this.layout.index(bucket, owner), committedOffset, Math.ceil(ttlMs), owner),
    ));
    return counts.reduce((a, b) => a + b, 0);
  }

  async close(): Promise<void> {
    this.client.disconnect();
  }

  private byBucket<T extends { key: string }>(items: readonly T[]): Map<number, T[]> {
    const groups = new Map<number, T[]>();
    for (const item of items) {
      const bucket = dedupBucketOf(item.key, this.buckets);
      const group = groups.get(bucket);
      if (group) group.push(item);
      else groups.set(bucket, [item]);
    }
    return groups;
  }

  private async run<T>(operation: string, calls: Array<Promise<T>>): Promise<T[]> {
    try {
      return await Promise.all(calls);
    } catch (cause) {
      throw new DedupStoreError(`redis dedup ${operation} failed: ${cause instanceof Error ? cause.message : String(cause)}`, { cause });
    }
  }
}
