import type { Clock } from '../runtime/ports.js';

/**
 * A clock that moves only when told to: backoff and due times in tests run in virtual time,
 * so a one-hour backoff schedule takes microseconds of wall time.
 *
 * @example
 * const clock = new ManualClock();
 * clock.advance(60_000); // one minute later
 */
export class ManualClock implements Clock {
  private current: number;

  /** @param startMs the starting time, epoch ms (default 2024-01-01T00:00:00Z) */
  constructor(startMs = Date.UTC(2024, 0, 1)) {
    this.current = startMs;
  }

  now(): number {
    return this.current;
  }

  /**
   * Moves time forward by `ms`.
   *
   * @throws RangeError for a negative or non-finite `ms`
   */
  advance(ms: number): void {
    if (!Number.isFinite(ms) || ms < 0) throw new RangeError(`ManualClock.advance: ms must be a finite number ≥ 0 (got ${ms})`);
    this.current += ms;
  }

  /**
   * Sets the time, epoch ms.
   *
   * @throws RangeError when `ms` is before the current time (time never goes back)
   */
  set(ms: number): void {
    if (!(ms >= this.current)) throw new RangeError(`ManualClock.set: ${ms} is before the current time ${this.current}`);
    this.current = ms;
  }
}
