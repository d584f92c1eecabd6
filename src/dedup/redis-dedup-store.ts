import { createHash } from 'node:crypto';
import { Cluster, Redis } from 'ioredis';
import { DedupStoreError } from '../errors.js';
import type { ClaimStatus, DedupClaim, DedupStore } from '../runtime/ports.js';
import { dedupBucketOf, dedupKeyLayout } from './dedup-key-layout.js';
import { CLAIM_SCRIPT, MARK_DONE_SCRIPT, RECOVER_SCRIPT } from './dedup-scripts.js';

/** A Lua script and its SHA1 (for EVALSHA). */
interface Script {
  readonly lua: string;
  readonly sha: string;
}

const script = (lua: string): Script => ({ lua, sha: createHash('sha1').update(lua).digest('hex') });
const SCRIPTS = { claim: script(CLAIM_SCRIPT), markDone: script(MARK_DONE_SCRIPT), recover: script(RECOVER_SCRIPT) } as const;

/** A Redis Cluster node to bootstrap from. */
export interface RedisClusterNode {
  readonly host: string;
  readonly port: number;
}

/** Options of {@link RedisDedupStore}. */
export interface RedisDedupStoreOptions {
  readonly applicationId: string;
  /** A `redis://` URL (standalone Redis), or the startup nodes of a Redis Cluster (ioredis `Cluster`). */
  readonly redis: string | { readonly clusterNodes: readonly RedisClusterNode[] };
  /** Hash-tag buckets the keys are spread over (Redis Cluster slots); default 16. */
  readonly buckets?: number;
  /** Command timeout, ms; default 2 000. A call that takes longer rejects with `DedupStoreError`. */
  readonly commandTimeoutMs?: number;
  /** Where the address was set, named in every error after the address (e.g. `set --redis-url or REDIS_URL`). */
  readonly setting?: string;
}

/** Keys of one call: the owner's index keys first, then the entries with the index each belongs to. */
interface CallKeys {
  readonly keys: string[];
  readonly indexes: number;
  /** Per entry: 1-based position of its index key in `keys`. */
  readonly positions: number[];
  /** Per entry: its position in the caller's list. */
  readonly order: number[];
}

/**
 * The Redis {@link DedupStore} (ioredis), with claim-then-confirm semantics in Lua scripts.
 *
 * Keys are `weir:dedup:{<application.id>:<bucket>}:k:<dedup key>` with a TTL (see
 * `dedupKeyLayout`); each owner (task) has an index of its unconfirmed claims by offset in every
 * bucket, for crash recovery. The hash tag `{<application.id>:<bucket>}` puts an entry and its
 * index in one Redis Cluster slot while spreading an application over `buckets` slots.
 *
 * Round trips: on a standalone Redis each `claim`, `markDone` and `recover` is one script call
 * for the whole batch. On a Redis Cluster a script may touch one slot only, so a call runs one
 * script per bucket it touches; ioredis auto-pipelining sends those of one node together (one
 * round trip per node, the nodes in parallel).
 *
 * Errors: every method rejects with `DedupStoreError` when Redis cannot be reached or a
 * command times out (`commandTimeoutMs`). The message names the store's address (a URL without
 * its password, or the cluster's startup nodes) and says `no connection to …` while the client
 * has none (Redis unreachable, or refusing its `AUTH`).
 *
 * @example
 * const store = new RedisDedupStore({ applicationId: 'orders-enricher', redis: 'redis://127.0.0.1:6379' });
 * await store.claim([{ key: 'order-1', offset: 42 }], 'orders-0', 60_000); // ['claimed']
 */
export class RedisDedupStore implements DedupStore {
  private readonly client: Redis | Cluster;
  private readonly buckets: number;
  private readonly cluster: boolean;
  private readonly layout: ReturnType<typeof dedupKeyLayout>;
  /** The address its errors name, with where it was set. */
  private readonly target: string;
  /** Redis refused the URL's database (`SELECT`): the client would work in database 0. */
  private selectRefused: Error | undefined;
  private connecting: Promise<void> | undefined;

  constructor(options: RedisDedupStoreOptions) {
    const commandTimeout = options.commandTimeoutMs ?? 2_000;
    const redisOptions = { maxRetriesPerRequest: 1, commandTimeout };
    this.cluster = typeof options.redis !== 'string';
    const client =
      typeof options.redis === 'string'
        ? new Redis(options.redis, { ...redisOptions, enableAutoPipelining: true, lazyConnect: true })
        : new Cluster(
            options.redis.clusterNodes.map((n) => ({ host: n.host, port: n.port })),
            { enableAutoPipelining: true, lazyConnect: true, redisOptions },
          );
    // Failures surface as rejected calls (DedupStoreError). One does not: ioredis selects the URL's
    // database on each connection and, when Redis refuses it (a number past its `databases`),
    // only emits this event and goes on in database 0. Every call fails after that instead.
    // The handshake (AUTH, SELECT) runs before any queued call is sent: a refusal is known by then.
    client.on('connect', () => {
      this.selectRefused = undefined;
    });
    client.on('error', (error: unknown) => {
      if (error instanceof Error && /\bDB index\b/i.test(error.message)) this.selectRefused = error;
    });
    this.client = client;
    this.buckets = options.buckets ?? 16;
    if (!Number.isInteger(this.buckets) || this.buckets < 1) throw new RangeError(`buckets must be an integer ≥ 1 (got ${this.buckets})`);
    this.layout = dedupKeyLayout(options.applicationId);
    this.target = `${redisAddress(options.redis)}${options.setting === undefined ? '' : ` (${options.setting})`}`;
  }

  async claim(claims: readonly DedupClaim[], owner: string, claimTtlMs: number): Promise<ClaimStatus[]> {
    const statuses: ClaimStatus[] = new Array(claims.length);
    if (claims.length === 0) return statuses;
    await this.run(
      'claim',
      this.calls(
        claims.map((c) => c.key),
        owner,
      ).map(async (call) => {
        const offsets = call.order.map((i) => claims[i]!.offset);
        const result = (await this.eval(SCRIPTS.claim, call.keys, [
          owner,
          ttl(claimTtlMs),
          call.indexes,
          ...offsets,
          ...call.positions,
        ])) as string[];
        call.order.forEach((i, j) => {
          statuses[i] = result[j] as ClaimStatus;
        });
      }),
    );
    return statuses;
  }

  async markDone(keys: readonly string[], owner: string, ttlMs: number): Promise<void> {
    if (keys.length === 0) return;
    await this.run(
      'markDone',
      this.calls(keys, owner).map((call) => this.eval(SCRIPTS.markDone, call.keys, [ttl(ttlMs), call.indexes, ...call.positions])),
    );
  }

  async recover(owner: string, committedOffset: number, ttlMs: number): Promise<number> {
    const indexes = Array.from({ length: this.buckets }, (_, bucket) => this.layout.index(bucket, owner));
    const groups = this.cluster ? indexes.map((index) => [index]) : [indexes];
    const counts = await this.run(
      'recover',
      groups.map((keys) => this.eval(SCRIPTS.recover, keys, [committedOffset, ttl(ttlMs), owner])),
    );
    return counts.reduce((a: number, b) => a + Number(b), 0);
  }

  async close(): Promise<void> {
    this.client.disconnect();
  }

  /** The script calls for `keys`: one in all on a standalone Redis, one per bucket on a cluster. */
  private calls(keys: readonly string[], owner: string): CallKeys[] {
    const byBucket = new Map<number, number[]>();
    keys.forEach((key, i) => {
      const bucket = dedupBucketOf(key, this.buckets);
      const group = byBucket.get(bucket);
      if (group) group.push(i);
      else byBucket.set(bucket, [i]);
    });
    const groups = this.cluster ? [...byBucket].map((entry) => [entry]) : [[...byBucket]];
    return groups.map((buckets) => {
      const indexKeys = buckets.map(([bucket]) => this.layout.index(bucket, owner));
      const entries: string[] = [];
      const positions: number[] = [];
      const order: number[] = [];
      buckets.forEach(([bucket, members], b) => {
        for (const i of members) {
          entries.push(this.layout.entry(bucket, keys[i]!));
          positions.push(b + 1);
          order.push(i);
        }
      });
      return { keys: [...indexKeys, ...entries], indexes: indexKeys.length, positions, order };
    });
  }

  /**
   * EVALSHA, and EVAL when the server does not have the script yet (NOSCRIPT: a new or
   * restarted node). Plain EVALSHA — not an ioredis custom command — because ioredis'
   * auto-pipelining finds a command's cluster slot by its first key only for commands it knows.
   */
  private async eval(s: Script, keys: readonly string[], args: ReadonlyArray<string | number>): Promise<unknown> {
    await this.handshake();
    if (this.selectRefused !== undefined) throw this.selectRefused;
    try {
      return await this.client.evalsha(s.sha, keys.length, ...keys, ...args);
    } catch (error) {
      if (!(error instanceof Error) || !error.message.includes('NOSCRIPT')) throw error;
      return this.client.eval(s.lua, keys.length, ...keys, ...args);
    }
  }

  /**
   * The first connection's handshake, awaited once by every call (the client connects lazily): so
   * that no call is sent before a refused `SELECT` is known. Its failure is the calls' own.
   */
  private handshake(): Promise<void> {
    if (this.cluster) return Promise.resolve();
    this.connecting ??= (this.client as Redis).connect().catch(() => undefined);
    return this.connecting;
  }

  private async run<T>(operation: string, calls: Array<Promise<T>>): Promise<T[]> {
    try {
      return await Promise.all(calls);
    } catch (cause) {
      const refused = this.selectRefused;
      const reason =
        refused !== undefined && cause === refused
          ? `Redis refused the database the URL selects (${refused.message}): the URL's /<db> must be below the server's 'databases' setting`
          : cause instanceof Error
            ? cause.message
            : String(cause);
      const where = this.client.status === 'ready' ? ` on ${this.target}` : `: no connection to ${this.target}`;
      throw new DedupStoreError(`redis dedup ${operation} failed${where}: ${reason}`, { cause });
    }
  }
}

/**
 * A store's address for its errors: the URL with its password (in the user part or the query,
 * both of which ioredis reads) hidden, or the cluster's startup nodes.
 */
export function redisAddress(redis: RedisDedupStoreOptions['redis']): string {
  if (typeof redis !== 'string') return `Redis Cluster ${redis.clusterNodes.map((n) => `${n.host}:${n.port}`).join(',')}`;
  try {
    return withoutPasswords(new URL(redis));
  } catch {
    return 'an unparsable Redis URL';
  }
}

/**
 * `url` with the two passwords ioredis reads hidden (`***`): its user part's and a `password=`
 * parameter's. Changes `url` itself, and returns it as text.
 */
export function withoutPasswords(url: URL): string {
  if (url.password !== '') url.password = '***';
  if (url.searchParams.has('password')) url.searchParams.set('password', '***');
  return url.toString();
}

/** A TTL for `PX`: a whole number of ms, at least 1. */
function ttl(ms: number): number {
  return Math.max(1, Math.ceil(ms));
}
