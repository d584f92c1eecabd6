import type { OffsetReader } from '../runtime/ports.js';

/** A topic to create: name and partition count. */
export interface TopicToCreate {
  readonly topic: string;
  readonly partitions: number;
  /** Topic configs to create it with (e.g. `cleanup.policy: compact`); default the broker's. */
  readonly config?: Readonly<Record<string, string>>;
}

/** One member of a consumer group, as the group coordinator describes it. */
export interface GroupMember {
  /** The coordinator's member id (`kafka-consumer-groups --describe` prints it as CONSUMER-ID). */
  readonly memberId: string;
  /** `group.instance.id` of a static member, else undefined. */
  readonly groupInstanceId?: string;
  readonly clientId: string;
  /** The member's host, as the coordinator saw it (e.g. `/127.0.0.1`). */
  readonly host: string;
  /** The partitions assigned to the member. */
  readonly assignment: ReadonlyArray<{ readonly topic: string; readonly partition: number }>;
}

/** A consumer group as the coordinator describes it. */
export interface GroupDescription {
  readonly groupId: string;
  /** `Stable`, `PreparingRebalance`, `CompletingRebalance`, `Empty`, `Dead`, or `Unknown`. */
  readonly state: string;
  /** The assignor in use (`range`, `cooperative-sticky`, …); empty when none. */
  readonly protocol: string;
  readonly members: readonly GroupMember[];
}

/**
 * weir's view of a Kafka admin client: topic metadata and creation, committed and log offsets,
 * consumer groups. Both client bindings implement it.
 *
 * Errors: every method rejects with the client's error when the broker cannot be reached.
 */
export interface KafkaAdmin extends OffsetReader {
  /** @throws the client's error when no broker answers */
  connect(): Promise<void>;
  disconnect(): Promise<void>;
  /** Every topic name (internal topics included). */
  listTopics(): Promise<string[]>;
  /** Partition counts of the topics that exist; missing topics are absent from the map. */
  partitionCounts(topics: readonly string[]): Promise<Map<string, number>>;
  /**
   * Creates topics (replication factor: the broker's default) and waits until every partition
   * has a leader, up to `timeoutMs` (default 30 000). A topic created meanwhile by another
   * worker is not an error.
   *
   * @returns false when every topic existed already (another worker created them first)
   */
  createTopics(topics: readonly TopicToCreate[], timeoutMs?: number): Promise<boolean>;
  /**
   * A group's committed offsets of one topic, by partition (partitions without one are absent);
   * only of `partitions` when given. Offsets a transaction still in flight added are not read.
   *
   * `requireStable` (KIP-447's `require_stable`, on a client with `groupMetadataInTransactions`):
   * a partition whose offsets an open transaction holds is read only once that transaction ends,
   * so a task never starts behind a zombie's commit still to land. A client without KIP-447
   * (kafkajs) reads the last committed ones: its tasks fence their predecessor's transactional
   * producer before they read.
   *
   * @throws the client's error; on `requireStable`, also when a transaction still holds the
   *   offsets after the request timeout (the caller retries)
   */
  committedOffsets(
    groupId: string,
    topic: string,
    partitions?: readonly number[],
    options?: { readonly requireStable?: boolean },
  ): Promise<Map<number, number>>;
  /** The earliest offset (log start) of each partition of a topic. */
  earliestOffsets(topic: string): Promise<Map<number, number>>;
  /** The end offset of each partition of a topic (the last stable offset for read_committed readers). */
  latestOffsets(topic: string): Promise<Map<number, number>>;
  /** A consumer group's state and members; state `Dead` with no members when it does not exist. */
  describeGroup(groupId: string): Promise<GroupDescription>;
  /** Deletes consumer groups (best effort: groups with members are not deleted). */
  deleteGroups(groupIds: readonly string[]): Promise<void>;
  /**
   * Sends a `LeaveGroup` for `memberId` on its behalf: the coordinator removes the member and
   * rebalances the group at once, instead of waiting for its session to time out. For a member
   * that is gone without leaving (a stream thread that crashed). A member that is not in the
   * group any more is not an error. Optional: only clients that can send it have it (kafkajs).
   *
   * @throws the client's error when the coordinator cannot be reached or refuses
   */
  leaveGroup?(groupId: string, memberId: string): Promise<void>;
}
