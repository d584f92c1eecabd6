import ms from 'ms';
import { z } from 'zod';

/**
 * zod schemas of the options a topology file passes to `process()`, `branch()` and `sink()`.
 * They check shapes, types and ranges; `compile()` turns their issues into messages that name
 * the node and the field (see `optionProblems`), and checks the rules that span fields.
 * Each field's `.describe()` text is what its message says after the field's name.
 *
 * The retry, circuit-breaker and retry-budget schemas are the one declaration of their options:
 * the options types users write (`RetryOptions`, …) are their `z.input`, the validated policies
 * (`RetryPolicy`, …) their `z.output`, and each field's default is its `.default(…)`. The TSDoc
 * on a field is what editors show on the option. Rules across fields (`openMs ≤ maxOpenMs`, a
 * default that follows another field) are the resolve functions' in `src/failure/`.
 */

/**
 * Parses a duration: a number of ms, or a string such as `'250ms'`, `'10s'`, `'1m'`, `'2h'`
 * (the `ms` package's format).
 *
 * @returns the duration in ms, or `undefined` when it is not a duration ≥ 0
 */
export function parseDurationMs(value: unknown): number | undefined {
  const parsed = typeof value === 'number' ? value : typeof value === 'string' ? ms(value as ms.StringValue) : NaN;
  return typeof parsed === 'number' && Number.isFinite(parsed) && parsed >= 0 ? parsed : undefined;
}

const int = (min: number) => z.number().int().min(min).describe(`must be an integer ≥ ${min}`);
const number = (min: number) => z.number().min(min).describe(`must be a number ≥ ${min}`);
const positiveMs = () => z.number().gt(0).describe('must be a number of ms > 0');
/** The longest delay a timer can wait (2³¹ − 1 ms, about 24.8 days): longer ones would fire at once. */
export const MAX_TIMER_MS = 2_147_483_647;
const timerMs = (min: 'gt0' | 'ge0') =>
  (min === 'gt0' ? z.number().gt(0) : z.number().min(0))
    .max(MAX_TIMER_MS)
    .describe(`${min === 'gt0' ? 'must be a number of ms > 0' : 'must be a number ≥ 0'}, at most ${MAX_TIMER_MS} (about 24.8 days)`);
const oneOf = <const T extends readonly [string, ...string[]]>(values: T, text: string) => z.enum(values).describe(`must be ${text}`);
const fn = (text: string) => z.custom<(...args: never[]) => unknown>((v) => typeof v === 'function').describe(`must be ${text}`);

/**
 * A strict options object (an unknown key is an error) whose output is read-only (frozen). Its
 * type names the shape as written, so declaration files keep each field's TSDoc, which editors
 * show on the options types (`z.input`) and the policies (`z.output`) derived from it.
 */
export type OptionsObjectSchema<Shape extends z.ZodRawShape> = z.ZodReadonly<z.ZodObject<Shape, z.core.$strict>>;
const optionsObject = <Shape extends z.ZodRawShape>(shape: Shape): OptionsObjectSchema<Shape> => z.strictObject(shape).readonly();

/** The jitter names, in the order messages list them (see `Jitter`). */
export const JITTERS = ['none', 'full', 'equal', 'additive', 'decorrelated'] as const;

/** The retry modes (see `RetryMode`). */
export const RETRY_MODES = ['blocking', 'topics'] as const;

/** The orders a retry-topic step keeps (see `RetryOrder`). */
export const RETRY_ORDERS = ['none', 'key'] as const;

/** Default `retry.maxParkedKeys`. */
export const DEFAULT_MAX_PARKED_KEYS = 10_000;

/**
 * `retry.backoff`: exponential backoff, as Spring Retry's `ExponentialBackOff`. Retry n waits
 * `min(maxMs, initialMs · multiplierⁿ)`, then jitter. All times in ms.
 */
export const backoffSchema = optionsObject({
  /** Delay before the first retry, ms. Default 500. */
  initialMs: timerMs('ge0').default(500),
  /** Factor applied per retry, ≥ 1. Default 2. */
  multiplier: number(1).default(2),
  /** Upper bound of any delay, ms; ≥ `initialMs`. Default 30 000 (or `initialMs`, when that is more). */
  maxMs: timerMs('ge0').default(30_000),
  /** How a delay is spread (see `Jitter`). Default `'equal'`. */
  jitter: oneOf(JITTERS, `one of ${JITTERS.join(', ')}`).default('equal'),
}).describe('must be an object');

/** A retry tier delay: ms, or a duration string such as `'10s'`. */
const tierDelay = z
  .union([z.number(), z.string()])
  .refine((v) => (parseDurationMs(v) ?? 0) > 0 && (parseDurationMs(v) ?? 0) <= MAX_TIMER_MS)
  // Durations past MAX_TIMER_MS count as not positive too: a timer would fire at once.
  .describe('is not a positive duration');

/** `retry`: the retry policy of a processor (Spring Kafka's `DefaultErrorHandler` and `@RetryableTopic`). */
export const retrySchema = optionsObject({
  /**
   * Total attempts, the first one included (Spring's `attempts`), ≥ 1. Default 3; with
   * explicit `tiers`, one retry per tier (tiers + 1).
   */
  maxAttempts: int(1).default(3),
  /** The delay between attempts (see `BackoffOptions`). Default: each of its defaults. */
  backoff: backoffSchema.prefault({}),
  /** `'blocking'` or `'topics'` (see `RetryMode`). Default `'blocking'`. */
  mode: oneOf(RETRY_MODES, "'blocking' or 'topics'").default('blocking'),
  /**
   * Retry-topic mode only: explicit tier delays, e.g. `['1s', '10s', '1m']` or ms numbers
   * (fixed delays, no jitter). Retry n goes to tier n; retries past the last tier reuse it.
   * With explicit tiers `maxAttempts` defaults to one retry per tier (tiers + 1), and may not
   * be lower. Default: one tier per distinct delay of the backoff schedule (the last one
   * reused), as in Spring Kafka 3.2+.
   */
  tiers: z.array(tierDelay).min(1).readonly().describe('must be a non-empty list of delays such as 1s, 10s, 1m').optional(),
  /**
   * Loop guard for `weir dlq replay`: a record replayed this many times that fails again goes
   * to the DLQ for good and is refused by further replays, ≥ 0. Default 3.
   */
  maxReplays: int(0).default(3),
  /** Loop guard: the most retry-topic hops one record may take before it is dead-lettered, ≥ 1. Default `maxAttempts`. */
  maxHops: int(1).optional(),
  /**
   * Retry-topic mode only: `'key'` keeps the order of each key (see `RetryOrder`): a failed
   * record waits at its task, durably, and later records of its key wait behind it while other
   * keys flow on. Default `'none'`.
   */
  order: oneOf(RETRY_ORDERS, "'none' or 'key'").default('none'),
  /**
   * `order: 'key'` only: the most keys a task holds records of, ≥ 1. At the limit the task takes
   * no new records (its partition pauses) until a key's records are decided. Default 10 000.
   */
  maxParkedKeys: int(1).optional(),
}).describe('must be an object');

/** `dedup`: idempotent consumption. */
export const dedupSchema = z
  .strictObject({
    key: fn('a function (record) => string'),
    ttlMs: positiveMs(),
    store: oneOf(['redis', 'memory'], "'redis' or 'memory'").optional(),
    claimTtlMs: positiveMs().optional(),
    onStoreError: oneOf(['fail', 'skip-dedup'], "'fail' or 'skip-dedup'").optional(),
  })
  .describe('must be an object { key, ttlMs }');

const rate = () => z.number().gt(0).max(1).describe('must be a number in (0, 1]');

/** `circuitBreaker`: resilience4j's `CircuitBreakerConfig`, time-based window (see `CircuitBreakerOptions`). */
export const circuitBreakerSchema = optionsObject({
  /** Failure rate in (0, 1] at which it opens (resilience4j `failureRateThreshold`, there in %). Default 0.5. */
  failureRateThreshold: rate().default(0.5),
  /** Calls in the window before the rate is judged (`minimumNumberOfCalls`), ≥ 1. Default 5. */
  minimumCalls: int(1).default(5),
  /** Length of the sliding window, ms (`slidingWindowSize`, time-based). Default 10 000. */
  windowMs: timerMs('gt0').default(10_000),
  /** First wait in the open state, ms (`waitDurationInOpenState`). Default 5 000. */
  openMs: timerMs('gt0').default(5_000),
  /** Longest wait in the open state after repeated failed probes, ms; ≥ `openMs`. Default 60 000 (or `openMs`, when that is more). */
  maxOpenMs: timerMs('gt0').default(60_000),
  /** Probe calls in the half-open state (`permittedNumberOfCallsInHalfOpenState`), ≥ 1. Default 1. */
  halfOpenCalls: int(1).default(1),
}).describe('must be an object');

/** `retryBudget`: Finagle's `RetryBudget` (see `RetryBudgetOptions`). */
export const retryBudgetSchema = optionsObject({
  /** Retries allowed per first attempt, ≥ 0 (Finagle's `percentCanRetry`). Default 0.2. */
  ratio: number(0).default(0.2),
  /**
   * Retries always allowed per second (Finagle's `minRetriesPerSec`): keeps retries moving.
   * At least 0.1, one per 10 s window. Default 10.
   */
  minPerSecond: z.number().gt(0).describe('must be a number > 0').default(10),
}).describe('must be an object');

/** The options of `process(name, fn, options)`; `retry`, `dedup`, `circuitBreaker` and `retryBudget` are checked on their own. */
export const processOptionsSchema = z
  .strictObject({
    retry: z.unknown().optional(),
    classify: fn("a function (error, record) => 'retry' | 'dlq'").optional(),
    dedup: z.unknown().optional(),
    circuitBreaker: z.unknown().optional(),
    retryBudget: z.unknown().optional(),
    timeoutMs: timerMs('gt0').optional(),
    dlq: z.unknown().optional(),
    inputSerdes: z.unknown().optional(),
  })
  .describe('must be an object');

/** The options of `branch({ success, retry, dlq })`; each value is checked on its own. */
export const branchSchema = z
  .strictObject({ success: z.unknown(), retry: z.unknown().optional(), dlq: z.unknown().optional() })
  .describe('takes { success, retry, dlq }');

/** One entry of a success-route list: `{ when, to }`. */
export const successRouteSchema = z.strictObject({ when: fn('a function (output) => boolean').optional(), to: z.unknown() });

/** A multicast success branch: `{ all: [sink, ...] }`. */
export const multicastSchema = z.strictObject({
  all: z.array(z.unknown()).min(1).describe('must be a non-empty list of sinks or topic names'),
});

/** The options of `sink(topic, options)`. */
export const sinkOptionsSchema = z.strictObject({
  topic: z.string(),
  name: z.string().optional(),
  key: z.unknown().optional(),
  value: z.unknown().optional(),
  partitions: int(1).optional(),
});

/** The options of `topology({ ... })`. */
export const topologyOptionsSchema = z.strictObject({
  applicationId: z.unknown().optional(),
  processingGuarantee: oneOf(['at_least_once', 'exactly_once'], "'at_least_once' or 'exactly_once'").optional(),
  commitIntervalMs: int(1).describe('must be an integer number of ms ≥ 1').optional(),
});
