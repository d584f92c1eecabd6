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

/** What a client can do beyond the basics, as weir uses it. */
export interface KafkaClientFeatures {
  /** KIP-447 (Kafka Streams' `exactly_once_v2`): see {@link TransactionalProducerOptions.groupConsumer}. */
  readonly groupMetadataInTransactions: boolean;
  /** KIP-345 static membership: `GroupConsumerOptions.groupInstanceId`. */
  readonly staticMembership: boolean;
  /** How its group consumer moves partitions. */
  readonly rebalanceProtocol: RebalanceProtocol;
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
