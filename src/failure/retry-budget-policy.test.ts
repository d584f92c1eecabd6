import { describe, expect, it } from 'vitest';
import type { RetryBudgetOptions } from '../dsl/process-options.js';
import { RETRY_BUDGET_DEFAULTS, resolveRetryBudgetPolicy } from './retry-budget-policy.js';

const resolve = (options: unknown) => resolveRetryBudgetPolicy(options as RetryBudgetOptions);

describe('resolveRetryBudgetPolicy', () => {
  it('resolves {} to the documented defaults (ratio 0.2, 10 per second, as Finagle), frozen', () => {
    expect(resolve({})).toEqual({ ratio: 0.2, minPerSecond: 10 });
    expect(RETRY_BUDGET_DEFAULTS).toEqual({ ratio: 0.2, minPerSecond: 10 });
    expect(Object.isFrozen(resolve({}))).toBe(true);
    expect(resolve({ ratio: 0 })).toEqual({ ratio: 0, minPerSecond: 10 });
  });

  it.each([
    [{ ratio: -1 }, 'retryBudget.ratio must be a number ≥ 0 (got -1)'],
    [{ minPerSecond: 0 }, 'retryBudget.minPerSecond must be a number > 0 (got 0)'],
    [{ minPerSecond: 0.01 }, 'retryBudget.minPerSecond (0.01) must be at least 0.1: one retry per 10 s window, so retries always move'],
    ['x', 'retryBudget must be an object (got "x")'],
    [{ ratio: 1, percent: 2 }, "unknown option 'percent' in retryBudget (known: ratio, minPerSecond)"],
  ])('names the field of %j', (options, problem) => {
    expect(resolve(options)).toEqual([problem]);
  });
});
