/**
 * Idempotent consumption through the real PartitionTask, the in-memory broker and the
 * MemoryDedupStore: claim, then confirm only once the outcome is durable; the store failure
 * policy; crash recovery; retry tiers and DLQ replays.
 */
import { describe, expect, it } from 'vitest';
import { WEIR_HEADERS } from '../record/weir-headers.js';
import type { DedupOptions, RetryOptions } from '../dsl/process-options.js';
import type { ProcessorFn } from '../dsl/processor.js';
import type { ProcessingGuarantee } from '../dsl/topology-builder.js';
import type { RecordHeaders } from '../record/record-types.js';
import { APP, taskHarness } from './partition-task.test-support.js';
import type { DedupStore } from './ports.js';

type Value = { id: string; n?: number; fail?: number };

interface SetupOptions {
  readonly guarantee?: ProcessingGuarantee;
  readonly dedup?: Partial<DedupOptions>;
  readonly retry?: RetryOptions;
  readonly partitions?: number;
  readonly fn?: ProcessorFn<string | null, any, any>;
}

function setup(options: SetupOptions = {}) {
  const attempts = new Map<string, number>();
  const fn: ProcessorFn<string | null, any, any> =
    options.fn ??
    ((r) => {
      const v = r.value as Value;
      const n = (attempts.get(v.id) ?? 0) + 1;
      attempts.set(v.id, n);
      if (n <= (v.fail ?? 0)) throw new Error(`attempt ${n} of ${v.id} fails`);
      return v;
    });
  const h = taskHarness({
    fn,
    guarantee: options.guarantee ?? 'at_least_once',
    partitions: options.partitions ?? 1,
    options: {
      ...(options.retry ? { retry: options.retry } : {}),
      dedup: { key: (r) => (r.value as Value).id, ttlMs: 3_600_000, store: 'memory', ...options.dedup },
    },
  });
  const produce = (values: Value[], partition = 0, headers: RecordHeaders = {}) =>
    h.send(values.map((value) => ({ value, key: value.id, partition, headers })));
  const ids = (topic: string) => h.values(topic).map((v) => (v as Value).id);
  return { ...h, produce, ids };
}

describe('PartitionTask dedup (claim, then confirm)', () => {
  it("under onStoreError 'fail' processes nothing while the store is down, and then everything once", async () => {
    const h = setup();
    const task = h.makeTask();
    expect(await h.drive(task)).toEqual({ kind: 'idle' }); // started: recovery done
    await h.produce([{ id: 'a' }, { id: 'b' }, { id: 'a' }]);
    h.store.down = true;
    for (let i = 0; i < 5; i++) expect(await h.drive(task, 1)).toBeUndefined();
    expect(h.ids('out')).toEqual([]);
    expect(h.kafka.committedOffset(APP, 'in', 0)).toBeUndefined();
    expect(h.portErrors.filter((e) => e.port === 'dedup').map((e) => e.retryInMs)).toEqual([100, 200, 400, 800, 1600]);
    h.store.down = false;
    expect(await h.drive(task)).toEqual({ kind: 'idle' });
    expect(h.ids('out')).toEqual(['a', 'b']);
    expect(h.events.filter((e) => e.outcome === 'duplicate').map((e) => e.offset)).toEqual([2]);
    expect(h.kafka.committedOffset(APP, 'in', 0)).toBe(3);
  });

  it("under onStoreError 'skip-dedup' processes on while the store is down, and reports the records skipped", async () => {
    const h = setup({ dedup: { onStoreError: 'skip-dedup' } });
    await h.produce([{ id: 'a' }, { id: 'b' }]);
    h.store.down = true;
    await h.drive(h.makeTask());
    expect(h.ids('out')).toEqual(['a', 'b']);
    expect(h.skipped.reduce((a, b) => a + b, 0)).toBeGreaterThanOrEqual(2);
    expect(h.kafka.committedOffset(APP, 'in', 0)).toBe(2);
  });

  it('confirms a key only after the outcome is durable (at_least_once: after the acks)', async () => {
    const h = setup();
    await h.produce([{ id: 'a' }]);
    let failProduce = true;
    h.kafka.faultHook = (op, phase) => {
      if (op === 'produce' && phase === 'before' && failProduce) throw new Error('broker down');
    };
    const task = h.makeTask();
    await h.drive(task, 1);
    expect(await h.store.claim([{ key: 'a', offset: 9 }], 'in-5', 60_000)).toEqual(['busy']); // claimed, not confirmed
    failProduce = false;
    await h.drive(task);
    expect(await h.store.claim([{ key: 'a', offset: 9 }], 'in-5', 60_000)).toEqual(['duplicate']);
  });

  it('confirms a key only after the transaction commits (exactly_once)', async () => {
    const h = setup({ guarantee: 'exactly_once' });
    await h.produce([{ id: 'a' }]);
    let failCommit = true;
    h.kafka.faultHook = (op, phase) => {
      if (op === 'txn-commit' && phase === 'before' && failCommit) throw new Error('coordinator moved');
    };
    const task = h.makeTask();
    await h.drive(task, 3);
    expect(await h.store.claim([{ key: 'a', offset: 9 }], 'in-5', 60_000)).toEqual(['busy']);
    failCommit = false;
    await h.drive(task);
    expect(await h.store.claim([{ key: 'a', offset: 9 }], 'in-5', 60_000)).toEqual(['duplicate']);
    expect(h.ids('out')).toEqual(['a']);
  });

  it("retries a failed confirmation before claiming again (onStoreError 'fail'), so a later duplicate is still dropped", async () => {
    const h = setup();
    const flaky: DedupStore = {
      claim: (c, o, t) => h.store.claim(c, o, t),
      recover: (o, c, t) => h.store.recover(o, c, t),
      close: () => h.store.close(),
      markDone: async (keys, owner, ttl) => {
        if (markDoneFailures-- > 0) throw new Error('redis timeout');
        return h.store.markDone(keys, owner, ttl);
      },
    };
    let markDoneFailures = 1;
    const task = h.makeTask('in', 0, flaky);
    await h.produce([{ id: 'a' }]);
    await h.drive(task);
    await h.produce([{ id: 'a' }, { id: 'b' }]);
    await h.drive(task);
    expect(h.ids('out')).toEqual(['a', 'b']);
    expect(h.events.filter((e) => e.outcome === 'duplicate').map((e) => e.offset)).toEqual([1]);
    expect(h.portErrors.filter((e) => e.port === 'dedup')).toHaveLength(1);
  });

  it('replays records whose outputs were acked but neither confirmed nor committed before a crash (the documented window)', async () => {
    const h = setup();
    await h.produce([{ id: 'a' }, { id: 'b' }]);
    // The first incarnation dies in markDone, after the acks, before the commit interval is due.
    const dying: DedupStore = { ...bind(h.store), markDone: () => new Promise(() => undefined) };
    const first = h.makeTask('in', 0, dying);
    first.enqueue(h.kafka.read('in', 0, 0).records);
    void first.poll();
    await new Promise((resolve) => setImmediate(resolve));
    expect(h.ids('out')).toEqual(['a', 'b']);
    expect(h.kafka.committedOffset(APP, 'in', 0)).toBeUndefined();
    await h.drive(h.makeTask());
    expect(h.ids('out')).toEqual(['a', 'b', 'a', 'b']);
    expect(h.kafka.committedOffset(APP, 'in', 0)).toBe(2);
  });

  it('recover at task start confirms a crashed incarnation’s committed claims', async () => {
    const h = setup();
    await h.produce([{ id: 'a' }, { id: 'b' }]);
    const lost: DedupStore = { ...bind(h.store), markDone: async () => undefined }; // confirmations lost in the crash
    await h.drive(h.makeTask('in', 0, lost));
    expect(h.kafka.committedOffset(APP, 'in', 0)).toBe(2);
    expect(await h.store.claim([{ key: 'a', offset: 0 }], 'in-7', 60_000)).toEqual(['busy']);
    await h.produce([{ id: 'a' }, { id: 'c' }]);
    await h.drive(h.makeTask());
    expect(h.ids('out')).toEqual(['a', 'b', 'c']);
    expect(await h.store.claim([{ key: 'b', offset: 0 }], 'in-7', 60_000)).toEqual(['duplicate']);
  });

  it('waits while another partition holds a claim on the key, then drops the record as a duplicate', async () => {
    const h = setup({ partitions: 2, guarantee: 'exactly_once' });
    await h.produce([{ id: 'x' }], 0);
    await h.produce([{ id: 'x' }, { id: 'y' }], 1);
    const p0 = h.makeTask('in', 0);
    const p1 = h.makeTask('in', 1);
    p0.enqueue(h.kafka.read('in', 0, 0).records);
    expect(await p0.poll()).toMatchObject({ kind: 'wait', reason: 'commit' }); // x processed; its transaction is not due yet
    p1.enqueue(h.kafka.read('in', 1, 0).records);
    expect(await p1.poll()).toMatchObject({ kind: 'wait', reason: 'dedup-busy' });
    expect(h.ids('out')).toEqual([]);
    await h.drive(p0);
    await h.drive(p1);
    expect(h.ids('out')).toEqual(['x', 'y']);
    expect(h.events.filter((e) => e.outcome === 'duplicate').map((e) => `${e.partition}@${e.offset}`)).toEqual(['1@0']);
  });

  it.each(['exactly_once', 'at_least_once'] as const)(
    '%s: a claim that expired while its record waited in the buffer, and was taken by another partition, is checked before the write: the record is dropped as a duplicate, never written twice',
    async (guarantee) => {
      let release!: () => void;
      const gate = new Promise<void>((resolve) => (release = resolve));
      const h = setup({
        partitions: 2,
        guarantee,
        dedup: { claimTtlMs: 5_000 },
        // 'slow' holds its task until the test lets it go: the claims of the records behind it age.
        fn: async (r) => {
          const v = r.value as Value;
          if (v.id === 'slow') await gate;
          return v;
        },
      });
      await h.produce([{ id: 'slow' }, { id: 'x' }], 0);
      await h.produce([{ id: 'x' }], 1);
      const p0 = h.makeTask('in', 0);
      const p1 = h.makeTask('in', 1);
      expect(await p0.poll()).toEqual({ kind: 'idle' }); // started: recovery done
      p0.enqueue(h.kafka.read('in', 0, 0).records);
      const stuck = p0.poll(); // claims 'slow' and 'x', then waits in 'slow'
      await new Promise((resolve) => setImmediate(resolve));
      expect(await h.store.claim([{ key: 'x', offset: 9 }], 'in-7', 5_000)).toEqual(['busy']);
      h.clock.advance(6_000); // p0's claim on 'x' expires; p1 takes the key and writes its copy
      expect(await h.drive(p1)).toEqual({ kind: 'idle' });
      expect(h.ids('out')).toEqual(['x']);
      release();
      await stuck;
      expect(await h.drive(p0)).toEqual({ kind: 'idle' });
      expect(h.ids('out').sort()).toEqual(['slow', 'x']);
      expect(h.events.filter((e) => e.outcome === 'duplicate').map((e) => `${e.partition}@${e.offset}`)).toEqual(['0@1']);
      expect(h.kafka.committedOffset(APP, 'in', 0)).toBe(2);
    },
  );

  it('lets a claim that is never confirmed expire after the claim TTL: the record is not lost', async () => {
    const h = setup({ partitions: 2, dedup: { claimTtlMs: 5_000 } });
    await h.store.claim([{ key: 'x', offset: 0 }], 'in-0', 5_000); // a task that died holding the claim
    await h.produce([{ id: 'x' }], 1);
    const result = await h.drive(h.makeTask('in', 1));
    expect(result).toEqual({ kind: 'idle' });
    expect(h.ids('out')).toEqual(['x']);
    expect(h.clock.now()).toBeGreaterThanOrEqual(Date.UTC(2024, 0, 1) + 5_000);
  });

  it('does not drop a retry-tier copy as a duplicate of its own record', async () => {
    const h = setup({ retry: { mode: 'topics', maxAttempts: 3, backoff: { initialMs: 1_000, jitter: 'none' } } });
    await h.produce([{ id: 'a', fail: 1 }, { id: 'b' }, { id: 'a' }]);
    await h.drive(h.makeTask());
    expect(h.ids('out')).toEqual(['b']);
    await h.drive(h.makeTask(h.tiers[0]!));
    expect(h.ids('out')).toEqual(['b', 'a']);
    expect(h.ids('dlq')).toEqual([]);
    expect(h.events.filter((e) => e.outcome === 'duplicate').map((e) => `${e.topic}@${e.offset}`)).toEqual(['in@2']);
  });

  it('does not drop a DLQ replay as a duplicate of the original, but drops a second delivery of the same replay', async () => {
    const h = setup();
    await h.produce([{ id: 'a' }]);
    const task = h.makeTask();
    await h.drive(task);
    const replay = { [WEIR_HEADERS.replayCount]: '1' };
    await h.produce(
      [
        { id: 'a', n: 1 },
        { id: 'a', n: 1 },
      ],
      0,
      replay,
    );
    await h.drive(task);
    expect(h.ids('out')).toEqual(['a', 'a']);
    expect(h.events.filter((e) => e.outcome === 'duplicate').map((e) => e.offset)).toEqual([2]);
  });
});

function bind(store: DedupStore): DedupStore {
  return {
    claim: (c, o, t) => store.claim(c, o, t),
    markDone: (k, o, t) => store.markDone(k, o, t),
    recover: (o, c, t) => store.recover(o, c, t),
    close: () => store.close(),
  };
}
