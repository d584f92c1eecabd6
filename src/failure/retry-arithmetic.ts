import { backoffDelayBounds } from './backoff.js';
import { tierIndexForRetry, type RetryPolicy } from './retry-policy.js';

/** The per-attempt success probabilities `describe` shows P(success within maxAttempts) for. */
export const SUCCESS_PROBABILITIES = Object.freeze([0.5, 0.8, 0.95]);

/** How many retries `retryDelaysMs` lists one by one; the rest share one entry. */
export const LISTED_RETRIES = 10;

/** What a retry policy means in time and odds (what `weir describe` prints per processor). Times in ms. */
export interface RetryArithmetic {
  /**
   * Each retry (1 = the first retry, i.e. attempt 2) and the range its delay is drawn from,
   * jitter included — the first {@link LISTED_RETRIES} one by one; past them, one last entry
   * for all the others, `retry` to `throughRetry` (so a `maxAttempts` of a billion describes in
   * a line, not in gigabytes).
   */
  readonly retryDelaysMs: ReadonlyArray<{
    readonly retry: number;
    readonly throughRetry?: number;
    readonly minMs: number;
    readonly maxMs: number;
  }>;
  /**
   * The longest time from a record's first failure to its dead letter, ms: every retry's longest
   * delay, plus — with `timeoutMs` — every later attempt running into its timeout. Waits for an
   * open circuit breaker or a spent retry budget come on top (they never dead-letter a record).
   * Without `timeoutMs` an attempt's own duration is unbounded and not counted.
   */
  readonly worstCaseToDeadLetterMs: number;
  /** Whether `worstCaseToDeadLetterMs` bounds the attempts' durations too (the processor has `timeoutMs`). */
  readonly attemptsBounded: boolean;
  /**
   * P(success within maxAttempts) = 1 − (1 − p)^maxAttempts, for independent attempts that each
   * succeed with probability `p` (the retry-mechanism design's reliability of k attempts).
   */
  readonly successProbability: ReadonlyArray<{ readonly p: number; readonly probability: number }>;
}

/**
 * The retry arithmetic of a processor: delay ranges, the worst-case time to the DLQ, and the
 * odds of success within `maxAttempts`. Pure.
 *
 * @param timeoutMs the processor's attempt timeout, ms (null: none)
 * @example retryArithmetic(policy, null).successProbability // [{ p: 0.5, probability: 0.875 }, …] for 3 attempts
 */
export function retryArithmetic(policy: RetryPolicy, timeoutMs: number | null): RetryArithmetic {
  /** Retry index i (0 = the first retry): its delay range. Delays never shrink from one retry to the next. */
  const bounds = (i: number): { readonly minMs: number; readonly maxMs: number } => {
    if (policy.mode === 'topics' && policy.explicitTiers) {
      const fixed = policy.tierDelaysMs[tierIndexForRetry(policy, i)] ?? 0;
      return { minMs: fixed, maxMs: fixed };
    }
    const { min, max } = backoffDelayBounds(policy.backoff, i);
    return { minMs: min, maxMs: max };
  };
  const retries = policy.maxAttempts - 1;
  const listed = Math.min(retries, LISTED_RETRIES);
  const retryDelaysMs: Array<RetryArithmetic['retryDelaysMs'][number]> = Array.from({ length: listed }, (_, i) => ({
    retry: i + 1,
    ...bounds(i),
  }));
  let delays = retryDelaysMs.reduce((sum, d) => sum + d.maxMs, 0);
  if (retries > listed) {
    // The rest in one entry, from the first unlisted retry's shortest delay to the longest any
    // of them can wait; the worst case counts every one of them at the longest.
    const first = bounds(listed);
    // Explicit tiers may be in any order: the longest of those the rest can land in.
    const longest =
      policy.mode === 'topics' && policy.explicitTiers
        ? Math.max(...policy.tierDelaysMs.slice(tierIndexForRetry(policy, listed)))
        : bounds(retries - 1).maxMs;
    retryDelaysMs.push({ retry: listed + 1, throughRetry: retries, minMs: first.minMs, maxMs: longest });
    delays += (retries - listed) * longest;
  }
  return {
    retryDelaysMs,
    worstCaseToDeadLetterMs: delays + (timeoutMs ?? 0) * (policy.maxAttempts - 1),
    attemptsBounded: timeoutMs !== null,
    successProbability: SUCCESS_PROBABILITIES.map((p) => ({ p, probability: 1 - (1 - p) ** policy.maxAttempts })),
  };
}
