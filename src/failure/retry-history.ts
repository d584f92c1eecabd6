import { WEIR_HEADERS, headerNumber } from '../record/weir-headers.js';
import type { InputRecord } from '../record/record-types.js';

/** What is known of a record's earlier attempts. Times are epoch ms. */
export interface RetryHistory {
  /** Attempts already made (0 for a fresh record). */
  readonly attempts: number;
  /** Retry-topic hops already made. */
  readonly hops: number;
  /** Replays from the DLQ so far. */
  readonly replayCount: number;
  /** When the first attempt failed, if one did. */
  readonly firstFailureMs: number | undefined;
  /** The delay before this attempt, ms, if it was a retry (what `'decorrelated'` jitter grows from). */
  readonly lastDelayMs?: number;
}

/** The history of a record that has not failed yet. */
export const FRESH_HISTORY: RetryHistory = Object.freeze({ attempts: 0, hops: 0, replayCount: 0, firstFailureMs: undefined });

/**
 * A record's history from its weir headers. Attempts, hops and the first failure count only
 * on a retry-tier record (`fromRetryTier`): on a source topic they start again (a replayed
 * record has its attempts reset). The replay count is kept everywhere.
 */
export function historyFromHeaders(record: InputRecord, fromRetryTier: boolean): RetryHistory {
  const replayCount = headerNumber(record.headers, WEIR_HEADERS.replayCount) ?? 0;
  if (!fromRetryTier) return replayCount === 0 ? FRESH_HISTORY : { ...FRESH_HISTORY, replayCount };
  const due = headerNumber(record.headers, WEIR_HEADERS.retryDueMs);
  const failed = headerNumber(record.headers, WEIR_HEADERS.lastFailureMs);
  return {
    attempts: headerNumber(record.headers, WEIR_HEADERS.attempts) ?? 0,
    hops: headerNumber(record.headers, WEIR_HEADERS.retryHops) ?? 0,
    replayCount,
    firstFailureMs: headerNumber(record.headers, WEIR_HEADERS.firstFailureMs),
    ...(due !== undefined && failed !== undefined && due >= failed ? { lastDelayMs: due - failed } : {}),
  };
}
