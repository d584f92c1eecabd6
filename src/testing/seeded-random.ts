import type { Random } from '../failure/backoff.js';

/**
 * A deterministic uniform [0, 1) source (mulberry32): the same seed gives the same sequence.
 * Inject it wherever weir or a test dependency takes a `random` (backoff jitter, a flaky
 * service), so a failing property replays exactly.
 *
 * @param seed any integer (fast-check's `fc.integer()` is a good source)
 * @example
 * const random = seededRandom(42);
 * random(); // 0.6011037519201636, every time
 */
export function seededRandom(seed: number): Random {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4_294_967_296;
  };
}
