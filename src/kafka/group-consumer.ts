import type { InputRecord, TopicPartition } from '../record/record-types.js';
import type { OffsetCommitter } from '../runtime/ports.js';

/**
 * How a group's partitions move (the consumer's `partition.assignment.strategy`):
 * - `eager` (kafkajs): at every rebalance each member gives up all its partitions, and the
 *   new assignment may hand them back;
 * - `cooperative` (librdkafka's cooperative-sticky assignor, KIP-429): only the partitions that
 *   move are revoked, and members keep working on the rest.
 */
export type RebalanceProtocol = 'eager' | 'cooperative';

/** Partitions taken from the member (see {@link GroupConsumerHandlers.onRevoked}). */
export interface RevocationEvent {
  readonly partitions: readonly TopicPartition[];
  readonly protocol: RebalanceProtocol;
  /**
   * The member lost them without a rebalance — its session timed out, or it was fenced — so
   * another member may own them already: close their tasks without committing.
   */
  readonly lost: boolean;
}

/** The member's assignment after a rebalance (see {@link GroupConsumerHandlers.onAssigned}). */
export interface AssignmentEvent {
  /** The whole assignment now. */
  readonly assignment: readonly TopicPartition[];
  /** What is new to this member since its previous assignment (eager: the whole assignment). */
  readonly added: readonly TopicPartition[];
  readonly protocol: RebalanceProtocol;
  /** The member id the group coordinator gave this consumer. */
  readonly memberId: string;
}

/** What the worker hears from its consumer group. Handlers must not throw. */
export interface GroupConsumerHandlers {
  /**
   * A fetched batch, in offset order. Return true when accepted: the consumer then fetches
   * after it. Return false to refuse it (no task ready): it is fetched again later.
   *
   * @param nextOffset the offset after the batch (past trailing transaction markers)
   */
  onBatch(topic: string, partition: number, records: InputRecord[], nextOffset: number): boolean;
  /**
   * Partitions are being taken from this member (Kafka's `onPartitionsRevoked` /
   * `onPartitionsLost`).
   * - cooperative: only the partitions that move, inside the rebalance callback: the consumer
   *   gives them up only when the returned promise settles, so their tasks can finish the
   *   record in hand, flush and commit (or commit their transaction) first;
   * - eager (kafkajs, which has no revocation callback): every partition, when the rebalance
   *   begins; the consumer does not wait, and the partitions may come back in the next
   *   assignment.
   */
  onRevoked(event: RevocationEvent): Promise<void> | void;
  /** The assignment after a (re)join or an incremental assignment. */
  onAssigned(event: AssignmentEvent): void;
  /**
   * The consumer gave up (it stopped); the worker builds a new one. A `ClientMismatchError`
   * says the broker refused the member's join with `INCONSISTENT_GROUP_PROTOCOL` (the group's
   * members run the other Kafka client): retriable from a client whose consumer stops at each
   * refusal (kafkajs; `JoinRefusals` counts them toward the session timeout), final from one that
   * joins again by itself (librdkafka) once its refusals lasted a session timeout.
   */
  onCrash(error: unknown): void;
  /**
   * A fetched batch held no records for weir — only transaction markers or aborted records —
   * and the consumer moved past it: the partition's position is now `nextOffset`.
   */
  onSkipped(topic: string, partition: number, nextOffset: number): void;
}

/**
 * The rebalance timeout both clients join with (`rebalanceTimeout` in kafkajs,
 * `max.poll.interval.ms` in librdkafka), ms: how long the group coordinator waits for the members
 * to rejoin. At least 60 000 (kafkajs' default), and never below the session timeout.
 */
export function rebalanceTimeoutMs(sessionTimeoutMs: number): number {
  return Math.max(60_000, sessionTimeoutMs);
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
  /**
   * `group.instance.id` (static membership, KIP-345): a member that restarts within the
   * session timeout gets its partitions back with no rebalance. Clients without it reject it.
   */
  readonly groupInstanceId?: string;
  /** Records buffered per partition before the worker pauses it (`--max-buffered-records`): bounds the client's own fetch queues too. */
  readonly maxBufferedRecords?: number;
}

/**
 * A consumer-group member that only fetches: each partition's task runs its own loop, so a
 * long backoff never blocks heartbeats. Records are fetched past when a task accepts them and
 * committed only by the task. A consumer that crashes is not restarted by its client: the
 * worker decides what to do (`onCrash`).
 */
export interface GroupConsumer extends OffsetCommitter {
  /** How partitions move in this consumer's group. */
  readonly protocol: RebalanceProtocol;
  /** Joins the group and starts fetching. @throws the client's error when the broker cannot be reached */
  start(): Promise<void>;
  /** Stops fetching a partition. */
  pause(tp: TopicPartition): void;
  resume(tp: TopicPartition): void;
  /** The next fetch of the partition starts at `offset`. */
  seek(tp: TopicPartition, offset: number): void;
  /**
   * Stops fetching, leaves the group and disconnects. `abandoned`: the worker gives up on this
   * consumer (stuck in its join) and lives on with another, so a first join still under way is
   * waited for before it leaves (kafkajs forgets a consumer it disconnects mid-join, which then
   * fetches and holds partitions once the join ends); otherwise (a shutdown) it disconnects at once.
   */
  stop(options?: { readonly abandoned?: boolean }): Promise<void>;
}
