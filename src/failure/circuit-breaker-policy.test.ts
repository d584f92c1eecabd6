import { describe, expect, it } from 'vitest';
import type { CircuitBreakerOptions } from '../dsl/process-options.js';
import { CIRCUIT_BREAKER_DEFAULTS, resolveCircuitBreakerPolicy, type CircuitBreakerPolicy } from './circuit-breaker-policy.js';

function policy(options: CircuitBreakerOptions): CircuitBreakerPolicy {
  const resolved = resolveCircuitBreakerPolicy(options);
  if (Array.isArray(resolved)) throw new Error(resolved.join('; '));
  return resolved;
}

const problems = (options: unknown): string[] => {
  const resolved = resolveCircuitBreakerPolicy(options as CircuitBreakerOptions);
  return Array.isArray(resolved) ? resolved : [];
};

describe('resolveCircuitBreakerPolicy: defaults', () => {
  it('resolves {} to the documented defaults (0.5, 5, 10 000 ms, 5 000 ms, 60 000 ms, 1), frozen', () => {
    const documented = { failureRateThreshold: 0.5, minimumCalls: 5, windowMs: 10_000, openMs: 5_000, maxOpenMs: 60_000, halfOpenCalls: 1 };
    expect(policy({})).toEqual(documented);
    expect(CIRCUIT_BREAKER_DEFAULTS).toEqual(documented);
    expect(Object.isFrozen(policy({}))).toBe(true);
    expect(Object.isFrozen(CIRCUIT_BREAKER_DEFAULTS)).toBe(true);
  });

  it('keeps what is given and fills in the rest', () => {
    expect(policy({ minimumCalls: 3, halfOpenCalls: 2 })).toEqual({ ...CIRCUIT_BREAKER_DEFAULTS, minimumCalls: 3, halfOpenCalls: 2 });
  });

  it('raises a maxOpenMs not given to openMs, and rejects a given one below openMs', () => {
    expect(policy({ openMs: 90_000 })).toMatchObject({ openMs: 90_000, maxOpenMs: 90_000 });
    expect(policy({ openMs: 1_000, maxOpenMs: 4_000 })).toMatchObject({ openMs: 1_000, maxOpenMs: 4_000 });
    expect(problems({ openMs: 90_000, maxOpenMs: 60_000 })).toEqual([
      'circuitBreaker.openMs (90000) is more than circuitBreaker.maxOpenMs (60000)',
    ]);
    expect(problems({ maxOpenMs: 1_000 })).toEqual(['circuitBreaker.openMs (5000) is more than circuitBreaker.maxOpenMs (1000)']);
  });
});

describe('resolveCircuitBreakerPolicy: bad values name the field', () => {
  it.each([
    [{ failureRateThreshold: 0 }, 'circuitBreaker.failureRateThreshold must be a number in (0, 1] (got 0)'],
    [{ minimumCalls: 0.5 }, 'circuitBreaker.minimumCalls must be an integer ≥ 1 (got 0.5)'],
    [{ windowMs: -1 }, 'circuitBreaker.windowMs must be a number of ms > 0, at most 2147483647 (about 24.8 days) (got -1)'],
    [{ openMs: '5s' }, 'circuitBreaker.openMs must be a number of ms > 0, at most 2147483647 (about 24.8 days) (got "5s")'],
    [{ halfOpenCalls: null }, 'circuitBreaker.halfOpenCalls must be an integer ≥ 1 (got null)'],
    [5, 'circuitBreaker must be an object (got 5)'],
    [
      { openMS: 5 },
      "unknown option 'openMS' in circuitBreaker (known: failureRateThreshold, minimumCalls, windowMs, openMs, maxOpenMs, halfOpenCalls)",
    ],
  ])('%j', (options, problem) => {
    expect(problems(options)).toEqual([problem]);
  });
});
