import { IllegalStateError } from '../errors.js';

/**
 * The lifecycle of a PartitionTask, as an explicit state table.
 *
 * | state       | meaning                                                                  |
 * |-------------|--------------------------------------------------------------------------|
 * | `running`   | takes records, processes, flushes and commits                            |
 * | `suspended` | a rebalance is under way: flush and commit, then no new records until resumed |
 * | `stopping`  | finish the record in hand, then `'stop'` flushes and commits (shutdown), `'close'` drops what is not durable (revoked) |
 * | `closed`    | stopped (shutdown or revoked); never runs again                          |
 * | `fenced`    | exactly_once: a newer producer owns the transactional id                 |
 */
export type TaskState =
  | { readonly kind: 'running' }
  | { readonly kind: 'suspended' }
  | { readonly kind: 'stopping'; readonly mode: 'stop' | 'close' }
  | { readonly kind: 'closed' }
  | { readonly kind: 'fenced' };

/** The name of a {@link TaskState}. */
export type TaskStateKind = TaskState['kind'];

/** Allowed transitions: from → to. `stopping → stopping` turns a `'stop'` into a `'close'`. */
export const TASK_TRANSITIONS: Readonly<Record<TaskStateKind, readonly TaskStateKind[]>> = Object.freeze({
  running: ['suspended', 'stopping', 'fenced'],
  suspended: ['running', 'stopping', 'fenced'],
  stopping: ['stopping', 'closed', 'fenced'],
  closed: [],
  fenced: ['closed'],
});

/**
 * Checks a transition against {@link TASK_TRANSITIONS}.
 *
 * @throws IllegalStateError when the transition is not allowed (a bug in the caller)
 */
export function assertTransition(task: string, from: TaskStateKind, to: TaskStateKind): void {
  if (!TASK_TRANSITIONS[from].includes(to)) throw new IllegalStateError(`task ${task}: illegal state transition ${from} → ${to}`);
}
