import ms from 'ms';
import { z } from 'zod';
import { JITTERS, RETRY_MODES } from './process-options.js';

/**
 * zod schemas of the options a topology file passes to `process()`, `branch()` and `sink()`.
 * They check shapes, types and ranges; `compile()` turns their issues into messages that name
 * the node and the field (see `optionProblems`), and checks the rules that span fields.
 * Each field's `.describe()` text is what its message says after the field's name.
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
    .describe(`${min === 'gt0' ? 'must be a number of ms > 0' : 'must be a number ≥ 0'}, at most ${MAX_TIMER_MS} (about 24.8 days),`);
const oneOf = <const T extends readonly [string, ...string[]]>(values: T, text: string) => z.enum(values).describe(`must be ${text}`);
const fn = (text: string) => z.custom<(...args: never[]) => unknown>((v) => typeof v === 'function').describe(`must be ${text}`);

/** `retry.backoff`: Spring Retry's `ExponentialBackOff`. */
export const backoffSchema = z
  .strictObject({
    initialMs: timerMs('ge0').optional(),
    multiplier: number(1).optional(),
    maxMs: timerMs('ge0').optional(),
    jitter: oneOf(JITTERS, `one of ${JITTERS.join(', ')}`).optional(),
  })
  .describe('must be an object');

/** A retry tier delay: ms, or a duration string such as `'10s'`. */
const tierDelay = z
  .union([z.number(), z.string()])
  .refine((v) => (parseDurationMs(v) ?? 0) > 0 && (parseDurationMs(v) ?? 0) <= MAX_TIMER_MS)
  // Durations past MAX_TIMER_MS count as not positive too: a timer would fire at once.
  .describe('is not a positive duration');

/** `retry`: the retry policy of a processor. */
export const retrySchema = z
  .strictObject({
    maxAttempts: int(1).optional(),
    backoff: backoffSchema.optional(),
    mode: oneOf(RETRY_MODES, "'blocking' or 'topics'").optional(),
    tiers: z.array(tierDelay).min(1).describe('must be a non-empty list of delays such as 1s, 10s, 1m').optional(),
    maxReplays: int(0).optional(),
    maxHops: int(1).optional(),
  })
  .describe('must be an object');

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

/** `circuitBreaker`: resilience4j's `CircuitBreakerConfig`, time-based window. */
export const circuitBreakerSchema = z
  .strictObject({
    failureRateThreshold: rate().optional(),
    minimumCalls: int(1).optional(),
    windowMs: timerMs('gt0').optional(),
    openMs: timerMs('gt0').optional(),
    maxOpenMs: timerMs('gt0').optional(),
    halfOpenCalls: int(1).optional(),
  })
  .describe('must be an object');

/** `retryBudget`: Finagle's `RetryBudget`. */
export const retryBudgetSchema = z
  .strictObject({
    ratio: number(0).optional(),
    minPerSecond: z.number().gt(0).describe('must be a number > 0').optional(),
  })
  .describe('must be an object');

/** The options of `process(name, fn, options)`; `retry`, `dedup`, `circuitBreaker` and `retryBudget` are checked on their own. */
export const processOptionsSchema = z
  .strictObject({
    retry: z.unknown().optional(),
    classify: fn("a function (error, record) => 'retry' | 'dlq'").optional(),
    dedup: z.unknown().optional(),
    circuitBreaker: z.unknown().optional(),
    retryBudget: z.unknown().optional(),
    timeoutMs: timerMs('gt0').optional(),
  })
  .describe('must be an object');

/** The options of `branch({ success, retry, dlq })`; each value is checked on its own. */
export const branchSchema = z
  .strictObject({ success: z.unknown(), retry: z.unknown().optional(), dlq: z.unknown().optional() })
  .describe('takes { success, retry, dlq }');

/** One entry of a success-route list: `{ when, to }`. */
export const successRouteSchema = z.strictObject({ when: fn('a function (output) => boolean').optional(), to: z.unknown() });

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
