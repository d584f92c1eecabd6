import type { Logger } from 'pino';
import type { RecordProducer, TransactionalProducer } from '../runtime/ports.js';
import type { GroupConsumer, GroupConsumerHandlers, GroupConsumerOptions, RebalanceProtocol } from './group-consumer.js';
import type { KafkaAdmin } from './kafka-admin.js';
import type { TopicRangeReadOptions } from './topic-range.js';

/**
 * The Kafka client bindings weir ships: kafkajs (pure JavaScript, the default) and librdkafka
 * (`@confluentinc/kafka-javascript`, a native build).
 */
export const KAFKA_CLIENTS = ['kafkajs', 'librdkafka'] as const;

/** A Kafka client binding's name (`--client`, `WEIR_KAFKA_CLIENT`). */
export type KafkaClientName = (typeof KAFKA_CLIENTS)[number];

/** How to connect a {@link KafkaClient}. */
export interface KafkaClientOptions {
  /** Bootstrap servers, `host:port`. */
  readonly brokers: readonly string[];
  /** `client.id` of every connection (`weir-<application.id>-<host>-<pid>` for workers). */
  readonly clientId: string;
  /** Where the client's own logs go, mapped to pino levels. */
  readonly logger: Logger;
  /** Give up on an unreachable broker within a few seconds (CLI tools), instead of retrying for long. */
  readonly failFast?: boolean;
}

/** The at_least_once producer of a worker: idempotent, `acks=-1`. */
export interface RecordProducerClient extends RecordProducer {
  /** @throws the client's error when the broker cannot be reached */
  connect(): Promise<void>;
  disconnect(): Promise<void>;
}

/** A transactional producer (exactly_once, `weir dlq replay`). */
export interface TransactionalProducerClient extends TransactionalProducer {
  /**
   * Connects and initializes the transactional id (`InitProducerId`), which fences older
   * instances and completes their open transaction.
   *
   * @throws ProducerFencedError when a newer instance owns the id; the client's error otherwise
   */
  init(): Promise<void>;
  disconnect(): Promise<void>;
}

/** Options of a transactional producer. */
export interface TransactionalProducerOptions {
  readonly transactionalId: string;
  /** `transaction.timeout.ms`: the broker aborts a transaction open longer than this. */
  readonly transactionTimeoutMs: number;
  /**
   * KIP-447: `sendOffsets` carries this live consumer's group metadata (member id, generation,
   * group instance id), so the group coordinator fences a zombie by its generation and one
   * producer can serve every task of the member. Only a client with
   * `features.groupMetadataInTransactions` takes it, and only a consumer of the same client.
   */
  readonly groupConsumer?: GroupConsumer;
}

/** A capability of {@link KafkaClientFeatures} that a client either has or lacks. */
export type KafkaClientFeature = 'groupMetadataInTransactions' | 'staticMembership' | 'streamThreads';

/** What a client can do beyond the basics, as weir uses it: one row of {@link CLIENT_FEATURES}. */
export interface KafkaClientFeatures {
  /** KIP-447 (Kafka Streams' `exactly_once_v2`): see {@link TransactionalProducerOptions.groupConsumer}. */
  readonly groupMetadataInTransactions: boolean;
  /** KIP-345 static membership: `GroupConsumerOptions.groupInstanceId` (`--group-instance-id`). */
  readonly staticMembership: boolean;
  /** How its group consumer moves partitions: `cooperative` is KIP-429's cooperative-sticky assignor. */
  readonly rebalanceProtocol: RebalanceProtocol;
  /** Several stream threads in one process (`--threads` above 1), each a group member of its own. */
  readonly streamThreads: boolean;
  /** Why the client lacks each capability it lacks, as a clause for error messages. */
  readonly lacks: Readonly<Partial<Record<KafkaClientFeature, string>>>;
}

/**
 * What each Kafka client binding can do, as data: config validation and the worker ask this
 * table (or `KafkaClient.features`, the same row), never a client's name. docs/clients.md
 * explains each difference.
 */
export const CLIENT_FEATURES: Readonly<Record<KafkaClientName, KafkaClientFeatures>> = Object.freeze({
  kafkajs: Object.freeze({
    groupMetadataInTransactions: false,
    staticMembership: false,
    rebalanceProtocol: 'eager',
    streamThreads: true,
    lacks: Object.freeze({
      groupMetadataInTransactions: 'kafkajs sends no group metadata with transactional offsets: one transactional producer per task',
      staticMembership: 'kafkajs has no group.instance.id',
    }),
  }),
  librdkafka: Object.freeze({
    groupMetadataInTransactions: true,
    staticMembership: true,
    rebalanceProtocol: 'cooperative',
    // @confluentinc/kafka-javascript's native module is not context-aware (its issue #258).
    streamThreads: false,
    lacks: Object.freeze({ streamThreads: 'its native module loads in one thread only' }),
  }),
});

/**
 * The clients that have `feature`, in {@link KAFKA_CLIENTS} order.
 *
 * @example clientsWith('staticMembership') // ['librdkafka']
 */
export function clientsWith(feature: KafkaClientFeature): KafkaClientName[] {
  return KAFKA_CLIENTS.filter((name) => CLIENT_FEATURES[name][feature]);
}

/**
 * Why `client` lacks `feature`, as a clause for an error message (the table's `lacks`, else a
 * plain "<client> has no <feature>").
 */
export function whyLacks(client: KafkaClientName, feature: KafkaClientFeature): string {
  return CLIENT_FEATURES[client].lacks[feature] ?? `${client} has no ${feature}`;
}

/**
 * A Kafka client binding: everything weir asks of a Kafka client, behind one interface. The
 * worker, the task factory and the CLI tools use only this; `kafkajs/` and `librdkafka/`
 * implement it, and only they import a Kafka client library.
 */
export interface KafkaClient {
  readonly name: KafkaClientName;
  readonly features: KafkaClientFeatures;
  /** A new admin client (not connected). */
  admin(): KafkaAdmin;
  /** A new idempotent producer (not connected). */
  recordProducer(): RecordProducerClient;
  /** A new transactional producer (not initialized). */
  transactionalProducer(options: TransactionalProducerOptions): TransactionalProducerClient;
  /** A new consumer-group member (not started). */
  groupConsumer(options: GroupConsumerOptions, handlers: GroupConsumerHandlers): GroupConsumer;
  /**
   * Reads a fixed range of a topic once (read_committed) and returns when every partition
   * reached the end of its range.
   *
   * @returns the position reached in each partition (the next offset to read)
   * @throws TopicRangeStalledError when no partition moves for `idleTimeoutMs`
   * @throws the client's error when the broker cannot be reached, or what `onRecords` threw
   */
  readTopicRange(options: TopicRangeReadOptions): Promise<Map<number, number>>;
}
