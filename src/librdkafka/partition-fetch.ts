import type { InputRecord, TopicPartition } from '../record/record-types.js';
import { taskId } from '../record/task-id.js';
import { assertPartitionFetchTransition, type PartitionFetchState } from './partition-fetch-state.js';

/**
 * Where the fetching of one assigned partition stands (see {@link PartitionFetches}): its
 * position, a requested seek, what it stashed while held, and its state (the table of
 * {@link PartitionFetchState}; every change goes through `transition()`).
 */
export class PartitionFetch implements TopicPartition {
  /** The offset after the last record handed over (or of the last seek); undefined before either. */
  next: number | undefined = undefined;
  /** A seek requested and not yet applied: records fetched meanwhile are stale. */
  seekTo: number | undefined = undefined;
  /**
   * Records fetched while held, in offset order, and the offset after them (past trailing
   * transaction markers, when an EOF event came meanwhile): handed over on release, so that a
   * short hold costs no fetch round trip. librdkafka's pause drops what it prefetched, but its
   * position stays after these records.
   */
  stash: InputRecord[] = [];
  stashNext: number | undefined = undefined;
  private fetchState: PartitionFetchState = 'fetching';

  constructor(
    readonly topic: string,
    readonly partition: number,
  ) {}

  /** Where the fetch stands (the table of {@link PartitionFetchState}). */
  get state(): PartitionFetchState {
    return this.fetchState;
  }

  /**
   * The one place the fetch's state changes, checked against the table of {@link PartitionFetchState}.
   *
   * @throws IllegalStateError when the transition is not allowed (a bug in the caller)
   */
  transition(to: PartitionFetchState): void {
    assertPartitionFetchTransition(taskId(this), this.fetchState, to);
    this.fetchState = to;
  }

  /** Whether its task takes no records now (`held` or `paused`): what librdkafka fetches is stashed. */
  isHeld(): boolean {
    return this.fetchState === 'held' || this.fetchState === 'paused';
  }

  /** Whether it is being revoked (`revoking` or `revoking-paused`): its records are dropped. */
  isRevoking(): boolean {
    return this.fetchState === 'revoking' || this.fetchState === 'revoking-paused';
  }
}
