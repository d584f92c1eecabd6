import { describe, expect, it } from 'vitest';
import { CIRCUIT_BREAKER_DEFAULTS, type CircuitBreakerPolicy } from './circuit-breaker-policy.js';
import { openWaitsMs, outageRideOut } from './outage-ride-out.js';
import { resolveRetryPolicy } from './retry-policy.js';
import { retryArithmetic } from './retry-arithmetic.js';

const breaker = (over: Partial<CircuitBreakerPolicy>): CircuitBreakerPolicy => ({ ...CIRCUIT_BREAKER_DEFAULTS, ...over });

function delaysOf(maxAttempts: number, initialMs = 100): ReturnType<typeof retryArithmetic>['retryDelaysMs'] {
  const policy = resolveRetryPolicy({ maxAttempts, backoff: { initialMs, multiplier: 2, maxMs: 1_000, jitter: 'equal' } });
  if (Array.isArray(policy)) throw new Error(policy.join('; '));
  return retryArithmetic(policy, null).retryDelaysMs;
}

describe('openWaitsMs', () => {
  it('doubles from openMs and stays at maxOpenMs', () => {
    const b = { openMs: 1_000, maxOpenMs: 4_000 };
    expect([0, 1, 2, 3, 4, 7].map((n) => openWaitsMs(b, n))).toEqual([0, 1_000, 3_000, 7_000, 11_000, 23_000]);
  });

  it('a billion waits in closed form', () => {
    expect(openWaitsMs({ openMs: 5_000, maxOpenMs: 60_000 }, 1e9)).toBe(5_000 + 10_000 + 20_000 + 40_000 + (1e9 - 4) * 60_000);
  });
});

describe('outageRideOut', () => {
  it("the docs' old example (openMs 1 s, maxOpenMs 4 s) rides out only 15 s: the 2-minute outage of issue 23 dead-lettered", () => {
    const ride = outageRideOut(5, delaysOf(5), breaker({ minimumCalls: 3, openMs: 1_000, maxOpenMs: 4_000 }));
    // Up to 4 attempts used before the opening; held at the opening and probes 1–4; probe 5 uses the last attempt.
    expect(ride.deadLetterProbe).toBe(5);
    expect(ride.minOutageToDeadLetterMs).toBe(1_000 + 2_000 + 3 * 4_000);
    expect(ride.caveat).toBeUndefined();
  });

  it("the docs' example now (openMs 5 s, maxOpenMs 60 s) rides out more than 2 minutes", () => {
    const ride = outageRideOut(5, delaysOf(5), breaker({ minimumCalls: 3, openMs: 5_000, maxOpenMs: 60_000 }));
    expect(ride.minOutageToDeadLetterMs).toBe(5_000 + 10_000 + 20_000 + 40_000 + 60_000);
    expect(ride.minOutageToDeadLetterMs).toBeGreaterThan(2 * 60_000);
  });

  it('the earliest dead letter is at failed probe maxAttempts, whatever minimumCalls (other records may open the breaker)', () => {
    expect(outageRideOut(3, delaysOf(3), breaker({ minimumCalls: 1 })).deadLetterProbe).toBe(3);
    expect(outageRideOut(3, delaysOf(3), breaker({ minimumCalls: 3 })).deadLetterProbe).toBe(3);
    expect(outageRideOut(1, delaysOf(1), breaker({ minimumCalls: 1 })).minOutageToDeadLetterMs).toBe(CIRCUIT_BREAKER_DEFAULTS.openMs);
  });

  it('warns when a record failing alone cannot open the breaker before its attempts run out', () => {
    // The defaults: minimumCalls 5 > maxAttempts 3.
    expect(outageRideOut(3, delaysOf(3), CIRCUIT_BREAKER_DEFAULTS).caveat).toBe(
      'minimumCalls (5) is more than maxAttempts (3): a record failing alone reaches the DLQ before the breaker opens',
    );
  });

  it("warns when a record's first minimumCalls failures cannot fall in one window", () => {
    // Retry delays of 1000 ms with equal jitter: at least 500 ms each, 1500 ms for 4 failures.
    const ride = outageRideOut(6, delaysOf(6, 1_000), breaker({ minimumCalls: 4, windowMs: 1_500 }));
    expect(ride.caveat).toBe(
      "a record's first 4 failures take at least 1500ms, not within windowMs (1500): a record failing alone does not open the breaker",
    );
    expect(outageRideOut(6, delaysOf(6, 1_000), breaker({ minimumCalls: 4, windowMs: 1_501 })).caveat).toBeUndefined();
  });
});
