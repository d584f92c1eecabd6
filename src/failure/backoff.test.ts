import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { backoffDelayBounds, computeBackoffDelay } from './backoff.js';
import { resolveRetryPolicy, tierIndexForRetry, type Backoff, type RetryPolicy } from './retry-policy.js';

const backoff = (b: Partial<Backoff>): Backoff => ({ initialMs: 100, multiplier: 2, maxMs: 1000, jitter: 'none', ...b });

describe('computeBackoffDelay', () => {
  it('grows as initialMs · multiplier^n and stops at maxMs', () => {
    const delays = [0, 1, 2, 3, 4, 5].map((n) => computeBackoffDelay(backoff({}), n, () => 0.5));
    expect(delays).toEqual([100, 200, 400, 800, 1000, 1000]);
  });

  it('applies full jitter in [0, d] and equal jitter in [d/2, d]', () => {
    expect(computeBackoffDelay(backoff({ jitter: 'full' }), 2, () => 0)).toBe(0);
    expect(computeBackoffDelay(backoff({ jitter: 'full' }), 2, () => 0.25)).toBe(100);
    expect(computeBackoffDelay(backoff({ jitter: 'equal' }), 2, () => 0)).toBe(200);
    expect(computeBackoffDelay(backoff({ jitter: 'equal' }), 2, () => 0.5)).toBe(300);
  });

  it('always lies within backoffDelayBounds', () => {
    fc.assert(
      fc.property(
        fc.record({
          initialMs: fc.integer({ min: 0, max: 10_000 }),
          multiplier: fc.double({ min: 1, max: 5, noNaN: true }),
          extra: fc.integer({ min: 0, max: 100_000 }),
          jitter: fc.constantFrom('none' as const, 'full' as const, 'equal' as const),
        }),
        fc.integer({ min: 0, max: 40 }),
        fc.double({ min: 0, max: 1, maxExcluded: true, noNaN: true }),
        ({ initialMs, multiplier, extra, jitter }, n, u) => {
          const b = { initialMs, multiplier, maxMs: initialMs + extra, jitter };
          const d = computeBackoffDelay(b, n, () => u);
          const { min, max } = backoffDelayBounds(b, n);
          expect(d).toBeGreaterThanOrEqual(min);
          expect(d).toBeLessThanOrEqual(max);
          expect(Number.isInteger(d)).toBe(true);
        },
      ),
      { numRuns: 500 },
    );
  });
});

describe('retry tiers', () => {
  const policy = (o: object): RetryPolicy => resolveRetryPolicy(o) as RetryPolicy;

  it('derives one tier per distinct delay and reuses the last (Spring Kafka 3.2+)', () => {
    const p = policy({ mode: 'topics', maxAttempts: 8, backoff: { initialMs: 1000, multiplier: 3, maxMs: 10_000 } });
    expect(p.tierDelaysMs).toEqual([1000, 3000, 9000, 10_000]);
    expect([0, 1, 2, 3, 4, 5, 6].map((i) => tierIndexForRetry(p, i))).toEqual([0, 1, 2, 3, 3, 3, 3]);
  });

  it('uses explicit tiers as given, the last one reused', () => {
    const p = policy({ mode: 'topics', maxAttempts: 5, tiers: ['1s', '10s', '1m'] });
    expect(p.tierDelaysMs).toEqual([1000, 10_000, 60_000]);
    expect(p.explicitTiers).toBe(true);
    expect([0, 1, 2, 3].map((i) => tierIndexForRetry(p, i))).toEqual([0, 1, 2, 2]);
  });

  it('has no tiers in blocking mode', () => {
    expect(policy({}).tierDelaysMs).toEqual([]);
  });
});
