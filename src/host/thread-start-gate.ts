import type { GroupDescription } from '../kafka/kafka-admin.js';
import type { TopicPartition } from '../record/record-types.js';
import { taskId } from '../record/task-id.js';

/** A stream thread's latest join of its consumer group, as the thread reported it. */
export interface ThreadJoin {
  /** The member id the coordinator gave the thread's consumer. */
  readonly memberId: string;
  /** The partitions that join assigned to it. */
  readonly assignment: readonly TopicPartition[];
}

/**
 * The start gate of a process's stream threads: whether they may start their tasks. Each
 * thread joins the group on its own, and kafkajs rebalances eagerly, so tasks that began at the
 * first thread's join would lose their partitions when the next thread joins and their new
 * owner would replay what they did since their last commit (under at_least_once, duplicates).
 * So the threads hold their tasks until the group has settled on all of them:
 *
 * - every thread has joined (`joins` has no hole);
 * - the group is `Stable` (no rebalance under way);
 * - each thread's member is in the group and holds exactly the assignment the thread last
 *   reported: every thread has seen the same, latest generation.
 *
 * Members of other processes may be in the group too; they are not looked at.
 *
 * @returns `true` when the gate may open; else why not (for the log)
 */
export function threadsSettled(joins: ReadonlyArray<ThreadJoin | undefined>, group: GroupDescription): true | string {
  const missing = joins.flatMap((join, i) => (join === undefined ? [i + 1] : []));
  if (missing.length > 0) return `threads ${missing.join(', ')} have not joined yet`;
  if (group.state !== 'Stable') return `the group is ${group.state}`;
  const members = new Map(group.members.map((m) => [m.memberId, m]));
  for (const [i, join] of joins.entries()) {
    const member = members.get(join!.memberId);
    if (member === undefined) return `thread ${i + 1}'s member ${join!.memberId} is not in the group`;
    if (!sameAssignment(member.assignment, join!.assignment)) return `thread ${i + 1} has not seen the latest assignment yet`;
  }
  return true;
}

function sameAssignment(a: readonly TopicPartition[], b: readonly TopicPartition[]): boolean {
  if (a.length !== b.length) return false;
  const ids = new Set(a.map(taskId));
  return b.every((tp) => ids.has(taskId(tp)));
}
