import type { z } from 'zod';
import { optionProblems } from '../dsl/option-problems.js';
import { backoffSchema, DEFAULT_MAX_PARKED_KEYS, parseDurationMs, retrySchema } from '../dsl/options-schema.js';
import type { RetryOptions } from '../dsl/process-options.js';

/** A validated backoff: `backoffSchema`'s output, every default filled in; `maxMs` ≥ `initialMs`. All times in ms. */
export type Backoff = z.output<typeof backoffSchema>;

/**
 * A validated retry policy, with every default filled in: `retrySchema`'s output (its fields and
 * their TSDoc), with the tiers resolved to delays and `maxHops` filled in.
 */
export interface RetryPolicy extends Omit<z.output<typeof retrySchema>, 'backoff' | 'tiers' | 'maxHops' | 'maxParkedKeys'> {
  readonly backoff: Backoff;
  /**
   * Retry-topic mode: the delay of each tier, ms (tier n has `tierDelaysMs[n]`). Empty in
   * blocking mode.
   */
  readonly tierDelaysMs: readonly number[];
  /** Whether tiers were given explicitly (fixed delays, no jitter) or derived from backoff. */
  readonly explicitTiers: boolean;
  /** Loop guard: most retry-topic hops per record. */
  readonly maxHops: number;
  /** `order: 'key'`: the most keys a task holds records of (default `DEFAULT_MAX_PARKED_KEYS`); null otherwise. */
  readonly maxParkedKeys: number | null;
}

/**
 * Validates retry options (zod, {@link retrySchema}) and fills in defaults: the schema's, and
 * those that follow another field — `maxAttempts` one retry per explicit tier, `backoff.maxMs`
 * raised to `initialMs` when not given, `maxHops` = `maxAttempts`.
 *
 * @returns the policy (frozen), or the list of problems (each naming the field, e.g.
 *   `retry.backoff.maxMs (100) is less than retry.backoff.initialMs (500)`)
 */
export function resolveRetryPolicy(options: RetryOptions | undefined): RetryPolicy | string[] {
  const parsed = retrySchema.safeParse(options ?? {});
  if (!parsed.success) {
    const fields = optionProblems(retrySchema, options, parsed.error, { prefix: 'retry', root: 'retry' });
    // The rules across mode, order, tiers and maxParkedKeys, on the fields that are valid on
    // their own: a bad value elsewhere does not hide them until it is fixed.
    const valid = (field: string): boolean => !parsed.error.issues.some((i) => i.path[0] === field || i.path.length === 0);
    const raw = (typeof options === 'object' && options !== null ? options : {}) as Partial<Record<string, unknown>>;
    const across = modeProblems({
      mode: valid('mode') ? ((raw['mode'] as string | undefined) ?? 'blocking') : undefined,
      order: valid('order') ? ((raw['order'] as string | undefined) ?? 'none') : undefined,
      tiers: valid('tiers') ? raw['tiers'] !== undefined : undefined,
      maxParkedKeys: raw['maxParkedKeys'] !== undefined,
    });
    const rawBackoff = raw['backoff'];
    if (typeof rawBackoff === 'object' && rawBackoff !== null) {
      // initialMs and maxMs valid on their own, whatever else in the backoff is not.
      const { initialMs, maxMs } = rawBackoff as Partial<Record<string, unknown>>;
      const range = backoffSchema.safeParse({ initialMs, maxMs });
      if (range.success && maxMs !== undefined) across.push(...backoffRangeProblems(range.data.initialMs, range.data.maxMs));
    }
    return [...fields, ...across];
  }
  const { backoff: b, tiers, ...o } = parsed.data;
  const problems: string[] = [];
  // Explicit tiers without maxAttempts: one retry per tier (`['1s', '10s', '1m']` → 4 attempts).
  const maxAttempts = options?.maxAttempts === undefined && tiers !== undefined ? tiers.length + 1 : o.maxAttempts;
  const maxMs = options?.backoff?.maxMs === undefined ? Math.max(b.maxMs, b.initialMs) : b.maxMs;
  problems.push(...backoffRangeProblems(b.initialMs, maxMs));
  const explicit = tiers?.map((tier) => parseDurationMs(tier) as number);
  if (explicit !== undefined) {
    if (maxAttempts - 1 < explicit.length) {
      problems.push(
        `retry.tiers has ${explicit.length} tier(s) but retry.maxAttempts (${maxAttempts}) allows only ${maxAttempts - 1} retr${maxAttempts === 2 ? 'y' : 'ies'}: ` +
          `tiers past retry ${maxAttempts - 1} would never be used (raise maxAttempts, or drop it to get one retry per tier)`,
      );
    }
  }
  problems.push(
    ...modeProblems({ mode: o.mode, order: o.order, tiers: tiers !== undefined, maxParkedKeys: o.maxParkedKeys !== undefined }),
  );
  if (problems.length > 0) return problems;

  const backoff: Backoff = Object.freeze({ ...b, maxMs });
  const tierDelaysMs = o.mode !== 'topics' ? [] : (explicit ?? scheduleTierDelays(backoff, maxAttempts - 1));
  return Object.freeze({
    maxAttempts,
    backoff,
    mode: o.mode,
    tierDelaysMs: Object.freeze(tierDelaysMs),
    explicitTiers: explicit !== undefined,
    maxHops: o.maxHops ?? maxAttempts,
    maxReplays: o.maxReplays,
    order: o.order,
    maxParkedKeys: o.order === 'key' ? (o.maxParkedKeys ?? DEFAULT_MAX_PARKED_KEYS) : null,
  });
}

/** The rule across `retry.backoff.initialMs` and `retry.backoff.maxMs` (both ms). */
function backoffRangeProblems(initialMs: number, maxMs: number): string[] {
  return maxMs < initialMs ? [`retry.backoff.maxMs (${maxMs}) is less than retry.backoff.initialMs (${initialMs})`] : [];
}

/**
 * The rules across `retry.mode`, `retry.order`, `retry.tiers` and `retry.maxParkedKeys` (given:
 * true). A field left `undefined` was invalid on its own, and the rules that need it are skipped.
 */
function modeProblems(o: { mode?: string; order?: string; tiers?: boolean; maxParkedKeys?: boolean }): string[] {
  const problems: string[] = [];
  if (o.tiers === true && o.mode !== undefined && o.mode !== 'topics') problems.push(`retry.tiers is only valid with retry.mode 'topics'`);
  if (o.order === 'key' && o.mode !== undefined && o.mode !== 'topics')
    problems.push(
      "retry.order 'key' is only valid with retry.mode 'topics' (blocking mode keeps the order already: a failed record holds its partition)",
    );
  if (o.maxParkedKeys === true && o.order !== undefined && o.order !== 'key')
    problems.push("retry.maxParkedKeys is only valid with retry.order 'key'");
  return problems;
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
