import type { Jitter } from '../dsl/process-options.js';
import { baseDelayMs, type Backoff } from './retry-policy.js';

/** A source of uniform random numbers in [0, 1), injected so tests are deterministic. */
export type Random = () => number;

/**
 * The delay before retry `retryIndex` (0 = the first retry), in whole ms:
 * `d = min(maxMs, initialMs · multiplier^retryIndex)`, then jitter —
 * `'none'` → d, `'full'` → random·d, `'equal'` → d/2 + random·d/2,
 * `'additive'` → min(maxMs, d + random·initialMs) (the seed's `t0 · 2^n + U[0, t0]`),
 * `'decorrelated'` → min(maxMs, initialMs + random·(3·previous − initialMs)) (AWS' decorrelated
 * jitter, `U[initialMs, 3 · previous]`; `multiplier` is not used).
 * Pure: the same inputs give the same delay.
 *
 * @param previousMs `'decorrelated'` only: the record's previous delay, ms (default `initialMs`, before its first retry)
 * @example computeBackoffDelay({ initialMs: 100, multiplier: 2, maxMs: 1000, jitter: 'none' }, 3, Math.random) // 800
 */
export function computeBackoffDelay(backoff: Backoff, retryIndex: number, random: Random, previousMs?: number): number {
  if (backoff.jitter === 'decorrelated') {
    const low = Math.min(backoff.maxMs, backoff.initialMs);
    const high = Math.min(backoff.maxMs, 3 * Math.max(previousMs ?? backoff.initialMs, backoff.initialMs));
    return Math.floor(low + random() * (high - low));
  }
  const d = baseDelayMs(backoff, retryIndex);
  return Math.floor(applyJitter(d, backoff, random()));
}

function applyJitter(d: number, backoff: Backoff, u: number): number {
  const jitter: Exclude<Jitter, 'decorrelated'> = backoff.jitter as Exclude<Jitter, 'decorrelated'>;
  switch (jitter) {
    case 'none':
      return d;
    case 'full':
      return u * d;
    case 'equal':
      return d / 2 + (u * d) / 2;
    case 'additive':
      return Math.min(backoff.maxMs, d + u * backoff.initialMs);
  }
}

/**
 * The closed range [min, max] in ms that {@link computeBackoffDelay} can return for retry
 * `retryIndex`: what a property test checks observed delays against. For `'decorrelated'`
 * the range covers every previous delay the record can have had
 * (`[initialMs, min(maxMs, initialMs · 3^(retryIndex+1))]`); pass `previousMs` for the range
 * of one step (`[initialMs, min(maxMs, 3 · previousMs)]`).
 */
export function backoffDelayBounds(
  backoff: Backoff,
  retryIndex: number,
  previousMs?: number,
): { readonly min: number; readonly max: number } {
  const { initialMs, maxMs } = backoff;
  switch (backoff.jitter) {
    case 'decorrelated': {
      const high = previousMs !== undefined ? 3 * Math.max(previousMs, initialMs) : initialMs * 3 ** (retryIndex + 1);
      return { min: Math.floor(Math.min(maxMs, initialMs)), max: Math.floor(Math.min(maxMs, high)) };
    }
    case 'additive': {
      const d = baseDelayMs(backoff, retryIndex);
      return { min: Math.floor(d), max: Math.floor(Math.min(maxMs, d + initialMs)) };
    }
    default: {
      const d = baseDelayMs(backoff, retryIndex);
      const min = backoff.jitter === 'none' ? d : backoff.jitter === 'equal' ? d / 2 : 0;
      return { min: Math.floor(min), max: Math.floor(d) };
    }
  }
}
