import { pino } from 'pino';
import { describe, expect, it, vi } from 'vitest';
import { MemoryDedupStore } from '../dedup/memory-dedup-store.js';
import type { ProcessOptions } from '../dsl/process-options.js';
import type { DedupStore } from '../runtime/ports.js';
import { oneTask } from './one-task.test-support.js';

/** A runner of the task of `in`-0 (processor `p` → `out`, at_least_once) on in-memory Kafka, with one record to give it. */
function setup(options: ProcessOptions = {}, dedupStore?: DedupStore) {
  const { kafka, newTask, newRunner, produceOne } = oneTask({ options, ...(dedupStore ? { dedupStore } : {}) });
  const task = newTask();
  let closed: string | undefined;
  const runner = newRunner(task, { logger: pino({ level: 'silent' }), onClosed: (state) => (closed = state) });
  /** Produces one record to `in` and hands it to the task. */
  const giveRecord = async (): Promise<void> => {
    task.enqueue(await produceOne());
    runner.notifyRecords();
  };
  return { kafka, task, runner, giveRecord, closed: () => closed };
}

describe('TaskRunner', () => {
  it('ends its loop when stop() comes while a poll is in flight (no lost wake-up)', async () => {
    // The confirmation of the first unit blocks until released: the poll is in flight meanwhile.
    const memory = new MemoryDedupStore({ now: () => Date.now() });
    let release!: () => void;
    const confirming = new Promise<void>((resolve) => (release = resolve));
    let entered!: () => void;
    const inMarkDone = new Promise<void>((resolve) => (entered = resolve));
    const store: DedupStore = {
      claim: (c, o, t) => memory.claim(c, o, t),
      recover: (o, c, t) => memory.recover(o, c, t),
      close: () => memory.close(),
      markDone: async (k, o, t) => {
        entered();
        await confirming;
        return memory.markDone(k, o, t);
      },
    };
    const { kafka, runner, giveRecord, closed } = setup({ dedup: { key: () => 'k', ttlMs: 60_000, store: 'memory' } }, store);
    await giveRecord();
    await inMarkDone;
    const stopped = runner.stop('stop');
    release();
    await stopped;
    expect(closed()).toBe('closed');
    expect(kafka.readAll('out')).toHaveLength(1);
    expect(kafka.committedOffset('app', 'in', 0)).toBe(1);
  });

  it('idles while its task is suspended (a rebalance), and runs again on resume()', async () => {
    const { kafka, task, runner, giveRecord } = setup();
    runner.suspend();
    expect(task.currentState).toBe('suspended');
    await giveRecord();
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(kafka.readAll('out')).toHaveLength(0);
    runner.resume();
    expect(task.currentState).toBe('running');
    await vi.waitFor(() => expect(kafka.readAll('out')).toHaveLength(1));
    await runner.stop('stop');
    expect(task.currentState).toBe('closed');
  });
});
