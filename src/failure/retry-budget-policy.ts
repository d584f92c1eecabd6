import type { z } from 'zod';
import { optionProblems } from '../dsl/option-problems.js';
import { retryBudgetSchema } from '../dsl/options-schema.js';
import type { RetryBudgetOptions } from '../dsl/process-options.js';

/**
 * A validated retry budget: `retryBudgetSchema`'s output, every default filled in (the fields
 * and their TSDoc are the schema's); `minPerSecond` ≥ 0.1 (one per window).
 */
export type RetryBudgetPolicy = z.output<typeof retryBudgetSchema>;

/** The budget's window, ms: deposits and withdrawals older than this expire (Finagle's `ttl`, 10 s). */
export const RETRY_BUDGET_WINDOW_MS = 10_000;

/** The defaults: each field's `.default(…)` in `retryBudgetSchema` (Finagle's: 20 %, 10 per second). */
export const RETRY_BUDGET_DEFAULTS: RetryBudgetPolicy = retryBudgetSchema.parse({});

/**
 * Validates retry-budget options (zod, `retryBudgetSchema`) and fills in defaults.
 *
 * @returns the policy (frozen), or the problems, each naming the field (e.g. `retryBudget.ratio must be a number ≥ 0 (got -1)`)
 */
export function resolveRetryBudgetPolicy(options: RetryBudgetOptions): RetryBudgetPolicy | string[] {
  const parsed = retryBudgetSchema.safeParse(options);
  if (!parsed.success) return optionProblems(retryBudgetSchema, options, parsed.error, { prefix: 'retryBudget', root: 'retryBudget' });
  const { minPerSecond } = parsed.data;
  const floor = 1_000 / RETRY_BUDGET_WINDOW_MS;
  if (minPerSecond < floor)
    return [
      `retryBudget.minPerSecond (${minPerSecond}) must be at least ${floor}: one retry per ${RETRY_BUDGET_WINDOW_MS / 1_000} s window, so retries always move`,
    ];
  return parsed.data;
}
