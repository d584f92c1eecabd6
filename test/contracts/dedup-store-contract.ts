/**
 * The one contract every {@link DedupStore} honours (claim-then-confirm semantics), as a
 * vitest suite that takes a store factory. It runs against MemoryDedupStore (unit tests, manual
 * clock), RedisDedupStore on a standalone Redis and on a Redis Cluster (integration tests,
 * real time): the same cases, the same expectations.
 */
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DedupStore } from '../../src/runtime/ports.js';

/** What the contract needs from one kind of store. */
export interface DedupStoreHarness {
  /** A store over a namespace (`application.id`). */
  store(applicationId: string): DedupStore;
  /** A store whose server cannot be reached. */
  unreachable(applicationId: string): DedupStore;
  /** Lets `ms` of store time pass: a manual clock's advance, or a real wait. */
  elapse(ms: number): Promise<void>;
  /** A TTL the suite uses for expiry cases, ms: short for real-time stores, so the suite stays fast. */
  readonly shortTtlMs: number;
  close?(): Promise<void>;
}

const LONG = 600_000;

/**
 * Registers the contract suite for one store.
 *
 * @param name shown in the test names, e.g. `'RedisDedupStore (standalone)'`
 * @param makeHarness called once before the suite
 */
export function dedupStoreContract(name: string, makeHarness: () => DedupStoreHarness | Promise<DedupStoreHarness>): void {
  describe(`DedupStore contract: ${name}`, () => {
    let h: DedupStoreHarness;
    const stores: DedupStore[] = [];
    const fresh = (app = `contract-${randomBytes(6).toString('hex')}`): DedupStore => {
      const store = h.store(app);
      stores.push(store);
      return store;
    };

    beforeAll(async () => {
      h = await makeHarness();
    });
    afterAll(async () => {
      await Promise.all(stores.map((s) => s.close()));
      await h?.close?.();
    });

    it('claims free keys, lets the owner claim again, and answers busy to other owners', async () => {
      const s = fresh();
      expect(
        await s.claim(
          [
            { key: 'a', offset: 1 },
            { key: 'b', offset: 2 },
          ],
          'in-0',
          LONG,
        ),
      ).toEqual(['claimed', 'claimed']);
      expect(await s.claim([{ key: 'a', offset: 1 }], 'in-0', LONG)).toEqual(['claimed']);
      expect(
        await s.claim(
          [
            { key: 'b', offset: 7 },
            { key: 'c', offset: 8 },
          ],
          'in-1',
          LONG,
        ),
      ).toEqual(['busy', 'claimed']);
    });

    it('answers duplicate for a confirmed key, to every owner', async () => {
      const s = fresh();
      await s.claim([{ key: 'k', offset: 0 }], 'in-0', LONG);
      await s.markDone(['k'], 'in-0', LONG);
      expect(await s.claim([{ key: 'k', offset: 5 }], 'in-0', LONG)).toEqual(['duplicate']);
      expect(await s.claim([{ key: 'k', offset: 5 }], 'in-1', LONG)).toEqual(['duplicate']);
    });

    it('confirms keys that were never claimed (processed without dedup)', async () => {
      const s = fresh();
      await s.markDone(['never-claimed'], 'in-0', LONG);
      expect(await s.claim([{ key: 'never-claimed', offset: 0 }], 'in-3', LONG)).toEqual(['duplicate']);
    });

    it('answers many keys in input order, the same key twice in one call included', async () => {
      const s = fresh();
      const keys = Array.from({ length: 300 }, (_, i) => `order-${i}`);
      await s.markDone(
        keys.filter((_, i) => i % 3 === 0),
        'in-0',
        LONG,
      );
      await s.claim(
        keys.filter((_, i) => i % 3 === 1).map((key) => ({ key, offset: 1 })),
        'in-9',
        LONG,
      );
      const claims = [...keys.map((key, i) => ({ key, offset: 100 + i })), { key: 'order-2', offset: 999 }];
      const expected = [...keys.map((_, i) => (i % 3 === 0 ? 'duplicate' : i % 3 === 1 ? 'busy' : 'claimed')), 'claimed'];
      expect(await s.claim(claims, 'in-0', LONG)).toEqual(expected);
    });

    it('keeps keys with braces, colons, spaces and non-ASCII characters apart', async () => {
      const s = fresh();
      const keys = ['{x}', '{x', 'x}', 'a:b', 'a b', 'ключ', '🔑', ''];
      expect(
        await s.claim(
          keys.map((key, i) => ({ key, offset: i })),
          'in-0',
          LONG,
        ),
      ).toEqual(keys.map(() => 'claimed'));
      await s.markDone(['{x}', 'ключ'], 'in-0', LONG);
      expect(
        await s.claim(
          keys.map((key, i) => ({ key, offset: i })),
          'in-1',
          LONG,
        ),
      ).toEqual(keys.map((k) => (k === '{x}' || k === 'ключ' ? 'duplicate' : 'busy')));
    });

    it('separates applications: the same key in two namespaces', async () => {
      const a = fresh();
      const b = fresh();
      await a.markDone(['shared'], 'in-0', LONG);
      expect(await b.claim([{ key: 'shared', offset: 0 }], 'in-0', LONG)).toEqual(['claimed']);
    });

    it('lets an unconfirmed claim expire after the claim TTL (a crashed owner loses nothing)', async () => {
      const s = fresh();
      expect(await s.claim([{ key: 'k', offset: 3 }], 'in-0', h.shortTtlMs)).toEqual(['claimed']);
      expect(await s.claim([{ key: 'k', offset: 4 }], 'in-1', h.shortTtlMs)).toEqual(['busy']);
      await h.elapse(h.shortTtlMs + 100);
      expect(await s.claim([{ key: 'k', offset: 4 }], 'in-1', LONG)).toEqual(['claimed']);
    });

    it('forgets a confirmed key after the dedup window', async () => {
      const s = fresh();
      await s.claim([{ key: 'k', offset: 0 }], 'in-0', LONG);
      await s.markDone(['k'], 'in-0', h.shortTtlMs);
      expect(await s.claim([{ key: 'k', offset: 1 }], 'in-0', LONG)).toEqual(['duplicate']);
      await h.elapse(h.shortTtlMs + 100);
      expect(await s.claim([{ key: 'k', offset: 1 }], 'in-1', LONG)).toEqual(['claimed']);
    });

    it('recover confirms the owner’s claims below the committed offset and keeps the rest claimed', async () => {
      const s = fresh();
      await s.claim(
        [
          { key: 'below-1', offset: 10 },
          { key: 'below-2', offset: 11 },
          { key: 'at', offset: 12 },
          { key: 'above', offset: 13 },
        ],
        'in-0',
        LONG,
      );
      await s.claim([{ key: 'other', offset: 1 }], 'in-1', LONG);
      expect(await s.recover('in-0', 12, LONG)).toBe(2);
      expect(
        await s.claim(
          [
            { key: 'below-1', offset: 20 },
            { key: 'below-2', offset: 21 },
          ],
          'in-1',
          LONG,
        ),
      ).toEqual(['duplicate', 'duplicate']);
      expect(
        await s.claim(
          [
            { key: 'at', offset: 12 },
            { key: 'above', offset: 13 },
          ],
          'in-1',
          LONG,
        ),
      ).toEqual(['busy', 'busy']);
      expect(
        await s.claim(
          [
            { key: 'at', offset: 12 },
            { key: 'above', offset: 13 },
          ],
          'in-0',
          LONG,
        ),
      ).toEqual(['claimed', 'claimed']);
      expect(await s.claim([{ key: 'other', offset: 1 }], 'in-0', LONG)).toEqual(['busy']);
      expect(await s.recover('in-0', 12, LONG)).toBe(0);
    });

    it('recover decides by the earliest offset that claimed a key', async () => {
      const s = fresh();
      await s.claim([{ key: 'k', offset: 5 }], 'in-0', LONG);
      await s.claim([{ key: 'k', offset: 50 }], 'in-0', LONG); // a later duplicate in the same partition
      expect(await s.recover('in-0', 6, LONG)).toBe(1);
      expect(await s.claim([{ key: 'k', offset: 50 }], 'in-0', LONG)).toEqual(['duplicate']);
    });

    it('recover ignores claims that expired or moved to another owner', async () => {
      const s = fresh();
      await s.claim([{ key: 'k', offset: 1 }], 'in-0', h.shortTtlMs);
      await h.elapse(h.shortTtlMs + 100);
      await s.claim([{ key: 'k', offset: 1 }], 'in-1', LONG);
      expect(await s.recover('in-0', 100, LONG)).toBe(0);
      expect(await s.claim([{ key: 'k', offset: 1 }], 'in-0', LONG)).toEqual(['busy']);
    });

    it('confirmed keys leave the owner’s recovery index', async () => {
      const s = fresh();
      await s.claim([{ key: 'k', offset: 1 }], 'in-0', LONG);
      await s.markDone(['k'], 'in-0', h.shortTtlMs);
      await h.elapse(h.shortTtlMs + 100);
      // The key expired from the window; recover must not resurrect it as confirmed.
      expect(await s.recover('in-0', 100, LONG)).toBe(0);
      expect(await s.claim([{ key: 'k', offset: 1 }], 'in-1', LONG)).toEqual(['claimed']);
    });

    it('treats empty batches as no-ops', async () => {
      const s = fresh();
      expect(await s.claim([], 'in-0', LONG)).toEqual([]);
      await s.markDone([], 'in-0', LONG);
      expect(await s.recover('in-0', 0, LONG)).toBe(0);
    });

    it('rejects with DedupStoreError (code WEIR_DEDUP_STORE) when the store cannot be reached', async () => {
      const s = h.unreachable(`contract-${randomBytes(6).toString('hex')}`);
      stores.push(s);
      const code = { code: 'WEIR_DEDUP_STORE' };
      await expect(s.claim([{ key: 'k', offset: 0 }], 'in-0', LONG)).rejects.toMatchObject(code);
      await expect(s.markDone(['k'], 'in-0', LONG)).rejects.toMatchObject(code);
      await expect(s.recover('in-0', 0, LONG)).rejects.toMatchObject(code);
    });
  });
}
