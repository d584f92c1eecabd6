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

  it("applies additive jitter d + U[0, initialMs] (the seed's t0 · 2^n + δ), capped by maxMs", () => {
    expect(computeBackoffDelay(backoff({ jitter: 'additive' }), 2, () => 0)).toBe(400);
    expect(computeBackoffDelay(backoff({ jitter: 'additive' }), 2, () => 0.5)).toBe(450);
    expect(computeBackoffDelay(backoff({ jitter: 'additive' }), 5, () => 0.99)).toBe(1000);
    expect(backoffDelayBounds(backoff({ jitter: 'additive' }), 2)).toEqual({ min: 400, max: 500 });
  });

  it('applies decorrelated jitter U[initialMs, 3 · previous] (AWS), capped by maxMs', () => {
    const b = backoff({ jitter: 'decorrelated' });
    expect(computeBackoffDelay(b, 0, () => 0)).toBe(100);
    expect(computeBackoffDelay(b, 0, () => 0.5)).toBe(200); // previous = initialMs: U[100, 300]
    expect(computeBackoffDelay(b, 3, () => 0.5, 250)).toBe(425); // U[100, 750]
    expect(computeBackoffDelay(b, 9, () => 0.99, 900)).toBeLessThanOrEqual(1000);
    expect(backoffDelayBounds(b, 1)).toEqual({ min: 100, max: 900 });
    expect(backoffDelayBounds(b, 1, 250)).toEqual({ min: 100, max: 750 });
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
