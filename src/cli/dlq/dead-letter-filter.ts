import type { DeadLetterView } from './dead-letter-view.js';

/**
 * Which dead-letter records `weir dlq inspect` and `weir dlq replay` take. Every given
 * criterion must hold; an empty filter takes every record.
 */
export interface DeadLetterFilter {
  /** Only records that failed at or after this time (`weir.last.failure.ms`), epoch ms. */
  readonly sinceMs?: number;
  /** Only records that failed before this time, epoch ms. */
  readonly untilMs?: number;
  /** Only these `weir.error.class` values (exact match). */
  readonly errorClasses?: readonly string[];
  /** Only records dead-lettered by these processors (`weir.processor`). */
  readonly processors?: readonly string[];
}

/** True when `view` passes every criterion of `filter`. */
export function matchesDeadLetterFilter(view: DeadLetterView, filter: DeadLetterFilter): boolean {
  if (filter.sinceMs !== undefined && view.failedAtMs < filter.sinceMs) return false;
  if (filter.untilMs !== undefined && view.failedAtMs >= filter.untilMs) return false;
  if (
    filter.errorClasses !== undefined &&
    filter.errorClasses.length > 0 &&
    (view.errorClass === undefined || !filter.errorClasses.includes(view.errorClass))
  )
    return false;
  if (
    filter.processors !== undefined &&
    filter.processors.length > 0 &&
    (view.processor === undefined || !filter.processors.includes(view.processor))
  )
    return false;
  return true;
}
