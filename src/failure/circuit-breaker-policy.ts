import type { z } from 'zod';
import { optionProblems } from '../dsl/option-problems.js';
import { circuitBreakerSchema } from '../dsl/options-schema.js';
import type { CircuitBreakerOptions } from '../dsl/process-options.js';

/**
 * A validated circuit-breaker policy: `circuitBreakerSchema`'s output, every default filled in
 * (the fields and their TSDoc are the schema's). Times in ms; `openMs` ≤ `maxOpenMs`.
 */
export type CircuitBreakerPolicy = z.output<typeof circuitBreakerSchema>;

/** The defaults: each field's `.default(…)` in `circuitBreakerSchema`, as the README's options table lists them. */
export const CIRCUIT_BREAKER_DEFAULTS: CircuitBreakerPolicy = circuitBreakerSchema.parse({});

/**
 * Validates circuit-breaker options (zod, `circuitBreakerSchema`) and fills in defaults. A
 * `maxOpenMs` not given is its default raised to `openMs`; one given must be ≥ `openMs`.
 *
 * @returns the policy (frozen), or the problems, each naming the field (e.g.
 *   `circuitBreaker.openMs (90000) is more than circuitBreaker.maxOpenMs (60000)`)
 */
export function resolveCircuitBreakerPolicy(options: CircuitBreakerOptions): CircuitBreakerPolicy | string[] {
  const parsed = circuitBreakerSchema.safeParse(options);
  if (!parsed.success)
    return optionProblems(circuitBreakerSchema, options, parsed.error, { prefix: 'circuitBreaker', root: 'circuitBreaker' });
  const o = parsed.data;
  const maxOpenMs = options.maxOpenMs === undefined ? Math.max(o.maxOpenMs, o.openMs) : o.maxOpenMs;
  if (o.openMs > maxOpenMs) return [`circuitBreaker.openMs (${o.openMs}) is more than circuitBreaker.maxOpenMs (${maxOpenMs})`];
  return Object.freeze({ ...o, maxOpenMs });
}
