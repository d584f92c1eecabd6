import { IllegalStateError } from '../errors.js';

/**
 * The lifecycle of the {@link StreamThreads} as a whole (the start gate and the stop), as an
 * explicit state table; each thread's own place follows `SlotState`.
 *
 * | state      | meaning                                                                                   |
 * |------------|-------------------------------------------------------------------------------------------|
 * | `created`  | no thread started yet                                                                     |
 * | `gated`    | the threads start and join the group, holding their tasks until the group settled on all |
 * | `open`     | the start gate opened: threads run their tasks, and a replacement thread does at once     |
 * | `stopping` | the process stops (a graceful stop or a terminate): no thread starts or is replaced       |
 *
 * `stopping` is final: the process never starts its threads again.
 */
export type StreamThreadsState = 'created' | 'gated' | 'open' | 'stopping';

/** Allowed transitions: from → to. `created → stopping` is a stop that came while the metrics server started. */
export const STREAM_THREADS_TRANSITIONS: Readonly<Record<StreamThreadsState, readonly StreamThreadsState[]>> = Object.freeze({
  created: ['gated', 'stopping'],
  gated: ['open', 'stopping'],
  open: ['stopping'],
  stopping: [],
});

/**
 * Checks a transition against {@link STREAM_THREADS_TRANSITIONS}.
 *
 * @throws IllegalStateError when the transition is not allowed (a bug in the caller)
 */
export function assertStreamThreadsTransition(from: StreamThreadsState, to: StreamThreadsState): void {
  if (!STREAM_THREADS_TRANSITIONS[from].includes(to))
    throw new IllegalStateError(`stream threads: illegal state transition ${from} → ${to}`);
}
