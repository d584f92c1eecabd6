import type { InputRecord } from '../../record/record-types.js';
import { recordOrigin, type RecordOrigin } from '../../record/record-origin.js';
import { WEIR_HEADERS, headerNumber, headerString, userHeaderStrings, weirHeadersOf } from '../../record/weir-headers.js';

/**
 * A dead-letter record decoded for people and filters: what `weir dlq inspect` prints and
 * what `weir dlq inspect|replay --since/--error-class/--processor` match on.
 */
export interface DeadLetterView {
  readonly topic: string;
  readonly partition: number;
  readonly offset: number;
  /** The DLQ record's timestamp, epoch ms. */
  readonly timestamp: number;
  /** The key as UTF-8 text (base64 when it is not valid UTF-8), or null. */
  readonly key: string | null;
  /** The value as UTF-8 text (base64 when it is not valid UTF-8), or null. */
  readonly value: string | null;
  /** How `key` and `value` are encoded: `'base64'` when either is binary. */
  readonly encoding: 'utf8' | 'base64';
  /** `weir.error.class`, or undefined on a record weir did not dead-letter. */
  readonly errorClass: string | undefined;
  readonly errorMessage: string | undefined;
  /** `weir.processor`: the processor that gave up on the record. */
  readonly processor: string | undefined;
  readonly applicationId: string | undefined;
  /** `weir.attempts`: how many times the record was processed. */
  readonly attempts: number | undefined;
  /** `weir.replay.count`: replays from the DLQ so far (0 when absent). */
  readonly replayCount: number;
  /** `weir.replay.max`: the processor's max replays, when the record carries it. */
  readonly replayMax: number | undefined;
  /** When the record failed for the last time (`weir.last.failure.ms`, else the record timestamp), epoch ms. */
  readonly failedAtMs: number;
  /** Where the record first came in (`weir.original.*`); the DLQ coordinates when absent. */
  readonly origin: RecordOrigin;
  /** Whether `origin` comes from the record's `weir.original.*` headers (false: they are missing, and it is the DLQ record itself). */
  readonly originKnown: boolean;
  /** Every `weir.*` header, decoded. */
  readonly weirHeaders: Readonly<Record<string, string>>;
  /** The other headers, decoded. */
  readonly userHeaders: Readonly<Record<string, string>>;
}

const strictUtf8 = new TextDecoder('utf-8', { fatal: true });

function isUtf8(bytes: Buffer): boolean {
  try {
    strictUtf8.decode(bytes);
    return true;
  } catch {
    return false;
  }
}

/** Decodes a record read from a dead-letter topic. Never throws: missing headers are undefined. */
export function deadLetterView(record: InputRecord): DeadLetterView {
  const h = record.headers;
  const binary = (record.key !== null && !isUtf8(record.key)) || (record.value !== null && !isUtf8(record.value));
  const encoding = binary ? 'base64' : 'utf8';
  const text = (bytes: Buffer | null): string | null => (bytes === null ? null : bytes.toString(encoding));
  return {
    topic: record.topic,
    partition: record.partition,
    offset: record.offset,
    timestamp: record.timestamp,
    key: text(record.key),
    value: text(record.value),
    encoding,
    errorClass: headerString(h, WEIR_HEADERS.errorClass),
    errorMessage: headerString(h, WEIR_HEADERS.errorMessage),
    processor: headerString(h, WEIR_HEADERS.processor),
    applicationId: headerString(h, WEIR_HEADERS.applicationId),
    attempts: headerNumber(h, WEIR_HEADERS.attempts),
    replayCount: headerNumber(h, WEIR_HEADERS.replayCount) ?? 0,
    replayMax: headerNumber(h, WEIR_HEADERS.replayMax),
    failedAtMs: headerNumber(h, WEIR_HEADERS.lastFailureMs) ?? record.timestamp,
    origin: recordOrigin(record),
    originKnown:
      headerString(h, WEIR_HEADERS.originalTopic) !== undefined &&
      headerNumber(h, WEIR_HEADERS.originalPartition) !== undefined &&
      headerNumber(h, WEIR_HEADERS.originalOffset) !== undefined,
    weirHeaders: weirHeadersOf(h),
    userHeaders: userHeaderStrings(h),
  };
}
