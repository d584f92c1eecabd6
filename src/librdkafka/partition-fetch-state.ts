import { IllegalStateError } from '../errors.js';

/**
 * Where the fetching of one assigned partition stands (a {@link PartitionFetch}), as an
 * explicit state table.
 *
 * | state             | meaning                                                                   |
 * |-------------------|---------------------------------------------------------------------------|
 * | `fetching`        | its records are handed over to its task as librdkafka fetches them        |
 * | `held`            | its task asked for no more records (a full buffer, a long wait): they are stashed, not handed over; librdkafka still fetches |
 * | `paused`          | held, and the stash reached its limit: librdkafka's own pause is applied, it fetches nothing for the partition |
 * | `revoking`        | being revoked: its records are no longer handed over, seeks are ignored   |
 * | `revoking-paused` | being revoked while librdkafka's pause is applied: the task's release still lifts it |
 *
 * A partition's fetch ends when it is unassigned (after `revoking`, or when the consumer closes);
 * a partition assigned again starts afresh in `fetching`.
 */
export type PartitionFetchState = 'fetching' | 'held' | 'paused' | 'revoking' | 'revoking-paused';

/**
 * Allowed transitions: from → to. `paused → fetching` and `revoking-paused → revoking` lift
 * librdkafka's pause on the task's release.
 */
export const PARTITION_FETCH_TRANSITIONS: Readonly<Record<PartitionFetchState, readonly PartitionFetchState[]>> = Object.freeze({
  fetching: ['held', 'revoking'],
  held: ['fetching', 'paused', 'revoking'],
  paused: ['fetching', 'revoking-paused'],
  revoking: [],
  'revoking-paused': ['revoking'],
});

/**
 * Checks a transition against {@link PARTITION_FETCH_TRANSITIONS}.
 *
 * @param partition the partition's name, `<topic>-<partition>`
 * @throws IllegalStateError when the transition is not allowed (a bug in the caller)
 */
export function assertPartitionFetchTransition(partition: string, from: PartitionFetchState, to: PartitionFetchState): void {
  if (!PARTITION_FETCH_TRANSITIONS[from].includes(to))
    throw new IllegalStateError(`partition ${partition}: illegal fetch state transition ${from} → ${to}`);
}
