import type { Clock } from '../runtime/ports.js';

interface Timer {
  readonly at: number;
  readonly fn: () => void;
}

/**
 * A clock that moves only when told to: backoff and due times in tests run in virtual time,
 * so a one-hour backoff schedule takes microseconds of wall time. Timers set with `after()`
 * (attempt timeouts) fire, in time order, when the clock gets to them.
 *
 * @example
 * const clock = new ManualClock();
 * clock.advance(60_000); // one minute later
 */
export class ManualClock implements Clock {
  private current: number;
  private timers: Timer[] = [];

  /** @param startMs the starting time, epoch ms (default 2024-01-01T00:00:00Z) */
  constructor(startMs = Date.UTC(2024, 0, 1)) {
    this.current = startMs;
  }

  now(): number {
    return this.current;
  }

  /**
   * Moves time forward by `ms`, firing the timers on the way.
   *
   * @throws RangeError for a negative or non-finite `ms`
   */
  advance(ms: number): void {
    if (!Number.isFinite(ms) || ms < 0) throw new RangeError(`ManualClock.advance: ms must be a finite number ≥ 0 (got ${ms})`);
    this.set(this.current + ms);
  }

  /**
   * Sets the time, epoch ms, firing the timers due by then.
   *
   * @throws RangeError when `ms` is before the current time (time never goes back)
   */
  set(ms: number): void {
    if (!(ms >= this.current)) throw new RangeError(`ManualClock.set: ${ms} is before the current time ${this.current}`);
    this.current = ms;
    for (let next = this.earliest(); next !== undefined && next.at <= this.current; next = this.earliest()) {
      this.timers = this.timers.filter((t) => t !== next);
      next.fn();
    }
  }

  /** Calls `fn` when the clock reaches now + `delayMs` (see {@link Clock.after}); returns its cancel function. */
  after(delayMs: number, fn: () => void): () => void {
    const timer: Timer = { at: this.current + Math.max(0, delayMs), fn };
    this.timers.push(timer);
    return () => {
      this.timers = this.timers.filter((t) => t !== timer);
    };
  }

  /** When the earliest pending timer fires, epoch ms; undefined when none is pending. */
  nextTimerAt(): number | undefined {
    return this.earliest()?.at;
  }

  private earliest(): Timer | undefined {
    let first: Timer | undefined;
    for (const t of this.timers) if (first === undefined || t.at < first.at) first = t;
    return first;
  }
}
