import { describe, expect, it } from 'vitest';
import { recordOrigin } from './record-origin.js';
import type { InputRecord } from './record-types.js';
import { WEIR_HEADERS } from './weir-headers.js';

describe('record coordinates', () => {
  const record = (headers: InputRecord['headers']): InputRecord => ({
    topic: 'app.enrich.retry.1',
    partition: 2,
    offset: 40,
    timestamp: 1_000,
    key: null,
    value: null,
    headers,
  });

  it("a retry-tier or replayed record's origin is where it first came in; any other record is its own origin", () => {
    const origin = {
      [WEIR_HEADERS.originalTopic]: 'orders',
      [WEIR_HEADERS.originalPartition]: '5',
      [WEIR_HEADERS.originalOffset]: '1234',
      [WEIR_HEADERS.originalTimestamp]: '900',
    };
    expect(recordOrigin(record(origin))).toEqual({ topic: 'orders', partition: 5, offset: 1234, timestamp: 900 });
    const { [WEIR_HEADERS.originalTimestamp]: _, ...noTimestamp } = origin;
    expect(recordOrigin(record(noTimestamp)).timestamp).toBe(1_000);
    const partial = { [WEIR_HEADERS.originalTopic]: 'orders' };
    expect(recordOrigin(record(partial))).toEqual({ topic: 'app.enrich.retry.1', partition: 2, offset: 40, timestamp: 1_000 });
  });
});
