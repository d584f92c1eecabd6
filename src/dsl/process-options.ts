import type { z } from 'zod';
import type {
  backoffSchema,
  circuitBreakerSchema,
  JITTERS,
  RETRY_MODES,
  RETRY_ORDERS,
  retryBudgetSchema,
  retrySchema,
} from './options-schema.js';
import type { ProcessorRecord } from './processor.js';
import type { SerdeSpec } from './serdes.js';
import type { SinkSpec } from './sink.js';

export { JITTERS, RETRY_MODES, RETRY_ORDERS } from './options-schema.js';

// The retry, circuit-breaker and retry-budget options are declared once, as the zod schemas of
// options-schema.ts: their types here are the schemas' `z.input`, and each field's TSDoc (with
// its unit and default) is on the schema's field.

/**
 * Jitter applied to a backoff delay `d = min(maxMs, initialMs · multiplier^n)` (see
 * `computeBackoffDelay`):
 * - `'none'` → d;
 * - `'full'` → uniform in [0, d]; `'equal'` → uniform in [d/2, d] (the AWS Architecture
 *   Blog's "full" and "equal" jitter);
 * - `'additive'` → `min(maxMs, d + U[0, initialMs])`: the retry-mechanism design's
 *   `t_n = t0 · 2^n + δ, δ ∈ U[0, t0]`;
 * - `'decorrelated'` → `min(maxMs, U[initialMs, 3 · previous])`, `previous` being the last
 *   delay of the same record (`initialMs` before its first retry): AWS' "decorrelated jitter"
 *   (it ignores `multiplier`).
 */
export type Jitter = (typeof JITTERS)[number];

/** Exponential backoff, as Spring Retry's `ExponentialBackOff`: the fields of `backoffSchema`. All times in ms. */
export type BackoffOptions = z.input<typeof backoffSchema>;

/**
 * How failed records are retried.
 *
 * - `'blocking'` (default): retried in place; the partition waits (paused, still in the group)
 *   and per-key order is kept.
 * - `'topics'`: non-blocking, as Spring Kafka's `@RetryableTopic`: a failed record goes to a
 *   delay tier topic `<application.id>.<processor>.retry.<n>` and the main partition moves on.
 */
export type RetryMode = (typeof RETRY_MODES)[number];

/**
 * The order retry-topic mode keeps (`retry.order`):
 * - `'none'` (default): a failed record goes to a tier topic and later records of its key may
 *   overtake it, as with Spring Kafka's `@RetryableTopic`;
 * - `'key'`: per-key ordered non-blocking retries, as Confluent's Parallel Consumer: the failed
 *   record waits at its task, kept durably in the compacted changelog topic
 *   `<application.id>.<processor>.parked` (the chain's first processor with `order: 'key'`);
 *   later records of its key wait behind it in offset order, and records of other keys flow on.
 *   Every other retry-topic step of the chain must keep key order too. Blocking mode is ordered
 *   already. `maxParkedKeys` bounds the keys a task holds back.
 */
export type RetryOrder = (typeof RETRY_ORDERS)[number];

/**
 * A retry policy: the fields of `retrySchema` (`maxAttempts`, `backoff`, `mode`, `tiers`,
 * `maxReplays`, `maxHops`), each documented with its default there.
 */
export type RetryOptions = z.input<typeof retrySchema>;

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

/**
 * A per-processor circuit breaker, with resilience4j's names (`CircuitBreakerConfig`), on a
 * time-based sliding window. Only retriable failures count as failures; non-retriable ones
 * (and deserialization errors, and `classify` → `'dlq'`) are ignored; successes count.
 *
 * - **closed**: calls go through. When at least `minimumCalls` calls ended in the last
 *   `windowMs` and the failure rate among them is ≥ `failureRateThreshold`, it opens.
 * - **open**: every task of the processor (source partitions and retry tiers) stops calling
 *   it; records wait in place, their partitions paused, without using up attempts. After
 *   `openMs` it goes half-open.
 * - **half-open**: `halfOpenCalls` real attempts probe the dependency. If their failure rate is
 *   below the threshold it closes; else it opens again with the wait doubled, up to `maxOpenMs`.
 *
 * The failure that opens the breaker and a failed probe are charged to the dependency, not
 * to the record: the record waits for the breaker with the attempts it had. Scope: one breaker
 * per processor per worker process, shared by all its tasks.
 */
export type CircuitBreakerOptions = z.input<typeof circuitBreakerSchema>;

/**
 * A retry budget (a token bucket, as Finagle's `RetryBudget` and gRPC's retry throttling):
 * over any 10 s window, the retries of a processor in one worker are at most `ratio` × its
 * first attempts plus `minPerSecond` × 10. A retry that finds the budget spent waits for a
 * token (a blocking retry waits longer, a retry-tier task slows down); it is never
 * dead-lettered because of the budget.
 */
export type RetryBudgetOptions = z.input<typeof retryBudgetSchema>;

/** Options of `process(name, fn, options)`. */
export interface ProcessOptions {
  readonly retry?: RetryOptions;
  readonly classify?: ClassifyFn;
  readonly dedup?: DedupOptions;
  /** Stop calling the processor while its dependency is down (see {@link CircuitBreakerOptions}). Default: none. */
  readonly circuitBreaker?: CircuitBreakerOptions;
  /** Limit retries to a share of first attempts (see {@link RetryBudgetOptions}). Default: none. */
  readonly retryBudget?: RetryBudgetOptions;
  /**
   * Longest attempt, ms (> 0): `ctx.signal` aborts then, and the attempt fails with a retriable
   * `AttemptTimeoutError` even if the processor ignores the signal; its outputs are dropped.
   * Default: none.
   */
  readonly timeoutMs?: number;
  /**
   * This processor's dead-letter sink: default topic `<application.id>.<processor>.dlq`. The last
   * (or only) processor may give it here or in `branch({ dlq })`, not both.
   */
  readonly dlq?: SinkSpec | string;
  /**
   * Chain steps after the first only: the serdes this step's input (the previous step's output) is
   * written with when a record waits in this step's retry tiers or lands in its DLQ, and read back
   * with. A bare spec sets the value serde. Default: the source's key serde, value `'json'`.
   */
  readonly inputSerdes?: SerdeSpec | { readonly key?: SerdeSpec; readonly value?: SerdeSpec };
}
