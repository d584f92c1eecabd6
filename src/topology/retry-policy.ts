import { showValue } from './show-value.js';
import ms from 'ms';
import type { Jitter, RetryMode, RetryOptions } from '../dsl/process-options.js';
import { unknownKeysProblem } from './unknown-keys.js';

/** A validated backoff. All times in ms. */
export interface Backoff {
  readonly initialMs: number;
  readonly multiplier: number;
  readonly maxMs: number;
  readonly jitter: Jitter;
}

/** A validated retry policy, with every default filled in. */
export interface RetryPolicy {
  /** Total attempts, the first included; ≥ 1. */
  readonly maxAttempts: number;
  readonly backoff: Backoff;
  readonly mode: RetryMode;
  /**
   * Retry-topic mode: the delay of each tier, ms (tier n has `tierDelaysMs[n]`). Empty in
   * blocking mode.
   */
  readonly tierDelaysMs: readonly number[];
  /** Whether tiers were given explicitly (fixed delays, no jitter) or derived from backoff. */
  readonly explicitTiers: boolean;
  /** Loop guard: most retry-topic hops per record. */
  readonly maxHops: number;
  /** Loop guard: most DLQ replays per record. */
  readonly maxReplays: number;
}

/** Defaults, as documented on {@link RetryOptions}. */
export const RETRY_DEFAULTS = Object.freeze({
  maxAttempts: 3,
  initialMs: 500,
  multiplier: 2,
  maxMs: 30_000,
  jitter: 'equal' as Jitter,
  mode: 'blocking' as RetryMode,
  maxReplays: 3,
});

const JITTERS: readonly Jitter[] = ['none', 'full', 'equal'];
const MODES: readonly RetryMode[] = ['blocking', 'topics'];

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

function isInt(value: unknown, min: number): value is number {
  return typeof value === 'number' && Number.isInteger(value) && value >= min;
}

function isNumber(value: unknown, min: number): value is number {
  return typeof value === 'number' && Number.isFinite(value) && value >= min;
}

/**
 * Validates retry options and fills in defaults.
 *
 * @returns the policy, or the list of problems (each naming the field, e.g.
 *   `retry.backoff.maxMs (100) is less than retry.backoff.initialMs (500)`)
 */
export function resolveRetryPolicy(options: RetryOptions | undefined): RetryPolicy | string[] {
  const o = (options ?? {}) as Record<string, unknown>;
  if (typeof o !== 'object' || o === null) return ['retry must be an object'];
  const b = (o.backoff ?? {}) as Record<string, unknown>;
  if (typeof b !== 'object' || b === null) return ['retry.backoff must be an object'];
  const problems: string[] = [];
  const unknownRetry = unknownKeysProblem(o, ['maxAttempts', 'backoff', 'mode', 'tiers', 'maxHops', 'maxReplays'], 'retry');
  if (unknownRetry) problems.push(unknownRetry);
  const unknownBackoff = unknownKeysProblem(b, ['initialMs', 'multiplier', 'maxMs', 'jitter'], 'retry.backoff');
  if (unknownBackoff) problems.push(unknownBackoff);

  // Explicit tiers without maxAttempts: one retry per tier (`['1s', '10s', '1m']` → 4 attempts).
  const explicitTierCount = Array.isArray(o.tiers) && o.tiers.length > 0 ? o.tiers.length : undefined;
  const maxAttempts = o.maxAttempts ?? (explicitTierCount !== undefined ? explicitTierCount + 1 : RETRY_DEFAULTS.maxAttempts);
  if (!isInt(maxAttempts, 1)) problems.push(`retry.maxAttempts must be an integer ≥ 1 (got ${showValue(maxAttempts)})`);
  const initialMs = b.initialMs ?? RETRY_DEFAULTS.initialMs;
  if (!isNumber(initialMs, 0)) problems.push(`retry.backoff.initialMs must be a number ≥ 0 (got ${showValue(initialMs)})`);
  const multiplier = b.multiplier ?? RETRY_DEFAULTS.multiplier;
  if (!isNumber(multiplier, 1)) problems.push(`retry.backoff.multiplier must be a number ≥ 1 (got ${showValue(multiplier)})`);
  const maxMs = b.maxMs ?? Math.max(RETRY_DEFAULTS.maxMs, typeof initialMs === 'number' ? initialMs : 0);
  if (!isNumber(maxMs, 0)) problems.push(`retry.backoff.maxMs must be a number ≥ 0 (got ${showValue(maxMs)})`);
  else if (isNumber(initialMs, 0) && maxMs < initialMs) {
    problems.push(`retry.backoff.maxMs (${maxMs}) is less than retry.backoff.initialMs (${initialMs})`);
  }
  const jitter = b.jitter ?? RETRY_DEFAULTS.jitter;
  if (!JITTERS.includes(jitter as Jitter)) problems.push(`retry.backoff.jitter must be one of ${JITTERS.join(', ')} (got ${showValue(jitter)})`);
  const mode = o.mode ?? RETRY_DEFAULTS.mode;
  if (!MODES.includes(mode as RetryMode)) problems.push(`retry.mode must be 'blocking' or 'topics' (got ${showValue(mode)})`);
  const maxReplays = o.maxReplays ?? RETRY_DEFAULTS.maxReplays;
  if (!isInt(maxReplays, 0)) problems.push(`retry.maxReplays must be an integer ≥ 0 (got ${showValue(maxReplays)})`);
  const maxHops = o.maxHops ?? (isInt(maxAttempts, 1) ? maxAttempts : 1);
  if (!isInt(maxHops, 1)) problems.push(`retry.maxHops must be an integer ≥ 1 (got ${showValue(maxHops)})`);

  let explicit: number[] | undefined;
  if (o.tiers !== undefined) {
    if (mode !== 'topics') problems.push(`retry.tiers is only valid with retry.mode 'topics'`);
    if (!Array.isArray(o.tiers) || o.tiers.length === 0) {
      problems.push('retry.tiers must be a non-empty list of delays such as 1s, 10s, 1m');
    } else {
      explicit = [];
      for (const [i, tier] of o.tiers.entries()) {
        const delay = parseDurationMs(tier);
        if (delay === undefined || delay <= 0) problems.push(`retry.tiers[${i}] is not a positive duration (got ${showValue(tier)})`);
        else explicit.push(delay);
      }
      if (isInt(maxAttempts, 1) && maxAttempts - 1 < o.tiers.length) {
        problems.push(
          `retry.tiers has ${o.tiers.length} tier(s) but retry.maxAttempts (${maxAttempts}) allows only ${maxAttempts - 1} retr${maxAttempts === 2 ? 'y' : 'ies'}: ` +
            `tiers past retry ${maxAttempts - 1} would never be used (raise maxAttempts, or drop it to get one retry per tier)`,
        );
      }
    }
  }
  if (problems.length > 0) return problems;

  const backoff: Backoff = Object.freeze({
    initialMs: initialMs as number,
    multiplier: multiplier as number,
    maxMs: maxMs as number,
    jitter: jitter as Jitter,
  });
  const tierDelaysMs =
    mode !== 'topics' ? [] : explicit ?? scheduleTierDelays(backoff, (maxAttempts as number) - 1);
  return Object.freeze({
    maxAttempts: maxAttempts as number,
    backoff,
    mode: mode as RetryMode,
    tierDelaysMs: Object.freeze(tierDelaysMs),
    explicitTiers: explicit !== undefined,
    maxHops: maxHops as number,
    maxReplays: maxReplays as number,
  });
}

/**
 * The un-jittered delay of retry `retryIndex` (0 = the first retry):
 * `min(maxMs, initialMs · multiplier^retryIndex)`, in ms.
 */
export function baseDelayMs(backoff: Backoff, retryIndex: number): number {
  return Math.min(backoff.maxMs, backoff.initialMs * backoff.multiplier ** retryIndex);
}

/**
 * One tier per distinct delay of the backoff schedule, in order, the last one reused for the
 * remaining retries (Spring Kafka 3.2+ `sameIntervalTopicReuseStrategy` SINGLE_TOPIC): with
 * `initialMs` 1000, `multiplier` 2, `maxMs` 5000 and 6 retries the delays are 1 s, 2 s, 4 s,
 * 5 s, 5 s, 5 s and the tiers 1 s, 2 s, 4 s, 5 s. No tiers when there are no retries
 * (`maxAttempts` 1).
 *
 * @param retries retries after the first attempt (`maxAttempts - 1`)
 * @returns the tier delays in ms, in tier order
 */
export function scheduleTierDelays(backoff: Backoff, retries: number): number[] {
  const delays: number[] = [];
  for (let i = 0; i < retries; i++) {
    const d = Math.round(baseDelayMs(backoff, i));
    if (delays[delays.length - 1] !== d) delays.push(d);
    if (d >= backoff.maxMs) break;
  }
  return delays;
}

/** The tier that retry `retryIndex` (0 = first retry) goes to in retry-topic mode. */
export function tierIndexForRetry(policy: RetryPolicy, retryIndex: number): number {
  if (policy.explicitTiers) return Math.min(retryIndex, policy.tierDelaysMs.length - 1);
  const d = Math.round(baseDelayMs(policy.backoff, retryIndex));
  const i = policy.tierDelaysMs.indexOf(d);
  return i >= 0 ? i : policy.tierDelaysMs.length - 1;
}
