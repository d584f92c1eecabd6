import { IllegalStateError } from '../errors.js';
import type { CircuitBreakerPolicy } from './circuit-breaker-policy.js';

/**
 * The states of a {@link CircuitBreaker}, as resilience4j names them:
 *
 * | state       | calls                                   | leaves when                                         |
 * |-------------|-----------------------------------------|-----------------------------------------------------|
 * | `closed`    | all go through; outcomes fill the window | failure rate ≥ threshold over ≥ `minimumCalls` → `open` |
 * | `open`      | none                                     | its wait (`openMs`, doubling up to `maxOpenMs`) is over → `half-open` |
 * | `half-open` | `halfOpenCalls` probes                   | probes' failure rate < threshold → `closed`, else → `open` |
 */
export type CircuitState = 'closed' | 'open' | 'half-open';

/** Allowed transitions: from → to. */
export const CIRCUIT_TRANSITIONS: Readonly<Record<CircuitState, readonly CircuitState[]>> = Object.freeze({
  closed: ['open'],
  open: ['half-open'],
  'half-open': ['open', 'closed'],
});

/** The numeric value of each state in `weir_circuit_state` (0 closed, 1 half-open, 2 open). */
export const CIRCUIT_STATE_VALUE: Readonly<Record<CircuitState, number>> = Object.freeze({ closed: 0, 'half-open': 1, open: 2 });

/** A state change, reported to the breaker's listener. Times are epoch ms on the breaker's clock. */
export interface CircuitTransition {
  readonly processor: string;
  readonly from: CircuitState;
  readonly to: CircuitState;
  readonly atMs: number;
  /** To `open`: the failure rate that opened it (window, or the probes), in [0, 1]. */
  readonly failureRate?: number;
  /** To `open`: the calls the rate was judged on. */
  readonly calls?: number;
  /** To `open`: the last failure. */
  readonly lastError?: unknown;
  /** To `open`: how long it stays open, ms. */
  readonly openForMs?: number;
  /** To `closed`: ms since it first opened (half-open spells included). */
  readonly openedForMs?: number;
}

/** What a task may do now: call the processor (`probe` in half-open), or wait until `untilMs`. */
export type CircuitPermit = { readonly kind: 'call'; readonly probe: boolean } | { readonly kind: 'wait'; readonly untilMs: number };

/** How an attempt ended, as the breaker counts it: only retriable failures are failures. */
export type CallResult = 'success' | 'failure' | 'ignored';

/** In half-open with every probe out, tasks look again this often, ms. */
export const HALF_OPEN_RECHECK_MS = 100;

interface Bucket {
  start: number;
  calls: number;
  failures: number;
}

/**
 * A per-processor circuit breaker (resilience4j's `CircuitBreaker`, time-based sliding window)
 * shared by every task of the processor in one worker process. Pure: time comes in as `now`
 * (epoch ms) on every call, so the TopologyTestDriver runs it on its ManualClock. Its state
 * changes only through `transition()`, checked against {@link CIRCUIT_TRANSITIONS}.
 *
 * A task asks `acquire(now)` before it calls the processor and reports the outcome with
 * `record()`; `record()` answers `'held'` when the failure is charged to the dependency (it
 * opened the breaker, was a failed probe, or came while the breaker was open): the record then
 * waits for the breaker with the attempts it had.
 *
 * @example
 * const breaker = new CircuitBreaker('enrich', policy, (t) => log(t));
 * const permit = breaker.acquire(now);
 * if (permit.kind === 'call') breaker.record(later, 'failure', permit.probe, error);
 */
export class CircuitBreaker {
  private current: CircuitState = 'closed';
  private buckets: Bucket[] = [];
  private readonly bucketMs: number;
  private openUntil = 0;
  private openMs: number;
  private firstOpenedAt: number | undefined;
  /** When each probe still out was allowed, epoch ms; a probe out longer than the open wait is taken as lost (its task crashed). */
  private probesOut: number[] = [];
  private probeResults: boolean[] = [];

  constructor(
    readonly processor: string,
    readonly policy: CircuitBreakerPolicy,
    private readonly listener?: (transition: CircuitTransition) => void,
  ) {
    this.openMs = policy.openMs;
    this.bucketMs = Math.max(1, policy.windowMs / 10);
  }

  /** The state as of the last call (an `open` breaker whose wait is over turns `half-open` on the next `acquire`). */
  get state(): CircuitState {
    return this.current;
  }

  /** When an open breaker goes half-open, epoch ms (undefined unless open). */
  get reopensAt(): number | undefined {
    return this.current === 'open' ? this.openUntil : undefined;
  }

  /** Whether a task may call the processor at `now`; a probe permit must be answered with `record(…, probe: true)`. */
  acquire(now: number): CircuitPermit {
    if (this.current === 'open') {
      if (now < this.openUntil) return { kind: 'wait', untilMs: this.openUntil };
      this.transition({ processor: this.processor, from: 'open', to: 'half-open', atMs: now });
    }
    if (this.current === 'closed') return { kind: 'call', probe: false };
    this.probesOut = this.probesOut.filter((at) => now - at < this.openMs);
    if (this.probesOut.length + this.probeResults.length >= this.policy.halfOpenCalls)
      return { kind: 'wait', untilMs: now + HALF_OPEN_RECHECK_MS };
    this.probesOut.push(now);
    return { kind: 'call', probe: true };
  }

  /**
   * Counts an attempt that `acquire` allowed.
   *
   * @returns `'held'` when a failure is charged to the dependency (the breaker is not closed
   *   after it), else `'counted'`
   */
  record(now: number, result: CallResult, probe: boolean, error?: unknown): 'held' | 'counted' {
    if (probe) return this.recordProbe(now, result, error);
    if (this.current !== 'closed') return result === 'failure' ? 'held' : 'counted';
    if (result === 'ignored') return 'counted';
    const bucket = this.bucketAt(now);
    bucket.calls++;
    if (result === 'success') return 'counted';
    bucket.failures++;
    const { calls, failures } = this.window(now);
    if (calls < this.policy.minimumCalls || failures / calls < this.policy.failureRateThreshold) return 'counted';
    this.open(now, failures / calls, calls, error, 'closed');
    return 'held';
  }

  private recordProbe(now: number, result: CallResult, error: unknown): 'held' | 'counted' {
    if (this.current !== 'half-open' || this.probesOut.length === 0)
      return result === 'failure' && this.current !== 'closed' ? 'held' : 'counted';
    this.probesOut.shift();
    if (result === 'ignored') return 'counted';
    this.probeResults.push(result === 'failure');
    if (this.probeResults.length < this.policy.halfOpenCalls) return result === 'failure' ? 'held' : 'counted';
    const failures = this.probeResults.filter(Boolean).length;
    const rate = failures / this.probeResults.length;
    if (rate >= this.policy.failureRateThreshold) {
      this.openMs = Math.min(this.policy.maxOpenMs, this.openMs * 2);
      this.open(now, rate, this.probeResults.length, error, 'half-open');
      return result === 'failure' ? 'held' : 'counted';
    }
    const openedForMs = now - (this.firstOpenedAt ?? now);
    this.openMs = this.policy.openMs;
    this.firstOpenedAt = undefined;
    this.buckets = [];
    this.transition({ processor: this.processor, from: 'half-open', to: 'closed', atMs: now, openedForMs });
    return 'counted';
  }

  private open(now: number, failureRate: number, calls: number, lastError: unknown, from: 'closed' | 'half-open'): void {
    this.openUntil = now + this.openMs;
    this.firstOpenedAt ??= now;
    this.transition({ processor: this.processor, from, to: 'open', atMs: now, failureRate, calls, lastError, openForMs: this.openMs });
  }

  /** The one place the state changes. */
  private transition(t: CircuitTransition): void {
    if (!CIRCUIT_TRANSITIONS[this.current].includes(t.to))
      throw new IllegalStateError(`circuit breaker of '${this.processor}': illegal transition ${this.current} → ${t.to}`);
    this.current = t.to;
    this.probesOut = [];
    this.probeResults = [];
    this.listener?.(t);
  }

  private bucketAt(now: number): Bucket {
    const start = Math.floor(now / this.bucketMs) * this.bucketMs;
    const last = this.buckets[this.buckets.length - 1];
    if (last !== undefined && last.start === start) return last;
    const bucket = { start, calls: 0, failures: 0 };
    this.buckets.push(bucket);
    return bucket;
  }

  /** Calls and failures in the window ending at `now` (buckets of a tenth of the window). */
  private window(now: number): { calls: number; failures: number } {
    const from = now - this.policy.windowMs;
    for (let b = this.buckets[0]; b !== undefined && b.start + this.bucketMs <= from; b = this.buckets[0]) this.buckets.shift();
    let calls = 0;
    let failures = 0;
    for (const b of this.buckets) {
      calls += b.calls;
      failures += b.failures;
    }
    return { calls, failures };
  }
}
