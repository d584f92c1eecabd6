import type { OutputRecord } from './record-types.js';

/**
 * The default most bytes one record may take, as {@link recordBytes} estimates it: under the
 * broker's default `message.max.bytes` (1 048 588), which also bounds the record batch that
 * carries a single record. Set `--max-record-bytes` to the broker's and topics' limit.
 */
export const DEFAULT_MAX_RECORD_BYTES = 1_000_000;

/** Estimated wire size of a record, bytes: key, value, headers and per-record overhead. */
export function recordBytes(record: OutputRecord): number {
  let bytes = 32 + (record.key?.length ?? 0) + (record.value?.length ?? 0);
  const headers = record.headers;
  for (const name in headers) {
    const value = headers[name];
    if (value === undefined) continue;
    if (!Array.isArray(value)) bytes += headerBytes(name, value);
    else for (const v of value) if (v !== undefined) bytes += headerBytes(name, v);
  }
  return bytes;
}

function headerBytes(name: string, value: string | Buffer): number {
  return name.length + 4 + (typeof value === 'string' ? Buffer.byteLength(value) : value.length);
}
