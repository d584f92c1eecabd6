import { IllegalStateError } from '../errors.js';

/**
 * The lifecycle of a {@link Worker}, as an explicit state table.
 *
 * | state                 | meaning                                                             |
 * |-----------------------|---------------------------------------------------------------------|
 * | `starting`            | checking topics, connecting, joining the group                      |
 * | `running`             | a member of the group with an assignment; its tasks run             |
 * | `rebalancing`         | the group is rebalancing: tasks are suspended until the new assignment |
 * | `restarting-consumer` | the consumer crashed: its tasks are closed and a new consumer joins |
 * | `stopping`            | shutdown: tasks finish the record in hand, flush and commit         |
 * | `stopped`             | left the group and disconnected                                     |
 */
export type WorkerState = 'starting' | 'running' | 'rebalancing' | 'restarting-consumer' | 'stopping' | 'stopped';

/** Allowed transitions: from → to. */
export const WORKER_TRANSITIONS: Readonly<Record<WorkerState, readonly WorkerState[]>> = Object.freeze({
  starting: ['running', 'rebalancing', 'restarting-consumer', 'stopping'],
  running: ['rebalancing', 'restarting-consumer', 'stopping'],
  rebalancing: ['running', 'restarting-consumer', 'stopping'],
  'restarting-consumer': ['running', 'rebalancing', 'stopping'],
  stopping: ['stopped'],
  stopped: [],
});

/**
 * Checks a transition against {@link WORKER_TRANSITIONS}.
 *
 * @throws IllegalStateError when the transition is not allowed (a bug in the caller)
 */
export function assertWorkerTransition(from: WorkerState, to: WorkerState): void {
  if (!WORKER_TRANSITIONS[from].includes(to)) throw new IllegalStateError(`worker: illegal state transition ${from} → ${to}`);
}
