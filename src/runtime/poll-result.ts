/** Why a task waits. */
export type WaitReason = 'backoff' | 'due' | 'commit' | 'parked' | 'port-retry' | 'dedup-busy' | 'circuit-open' | 'retry-budget';

/**
 * Whether records that arrive end a wait early: a wait for the commit interval, or for the next
 * parked record of an `order: 'key'` task (records of other keys flow on meanwhile).
 */
export function wakesOnRecords(reason: WaitReason): boolean {
  return reason === 'commit' || reason === 'parked';
}

/**
 * What `poll()` asks its driver to do next:
 * - `yield`: there is more to do now; call `poll()` again after yielding to the event loop;
 * - `idle`: nothing buffered and nothing to commit; call again when records arrive;
 * - `wait`: call again at `untilMs` (or earlier when records arrive, for the reasons of
 *   {@link wakesOnRecords});
 * - `closed`: the task is finished (shut down, revoked or fenced).
 */
export type PollResult =
  | { readonly kind: 'yield' }
  | { readonly kind: 'idle' }
  | { readonly kind: 'wait'; readonly untilMs: number; readonly reason: WaitReason }
  | { readonly kind: 'closed'; readonly state: 'closed' | 'fenced' };
