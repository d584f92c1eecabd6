import { describe, expect, it } from 'vitest';
import { recordBytes } from './record-size.js';

describe('record size', () => {
  it("estimates a record's size from key, value and every header value, in bytes", () => {
    const base = recordBytes({ topic: 't', key: null, value: null, headers: {} });
    const sized = recordBytes({
      topic: 't',
      key: Buffer.alloc(10),
      value: Buffer.alloc(100),
      headers: { h: ['ab', Buffer.alloc(3)], gone: undefined },
    });
    expect(sized - base).toBe(10 + 100 + (1 + 4 + 2) + (1 + 4 + 3));
  });
});
