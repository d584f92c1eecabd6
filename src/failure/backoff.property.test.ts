import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { arbitraries, propertyRuns } from '../testing/index.js';
import { backoffDelayBounds, computeBackoffDelay } from './backoff.js';
import { baseDelayMs, resolveRetryPolicy, type Backoff } from './retry-policy.js';

const RUNS = propertyRuns();

/** Valid backoffs, as the retry-policy arbitrary generates them. */
const backoff: fc.Arbitrary<Backoff> = arbitraries.retryOptions().map((o) => {
  const policy = resolveRetryPolicy(o);
  if (Array.isArray(policy)) throw new Error(policy.join('; '));
  return policy.backoff;
});
const unit = fc.double({ min: 0, max: 1, maxExcluded: true, noNaN: true });

describe('backoff properties', () => {
  it('every delay is a whole number of ms within backoffDelayBounds, for any random draw', () => {
    fc.assert(
      fc.property(backoff, fc.integer({ min: 0, max: 40 }), unit, (b, retryIndex, u) => {
        const delay = computeBackoffDelay(b, retryIndex, () => u);
        const { min, max } = backoffDelayBounds(b, retryIndex);
        expect(Number.isInteger(delay)).toBe(true);
        expect(delay).toBeGreaterThanOrEqual(min);
        expect(delay).toBeLessThanOrEqual(max);
        expect(max).toBeLessThanOrEqual(b.maxMs);
      }),
      { numRuns: RUNS },
    );
  });

  it('the un-jittered delay never shrinks from one retry to the next and never passes maxMs', () => {
    fc.assert(
      fc.property(backoff, fc.integer({ min: 0, max: 40 }), (b, retryIndex) => {
        const d = baseDelayMs(b, retryIndex);
        expect(baseDelayMs(b, retryIndex + 1)).toBeGreaterThanOrEqual(d);
        expect(d).toBeLessThanOrEqual(b.maxMs);
        if (b.jitter === 'none') expect(computeBackoffDelay(b, retryIndex, () => 0.99)).toBe(Math.floor(d));
      }),
      { numRuns: RUNS },
    );
  });

  it("'decorrelated' stays in [initialMs, min(maxMs, 3 · previous)] at every step of a chain, and within the loose bounds", () => {
    fc.assert(
      fc.property(backoff, fc.array(unit, { minLength: 1, maxLength: 12 }), (b, draws) => {
        const d: Backoff = { ...b, jitter: 'decorrelated' };
        let previous: number | undefined;
        draws.forEach((u, retryIndex) => {
          const delay = computeBackoffDelay(d, retryIndex, () => u, previous);
          const step = backoffDelayBounds(d, retryIndex, previous ?? d.initialMs);
          const loose = backoffDelayBounds(d, retryIndex);
          expect(Number.isInteger(delay)).toBe(true);
          expect(delay).toBeGreaterThanOrEqual(step.min);
          expect(delay).toBeLessThanOrEqual(step.max);
          expect(delay).toBeGreaterThanOrEqual(loose.min);
          expect(delay).toBeLessThanOrEqual(loose.max);
          previous = delay;
        });
      }),
      { numRuns: RUNS },
    );
  });

  it("'additive' is the un-jittered delay plus at most initialMs, never past maxMs", () => {
    fc.assert(
      fc.property(backoff, fc.integer({ min: 0, max: 40 }), unit, (b, retryIndex, u) => {
        const a: Backoff = { ...b, jitter: 'additive' };
        const delay = computeBackoffDelay(a, retryIndex, () => u);
        const d = baseDelayMs(a, retryIndex);
        expect(delay).toBeGreaterThanOrEqual(Math.floor(d));
        expect(delay).toBeLessThanOrEqual(Math.min(a.maxMs, d + a.initialMs));
      }),
      { numRuns: RUNS },
    );
  });
});
