import type { TopicPartition } from './record-types.js';

/**
 * The names weir gives a task and its transactional producer. A task is one input partition
 * (a source or a retry tier), as in Kafka Streams.
 */

/**
 * A task's id: `<topic>-<partition>`. It names the task in logs, metrics and events, and
 * owns its dedup claims, so it stays the same across restarts of the partition's task.
 */
export function taskId(tp: TopicPartition): string {
  return `${tp.topic}-${tp.partition}`;
}

/**
 * The `transactional.id` of a task's producer under exactly_once with one producer per task
 * (Kafka Streams' first exactly-once design, KIP-129): `<application.id>-<topic>-<partition>`,
 * so a new owner of the partition fences a zombie of it.
 */
export function transactionalId(applicationId: string, tp: TopicPartition): string {
  return `${applicationId}-${taskId(tp)}`;
}

/**
 * The `transactional.id` of a member's one producer under exactly_once_v2 (KIP-447, one
 * producer per worker or stream thread): `<application.id>-<member>`, where `member` is the
 * member's `group.instance.id` when it has one — so a restarted static member fences its
 * predecessor's producer and aborts its open transaction at once — else a name unique to the
 * process and thread (`<host>-<pid>[-thread-<n>]`).
 */
export function memberTransactionalId(applicationId: string, member: string): string {
  return `${applicationId}-${member}`;
}
