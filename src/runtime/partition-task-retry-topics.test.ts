/**
 * Retry-topic mode through the real PartitionTask and the in-memory broker: hops, header
 * size across hops, the DLQ (once per failed input) and the loop guards.
 */
import { describe, expect, it } from 'vitest';
import { WEIR_HEADERS, headerString } from '../record/weir-headers.js';
import type { RetryOptions } from '../dsl/process-options.js';
import type { ProcessorFn } from '../dsl/processor.js';
import type { InputRecord, RecordHeaders } from '../record/record-types.js';
import { APP, taskHarness } from './partition-task.test-support.js';

function setup(fn: ProcessorFn<string | null, any, any>, retry: RetryOptions) {
  const h = taskHarness({ fn, options: { retry } });
  const produce = (values: unknown[], headers: RecordHeaders = { trace: 't-1' }) =>
    h.send(values.map((value, i) => ({ value, key: `k${i}`, headers })));
  return { ...h, produce };
}

/** Bytes of a record's headers as Kafka stores them (names and values, UTF-8). */
function headerBytes(headers: RecordHeaders): number {
  let bytes = 0;
  for (const [name, value] of Object.entries(headers)) {
    for (const v of Array.isArray(value) ? value : [value]) bytes += Buffer.byteLength(name) + (v === undefined ? 0 : Buffer.byteLength(v));
  }
  return bytes;
}

const digits = (n: number) => String(n).length;

/** An error with a fixed stack, so header sizes depend on the hop only. */
function gatewayDown(): Error {
  const error = new Error('payment gateway unavailable');
  error.stack = 'Error: payment gateway unavailable\n    at charge (payments.ts:10:11)';
  return error;
}

describe('retry topics: 50 hops', () => {
  it('replaces weir headers on every hop: header bytes change only with the width of the attempt and hop numbers', async () => {
    const h = setup(
      () => {
        throw gatewayDown();
      },
      { mode: 'topics', tiers: ['1s'], maxAttempts: 51 },
    );
    await h.produce([{ amount: 1 }]);
    await h.runAll();

    const hops = h.kafka.readAll('app.p.retry.0');
    expect(hops).toHaveLength(50);
    const sizes = hops.map((r) => headerBytes(r.headers));
    hops.forEach((record, i) => {
      const hop = i + 1;
      expect(headerString(record.headers, WEIR_HEADERS.attempts)).toBe(String(hop));
      expect(headerString(record.headers, WEIR_HEADERS.retryHops)).toBe(String(hop));
      expect(headerString(record.headers, WEIR_HEADERS.retryPath)!.split('>')).toHaveLength(Math.min(hop, 4));
      expect(headerString(record.headers, 'trace')).toBe('t-1');
      expect(Object.values(record.headers).some(Array.isArray)).toBe(false);
    });
    // Until the path is full (4 hops) each hop adds one path entry: '>' + the tier topic.
    for (let hop = 2; hop <= 4; hop++) expect(sizes[hop - 1]! - sizes[hop - 2]!).toBe(1 + 'app.p.retry.0'.length);
    // From then on the size is constant except for the digits of weir.attempts and weir.retry.hops.
    const base = sizes[3]!;
    for (let hop = 4; hop <= 50; hop++) expect(sizes[hop - 1]).toBe(base + 2 * (digits(hop) - digits(4)));
    expect(Math.max(...sizes.slice(3)) - base).toBe(2);

    // Attempt 51 is the last: exactly one DLQ record, with the origin and the attempt count.
    const dlq = h.kafka.readAll('dlq');
    expect(dlq).toHaveLength(1);
    expect(headerString(dlq[0]!.headers, WEIR_HEADERS.attempts)).toBe('51');
    expect(headerString(dlq[0]!.headers, WEIR_HEADERS.originalTopic)).toBe('in');
    expect(headerString(dlq[0]!.headers, WEIR_HEADERS.originalOffset)).toBe('0');
    expect(headerBytes(dlq[0]!.headers)).toBeLessThan(base);
    expect(h.kafka.readAll('out')).toHaveLength(0);
  });
});

describe('retry topics: the DLQ and loop guards', () => {
  it('writes exactly one DLQ record per failed input, after maxAttempts, through the derived tiers', async () => {
    const h = setup(
      (r) => {
        if ((r.value as { poison?: boolean }).poison) throw gatewayDown();
        return r.value;
      },
      { mode: 'topics', maxAttempts: 4, backoff: { initialMs: 1000, multiplier: 2, maxMs: 2000, jitter: 'none' } },
    );
    expect(h.tiers).toEqual(['app.p.retry.0', 'app.p.retry.1']);
    await h.produce([{ poison: true, n: 1 }, { n: 2 }, { poison: true, n: 3 }, { n: 4 }]);
    await h.runAll();
    const dlq = h.kafka.readAll('dlq');
    expect(dlq.map((r) => JSON.parse(r.value!.toString()).n)).toEqual([1, 3]);
    for (const r of dlq) {
      expect(headerString(r.headers, WEIR_HEADERS.attempts)).toBe('4');
      expect(headerString(r.headers, WEIR_HEADERS.replayMax)).toBe('3');
      expect(headerString(r.headers, WEIR_HEADERS.retryDueMs)).toBeUndefined();
    }
    expect(h.kafka.readAll('app.p.retry.0')).toHaveLength(2);
    // Retry 2 and 3 both go to the 2 s tier (the last delay reused).
    expect(h.kafka.readAll('app.p.retry.1')).toHaveLength(4);
    expect(h.kafka.readAll('out').map((r) => JSON.parse(r.value!.toString()).n)).toEqual([2, 4]);
  });

  it('dead-letters a record whose hop count reached maxHops with a LoopGuardError', async () => {
    const h = setup(
      () => {
        throw gatewayDown();
      },
      { mode: 'topics', tiers: ['1s'], maxAttempts: 10, maxHops: 2 },
    );
    await h.produce([{ n: 1 }]);
    await h.runAll();
    expect(h.kafka.readAll('app.p.retry.0')).toHaveLength(2);
    const [dead] = h.kafka.readAll('dlq');
    expect(headerString(dead!.headers, WEIR_HEADERS.errorClass)).toBe('LoopGuardError');
    expect(headerString(dead!.headers, WEIR_HEADERS.errorMessage)).toMatch(/hop limit \(2\).*payment gateway unavailable/);
    expect(headerString(dead!.headers, WEIR_HEADERS.attempts)).toBe('3');
  });

  it('keeps the replay count of a replayed record that fails again, across hops, into the DLQ', async () => {
    const h = setup(
      () => {
        throw gatewayDown();
      },
      { mode: 'topics', tiers: ['1s'], maxAttempts: 3, maxReplays: 5 },
    );
    // What `weir dlq replay` publishes: the original coordinates and the replay count.
    await h.produce([{ n: 1 }], {
      trace: 't-1',
      [WEIR_HEADERS.originalTopic]: 'in',
      [WEIR_HEADERS.originalPartition]: '0',
      [WEIR_HEADERS.originalOffset]: '7',
      [WEIR_HEADERS.originalTimestamp]: '1700000000000',
      [WEIR_HEADERS.replayCount]: '2',
    });
    await h.runAll();
    for (const hop of h.kafka.readAll('app.p.retry.0')) expect(headerString(hop.headers, WEIR_HEADERS.replayCount)).toBe('2');
    const [dead] = h.kafka.readAll('dlq') as InputRecord[];
    expect(headerString(dead!.headers, WEIR_HEADERS.replayCount)).toBe('2');
    expect(headerString(dead!.headers, WEIR_HEADERS.replayMax)).toBe('5');
    expect(headerString(dead!.headers, WEIR_HEADERS.originalOffset)).toBe('7');
    // A replayed record starts with fresh attempts: 3 attempts again, not 3 + earlier ones.
    expect(headerString(dead!.headers, WEIR_HEADERS.attempts)).toBe('3');
  });
});

describe('retry topics: the main partition flows', () => {
  it('processes the records behind a poison record before the poison record is due again', async () => {
    const h = setup(
      (r) => {
        if ((r.value as { poison?: boolean }).poison) throw gatewayDown();
        return r.value;
      },
      { mode: 'topics', tiers: ['1m'], maxAttempts: 2 },
    );
    await h.produce([{ poison: true }, { n: 1 }, { n: 2 }]);
    const start = h.clock.now();
    await h.drive(h.makeTask('in'));
    // The source task waited only for its commit interval, never for the poison record's retry.
    expect(h.clock.now()).toBeLessThanOrEqual(start + h.compiled.commitIntervalMs);
    expect(h.kafka.readAll('out')).toHaveLength(2);
    expect(h.kafka.committedOffset(APP, 'in', 0)).toBe(3);
    const tier = h.makeTask('app.p.retry.0');
    tier.enqueue(h.kafka.read('app.p.retry.0', 0, 0).records);
    expect(await tier.poll()).toEqual({ kind: 'wait', untilMs: start + 60_000, reason: 'due' });
  });
});
