import { optionProblems } from '../dsl/option-problems.js';
import { circuitBreakerSchema } from '../dsl/options-schema.js';
import type { CircuitBreakerOptions } from '../dsl/process-options.js';

/** A validated circuit-breaker policy (see `CircuitBreakerOptions`). Times in ms. */
export interface CircuitBreakerPolicy {
  /** Failure rate in (0, 1] at which the breaker opens. */
  readonly failureRateThreshold: number;
  /** Calls in the window before the rate is judged, ≥ 1. */
  readonly minimumCalls: number;
  /** Sliding window length, ms. */
  readonly windowMs: number;
  /** First wait in the open state, ms. */
  readonly openMs: number;
  /** Longest wait in the open state, ms (≥ `openMs`). */
  readonly maxOpenMs: number;
  /** Probe calls in the half-open state, ≥ 1. */
  readonly halfOpenCalls: number;
}

/** Defaults, as documented on `CircuitBreakerOptions`. */
export const CIRCUIT_BREAKER_DEFAULTS: CircuitBreakerPolicy = Object.freeze({
  failureRateThreshold: 0.5,
  minimumCalls: 5,
  windowMs: 10_000,
  openMs: 5_000,
  maxOpenMs: 60_000,
  halfOpenCalls: 1,
});

/**
 * Validates circuit-breaker options (zod, `circuitBreakerSchema`) and fills in defaults.
 *
 * @returns the policy, or the problems, each naming the field (e.g.
 *   `circuitBreaker.openMs (90000) is more than circuitBreaker.maxOpenMs (60000)`)
 */
export function resolveCircuitBreakerPolicy(options: CircuitBreakerOptions): CircuitBreakerPolicy | string[] {
  const parsed = circuitBreakerSchema.safeParse(options);
  if (!parsed.success)
    return optionProblems(circuitBreakerSchema, options, parsed.error, { prefix: 'circuitBreaker', root: 'circuitBreaker' });
  const o = parsed.data;
  const openMs = o.openMs ?? CIRCUIT_BREAKER_DEFAULTS.openMs;
  const maxOpenMs = o.maxOpenMs ?? Math.max(CIRCUIT_BREAKER_DEFAULTS.maxOpenMs, openMs);
  if (openMs > maxOpenMs) return [`circuitBreaker.openMs (${openMs}) is more than circuitBreaker.maxOpenMs (${maxOpenMs})`];
  return Object.freeze({
    failureRateThreshold: o.failureRateThreshold ?? CIRCUIT_BREAKER_DEFAULTS.failureRateThreshold,
    minimumCalls: o.minimumCalls ?? CIRCUIT_BREAKER_DEFAULTS.minimumCalls,
    windowMs: o.windowMs ?? CIRCUIT_BREAKER_DEFAULTS.windowMs,
    openMs,
    maxOpenMs,
    halfOpenCalls: o.halfOpenCalls ?? CIRCUIT_BREAKER_DEFAULTS.halfOpenCalls,
  });
}
