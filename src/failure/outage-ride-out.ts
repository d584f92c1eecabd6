import type { CircuitBreakerPolicy } from './circuit-breaker-policy.js';
import type { RetryArithmetic } from './retry-arithmetic.js';

/**
 * How long an outage a processor's circuit breaker and retry policy ride out without a dead
 * letter (what `weir describe` prints under a processor with a breaker). Times in ms.
 */
export interface OutageRideOut {
  /**
   * The shortest outage, counted from the moment the breaker opens, after which a record can
   * reach the DLQ: every shorter outage dead-letters nothing that succeeds after it. A lower
   * bound, for the record that takes every probe (one partition, `halfOpenCalls` 1); records
   * on other partitions wait longer.
   */
  readonly minOutageToDeadLetterMs: number;
  /**
   * The earliest failed probe after the opening that dead-letters that record: it is held for
   * the opening failure and `maxAttempts − 1` probes, then a failed probe uses its last attempt.
   */
  readonly deadLetterProbe: number;
  /**
   * Why a record failing alone may reach the DLQ before the breaker opens at all (the bound
   * above then holds only once other records' failures have opened it), or undefined.
   */
  readonly caveat?: string;
}

/**
 * The breaker's waits in the open state one after another (`openMs`, doubled after each failed
 * probe, at most `maxOpenMs`): the sum of the first `count`, ms. Arithmetic, not a loop over
 * `count` (a `maxAttempts` of a billion is fine).
 */
export function openWaitsMs(breaker: Pick<CircuitBreakerPolicy, 'openMs' | 'maxOpenMs'>, count: number): number {
  let sum = 0;
  let wait = breaker.openMs;
  let i = 0;
  for (; i < count && wait < breaker.maxOpenMs; i++, wait *= 2) sum += wait;
  return sum + (count - i) * breaker.maxOpenMs;
}

/**
 * What an outage costs under a processor's breaker. The model is weir's attempt runner:
 * - Before the breaker opens, a record's retriable failures count as attempts. In the worst
 *   case the record has used `maxAttempts − 1` of them when the breaker opens (other records'
 *   failures opened it, or its own with `minimumCalls` ≥ `maxAttempts`).
 * - The failure that opens the breaker and each failed probe after it are charged to the
 *   breaker, not to the record: the record is held, at most `maxAttempts` times.
 * - After that its failed probes count as attempts again; the one that uses up `maxAttempts`
 *   dead-letters it. Probes come when the open wait ends: `openMs`, doubling up to `maxOpenMs`.
 *
 * So the record reaches the DLQ at its failed probe number `maxAttempts` after the opening at
 * the earliest, and the outage must last at least the sum of the open waits before it. Pure.
 *
 * @param maxAttempts the processor's `retry.maxAttempts` (≥ 1)
 * @param retryDelaysMs the processor's retry delay ranges ({@link RetryArithmetic.retryDelaysMs})
 * @example outageRideOut(5, arithmetic.retryDelaysMs, { minimumCalls: 3, windowMs: 10_000, openMs: 5_000, maxOpenMs: 60_000, … }).minOutageToDeadLetterMs // 135_000
 */
export function outageRideOut(
  maxAttempts: number,
  retryDelaysMs: RetryArithmetic['retryDelaysMs'],
  breaker: CircuitBreakerPolicy,
): OutageRideOut {
  // Held for the opening failure and maxAttempts − 1 probes, then its one attempt left.
  const deadLetterProbe = maxAttempts;
  const caveats: string[] = [];
  if (breaker.minimumCalls > maxAttempts)
    caveats.push(
      `minimumCalls (${breaker.minimumCalls}) is more than maxAttempts (${maxAttempts}): a record failing alone reaches the DLQ before the breaker opens`,
    );
  else {
    // The shortest time a record's first minimumCalls failures can take: its first minimumCalls − 1 retry delays.
    let spread = 0;
    for (const d of retryDelaysMs) {
      const last = Math.min(d.throughRetry ?? d.retry, breaker.minimumCalls - 1);
      if (last >= d.retry) spread += (last - d.retry + 1) * d.minMs;
    }
    if (spread >= breaker.windowMs)
      caveats.push(
        `a record's first ${breaker.minimumCalls} failures take at least ${spread}ms, not within windowMs (${breaker.windowMs}): a record failing alone does not open the breaker`,
      );
  }
  return {
    minOutageToDeadLetterMs: openWaitsMs(breaker, deadLetterProbe),
    deadLetterProbe,
    ...(caveats.length > 0 ? { caveat: caveats.join('; ') } : {}),
  };
}
