import type { Clock } from './ports.js';

/**
 * Calls `fn` once `delayMs` have passed on `clock`: its own timer when it has one
 * ({@link Clock.after}, e.g. the ManualClock's virtual time), else the system timer
 * (`setTimeout`). `unref`: a system timer alone does not keep the process alive.
 *
 * @returns a function that cancels the call (nothing once it ran)
 */
export function runAfter(
  clock: Pick<Clock, 'after'> | undefined,
  delayMs: number,
  fn: () => void,
  options?: { readonly unref?: boolean },
): () => void {
  if (clock?.after !== undefined) return clock.after(delayMs, fn);
  const timer = setTimeout(fn, delayMs);
  if (options?.unref === true) timer.unref();
  return () => clearTimeout(timer);
}
