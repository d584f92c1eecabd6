/**
 * weir's pacing of its own retries — a failed port call (produce, commit, transaction, dedup),
 * a crashed consumer, a failed poll: an exponential backoff capped at `maxMs`, without jitter.
 * The delay after the n-th consecutive failure (n ≥ 1) is `min(maxMs, initialMs · 2^(n-1))` ms;
 * a success starts over. (User records are retried with their processor's `RetryPolicy`.)
 *
 * @example
 * const backoff = new CappedBackoff(100, 5_000);
 * backoff.next(); // 100
 * backoff.next(); // 200
 * backoff.reset();
 */
export class CappedBackoff {
  private count = 0;

  /**
   * @param initialMs the first delay, ms
   * @param maxMs the largest delay, ms
   */
  constructor(
    readonly initialMs: number,
    readonly maxMs: number,
  ) {}

  /** Counts a failure and returns the delay before the next try, ms. */
  next(): number {
    const delay = Math.min(this.maxMs, this.initialMs * 2 ** this.count);
    this.count++;
    return delay;
  }

  /** Consecutive failures since the last success. */
  get failures(): number {
    return this.count;
  }

  /** A success: the next failure waits `initialMs` again. */
  reset(): void {
    this.count = 0;
  }
}
