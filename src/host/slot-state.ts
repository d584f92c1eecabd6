import { IllegalStateError } from '../errors.js';

/**
 * The lifecycle of one stream-thread slot of {@link StreamThreads}, as an explicit state table.
 *
 * | state       | meaning                                                                         |
 * |-------------|---------------------------------------------------------------------------------|
 * | `created`   | no thread yet (before the process's start)                                      |
 * | `starting`  | its thread loads the topology and joins the group; `first`: the slot's first thread, which the process's start waits for (else a replacement) |
 * | `running`   | its thread started                                                              |
 * | `replacing` | its thread ended after its start: a new one starts after a backoff              |
 * | `given-up`  | its worker gave up for good, or its first thread could not start: its thread ends and is not replaced |
 * | `stopping`  | the process stops: its thread commits, leaves the group and ends                |
 * | `stopped`   | no thread, and none to come                                                     |
 */
export type SlotState =
  | { readonly kind: 'created' }
  | { readonly kind: 'starting'; readonly first: boolean }
  | { readonly kind: 'running' }
  | { readonly kind: 'replacing' }
  | { readonly kind: 'given-up' }
  | { readonly kind: 'stopping' }
  | { readonly kind: 'stopped' };

/** The name of a {@link SlotState}. */
export type SlotStateKind = SlotState['kind'];

/**
 * Allowed transitions: from → to. `starting → stopped` is a first thread that ended during its
 * start; `starting → replacing` a replacement that did.
 */
export const SLOT_TRANSITIONS: Readonly<Record<SlotStateKind, readonly SlotStateKind[]>> = Object.freeze({
  created: ['starting', 'stopped'],
  starting: ['running', 'replacing', 'given-up', 'stopping', 'stopped'],
  running: ['replacing', 'given-up', 'stopping'],
  replacing: ['starting', 'stopped'],
  'given-up': ['stopping', 'stopped'],
  stopping: ['stopped'],
  stopped: [],
});

/**
 * Checks a transition against {@link SLOT_TRANSITIONS}.
 *
 * @throws IllegalStateError when the transition is not allowed (a bug in the caller)
 */
export function assertSlotTransition(thread: number, from: SlotStateKind, to: SlotStateKind): void {
  if (!SLOT_TRANSITIONS[from].includes(to))
    throw new IllegalStateError(`stream thread ${thread}: illegal slot state transition ${from} → ${to}`);
}
