import { describe, expect, it } from 'vitest';
import { RetryBudget } from './retry-budget.js';

const T0 = 10_000_000; // on a slot boundary

describe('RetryBudget', () => {
  it('allows minPerSecond × 10 retries with no first attempts, then says when a token is back', () => {
    const budget = new RetryBudget({ ratio: 0, minPerSecond: 0.3 });
    const answers = [0, 1, 2, 3].map((i) => budget.tryRetry(T0 + i * 100).kind);
    expect(answers).toEqual(['granted', 'granted', 'granted', 'wait']);
    const wait = budget.tryRetry(T0 + 500);
    // The slot of the first three retries leaves the window 10 s after it ended.
    expect(wait).toEqual({ kind: 'wait', retryAtMs: T0 + 11_000 });
    expect(budget.tryRetry(T0 + 10_999).kind).toBe('wait');
    expect(budget.tryRetry(T0 + 11_000).kind).toBe('granted');
  });

  it('first attempts deposit ratio tokens each', () => {
    const budget = new RetryBudget({ ratio: 0.5, minPerSecond: 0.1 });
    expect(budget.tokens(T0)).toBe(1);
    for (let i = 0; i < 4; i++) budget.firstAttempt(T0);
    expect(budget.tokens(T0)).toBe(3);
    const granted = [0, 1, 2, 3].filter(() => budget.tryRetry(T0 + 1).kind === 'granted').length;
    expect(granted).toBe(3);
    expect(budget.tokens(T0 + 1)).toBe(0);
  });

  it('deposits expire with their slot, like withdrawals', () => {
    const budget = new RetryBudget({ ratio: 1, minPerSecond: 0.1 });
    for (let i = 0; i < 5; i++) budget.firstAttempt(T0);
    expect(budget.tokens(T0 + 10_999)).toBe(6);
    expect(budget.tokens(T0 + 11_000)).toBe(1);
  });
});
