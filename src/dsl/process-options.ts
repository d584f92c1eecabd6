import type { ProcessorRecord } from './processor.js';

/**
 * Jitter applied to a backoff delay `d` (see `computeBackoffDelay`):
 * `'none'` → d; `'full'` → uniform in [0, d]; `'equal'` → uniform in [d/2, d]
 * (the AWS Architecture Blog's "full" and "equal" jitter).
 */
export type Jitter = (typeof JITTERS)[number];

/** The jitter names, in the order messages list them. */
export const JITTERS = ['none', 'full', 'equal'] as const;

/** Exponential backoff, as in Spring Retry's `ExponentialBackOff`. All times in ms. */
export interface BackoffOptions {
  /** Delay before the first retry, ms. Default 500. */
  readonly initialMs?: number;
  /** Factor applied per retry. Default 2. */
  readonly multiplier?: number;
  /** Upper bound of any delay, ms. Default 30 000. */
  readonly maxMs?: number;
  /** Default `'equal'`. */
  readonly jitter?: Jitter;
}

/**
 * How failed records are retried.
 *
 * - `'blocking'` (default): retried in place; the partition waits (paused, still in the group)
 *   and per-key order is kept.
 * - `'topics'`: non-blocking, as Spring Kafka's `@RetryableTopic`: a failed record goes to a
 *   delay tier topic `<application.id>.<processor>.retry.<n>` and the main partition moves on.
 */
export type RetryMode = (typeof RETRY_MODES)[number];

/** The retry modes. */
export const RETRY_MODES = ['blocking', 'topics'] as const;

/** A retry policy. */
export interface RetryOptions {
  /** Total attempts, the first one included (Spring's `attempts`). Default 3; must be ≥ 1. */
  readonly maxAttempts?: number;
  readonly backoff?: BackoffOptions;
  /** Default `'blocking'`. */
  readonly mode?: RetryMode;
  /**
   * Retry-topic mode only: explicit tier delays, e.g. `['1s', '10s', '1m']` or ms numbers
   * (fixed delays, no jitter). Retry n goes to tier n; retries past the last tier reuse it.
   * With explicit tiers `maxAttempts` defaults to one retry per tier (tiers + 1), and may not
   * be lower. Default: one tier per distinct delay of the backoff schedule (the last one
   * reused), as in Spring Kafka 3.2+.
   */
  readonly tiers?: ReadonlyArray<string | number>;
  /**
   * Loop guard: the most retry-topic hops one record may take before it is dead-lettered.
   * Default `maxAttempts`.
   */
  readonly maxHops?: number;
  /**
   * Loop guard for `weir dlq replay`: a record replayed this many times that fails again goes
   * to the DLQ for good and is refused by further replays. Default 3.
   */
  readonly maxReplays?: number;
}

/** What to do with a failure: try again, or give up and dead-letter the record now. */
export type Classification = 'retry' | 'dlq';

/**
 * A user hook that classifies a processor failure. Default rules when absent: programmer
 * errors (TypeError, RangeError, SyntaxError, ReferenceError), deserialization errors and
 * errors with `retriable: false` are `'dlq'`; everything else is `'retry'`.
 */
export type ClassifyFn = (error: unknown, record: ProcessorRecord<any, any>) => Classification;

/**
 * Idempotent consumption: records whose dedup key was already processed within `ttlMs` are
 * skipped (counted, committed, never passed to the processor).
 */
export interface DedupOptions {
  /** The dedup key of a record; `null`/`undefined` means "never a duplicate". */
  readonly key: (record: ProcessorRecord<any, any>) => string | null | undefined;
  /** Dedup window, ms: how long a processed key is remembered. */
  readonly ttlMs: number;
  /** Default `'redis'` (the worker's `REDIS_URL`). */
  readonly store?: 'redis' | 'memory';
  /** How long an unconfirmed claim lives before another attempt may take it, ms. Default 60 000. */
  readonly claimTtlMs?: number;
  /** Redis down: `'fail'` (default: pause and retry with backoff) or `'skip-dedup'`. */
  readonly onStoreError?: 'fail' | 'skip-dedup';
}

/** Options of `process(name, fn, options)`. */
export interface ProcessOptions {
  readonly retry?: RetryOptions;
  readonly classify?: ClassifyFn;
  readonly dedup?: DedupOptions;
}
