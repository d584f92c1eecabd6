import { describe, expect, it } from 'vitest';
import {
  ERROR_TEXT_CAP_BYTES,
  WEIR_HEADERS,
  capUtf8,
  headerNumber,
  headerString,
  userHeaderStrings,
  weirHeadersOf,
  withoutWeirHeaders,
} from './weir-headers.js';

describe('weir headers', () => {
  it('every header name is in the weir. namespace, and the names are distinct', () => {
    const names = Object.values(WEIR_HEADERS);
    expect(names.every((n) => n.startsWith('weir.'))).toBe(true);
    expect(new Set(names).size).toBe(names.length);
  });

  it('reads the last value of a header, as a string or a number', () => {
    const headers = { a: [Buffer.from('1'), '2'], b: Buffer.from('7.5'), c: ' ', d: 'x', e: undefined };
    expect(headerString(headers, 'a')).toBe('2');
    expect(headerNumber(headers, 'b')).toBe(7.5);
    expect(headerNumber(headers, 'c')).toBeUndefined();
    expect(headerNumber(headers, 'd')).toBeUndefined();
    expect(headerString(headers, 'e')).toBeUndefined();
    expect(headerString(headers, 'missing')).toBeUndefined();
  });

  it("splits a record's headers into weir's and the user's", () => {
    const headers = { 'weir.attempts': '3', traceparent: '00-ab', 'weir.processor': Buffer.from('enrich'), gone: undefined };
    expect(weirHeadersOf(headers)).toEqual({ 'weir.attempts': '3', 'weir.processor': 'enrich' });
    expect(userHeaderStrings(headers)).toEqual({ traceparent: '00-ab' });
    expect(withoutWeirHeaders(headers)).toEqual({ traceparent: '00-ab' });
    const clean = { traceparent: '00-ab' };
    expect(withoutWeirHeaders(clean)).toBe(clean);
  });

  it('caps error text at a byte budget without splitting a UTF-8 character', () => {
    expect(capUtf8('short')).toBe('short');
    const capped = capUtf8('é'.repeat(10), 5);
    expect(capped).toBe('éé');
    expect(Buffer.byteLength(capUtf8('✓'.repeat(ERROR_TEXT_CAP_BYTES)))).toBeLessThanOrEqual(ERROR_TEXT_CAP_BYTES);
  });
});
