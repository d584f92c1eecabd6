import type { InputRecord, OutputRecord } from '../record-types.js';
import { buildFailureHeaders, type FailureInfo } from './failure-headers.js';
import { recordOrigin } from './record-origin.js';

/**
 * The dead-letter copy of a record: key and value unchanged (the original bytes), original
 * headers kept, weir's failure headers added (see the README's DLQ header table).
 *
 * @param record the record as it was read (from the source or a retry tier)
 * @param dlqTopic the processor's dead-letter topic
 */
export function buildDeadLetterRecord(record: InputRecord, dlqTopic: string, failure: FailureInfo): OutputRecord {
  return {
    topic: dlqTopic,
    key: record.key,
    value: record.value,
    headers: buildFailureHeaders(record.headers, recordOrigin(record), failure),
  };
}
