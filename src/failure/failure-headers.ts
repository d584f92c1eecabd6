import { errorClassOf, errorMessageOf } from './classify-error.js';
import type { RecordHeaders } from '../record/record-types.js';
import type { RecordOrigin } from '../record/record-origin.js';
import { WEIR_HEADERS, capUtf8, withoutWeirHeaders } from '../record/weir-headers.js';

/** What weir knows about a record's last failure. Times are epoch ms. */
export interface FailureInfo {
  readonly applicationId: string;
  readonly processor: string;
  /** How many times the record was processed (0 when it never reached the processor). */
  readonly attempts: number;
  readonly error: unknown;
  readonly firstFailureMs: number;
  readonly lastFailureMs: number;
  /** Replays from the DLQ so far (kept across hops). */
  readonly replayCount: number;
  /** A chain step after the first: its name, written as `weir.step` (the record is that step's input). */
  readonly step?: string;
}

/**
 * The headers of a dead-letter or retry-tier copy of a record: the original headers without
 * any earlier `weir.*` header, plus a fresh set of weir headers. A new hop therefore replaces
 * weir's headers instead of appending to them, so headers never grow with hops.
 */
export function buildFailureHeaders(
  original: RecordHeaders,
  origin: RecordOrigin,
  failure: FailureInfo,
  extra: Readonly<Record<string, string>> = {},
): RecordHeaders {
  const error = failure.error;
  const message = errorMessageOf(error);
  const stack = error instanceof Error && typeof error.stack === 'string' ? error.stack : '';
  const headers: RecordHeaders = {
    ...withoutWeirHeaders(original),
    [WEIR_HEADERS.originalTopic]: origin.topic,
    [WEIR_HEADERS.originalPartition]: String(origin.partition),
    [WEIR_HEADERS.originalOffset]: String(origin.offset),
    [WEIR_HEADERS.originalTimestamp]: String(origin.timestamp),
    [WEIR_HEADERS.applicationId]: failure.applicationId,
    [WEIR_HEADERS.processor]: failure.processor,
    [WEIR_HEADERS.attempts]: String(failure.attempts),
    [WEIR_HEADERS.errorClass]: errorClassOf(error),
    [WEIR_HEADERS.errorMessage]: capUtf8(message),
    [WEIR_HEADERS.errorStack]: capUtf8(stack),
    [WEIR_HEADERS.firstFailureMs]: String(failure.firstFailureMs),
    [WEIR_HEADERS.lastFailureMs]: String(failure.lastFailureMs),
    ...extra,
  };
  if (failure.replayCount > 0) headers[WEIR_HEADERS.replayCount] = String(failure.replayCount);
  if (failure.step !== undefined) headers[WEIR_HEADERS.step] = failure.step;
  return headers;
}
