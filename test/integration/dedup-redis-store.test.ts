/**
 * RedisDedupStore on the real standalone Redis: the shared DedupStore contract, the key layout
 * on the server, and round trips measured (ioredis' command channel, socket writes, and the
 * server's MONITOR): one script call per batch.
 */
import { randomBytes } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { Redis } from 'ioredis';
import { afterAll, describe, expect, inject, it } from 'vitest';
import { freePort } from '../../scripts/lib/free-port.js';
import { meterRedis } from '../../scripts/lib/redis-meter.js';
import { pollUntil } from '../../scripts/lib/wait-for.js';
import { dedupBucketOf, dedupKeyLayout } from '../../src/dedup/dedup-key-layout.js';
import { RedisDedupStore, redisAddress } from '../../src/dedup/redis-dedup-store.js';
import { dedupStoreContract } from '../contracts/dedup-store-contract.js';

const redisUrl = inject('redisUrl');
const redisPort = Number(new URL(redisUrl).port || 6379);
/** A script call. */
const SCRIPT_CALL = /^evalsha$/;

dedupStoreContract('RedisDedupStore (standalone Redis)', async () => {
  const unusedPort = await freePort();
  return {
    store: (applicationId) => new RedisDedupStore({ applicationId, redis: redisUrl }),
    unreachable: (applicationId) => new RedisDedupStore({ applicationId, redis: `redis://127.0.0.1:${unusedPort}`, commandTimeoutMs: 500 }),
    elapse: (ms) => sleep(ms),
    shortTtlMs: 200,
  };
});

describe('RedisDedupStore errors', () => {
  it('name the address, without its passwords, and where it was set, when there is no connection', async () => {
    const port = await freePort();
    const store = new RedisDedupStore({
      applicationId: 'weir-it-dedup-errors',
      redis: `redis://weir:secret@127.0.0.1:${port}/?password=hunter2`,
      commandTimeoutMs: 500,
      setting: 'set --redis-url or REDIS_URL',
    });
    try {
      const error = await store.claim([{ key: 'k', offset: 0 }], 'orders-0', 1_000).then(
        () => undefined,
        (e: unknown) => e as Error,
      );
      expect(error?.message).toContain(
        `redis dedup claim failed: no connection to redis://weir:***@127.0.0.1:${port}/?password=*** (set --redis-url or REDIS_URL): `,
      );
      expect(error?.message).not.toMatch(/secret|hunter2/);
    } finally {
      await store.close();
    }
  });

  it('name the address, without "no connection", when Redis answers with an error', async () => {
    const app = `weir-it-dedup-errors-${randomBytes(4).toString('hex')}`;
    const admin = new Redis(redisUrl);
    // The owner's claim index is a sorted set: a string under its name makes the claim script's ZADD fail (WRONGTYPE).
    const index = dedupKeyLayout(app).index(dedupBucketOf('k', 16), 'orders-0');
    await admin.set(index, 'not a sorted set');
    const store = new RedisDedupStore({ applicationId: app, redis: redisUrl, setting: 'set --redis-url or REDIS_URL' });
    try {
      const error = await store.claim([{ key: 'k', offset: 0 }], 'orders-0', 1_000).then(
        () => undefined,
        (e: unknown) => e as Error,
      );
      expect(error?.message).toContain(`redis dedup claim failed on ${redisAddress(redisUrl)} (set --redis-url or REDIS_URL): `);
      expect(error?.message).toMatch(/WRONGTYPE/);
    } finally {
      await store.close();
      await admin.del(index);
      admin.disconnect();
    }
  });

  it("fail every call when Redis refuses the URL's database, which ioredis would leave at database 0", async () => {
    const admin = new Redis(redisUrl);
    const databases = Number(((await admin.config('GET', 'databases')) as string[])[1]);
    admin.disconnect();
    const url = new URL(redisUrl);
    url.pathname = `/${databases}`; // one past the last database the server has
    const app = `weir-it-dedup-errors-db-${randomBytes(4).toString('hex')}`;
    const store = new RedisDedupStore({
      applicationId: app,
      redis: url.toString(),
      setting: 'set --redis-url or REDIS_URL',
    });
    try {
      for (const owner of ['orders-0', 'orders-1']) {
        const error = await store.claim([{ key: 'k', offset: 0 }], owner, 1_000).then(
          () => undefined,
          (e: unknown) => e as Error,
        );
        expect(error?.message, owner).toContain(
          `redis dedup claim failed on ${redisAddress(url.toString())} (set --redis-url or REDIS_URL): `,
        );
        expect(error?.message, owner).toMatch(/Redis refused the database the URL selects \(ERR DB index is out of range\)/);
      }
      // Nothing reached the database ioredis would have gone on in.
      const db0 = new Redis(redisUrl);
      expect(await db0.keys(`*${app}*`)).toEqual([]);
      db0.disconnect();
    } finally {
      await store.close();
    }
  });
});

describe('RedisDedupStore round trips (standalone Redis)', () => {
  const app = `weir-it-dedup-rt-${randomBytes(4).toString('hex')}`;
  const store = new RedisDedupStore({ applicationId: app, redis: redisUrl });
  const admin = new Redis(redisUrl);
  afterAll(async () => {
    await store.close();
    const keys = await admin.keys(`weir:dedup:{${app}:*`);
    if (keys.length > 0) await admin.del(...keys);
    admin.disconnect();
  });

  it('claims, confirms and recovers a batch of 500 keys in one script call each (one socket write)', async () => {
    const claims = Array.from({ length: 500 }, (_, i) => ({ key: `order-${i}`, offset: i }));
    // Connects, and has the server cache the three scripts (EVALSHA works from then on).
    await store.claim([{ key: 'warm-up', offset: 0 }], 'warm-up', 60_000);
    await store.markDone(['warm-up'], 'warm-up', 60_000);
    await store.recover('warm-up', 0, 60_000);
    await admin.ping(); // ready first: MONITOR while the ready check is in flight confuses ioredis
    const monitor = await admin.monitor();
    const seen: string[][] = [];
    monitor.on('monitor', (_time: string, args: string[], source: string) => {
      // Commands a script runs are logged too (source 'lua'); count the calls clients sent.
      if (source !== 'lua' && args.some((a) => a.includes(`{${app}:`))) seen.push(args);
    });
    try {
      const claim = await meterRedis([redisPort], () => store.claim(claims, 'in-0', 60_000));
      expect(claim.result).toEqual(claims.map(() => 'claimed'));
      expect(claim.commands.map((c) => c.command)).toEqual([expect.stringMatching(SCRIPT_CALL)]);
      expect(claim.writesByPort.get(redisPort)).toBe(1);

      const done = await meterRedis([redisPort], () =>
        store.markDone(
          claims.slice(0, 250).map((c) => c.key),
          'in-0',
          60_000,
        ),
      );
      expect(done.commands.map((c) => c.command)).toEqual([expect.stringMatching(SCRIPT_CALL)]);
      expect(done.writesByPort.get(redisPort)).toBe(1);

      const recover = await meterRedis([redisPort], () => store.recover('in-0', 400, 60_000));
      expect(recover.result).toBe(150); // offsets 250..399 were claimed and not confirmed
      expect(recover.commands.map((c) => c.command)).toEqual([expect.stringMatching(SCRIPT_CALL)]);
      expect(recover.writesByPort.get(redisPort)).toBe(1);

      // The server saw the same: three script calls for 500 keys.
      await pollUntil(() => seen.length >= 3, 5_000, 20);
      expect(seen.map((args) => args[0]?.toLowerCase())).toEqual([0, 1, 2].map(() => expect.stringMatching(SCRIPT_CALL)));
      console.log(
        `[round trips] 500 claims → ${claim.commands.length} command, ${claim.writesByPort.get(redisPort)} write; MONITOR saw ${seen.length} script calls for claim+markDone+recover`,
      );
    } finally {
      monitor.disconnect();
    }
  });

  it('stores hash-tagged keys with TTLs: claims for the claim TTL, confirmed keys for the dedup window', async () => {
    await store.claim([{ key: 'ttl-check', offset: 7 }], 'in-3', 30_000);
    const [entry] = await admin.keys(`weir:dedup:{${app}:*}:k:ttl-check`);
    expect(entry).toMatch(new RegExp(`^weir:dedup:\\{${app}:\\d+\\}:k:ttl-check$`));
    expect(await admin.get(entry!)).toBe('c|in-3|7');
    const claimTtl = await admin.pttl(entry!);
    expect(claimTtl).toBeGreaterThan(0);
    expect(claimTtl).toBeLessThanOrEqual(30_000);
    const bucket = entry!.slice(entry!.indexOf('{'), entry!.indexOf('}') + 1);
    expect(await admin.zscore(`weir:dedup:${bucket}:o:in-3`, entry!)).toBe('7');
    await store.markDone(['ttl-check'], 'in-3', 120_000);
    expect(await admin.get(entry!)).toBe('d');
    expect(await admin.pttl(entry!)).toBeGreaterThan(30_000);
    expect(await admin.zscore(`weir:dedup:${bucket}:o:in-3`, entry!)).toBeNull();
  });
});
