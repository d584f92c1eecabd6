import type { Jitter } from '../dsl/process-options.js';
import { baseDelayMs, type Backoff } from './retry-policy.js';

/** A source of uniform random numbers in [0, 1), injected so tests are deterministic. */
export type Random = () => number;

/**
 * The delay before retry `retryIndex` (0 = the first retry), in whole ms:
 * `d = min(maxMs, initialMs · multiplier^retryIndex)`, then jitter —
 * `'none'` → d, `'full'` → random·d, `'equal'` → d/2 + random·d/2.
 * Pure: the same inputs give the same delay.
 *
 * @example computeBackoffDelay({ initialMs: 100, multiplier: 2, maxMs: 1000, jitter: 'none' }, 3, Math.random) // 800
 */
export function computeBackoffDelay(backoff: Backoff, retryIndex: number, random: Random): number {
  const d = baseDelayMs(backoff, retryIndex);
  return Math.floor(applyJitter(d, backoff.jitter, random()));
}

function applyJitter(d: number, jitter: Jitter, u: number): number {
  switch (jitter) {
    case 'none':
      return d;
    case 'full':
      return u * d;
    case 'equal':
      return d / 2 + (u * d) / 2;
  }
}

/**
 * The closed range [min, max] in ms that {@link computeBackoffDelay} can return for retry
 * `retryIndex`: what a property test checks observed delays against.
 */
export function backoffDelayBounds(backoff: Backoff, retryIndex: number): { readonly min: number; readonly max: number } {
  const d = baseDelayMs(backoff, retryIndex);
  const min = backoff.jitter === 'none' ? d : backoff.jitter === 'equal' ? d / 2 : 0;
  return { min: Math.floor(min), max: Math.floor(d) };
}
