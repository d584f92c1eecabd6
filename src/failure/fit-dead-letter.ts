import { recordBytes } from '../record/record-size.js';
import type { OutputRecord, RecordHeaders } from '../record/record-types.js';
import { WEIR_HEADERS, WEIR_HEADER_PREFIX } from '../record/weir-headers.js';

/** What is left out of an oversized dead-letter record, in this order, until it fits. */
const OMISSIONS: ReadonlyArray<{ readonly part: string; readonly omit: (record: OutputRecord) => OutputRecord }> = [
  { part: 'value', omit: (r) => ({ ...r, value: null }) },
  { part: 'headers', omit: (r) => ({ ...r, headers: weirHeadersOnly(r.headers) }) },
  { part: 'key', omit: (r) => ({ ...r, key: null }) },
];

function weirHeadersOnly(headers: RecordHeaders): RecordHeaders {
  return Object.fromEntries(Object.entries(headers).filter(([name]) => name.startsWith(WEIR_HEADER_PREFIX)));
}

/**
 * Makes a dead-letter record fit the record size limit, so that an oversized record cannot
 * block its partition forever (the broker would refuse it on every retry). Parts are left
 * out in this order until it fits — the value, then the original headers, then the key — and
 * `weir.omitted` lists them (`value,headers`), `weir.omitted.bytes` gives the full size. The
 * original record stays in its source topic at `weir.original.offset`.
 *
 * @param maxBytes the limit, as `recordBytes` estimates sizes
 */
export function fitDeadLetter(record: OutputRecord, maxBytes: number): OutputRecord {
  const bytes = recordBytes(record);
  if (bytes <= maxBytes) return record;
  let fitted = record;
  const omitted: string[] = [];
  for (const { part, omit } of OMISSIONS) {
    fitted = omit(fitted);
    omitted.push(part);
    const marked = {
      ...fitted,
      headers: { ...fitted.headers, [WEIR_HEADERS.omitted]: omitted.join(','), [WEIR_HEADERS.omittedBytes]: String(bytes) },
    };
    if (recordBytes(marked) <= maxBytes || omitted.length === OMISSIONS.length) return marked;
  }
  return fitted;
}
