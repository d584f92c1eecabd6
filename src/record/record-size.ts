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
  for (const [name, value] of Object.entries(record.headers)) {
    const values = Array.isArray(value) ? value : [value];
    for (const v of values) if (v !== undefined) bytes += name.length + 4 + (typeof v === 'string' ? Buffer.byteLength(v) : v.length);
  }
  return bytes;
}
