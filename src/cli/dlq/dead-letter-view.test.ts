import { describe, expect, it } from 'vitest';
import type { InputRecord } from '../../record/record-types.js';
import { matchesDeadLetterFilter } from './dead-letter-filter.js';
import { DeadLetterTally } from './dead-letter-tally.js';
import { deadLetterView } from './dead-letter-view.js';
import { WEIR_HEADERS } from '../../record/weir-headers.js';

function record(offset: number, headers: Record<string, string>, value: Buffer | null = Buffer.from('{"n":1}')): InputRecord {
  return { topic: 'd', partition: 0, offset, timestamp: 1_000 + offset, key: Buffer.from('k'), value, headers };
}

const failed = (offset: number, errorClass: string, processor: string, atMs: number) =>
  deadLetterView(
    record(offset, {
      [WEIR_HEADERS.errorClass]: errorClass,
      [WEIR_HEADERS.processor]: processor,
      [WEIR_HEADERS.lastFailureMs]: String(atMs),
      trace: 't',
    }),
  );

describe('deadLetterView', () => {
  it('decodes weir headers, user headers, origin and the failure time', () => {
    const view = deadLetterView(
      record(5, {
        [WEIR_HEADERS.errorClass]: 'GatewayTimeout',
        [WEIR_HEADERS.attempts]: '4',
        [WEIR_HEADERS.replayCount]: '1',
        [WEIR_HEADERS.replayMax]: '3',
        [WEIR_HEADERS.originalTopic]: 'payments',
        [WEIR_HEADERS.originalPartition]: '2',
        [WEIR_HEADERS.originalOffset]: '9',
        [WEIR_HEADERS.lastFailureMs]: '777',
        trace: 'abc',
      }),
    );
    expect(view).toMatchObject({
      errorClass: 'GatewayTimeout',
      attempts: 4,
      replayCount: 1,
      replayMax: 3,
      failedAtMs: 777,
      value: '{"n":1}',
      encoding: 'utf8',
      key: 'k',
    });
    expect(view.origin).toMatchObject({ topic: 'payments', partition: 2, offset: 9 });
    expect(view.userHeaders).toEqual({ trace: 'abc' });
    expect(Object.keys(view.weirHeaders)).toHaveLength(8);
  });

  it('falls back to the record timestamp and coordinates, and base64 for binary values', () => {
    const view = deadLetterView(record(7, {}, Buffer.from([0xff, 0xfe, 0x00])));
    expect(view).toMatchObject({
      failedAtMs: 1_007,
      replayCount: 0,
      errorClass: undefined,
      encoding: 'base64',
      value: '//4A',
      key: 'aw==',
    });
    expect(view.origin).toMatchObject({ topic: 'd', partition: 0, offset: 7 });
  });
});

describe('matchesDeadLetterFilter', () => {
  const a = failed(1, 'GatewayTimeout', 'charge', 1_000);
  const b = failed(2, 'TypeError', 'refund', 2_000);
  it('takes everything with an empty filter', () => {
    expect([a, b].filter((v) => matchesDeadLetterFilter(v, {}))).toHaveLength(2);
  });
  it('filters by time window [since, until), error classes and processors', () => {
    expect(matchesDeadLetterFilter(a, { sinceMs: 1_000 })).toBe(true);
    expect(matchesDeadLetterFilter(a, { sinceMs: 1_001 })).toBe(false);
    expect(matchesDeadLetterFilter(b, { untilMs: 2_000 })).toBe(false);
    expect(matchesDeadLetterFilter(a, { errorClasses: ['TypeError', 'GatewayTimeout'] })).toBe(true);
    expect(matchesDeadLetterFilter(b, { errorClasses: ['GatewayTimeout'] })).toBe(false);
    expect(matchesDeadLetterFilter(b, { processors: ['refund'], errorClasses: ['TypeError'] })).toBe(true);
    expect(matchesDeadLetterFilter(deadLetterView(record(3, {})), { errorClasses: ['TypeError'] })).toBe(false);
  });
});

describe('DeadLetterTally', () => {
  it('counts by error class and by processor, most frequent first', () => {
    const tally = new DeadLetterTally();
    for (const v of [failed(1, 'B', 'p', 1), failed(2, 'A', 'p', 1), failed(3, 'B', 'q', 1), deadLetterView(record(4, {}))]) tally.add(v);
    const counts = tally.counts();
    expect(counts.total).toBe(4);
    expect(Object.entries(counts.byErrorClass)).toEqual([
      ['B', 2],
      ['(none)', 1],
      ['A', 1],
    ]);
    expect(Object.entries(counts.byProcessor)).toEqual([
      ['p', 2],
      ['(none)', 1],
      ['q', 1],
    ]);
  });
});
