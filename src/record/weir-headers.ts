import type { RecordHeaders } from './record-types.js';

/**
 * The headers weir puts on dead-letter and retry-tier records (string values, UTF-8).
 * See the DLQ header table in the README.
 */
export const WEIR_HEADERS = Object.freeze({
  originalTopic: 'weir.original.topic',
  originalPartition: 'weir.original.partition',
  originalOffset: 'weir.original.offset',
  originalTimestamp: 'weir.original.timestamp',
  applicationId: 'weir.application.id',
  processor: 'weir.processor',
  attempts: 'weir.attempts',
  errorClass: 'weir.error.class',
  errorMessage: 'weir.error.message',
  errorStack: 'weir.error.stack',
  firstFailureMs: 'weir.first.failure.ms',
  lastFailureMs: 'weir.last.failure.ms',
  retryDueMs: 'weir.retry.due.ms',
  retryPath: 'weir.retry.path',
  retryHops: 'weir.retry.hops',
  replayCount: 'weir.replay.count',
  /** Dead-letter records only: the processor's `retry.maxReplays`, the limit `weir dlq replay` applies. */
  replayMax: 'weir.replay.max',
  /**
   * Retry-tier copies and dead letters of a chain step after the first: the step (processor)
   * whose input the record's key and value are — the previous step's output, written with the
   * step's `inputSerdes`. Tasks resume such a record at that step.
   */
  step: 'weir.step',
  omitted: 'weir.omitted',
  omittedBytes: 'weir.omitted.bytes',
});

/** Prefix of the headers that say where a record first came in (kept by `weir dlq replay`). */
export const WEIR_ORIGINAL_PREFIX = 'weir.original.';

/** Prefix of every weir header. */
export const WEIR_HEADER_PREFIX = 'weir.';

/** Cap of `weir.error.stack` and `weir.error.message`, bytes of UTF-8. */
export const ERROR_TEXT_CAP_BYTES = 8 * 1024;

const encoder = new TextEncoder();

/**
 * Cuts `text` to at most `capBytes` bytes of UTF-8, at a character boundary.
 */
export function capUtf8(text: string, capBytes: number = ERROR_TEXT_CAP_BYTES): string {
  if (text.length * 3 <= capBytes) return text;
  const { read } = encoder.encodeInto(text, new Uint8Array(capBytes));
  return read >= text.length ? text : text.slice(0, read);
}

/** A header's value as a string (the last value of a repeated header), or undefined. */
export function headerString(headers: RecordHeaders, name: string): string | undefined {
  const value = headers[name];
  const last = Array.isArray(value) ? value[value.length - 1] : value;
  if (last === undefined) return undefined;
  return typeof last === 'string' ? last : last.toString('utf8');
}

/** A header's value as a finite number, or undefined when absent or not a number. */
export function headerNumber(headers: RecordHeaders, name: string): number | undefined {
  const text = headerString(headers, name);
  if (text === undefined || text.trim() === '') return undefined;
  const n = Number(text);
  return Number.isFinite(n) ? n : undefined;
}

/**
 * `headers` without weir's own headers (what users and success sinks see): a copy, or
 * `headers` itself when it has none of them (nothing shares it that could change it).
 */
export function withoutWeirHeaders(headers: RecordHeaders): RecordHeaders {
  let clean = true;
  for (const name in headers) {
    if (name.startsWith(WEIR_HEADER_PREFIX) || headers[name] === undefined) {
      clean = false;
      break;
    }
  }
  if (clean) return headers;
  const out: RecordHeaders = {};
  for (const [name, value] of Object.entries(headers)) {
    if (!name.startsWith(WEIR_HEADER_PREFIX) && value !== undefined) out[name] = value;
  }
  return out;
}

/** Only weir's headers, decoded to strings (what `weir dlq inspect` shows). */
export function weirHeadersOf(headers: RecordHeaders): Record<string, string> {
  const out: Record<string, string> = {};
  for (const name of Object.keys(headers)) {
    if (!name.startsWith(WEIR_HEADER_PREFIX)) continue;
    const value = headerString(headers, name);
    if (value !== undefined) out[name] = value;
  }
  return out;
}

/** User headers decoded to strings, the last value of a repeated header winning. */
export function userHeaderStrings(headers: RecordHeaders): Readonly<Record<string, string>> {
  let out: Record<string, string> | undefined;
  for (const name in headers) {
    if (name.startsWith(WEIR_HEADER_PREFIX)) continue;
    const value = headerString(headers, name);
    if (value !== undefined) (out ??= {})[name] = value;
  }
  return out ?? NO_USER_HEADERS;
}

/** What {@link userHeaderStrings} returns for a record without user headers: one frozen object, not one per record. */
const NO_USER_HEADERS: Readonly<Record<string, string>> = Object.freeze({});
