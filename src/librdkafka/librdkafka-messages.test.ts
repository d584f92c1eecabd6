import { describe, expect, it } from 'vitest';
import { toInputRecord, toNativeHeaders, toRecordHeaders } from './librdkafka-messages.js';
import type { NativeHeader } from './librdkafka-native.js';

describe('librdkafka messages', () => {
  it('turns repeated header keys into arrays and back, keeping their order', () => {
    const native: NativeHeader[] = [{ a: Buffer.from('1') }, { b: Buffer.from('2') }, { a: Buffer.from('3') }];
    const headers = toRecordHeaders(native);
    expect(headers).toEqual({ a: [Buffer.from('1'), Buffer.from('3')], b: Buffer.from('2') });
    expect(toNativeHeaders(headers)).toEqual([{ a: Buffer.from('1') }, { a: Buffer.from('3') }, { b: Buffer.from('2') }]);
    expect(toNativeHeaders({ x: undefined })).toBeUndefined();
    expect(toRecordHeaders(undefined)).toEqual({});
  });

  it('makes input records with buffer keys and the record timestamp', () => {
    expect(toInputRecord({ topic: 't', partition: 2, offset: 7, key: 'k', value: null, timestamp: 1_700_000_000_000 })).toEqual({
      topic: 't',
      partition: 2,
      offset: 7,
      timestamp: 1_700_000_000_000,
      key: Buffer.from('k'),
      value: null,
      headers: {},
    });
    expect(toInputRecord({ topic: 't', partition: 0, offset: 0, key: null, value: Buffer.from('v') }).key).toBeNull();
  });
});
