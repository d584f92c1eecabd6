/**
 * The lifecycle of a PartitionTask, as an explicit state table.
 *
 * | state        | meaning                                                        |
 * |--------------|----------------------------------------------------------------|
 * | `running`    | takes records, processes, flushes and commits                  |
 * | `suspended`  | a rebalance is under way: no new records until resumed          |
 * | `closed`     | stopped (shutdown or revoked); never runs again                 |
 * | `fenced`     | exactly_once: a newer producer owns the transactional id       |
 */
export type TaskState = 'running' | 'suspended' | 'closed' | 'fenced';

/** Allowed transitions: from → to. */
export const TASK_TRANSITIONS: Readonly<Record<TaskState, readonly TaskState[]>> = Object.freeze({
  running: ['suspended', 'closed', 'fenced'],
  suspended: ['running', 'closed', 'fenced'],
  closed: [],
  fenced: ['closed'],
});

/**
 * Checks a transition against {@link TASK_TRANSITIONS}.
 *
 * @throws Error when the transition is not allowed (a bug in the caller)
 */
export function assertTransition(task: string, from: TaskState, to: TaskState): void {
  if (!TASK_TRANSITIONS[from].includes(to)) throw new Error(`task ${task}: illegal state transition ${from} → ${to}`);
}
