import { describe, expect, it } from 'vitest';
import type { FailureInfo } from './failure-headers.js';
import { WEIR_HEADERS, headerString } from '../record/weir-headers.js';
import type { InputRecord } from '../record/record-types.js';
import { RETRY_PATH_KEEP, buildRetryTierRecord } from './retry-tier-record.js';

const source: InputRecord = {
  topic: 'payments',
  partition: 2,
  offset: 41,
  timestamp: 1_700_000_000_000,
  key: Buffer.from('k'),
  value: Buffer.from('{"amount":5}'),
  headers: { trace: 'abc', 'weir.stale': 'from an earlier hop' },
};

function failure(attempts: number, error: unknown = new Error('gateway timeout')): FailureInfo {
  return {
    applicationId: 'pay',
    processor: 'charge',
    attempts,
    error,
    firstFailureMs: 1_700_000_000_100,
    lastFailureMs: 1_700_000_000_000 + attempts * 1000,
    replayCount: 0,
  };
}

/** The copy a tier task makes of a tier record: the tier record read back as an input. */
function asRead(record: ReturnType<typeof buildRetryTierRecord>, offset: number): InputRecord {
  return {
    topic: record.topic,
    partition: 0,
    offset,
    timestamp: 1_700_000_000_000 + offset,
    key: record.key,
    value: record.value,
    headers: record.headers,
  };
}

describe('buildRetryTierRecord', () => {
  it('keeps key, value and user headers and adds attempts, due time, origin and error headers', () => {
    const copy = buildRetryTierRecord(source, 'pay.charge.retry.0', failure(1), 1_700_000_005_000, 1);
    expect(copy.topic).toBe('pay.charge.retry.0');
    expect(copy.key).toBe(source.key);
    expect(copy.value).toBe(source.value);
    const h = (name: string) => headerString(copy.headers, name);
    expect(h('trace')).toBe('abc');
    expect(h('weir.stale')).toBeUndefined();
    expect(h(WEIR_HEADERS.attempts)).toBe('1');
    expect(h(WEIR_HEADERS.retryDueMs)).toBe('1700000005000');
    expect(h(WEIR_HEADERS.retryHops)).toBe('1');
    expect(h(WEIR_HEADERS.retryPath)).toBe('pay.charge.retry.0');
    expect(h(WEIR_HEADERS.originalTopic)).toBe('payments');
    expect(h(WEIR_HEADERS.originalPartition)).toBe('2');
    expect(h(WEIR_HEADERS.originalOffset)).toBe('41');
    expect(h(WEIR_HEADERS.originalTimestamp)).toBe('1700000000000');
    expect(h(WEIR_HEADERS.errorClass)).toBe('Error');
    expect(h(WEIR_HEADERS.errorMessage)).toBe('gateway timeout');
    expect(h(WEIR_HEADERS.errorStack)).toContain('gateway timeout');
    expect(h(WEIR_HEADERS.processor)).toBe('charge');
    expect(h(WEIR_HEADERS.applicationId)).toBe('pay');
  });

  it('replaces the weir headers of the previous hop (origin kept, path capped to the last hops)', () => {
    let record = source;
    const topics = ['t.retry.0', 't.retry.1', 't.retry.2', 't.retry.2', 't.retry.2', 't.retry.2'];
    let copy = buildRetryTierRecord(record, topics[0]!, failure(1), 1, 1);
    for (let hop = 2; hop <= topics.length; hop++) {
      record = asRead(copy, hop);
      copy = buildRetryTierRecord(record, topics[hop - 1]!, failure(hop, new RangeError(`hop ${hop}`)), hop, hop);
    }
    const names = Object.keys(copy.headers);
    expect(new Set(names).size).toBe(names.length);
    for (const value of Object.values(copy.headers)) expect(Array.isArray(value)).toBe(false);
    expect(headerString(copy.headers, WEIR_HEADERS.originalTopic)).toBe('payments');
    expect(headerString(copy.headers, WEIR_HEADERS.originalOffset)).toBe('41');
    expect(headerString(copy.headers, WEIR_HEADERS.errorClass)).toBe('RangeError');
    expect(headerString(copy.headers, WEIR_HEADERS.attempts)).toBe('6');
    const path = headerString(copy.headers, WEIR_HEADERS.retryPath)!.split('>');
    expect(path).toHaveLength(RETRY_PATH_KEEP);
    expect(path).toEqual(topics.slice(-RETRY_PATH_KEEP));
  });
});
