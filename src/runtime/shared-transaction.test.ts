import { setImmediate as macrotask } from 'node:timers/promises';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { sink } from '../dsl/sink.js';
import { topology } from '../dsl/topology-builder.js';
import { ProducerFencedError } from '../errors.js';
import type { OutputRecord, TopicPartitionOffset } from '../record/record-types.js';
import { InMemoryKafka } from '../testing/in-memory-kafka.js';
import { ManualClock } from '../testing/manual-clock.js';
import { compile } from '../topology/compile.js';
import { PartitionTask } from './partition-task.js';
import type { PollResult } from './poll-result.js';
import type { TransactionalProducer } from './ports.js';
import { SharedTransaction } from './shared-transaction.js';

const APP = 'app';
const PARTITIONS = 3;

/** A transactional producer that counts what it was asked to do. */
function counting(producer: TransactionalProducer) {
  const calls = { begin: 0, commit: 0, abort: 0, reset: 0, sendOffsets: [] as TopicPartitionOffset[][] };
  const counted: TransactionalProducer = {
    transactionalId: producer.transactionalId,
    begin: async () => {
      calls.begin++;
      await producer.begin();
    },
    send: (records: readonly OutputRecord[]) => producer.send(records),
    sendOffsets: async (groupId, offsets) => {
      calls.sendOffsets.push([...offsets]);
      await producer.sendOffsets(groupId, offsets);
    },
    commit: async () => {
      calls.commit++;
      await producer.commit();
    },
    abort: async () => {
      calls.abort++;
      await producer.abort();
    },
    reset: async () => {
      calls.reset++;
      await producer.reset();
    },
  };
  return { calls, producer: counted };
}

/** Three tasks of `in` sharing one transactional producer (exactly_once_v2), on a manual clock. */
function setup(options: { joinWindowMs?: number; fn?: (value: { n: number }) => unknown; earlyTimers?: boolean } = {}) {
  const clock = new ManualClock();
  if (options.earlyTimers) {
    // A system timer may fire a little before the clock reads its time.
    const after = clock.after.bind(clock);
    clock.after = (delayMs, fn) => after(Math.max(0, delayMs - 1), fn);
  }
  const kafka = new InMemoryKafka(clock);
  kafka.createTopic('in', PARTITIONS);
  kafka.createTopic('out', PARTITIONS);
  kafka.createTopic('dlq', PARTITIONS);
  const compiled = compile(
    topology({ applicationId: APP, processingGuarantee: 'exactly_once', commitIntervalMs: 100 })
      .source('in', 'json')
      .process('p', (r) => (options.fn ? options.fn(r.value as { n: number }) : r.value))
      .branch({ success: sink('out'), dlq: sink('dlq') }),
  );
  const fenced: unknown[] = [];
  const { calls, producer } = counting(kafka.transactionalProducer(`${APP}-member-1`));
  const shared = new SharedTransaction(producer, { clock, joinWindowMs: options.joinWindowMs ?? 5, onFenced: (e) => fenced.push(e) });
  const tasks = Array.from(
    { length: PARTITIONS },
    (_, partition) =>
      new PartitionTask({
        topology: compiled,
        topic: 'in',
        partition,
        startOffset: kafka.committedOffset(APP, 'in', partition) ?? 0,
        clock,
        random: () => 0.5,
        output: { guarantee: 'exactly_once', transactions: shared.participant(`in-${partition}`), offsets: kafka.offsetReader() },
      }),
  );
  const send = (values: readonly number[]) =>
    kafka
      .producer()
      .send(values.map((n) => ({ topic: 'in', key: Buffer.from(`k${n}`), value: Buffer.from(JSON.stringify({ n })), headers: {} })));
  /**
   * Drives every task concurrently, as a worker's task runners do, moving the manual clock 1 ms
   * whenever nothing else can happen, until each task is idle or closed.
   */
  const driveAll = async (maxMs = 10_000): Promise<PollResult[]> => {
    const results: Array<PollResult | undefined> = tasks.map(() => undefined);
    const loops = tasks.map(async (task, i) => {
      for (;;) {
        const { records, nextOffset } = kafka.read('in', task.partition, task.position);
        task.enqueue(records, nextOffset);
        const r = await task.poll();
        if (r.kind === 'closed' || (r.kind === 'idle' && kafka.endOffset('in', task.partition) <= task.position)) {
          results[i] = r;
          return;
        }
        if (r.kind === 'wait') while (clock.now() < r.untilMs) await macrotask();
      }
    });
    const done = Promise.all(loops);
    let finished = false;
    void done.finally(() => (finished = true));
    const start = clock.now();
    while (!finished) {
      await macrotask();
      if (clock.now() - start > maxMs) throw new Error('tasks did not settle');
      clock.advance(1);
    }
    await done;
    return results as PollResult[];
  };
  const outputs = (): number[] =>
    kafka
      .readAll('out')
      .map((r) => (JSON.parse(r.value!.toString()) as { n: number }).n)
      .sort((a, b) => a - b);
  return { clock, kafka, calls, shared, tasks, fenced, send, driveAll, outputs };
}

const range = (n: number): number[] => Array.from({ length: n }, (_, i) => i);

describe('SharedTransaction (exactly_once_v2: one producer for every task of a member)', () => {
  it('commits the tasks that flush together in one transaction, with every task’s offsets in one sendOffsets', async () => {
    const h = setup();
    await h.send(range(90));
    expect((await h.driveAll()).map((r) => r.kind)).toEqual(['idle', 'idle', 'idle']);
    expect(h.outputs()).toEqual(range(90));
    for (let p = 0; p < PARTITIONS; p++) expect(h.kafka.committedOffset(APP, 'in', p)).toBe(h.kafka.endOffset('in', p));
    // Each transaction held the offsets of every task that had records: here all three at once.
    expect(h.calls.commit).toBeGreaterThanOrEqual(1);
    expect(h.calls.sendOffsets.some((offsets) => offsets.length === PARTITIONS)).toBe(true);
    expect(h.calls.commit).toBeLessThan(PARTITIONS * 2);
  });

  it('commits when the join window’s timer fires before the clock reaches the window’s end', async () => {
    const h = setup({ earlyTimers: true, joinWindowMs: 5 });
    await h.send(range(30));
    expect((await h.driveAll()).map((r) => r.kind)).toEqual(['idle', 'idle', 'idle']);
    expect(h.outputs()).toEqual(range(30));
  });

  it('aborts the whole transaction when one task cannot send: every task re-runs its unit, and each input is written once', async () => {
    const h = setup();
    await h.send(range(60));
    let failures = 1;
    h.kafka.faultHook = (operation, phase) => {
      if (operation === 'txn-send' && phase === 'before' && failures-- > 0) throw new Error('broker hiccup');
    };
    await h.driveAll();
    expect(h.calls.abort).toBe(1);
    expect(h.outputs()).toEqual(range(60));
    for (let p = 0; p < PARTITIONS; p++) expect(h.kafka.committedOffset(APP, 'in', p)).toBe(h.kafka.endOffset('in', p));
  });

  it('resolves a commit in doubt for every member with one reset, then reads the offsets back: nothing is written twice', async () => {
    const h = setup();
    await h.send(range(60));
    let failures = 1;
    // The broker commits, then the answer is lost: every member sees its commit fail.
    h.kafka.faultHook = (operation, phase) => {
      if (operation === 'txn-commit' && phase === 'after' && failures-- > 0) throw new Error('connection reset');
    };
    await h.driveAll();
    expect(h.calls.reset).toBe(1);
    expect(h.outputs()).toEqual(range(60));
    for (let p = 0; p < PARTITIONS; p++) expect(h.kafka.committedOffset(APP, 'in', p)).toBe(h.kafka.endOffset('in', p));
  });

  it('writes every input exactly once whatever sends and commits fail, in any order (property)', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.constantFrom('txn-send:before', 'txn-commit:before', 'txn-commit:after', 'txn-send-offsets:before', 'none'), {
          maxLength: 12,
        }),
        fc.integer({ min: 1, max: 40 }),
        fc.array(fc.integer({ min: 0, max: 12 }), { minLength: 1, maxLength: 8 }),
        async (faults, count, sendDelays) => {
          const h = setup();
          await h.send(range(count));
          const plan = [...faults];
          let sends = 0;
          h.kafka.faultHook = async (operation, phase) => {
            if (plan.length > 0 && plan[0] === `${operation}:${phase}`) {
              plan.shift();
              throw new Error(`injected ${operation}:${phase}`);
            }
            if (plan[0] === 'none') plan.shift();
            // A send's records are in the transaction before its acknowledgement arrives, which
            // takes a while (virtual ms): other members act meanwhile, as on a real broker.
            if (operation === 'txn-send' && phase === 'after') {
              const until = h.clock.now() + sendDelays[sends++ % sendDelays.length]!;
              while (h.clock.now() < until) await macrotask();
            }
          };
          await h.driveAll(60_000);
          expect(h.outputs()).toEqual(range(count));
          for (let p = 0; p < PARTITIONS; p++) expect(h.kafka.committedOffset(APP, 'in', p) ?? 0).toBe(h.kafka.endOffset('in', p));
        },
      ),
      { numRuns: 60 },
    );
  });

  it('fences every task when the shared producer is fenced, and says so once', async () => {
    const h = setup();
    await h.send(range(30));
    h.kafka.faultHook = (operation, phase, detail) => {
      if (operation === 'txn-commit' && phase === 'before') throw new ProducerFencedError(detail.producer ?? '?');
    };
    const results = await h.driveAll();
    expect(results).toEqual(range(PARTITIONS).map(() => ({ kind: 'closed', state: 'fenced' })));
    expect(h.fenced).toHaveLength(1);
    expect(h.outputs()).toEqual([]);
  });

  it('ends the open transaction when a send finds the producer fenced after another task asked to commit: every task closes fenced', async () => {
    const h = setup();
    await h.send(range(30));
    let sends = 0;
    h.kafka.faultHook = async (operation, phase, detail) => {
      if (operation === 'txn-send' && phase === 'before' && ++sends === 2) {
        // The first task has sent and asked to commit by the time this send fails: it waits on
        // the round's outcome, which only the fence can settle (it waited for ever before).
        const until = h.clock.now() + 3;
        while (h.clock.now() < until) await macrotask();
        throw new ProducerFencedError(detail.producer ?? '?');
      }
    };
    const results = await h.driveAll();
    expect(results).toEqual(range(PARTITIONS).map(() => ({ kind: 'closed', state: 'fenced' })));
    expect(h.fenced).toHaveLength(1);
    expect(h.outputs()).toEqual([]);
  });
});
