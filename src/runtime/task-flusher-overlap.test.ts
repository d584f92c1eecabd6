import { describe, expect, it } from 'vitest';
import { transactionalId } from '../record/task-id.js';
import { PartitionTask } from './partition-task.js';
import { APP, taskHarness } from './partition-task.test-support.js';
import type { PollResult } from './poll-result.js';
import type { OffsetReader } from './ports.js';
import type { BrokerOperation } from '../testing/in-memory-kafka.js';

/** A gate on one broker operation: the next `count` calls wait until `open()`. */
function hold(operation: BrokerOperation, phase: 'before' | 'after' = 'before') {
  let release: () => void = () => undefined;
  const opened = new Promise<void>((resolve) => (release = resolve));
  let held = 0;
  return {
    hook: (op: BrokerOperation, p: 'before' | 'after') => {
      if (op !== operation || p !== phase) return undefined;
      held++;
      return opened;
    },
    get held() {
      return held;
    },
    open: () => release(),
  };
}

/** A task of `in`-0 under exactly_once whose commits run while it processes on. */
function overlapping(
  h: ReturnType<typeof taskHarness>,
  overlapCommits = true,
  offsets: OffsetReader = h.kafka.offsetReader(),
): PartitionTask {
  return new PartitionTask({
    topology: h.compiled,
    topic: 'in',
    partition: 0,
    startOffset: h.kafka.committedOffset(APP, 'in', 0) ?? 0,
    clock: h.clock,
    random: () => 0.5,
    output: {
      guarantee: 'exactly_once',
      transactions: h.kafka.transactionalProducer(transactionalId(APP, { topic: 'in', partition: 0 })),
      offsets,
    },
    overlapCommits,
  });
}

/** Enqueues what `in`-0 holds past the task's position and polls once. */
async function pollOnce(h: ReturnType<typeof taskHarness>, task: PartitionTask): Promise<PollResult> {
  const { records, nextOffset } = h.kafka.read('in', 0, task.position);
  task.enqueue(records, nextOffset);
  return task.poll();
}

const seqs = (n: number, from = 0) => Array.from({ length: n }, (_, i) => ({ value: { seq: from + i } }));

describe('exactly_once: processing on while a transaction commits (overlapCommits)', () => {
  it('processes the next unit while the commit is held, then commits it in a transaction of its own, in order', async () => {
    const h = taskHarness({ fn: (r) => r.value, guarantee: 'exactly_once' });
    const task = overlapping(h);
    await h.send(seqs(3));
    expect((await pollOnce(h, task)).kind).toBe('wait');
    h.clock.advance(100);
    const gate = hold('txn-commit');
    h.kafka.faultHook = gate.hook;
    // The commit of the first unit starts at this poll and is held; the poll returns without it.
    await pollOnce(h, task);
    await new Promise((resolve) => setImmediate(resolve));
    expect(gate.held).toBe(1);
    expect(task.committedOffset).toBe(0);
    await h.send(seqs(2, 3));
    const r = await pollOnce(h, task);
    expect(r.kind).toBe('wait');
    // The two records after the held commit were processed: nothing is buffered unprocessed.
    expect(task.buffered).toBe(0);
    expect(h.values('out')).toEqual([]);
    gate.open();
    h.kafka.faultHook = undefined;
    h.clock.advance(100);
    await h.drive(task);
    expect(h.values('out')).toEqual([0, 1, 2, 3, 4].map((seq) => ({ seq })));
    expect(h.kafka.committedOffset(APP, 'in', 0)).toBe(5);
  });

  // 'before': the commit never reached the broker (aborted: both units run again); 'after': the
  // broker committed and the caller saw an error (in doubt, resolved as committed: the unit after
  // it stays).
  it.each([
    ['before', 'a commit that fails and was aborted runs both units again'],
    ['after', 'a commit in doubt that did commit keeps the unit after it'],
  ] as const)('commit fails %s the broker: %s; every output once, in order', async (phase, _what) => {
    const h = taskHarness({ fn: (r) => r.value, guarantee: 'exactly_once' });
    const task = overlapping(h);
    await h.send(seqs(3));
    await pollOnce(h, task);
    h.clock.advance(100);
    let failures = 0;
    h.kafka.faultHook = (op, p) => {
      if (op === 'txn-commit' && p === phase && failures++ === 0) throw new Error('connection closed');
    };
    await pollOnce(h, task);
    await h.send(seqs(2, 3));
    await pollOnce(h, task);
    h.clock.advance(100);
    await h.drive(task);
    expect(failures).toBeGreaterThan(1);
    expect(h.values('out')).toEqual([0, 1, 2, 3, 4].map((seq) => ({ seq })));
    expect(h.kafka.committedOffset(APP, 'in', 0)).toBe(5);
  });

  it('a commit in doubt whose resolution fails at first writes the unit in doubt again, not the one after it', async () => {
    const h = taskHarness({ fn: (r) => r.value, guarantee: 'exactly_once' });
    const reader = h.kafka.offsetReader();
    let reads = 0;
    const task = overlapping(h, true, {
      committedOffset: async (...args) => reader.committedOffset(...args),
      committedPosition: async (...args) => {
        if (reads++ === 0) throw new Error('offset fetch timed out');
        return reader.committedPosition(...args);
      },
    });
    await h.send(seqs(3));
    await pollOnce(h, task);
    h.clock.advance(100);
    let commits = 0;
    h.kafka.faultHook = (op, phase) => {
      if (op === 'txn-commit' && phase === 'after' && commits++ === 0) throw new Error('connection closed');
    };
    await pollOnce(h, task);
    await h.send(seqs(2, 3));
    await pollOnce(h, task);
    for (let i = 0; i < 50 && h.kafka.committedOffset(APP, 'in', 0) !== 5; i++) {
      const r = await pollOnce(h, task);
      if (r.kind === 'wait' && r.untilMs > h.clock.now()) h.clock.set(r.untilMs);
    }
    expect(reads).toBeGreaterThan(1);
    expect(h.values('out')).toEqual([0, 1, 2, 3, 4].map((seq) => ({ seq })));
    expect(h.kafka.committedOffset(APP, 'in', 0)).toBe(5);
  });

  it('a task closed while its commit is in flight ends only after that transaction did', async () => {
    const h = taskHarness({ fn: (r) => r.value, guarantee: 'exactly_once' });
    const task = overlapping(h);
    await h.send(seqs(3));
    await pollOnce(h, task);
    h.clock.advance(100);
    const gate = hold('txn-commit');
    h.kafka.faultHook = gate.hook;
    await pollOnce(h, task);
    task.requestStop('close');
    let closed = false;
    const closing = task.poll().then((r) => (closed = r.kind === 'closed'));
    await new Promise((resolve) => setImmediate(resolve));
    expect(closed).toBe(false);
    gate.open();
    await closing;
    expect(closed).toBe(true);
    expect(h.kafka.committedOffset(APP, 'in', 0)).toBe(3);
  });

  it('a task closed while its commit is in flight closes as fenced when that commit found the producer fenced', async () => {
    const h = taskHarness({ fn: (r) => r.value, guarantee: 'exactly_once' });
    const task = overlapping(h);
    await h.send(seqs(3));
    await pollOnce(h, task);
    h.clock.advance(100);
    const gate = hold('txn-commit');
    h.kafka.faultHook = gate.hook;
    await pollOnce(h, task);
    await new Promise((resolve) => setImmediate(resolve));
    expect(gate.held).toBe(1);
    // A newer instance initializes the same transactional id: the held commit is a zombie's.
    h.kafka.transactionalProducer(transactionalId(APP, { topic: 'in', partition: 0 }));
    task.requestStop('close');
    const closing = task.poll();
    gate.open();
    expect(await closing).toEqual({ kind: 'closed', state: 'fenced' });
    expect(h.kafka.committedOffset(APP, 'in', 0)).toBeUndefined();
    expect(h.values('out')).toEqual([]);
  });

  it('without overlapCommits the poll waits for its commit', async () => {
    const h = taskHarness({ fn: (r) => r.value, guarantee: 'exactly_once' });
    const task = overlapping(h, false);
    await h.send(seqs(3));
    await pollOnce(h, task);
    h.clock.advance(100);
    const gate = hold('txn-commit');
    h.kafka.faultHook = gate.hook;
    let returned = false;
    const polled = pollOnce(h, task).then(() => (returned = true));
    await new Promise((resolve) => setImmediate(resolve));
    expect(gate.held).toBe(1);
    expect(returned).toBe(false);
    gate.open();
    await polled;
    expect(h.kafka.committedOffset(APP, 'in', 0)).toBe(3);
  });
});
