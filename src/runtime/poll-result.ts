/** Why a task waits. */
export type WaitReason = 'backoff' | 'due' | 'commit' | 'port-retry' | 'dedup-busy' | 'circuit-open' | 'retry-budget';

/**
 * What `poll()` asks its driver to do next:
 * - `yield`: there is more to do now; call `poll()` again after yielding to the event loop;
 * - `idle`: nothing buffered and nothing to commit; call again when records arrive;
 * - `wait`: call again at `untilMs` (for `'commit'`, or earlier when records arrive);
 * - `closed`: the task is finished (shut down, revoked or fenced).
 */
export type PollResult =
  | { readonly kind: 'yield' }
  | { readonly kind: 'idle' }
  | { readonly kind: 'wait'; readonly untilMs: number; readonly reason: WaitReason }
  | { readonly kind: 'closed'; readonly state: 'closed' | 'fenced' };
