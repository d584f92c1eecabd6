import { buildFailureHeaders, type FailureInfo } from './failure-headers.js';
import { recordOrigin } from '../record/record-origin.js';
import { WEIR_HEADERS, headerString } from '../record/weir-headers.js';
import type { InputRecord, OutputRecord } from '../record/record-types.js';

/** How many of the latest hops `weir.retry.path` keeps, so headers stay bounded. */
export const RETRY_PATH_KEEP = 4;

/**
 * The copy of a failed record for a retry tier: key and value unchanged, original headers
 * kept, weir's headers replaced (never appended) with the failure, the due time and the hop
 * count. `weir.retry.path` lists the latest {@link RETRY_PATH_KEEP} tier topics visited,
 * oldest first, separated by `>`.
 *
 * @param dueMs epoch ms before which no task may process the copy
 * @param hops the record's retry-topic hops including this one
 */
export function buildRetryTierRecord(
  record: InputRecord,
  tierTopic: string,
  failure: FailureInfo,
  dueMs: number,
  hops: number,
): OutputRecord {
  const previous = headerString(record.headers, WEIR_HEADERS.retryPath);
  const path = [...(previous ? previous.split('>') : []), tierTopic].slice(-RETRY_PATH_KEEP).join('>');
  return {
    topic: tierTopic,
    key: record.key,
    value: record.value,
    headers: buildFailureHeaders(record.headers, recordOrigin(record), failure, {
      [WEIR_HEADERS.retryDueMs]: String(dueMs),
      [WEIR_HEADERS.retryHops]: String(hops),
      [WEIR_HEADERS.retryPath]: path,
    }),
  };
}
