import { describe, expect, it } from 'vitest';
import { headerString, WEIR_HEADERS } from '../record/weir-headers.js';
import type { ProcessOptions } from '../dsl/process-options.js';
import type { ProcessorFn } from '../dsl/processor.js';
import { sink } from '../dsl/sink.js';
import { topology, type ProcessingGuarantee } from '../dsl/topology-builder.js';
import { NonRetriableError } from '../errors.js';
import { InMemoryKafka } from '../testing/in-memory-kafka.js';
import { ManualClock } from '../testing/manual-clock.js';
import { compile } from '../topology/compile.js';
import { PartitionTask } from './partition-task.js';
import { APP, taskHarness } from './partition-task.test-support.js';

function setup(
  fn: ProcessorFn<string | null, any, any>,
  options: ProcessOptions = {},
  guarantee: ProcessingGuarantee = 'at_least_once',
  maxRecordBytes?: number,
) {
  const h = taskHarness({ fn, options, guarantee, ...(maxRecordBytes !== undefined ? { maxRecordBytes } : {}) });
  const produce = (values: unknown[], key = (i: number) => `k${i}`) =>
    h.send(values.map((value, i) => ({ value, key: key(i), headers: { trace: 't' + i } })));
  /** Feeds everything readable and polls until the task is idle, moving the clock as asked. */
  const drive = async (task: PartitionTask) => {
    const r = await h.drive(task);
    if (r === undefined) throw new Error('task did not settle');
    return r;
  };
  return { ...h, produce, drive };
}

describe('PartitionTask (at_least_once)', () => {
  it('processes in offset order, writes every success to the sink and commits after the acks', async () => {
    const h = setup((r) => ({ n: (r.value as { n: number }).n * 10 }));
    await h.produce([{ n: 1 }, { n: 2 }, { n: 3 }]);
    const task = h.makeTask();
    expect(await h.drive(task)).toEqual({ kind: 'idle' });
    expect(h.values('out')).toEqual([{ n: 10 }, { n: 20 }, { n: 30 }]);
    expect(h.kafka.readAll('out').map((r) => headerString(r.headers, 'trace'))).toEqual(['t0', 't1', 't2']);
    expect(h.kafka.committedOffset(APP, 'in', 0)).toBe(3);
  });

  it('retries a poison record in place, dead-letters it after maxAttempts, then processes the next offset', async () => {
    const h = setup(
      (r) => {
        if ((r.value as { poison?: boolean }).poison) throw new Error('dependency down');
        return r.value;
      },
      { retry: { maxAttempts: 4, backoff: { initialMs: 1000, multiplier: 2, maxMs: 60_000, jitter: 'none' } } },
    );
    await h.produce([{ a: 1 }, { poison: true }, { a: 2 }]);
    const start = h.clock.now();
    await h.drive(h.makeTask());
    expect(h.values('out')).toEqual([{ a: 1 }, { a: 2 }]);
    const [dead] = h.kafka.readAll('dlq');
    expect(dead!.value!.toString()).toBe('{"poison":true}');
    expect(dead!.key!.toString()).toBe('k1');
    expect(headerString(dead!.headers, 'trace')).toBe('t1');
    expect(headerString(dead!.headers, WEIR_HEADERS.attempts)).toBe('4');
    expect(headerString(dead!.headers, WEIR_HEADERS.originalOffset)).toBe('1');
    expect(headerString(dead!.headers, WEIR_HEADERS.errorClass)).toBe('Error');
    expect(headerString(dead!.headers, WEIR_HEADERS.errorMessage)).toBe('dependency down');
    expect(headerString(dead!.headers, WEIR_HEADERS.firstFailureMs)).toBe(String(start));
    expect(headerString(dead!.headers, WEIR_HEADERS.lastFailureMs)).toBe(String(start + 1000 + 2000 + 4000));
    const retries = h.events.filter((e) => e.outcome === 'retry').map((e) => e.delayMs);
    expect(retries).toEqual([1000, 2000, 4000]);
    expect(h.kafka.committedOffset(APP, 'in', 0)).toBe(3);
  });

  it('dead-letters non-retriable errors and bad JSON at once', async () => {
    const h = setup((r) => {
      if ((r.value as { bad?: boolean }).bad) throw new NonRetriableError('invalid order');
      return r.value;
    });
    await h.produce([{ bad: true }, '{not json', { ok: 1 }]);
    await h.drive(h.makeTask());
    const dead = h.kafka.readAll('dlq');
    expect(dead.map((d) => headerString(d.headers, WEIR_HEADERS.errorClass))).toEqual(['NonRetriableError', 'DeserializationError']);
    expect(dead.map((d) => headerString(d.headers, WEIR_HEADERS.attempts))).toEqual(['1', '0']);
    expect(dead[1]!.value!.toString()).toBe('{not json');
    expect(h.values('out')).toEqual([{ ok: 1 }]);
  });

  it('never commits past a record whose output is not acknowledged', async () => {
    const h = setup((r) => r.value);
    await h.produce([{ a: 1 }, { a: 2 }]);
    let failing = true;
    h.kafka.faultHook = (op, phase) => {
      if (op === 'produce' && phase === 'before' && failing) throw new Error('broker unavailable');
    };
    const task = h.makeTask();
    task.enqueue(h.kafka.read('in', 0, 0).records);
    const r = await task.poll();
    expect(r).toMatchObject({ kind: 'wait', reason: 'port-retry' });
    expect(h.kafka.committedOffset(APP, 'in', 0)).toBeUndefined();
    failing = false;
    await h.drive(task);
    expect(h.values('out')).toEqual([{ a: 1 }, { a: 2 }]);
    expect(h.kafka.committedOffset(APP, 'in', 0)).toBe(2);
  });

  it('routes outputs by predicate and dead-letters an output that matches no branch', async () => {
    const clock = new ManualClock();
    const kafka = new InMemoryKafka(clock);
    const compiled = compile(
      topology(APP)
        .source('in', 'json')
        .process('p', (r) => r.value as { kind: string })
        .branch({
          success: [
            { when: (o) => o.value.kind === 'a', to: 'out-a' },
            { when: (o) => o.value.kind === 'b', to: sink('out-b') },
          ],
        }),
    );
    for (const t of ['in', 'out-a', 'out-b', 'app.p.dlq']) kafka.createTopic(t);
    await kafka
      .producer()
      .send(['a', 'b', 'c'].map((kind) => ({ topic: 'in', key: null, value: Buffer.from(JSON.stringify({ kind })), headers: {} })));
    const task = new PartitionTask({
      topology: compiled,
      topic: 'in',
      partition: 0,
      startOffset: 0,
      clock,
      output: { guarantee: 'at_least_once', producer: kafka.producer(), committer: kafka.committer(APP) },
    });
    task.enqueue(kafka.read('in', 0, 0).records);
    await task.poll();
    expect(kafka.readAll('out-a')).toHaveLength(1);
    expect(kafka.readAll('out-b')).toHaveLength(1);
    const [dead] = kafka.readAll('app.p.dlq');
    expect(headerString(dead!.headers, WEIR_HEADERS.errorClass)).toBe('NoMatchingBranchError');
  });

  it('skips duplicate dedup keys, within a unit and across units', async () => {
    const h = setup((r) => r.value, { dedup: { key: (r) => (r.value as { id: string }).id, ttlMs: 60_000, store: 'memory' } });
    await h.produce([{ id: 'x' }, { id: 'y' }, { id: 'x' }]);
    const task = h.makeTask();
    await h.drive(task);
    await h.produce([{ id: 'y' }, { id: 'z' }]);
    await h.drive(task);
    expect(h.values('out')).toEqual([{ id: 'x' }, { id: 'y' }, { id: 'z' }]);
    expect(h.events.filter((e) => e.outcome === 'duplicate').map((e) => e.offset)).toEqual([2, 3]);
    expect(h.kafka.committedOffset(APP, 'in', 0)).toBe(5);
  });
});

describe('PartitionTask (what user code can do wrong)', () => {
  it('dead-letters a record whose processor forwards something that is not { value }', async () => {
    const h = setup((r, ctx) => {
      ctx.forward((r.value as { bad?: boolean }).bad ? (undefined as never) : { value: 1 });
    });
    await h.produce([{ bad: true }, { ok: true }]);
    expect(await h.drive(h.makeTask())).toEqual({ kind: 'idle' });
    const [dead] = h.kafka.readAll('dlq');
    expect(headerString(dead!.headers, WEIR_HEADERS.errorClass)).toBe('TypeError');
    expect(headerString(dead!.headers, WEIR_HEADERS.errorMessage)).toContain('ctx.forward() takes { value, key?, headers? }');
    expect(h.values('out')).toEqual([1]);
  });

  it('drops and reports a forward() made after the attempt ended, instead of throwing into the timer', async () => {
    let late: (() => void) | undefined;
    const h = setup((r, ctx) => {
      late = () => ctx.forward({ value: 'late' });
      return r.value;
    });
    await h.produce([{ a: 1 }]);
    await h.drive(h.makeTask());
    expect(() => late!()).not.toThrow();
    expect(h.warnings).toEqual([expect.stringContaining('called ctx.forward() after its attempt ended')]);
    expect(h.values('out')).toEqual([{ a: 1 }]);
  });

  it('dead-letters an input whose output is over the record size limit, and omits what does not fit in its DLQ copy', async () => {
    const h = setup((r) => ({ big: 'x'.repeat((r.value as { n: number }).n) }), {}, 'at_least_once', 10_000);
    await h.produce([{ n: 100 }, { n: 20_000 }, { n: 200 }]);
    await h.produce(['y'.repeat(30_000)]);
    await h.drive(h.makeTask());
    expect(h.values('out').map((v) => (v as { big: string }).big.length)).toEqual([100, 200]);
    const dead = h.kafka.readAll('dlq');
    expect(dead.map((d) => headerString(d.headers, WEIR_HEADERS.errorClass))).toEqual(['RecordTooLargeError', 'DeserializationError']);
    expect(headerString(dead[0]!.headers, WEIR_HEADERS.errorMessage)).toMatch(
      /the output to 'out' is \d+ bytes, over the record size limit of 10000 bytes/,
    );
    expect(dead[0]!.value!.toString()).toBe('{"n":20000}');
    expect(dead[1]!.value).toBeNull();
    expect(headerString(dead[1]!.headers, WEIR_HEADERS.omitted)).toBe('value');
    expect(Number(headerString(dead[1]!.headers, WEIR_HEADERS.omittedBytes))).toBeGreaterThan(30_000);
    expect(headerString(dead[1]!.headers, WEIR_HEADERS.originalOffset)).toBe('3');
    expect(h.kafka.committedOffset(APP, 'in', 0)).toBe(4);
  });

  it.each([
    [null, 'null', 'null'],
    [undefined, 'undefined', 'undefined'],
    ['plain text', 'string', 'plain text'],
    [{ code: 42 }, 'Object', '{"code":42}'],
  ])('records what a processor threw that is not an Error: %j', async (thrown, cls, message) => {
    const h = setup(
      () => {
        throw thrown;
      },
      { retry: { maxAttempts: 1 } },
    );
    await h.produce([{ a: 1 }]);
    await h.drive(h.makeTask());
    const [dead] = h.kafka.readAll('dlq');
    expect(headerString(dead!.headers, WEIR_HEADERS.errorClass)).toBe(cls);
    expect(headerString(dead!.headers, WEIR_HEADERS.errorMessage)).toBe(message);
  });
});

describe('PartitionTask (exactly_once)', () => {
  it('leaves nothing in the sink from an attempt that forwarded and then threw', async () => {
    let calls = 0;
    const h = setup(
      (r, ctx) => {
        ctx.forward({ value: { partial: true } });
        if (calls++ === 0) throw new Error('transient');
        return r.value;
      },
      { retry: { maxAttempts: 3, backoff: { initialMs: 10, jitter: 'none' } } },
      'exactly_once',
    );
    await h.produce([{ a: 1 }]);
    await h.drive(h.makeTask());
    expect(h.values('out')).toEqual([{ partial: true }, { a: 1 }]);
    expect(h.kafka.committedOffset(APP, 'in', 0)).toBe(1);
  });

  it('aborts a failed transaction and re-runs the batch: no output twice, none lost', async () => {
    const h = setup((r) => r.value, {}, 'exactly_once');
    await h.produce([{ a: 1 }, { a: 2 }, { a: 3 }]);
    let failures = 1;
    h.kafka.faultHook = (op, phase) => {
      if (op === 'txn-commit' && phase === 'before' && failures-- > 0) throw new Error('coordinator moved');
    };
    await h.drive(h.makeTask());
    expect(h.values('out')).toEqual([{ a: 1 }, { a: 2 }, { a: 3 }]);
    expect(h.kafka.readAll('out', 'read_uncommitted')).toHaveLength(6);
    expect(h.kafka.committedOffset(APP, 'in', 0)).toBe(3);
  });

  it('resolves a commit whose response was lost by reading the offsets back: no duplicate', async () => {
    const h = setup((r) => r.value, {}, 'exactly_once');
    await h.produce([{ a: 1 }, { a: 2 }]);
    let lost = 1;
    h.kafka.faultHook = (op, phase) => {
      if (op === 'txn-commit' && phase === 'after' && lost-- > 0) throw new Error('connection closed after EndTxn');
    };
    await h.drive(h.makeTask());
    expect(h.kafka.readAll('out', 'read_uncommitted')).toHaveLength(2);
    expect(h.values('out')).toEqual([{ a: 1 }, { a: 2 }]);
    expect(h.kafka.committedOffset(APP, 'in', 0)).toBe(2);
  });

  it('closes a fenced (zombie) task without writing', async () => {
    const h = setup((r) => r.value, {}, 'exactly_once');
    await h.produce([{ a: 1 }]);
    const zombie = h.makeTask();
    zombie.enqueue(h.kafka.read('in', 0, 0).records);
    const successor = h.makeTask(); // initTransactions with the same transactional id fences the zombie
    expect(await h.drive(zombie)).toEqual({ kind: 'closed', state: 'fenced' });
    expect(h.values('out')).toEqual([]);
    await h.drive(successor);
    expect(h.values('out')).toEqual([{ a: 1 }]);
  });
});

describe('PartitionTask (retry topics)', () => {
  it('sends a failed record to the next tier with a due time, and the tier task waits for it', async () => {
    let failures = 1;
    const h = setup(
      (r) => {
        if (failures-- > 0) throw new Error('later');
        return r.value;
      },
      { retry: { mode: 'topics', maxAttempts: 3, backoff: { initialMs: 5000, multiplier: 2, jitter: 'none' } } },
    );
    await h.produce([{ a: 1 }, { b: 2 }]);
    const t0 = h.clock.now();
    await h.drive(h.makeTask());
    expect(h.values('out')).toEqual([{ b: 2 }]);
    const [copy] = h.kafka.readAll('app.p.retry.0');
    expect(headerString(copy!.headers, WEIR_HEADERS.retryDueMs)).toBe(String(t0 + 5000));
    expect(headerString(copy!.headers, WEIR_HEADERS.attempts)).toBe('1');
    const tier = h.makeTask('app.p.retry.0');
    tier.enqueue(h.kafka.read('app.p.retry.0', 0, 0).records);
    expect(await tier.poll()).toEqual({ kind: 'wait', untilMs: t0 + 5000, reason: 'due' });
    await h.drive(tier);
    expect(h.values('out')).toEqual([{ b: 2 }, { a: 1 }]);
    const success = h.events.find((e) => e.topic === 'app.p.retry.0' && e.outcome === 'success')!;
    expect(success.atMs).toBeGreaterThanOrEqual(t0 + 5000);
    expect(success.attempt).toBe(2);
  });
});
