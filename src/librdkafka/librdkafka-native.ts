import { createRequire } from 'node:module';

/**
 * The parts of `@confluentinc/kafka-javascript` (its node-rdkafka-style API) weir uses, typed
 * here so that weir compiles without the optional package. This file is the only one that
 * loads it; {@link loadLibrdkafka} throws when it is not installed or its native module does
 * not load (the caller turns that into a `ConfigError` naming `--client`).
 */

/** The package's name (an optional dependency of weir). */
export const LIBRDKAFKA_PACKAGE = '@confluentinc/kafka-javascript';

/** librdkafka configuration properties (`CONFIGURATION.md` of librdkafka), plus the binding's callbacks. */
export type LibrdkafkaConfig = Record<string, string | number | boolean | ((...args: any[]) => void) | undefined>;

/** An error of the binding (`LibrdKafkaError`): librdkafka's error code, and its transaction flags. */
export interface LibrdkafkaError extends Error {
  readonly code: number;
  readonly isFatal?: boolean;
  readonly isRetriable?: boolean;
  readonly isTxnRequiresAbort?: boolean;
}

export interface NativeTopicPartition {
  readonly topic: string;
  readonly partition: number;
}

export interface NativeTopicPartitionOffset extends NativeTopicPartition {
  readonly offset: number;
  readonly error?: LibrdkafkaError;
}

/** A record header as the binding carries it: one key → value object per header, in order. */
export type NativeHeader = Record<string, Buffer | string>;

/** A consumed record. */
export interface NativeMessage {
  readonly topic: string;
  readonly partition: number;
  readonly offset: number;
  readonly key?: Buffer | string | null;
  readonly value: Buffer | null;
  readonly timestamp?: number;
  readonly headers?: NativeHeader[];
}

/** A produced record's delivery report (`dr_cb`). */
export interface NativeDeliveryReport {
  readonly topic: string;
  readonly partition: number;
  readonly offset: number;
  readonly opaque?: unknown;
}

/** librdkafka's log event (`event_cb`): syslog severity 0–7, facility, text. */
export interface NativeLogEvent {
  readonly severity: number;
  readonly fac: string;
  readonly message: string;
}

interface NativeClient {
  connect(options: { timeout?: number; allTopics?: boolean; topic?: string }, cb: (err: LibrdkafkaError | null) => void): void;
  disconnect(cb: (err: LibrdkafkaError | null) => void): void;
  /** The cluster's metadata (brokers, topics); `topic` narrows it to one topic. */
  getMetadata(options: { timeout?: number; topic?: string }, cb: (err: LibrdkafkaError | null) => void): void;
  on(event: 'event.log', listener: (event: NativeLogEvent) => void): this;
  on(event: 'event.error', listener: (error: LibrdkafkaError) => void): this;
  on(event: string, listener: (...args: any[]) => void): this;
  removeAllListeners(event?: string): this;
  isConnected(): boolean;
}

/** `KafkaConsumer` of the binding. */
export interface NativeConsumer extends NativeClient {
  subscribe(topics: string[]): this;
  unsubscribe(): this;
  assign(assignments: NativeTopicPartitionOffset[]): this;
  incrementalAssign(assignments: NativeTopicPartition[]): this;
  incrementalUnassign(assignments: NativeTopicPartition[]): this;
  assignmentLost(): boolean;
  consume(count: number, cb: (err: LibrdkafkaError | null, messages: NativeMessage[]) => void): void;
  setDefaultConsumeTimeout(timeoutMs: number): void;
  setDefaultIsTimeoutOnlyForFirstMessage(value: boolean): void;
  pause(partitions: NativeTopicPartition[]): void;
  resume(partitions: NativeTopicPartition[]): void;
  seek(partition: NativeTopicPartitionOffset, timeoutMs: number, cb: (err: LibrdkafkaError | null) => void): this;
  /**
   * The group's committed offsets of `partitions` (librdkafka's `rd_kafka_committed`): per
   * partition its offset (absent: none) and metadata, or an Error carrying the message only.
   */
  committed(
    partitions: NativeTopicPartition[],
    timeoutMs: number,
    cb: (err: LibrdkafkaError | null, answers: Array<{ partition: number; offset?: number; metadata?: string } | Error>) => void,
  ): this;
  /** Enqueues a commit (librdkafka's `commitAsync`); its outcome is the `offset.commit` event (with `offset_commit_cb: true`). */
  commit(offsets: NativeTopicPartitionOffset[]): this;
  /** Enqueues a commit; `cb` says only whether it was enqueued, not whether the coordinator took it. */
  commitCb(offsets: NativeTopicPartitionOffset[], cb: (err: LibrdkafkaError | null) => void): this;
  /**
   * Commits and waits for the group coordinator's answer (librdkafka's `commitSync`), blocking
   * the event loop meanwhile (up to librdkafka's request timeout): for the end of a read, not
   * for a busy process. Commits enqueued before it went to the coordinator first, unless
   * librdkafka was still retrying one.
   *
   * @throws the binding's error when librdkafka reports the commit failed (the binding does not
   *   report one partition's error of a commit that otherwise succeeded)
   */
  commitSync(offsets: NativeTopicPartitionOffset[]): this;
  on(event: 'partition.eof', listener: (eof: NativeTopicPartitionOffset) => void): this;
  on(event: string, listener: (...args: any[]) => void): this;
}

/** `Producer` of the binding. */
export interface NativeProducer extends NativeClient {
  produce(
    topic: string,
    partition: number | null,
    value: Buffer | null,
    key: Buffer | null,
    timestamp: number | null,
    opaque: unknown,
    headers: NativeHeader[] | undefined,
  ): void;
  setPollInBackground(set: boolean): void;
  flush(timeoutMs: number, cb: (err: LibrdkafkaError | null) => void): this;
  initTransactions(timeoutMs: number, cb: (err: LibrdkafkaError | null) => void): void;
  beginTransaction(cb: (err: LibrdkafkaError | null) => void): void;
  commitTransaction(timeoutMs: number, cb: (err: LibrdkafkaError | null) => void): void;
  abortTransaction(timeoutMs: number, cb: (err: LibrdkafkaError | null) => void): void;
  sendOffsetsToTransaction(
    offsets: NativeTopicPartitionOffset[],
    consumer: NativeConsumer,
    timeoutMs: number,
    cb: (err: LibrdkafkaError | null) => void,
  ): void;
  on(event: 'delivery-report', listener: (err: LibrdkafkaError | null, report: NativeDeliveryReport) => void): this;
  on(event: string, listener: (...args: any[]) => void): this;
}

/** A member in `describeGroups`. */
export interface NativeMemberDescription {
  readonly memberId: string;
  readonly groupInstanceId?: string | null;
  readonly clientId: string;
  readonly clientHost: string;
  readonly assignment?: { readonly topicPartitions?: readonly NativeTopicPartition[] } | null;
}

/** A group in `describeGroups`. */
export interface NativeGroupDescription {
  readonly groupId: string;
  readonly error?: LibrdkafkaError;
  readonly members: readonly NativeMemberDescription[];
  readonly protocol: string;
  readonly partitionAssignor?: string;
  /** `ConsumerGroupStates`: 0 unknown, 1 preparing rebalance, 2 completing rebalance, 3 stable, 4 dead, 5 empty. */
  readonly state: number;
}

/** A topic in `describeTopics`. */
export interface NativeTopicDescription {
  readonly name: string;
  readonly error?: LibrdkafkaError;
  readonly partitions: ReadonlyArray<{ readonly partition: number; readonly leader: { readonly id: number } | null }>;
}

/** `OffsetSpec` of the binding (`EARLIEST`, `LATEST`). */
export type NativeOffsetSpec = object;

/** `AdminClient` of the binding. */
export interface NativeAdmin {
  disconnect(): void;
  createTopic(
    topic: { topic: string; num_partitions: number; replication_factor: number },
    timeoutMs: number,
    cb: (err: LibrdkafkaError | null) => void,
  ): void;
  listTopics(options: { timeout: number }, cb: (err: LibrdkafkaError | null, topics: string[]) => void): void;
  describeTopics(
    topics: string[],
    options: { timeout: number },
    cb: (err: LibrdkafkaError | null, result: NativeTopicDescription[]) => void,
  ): void;
  listOffsets(
    partitions: Array<{ topic: string; partition: number; offset: NativeOffsetSpec }>,
    options: { timeout: number; isolationLevel: number },
    cb: (err: LibrdkafkaError | null, result: NativeTopicPartitionOffset[]) => void,
  ): void;
  // No listConsumerGroupOffsets here: it can abort the process when the coordinator's
  // connection drops (committed-offset-reader.ts reads through a consumer instead).
  // No describeGroups here: in this process it can crash it (isolated-describe-groups.ts).
  deleteGroups(groupIds: string[], options: { timeout: number }, cb: (err: LibrdkafkaError | null) => void): void;
}

/** What weir takes from the package. */
export interface LibrdkafkaModule {
  readonly KafkaConsumer: new (config: LibrdkafkaConfig, topicConfig?: LibrdkafkaConfig) => NativeConsumer;
  readonly Producer: new (config: LibrdkafkaConfig, topicConfig?: LibrdkafkaConfig) => NativeProducer;
  readonly AdminClient: {
    create(config: LibrdkafkaConfig, handlers?: Record<string, (...args: any[]) => void>): NativeAdmin;
  };
  readonly OffsetSpec: { readonly EARLIEST: NativeOffsetSpec; readonly LATEST: NativeOffsetSpec };
  readonly IsolationLevel: { readonly READ_UNCOMMITTED: number; readonly READ_COMMITTED: number };
  /** librdkafka's version, e.g. `2.15.1`. */
  readonly librdkafkaVersion: string;
}

let loaded: LibrdkafkaModule | undefined;

/**
 * The package, loaded once.
 *
 * @throws the loader's error when the package is not installed (`MODULE_NOT_FOUND`) or its
 *   native module does not load
 */
export function loadLibrdkafka(): LibrdkafkaModule {
  loaded ??= createRequire(import.meta.url)(LIBRDKAFKA_PACKAGE) as LibrdkafkaModule;
  return loaded;
}

/** Runs a callback-style binding call as a promise. */
export function call<T = void>(start: (cb: (err: LibrdkafkaError | null | undefined, value?: T) => void) => void): Promise<T> {
  return new Promise((resolve, reject) => {
    start((err, value) => (err ? reject(err) : resolve(value as T)));
  });
}
