import type { InputRecord, OutputRecord } from '../record/record-types.js';
import { buildFailureHeaders, type FailureInfo } from './failure-headers.js';
import { recordOrigin } from '../record/record-origin.js';
import { WEIR_HEADERS } from '../record/weir-headers.js';

/**
 * The dead-letter copy of a record: key and value unchanged (the original bytes), original
 * headers kept, weir's failure headers added (see docs/retry-and-dlq.md for the header table).
 *
 * @param record the record as it was read (from the source or a retry tier)
 * @param dlqTopic the processor's dead-letter topic
 * @param maxReplays the processor's `retry.maxReplays`, written as `weir.replay.max` so that
 *   `weir dlq replay` can refuse a record replayed that many times without the topology
 */
export function buildDeadLetterRecord(record: InputRecord, dlqTopic: string, failure: FailureInfo, maxReplays?: number): OutputRecord {
  return {
    topic: dlqTopic,
    key: record.key,
    value: record.value,
    headers: buildFailureHeaders(
      record.headers,
      recordOrigin(record),
      failure,
      maxReplays === undefined ? {} : { [WEIR_HEADERS.replayMax]: String(maxReplays) },
    ),
  };
}
