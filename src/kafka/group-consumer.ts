import type { InputRecord, TopicPartition } from '../record/record-types.js';
import type { OffsetCommitter } from '../runtime/ports.js';

/** What the worker hears from its consumer group. Handlers must not throw. */
export interface GroupConsumerHandlers {
  /**
   * A fetched batch, in offset order. Return true when accepted: the consumer then fetches
   * after it. Return false to refuse it (no task ready): it is fetched again later.
   *
   * @param nextOffset the offset after the batch (past trailing transaction markers)
   */
  onBatch(topic: string, partition: number, records: InputRecord[], nextOffset: number): boolean;
  /** The group is rebalancing under the eager protocol: every partition may be revoked. */
  onRebalancing(): void;
  /**
   * The whole new assignment after a (re)join (eager protocol).
   *
   * @param memberId the member id the group coordinator gave this consumer
   */
  onAssignment(assignment: readonly TopicPartition[], memberId: string): void;
  /** The consumer gave up (it stopped); the worker builds a new one. */
  onCrash(error: unknown): void;
  /**
   * A fetched batch held no records for weir — only transaction markers or aborted records —
   * and the consumer moved past it: the partition's position is now `nextOffset`.
   */
  onSkipped(topic: string, partition: number, nextOffset: number): void;
}

/** Consumer-group settings. Times in ms. */
export interface GroupConsumerOptions {
  readonly groupId: string;
  readonly topics: readonly string[];
  /** `session.timeout.ms`; the broker allows 6 000 to 300 000 by default. */
  readonly sessionTimeoutMs: number;
  readonly heartbeatIntervalMs: number;
  /** `isolation.level=read_committed`, else read_uncommitted. The worker reads read_committed under both guarantees. */
  readonly readCommitted: boolean;
  /** `max.partition.fetch.bytes`, bytes. */
  readonly maxBytesPerPartition?: number;
}

/**
 * A consumer-group member that only fetches: each partition's task runs its own loop, so a
 * long backoff never blocks heartbeats. Records are fetched past when a task accepts them and
 * committed only by the task. A consumer that crashes is not restarted by its client: the
 * worker decides what to do (`onCrash`).
 */
export interface GroupConsumer extends OffsetCommitter {
  /** Joins the group and starts fetching. @throws the client's error when the broker cannot be reached */
  start(): Promise<void>;
  /** Stops fetching a partition. */
  pause(tp: TopicPartition): void;
  resume(tp: TopicPartition): void;
  /** The next fetch of the partition starts at `offset`. */
  seek(tp: TopicPartition, offset: number): void;
  /** Stops fetching, leaves the group and disconnects. */
  stop(): Promise<void>;
}
