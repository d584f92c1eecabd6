import type { Kafka, Producer } from 'kafkajs';
import { CompressionTypes } from './kafkajs-library.js';
import type { OutputRecord } from '../record/record-types.js';
import type { RecordProducerClient } from '../kafka/kafka-client.js';
import { topicMessagesOf } from './kafkajs-messages.js';
import { murmur2Partitioner } from './kafkajs-partitioner.js';
import { MAX_REQUEST_BYTES, ProduceBatcher, type RequestLimits } from '../kafka/produce-batcher.js';

/** Producer settings shared by the at_least_once and the transactional producers. */
export const PRODUCER_CONFIG = Object.freeze({
  idempotent: true,
  maxInFlightRequests: 1,
  allowAutoTopicCreation: false,
  createPartitioner: murmur2Partitioner,
  retry: { retries: Number.MAX_SAFE_INTEGER },
});

/**
 * Limits of one kafkajs produce request. kafkajs groups a request's records by partition by
 * copying the partition's list for every record (`groupMessagesPerPartition`), so its cost
 * grows with the square of the records per partition: at 100 B and 512 KiB per request that
 * was a tenth of a worker's CPU. Capping the records keeps it linear in practice while requests
 * stay large in bytes at 1 KiB records (the byte cap comes first there).
 */
export const KAFKAJS_REQUEST_LIMITS: RequestLimits = Object.freeze({ maxBytes: MAX_REQUEST_BYTES, maxRecords: 1_000 });

/**
 * The at_least_once {@link RecordProducer}: one idempotent kafkajs producer (`acks=-1`,
 * retries unbounded as kafkajs requires for idempotence, murmur2 partitioner like the Java
 * client, {@link murmur2Partitioner}) shared by a worker's tasks. `send` resolves when the broker acknowledged every
 * record; while the broker is unreachable it keeps retrying (backoff capped by the client's
 * `maxRetryTime`). Concurrent sends of many tasks are coalesced into few requests
 * ({@link ProduceBatcher}).
 */
export class KafkajsRecordProducer implements RecordProducerClient {
  private readonly producer: Producer;
  private readonly batcher: ProduceBatcher;

  constructor(kafka: Kafka) {
    this.producer = kafka.producer(PRODUCER_CONFIG);
    this.batcher = new ProduceBatcher(async (records) => {
      await this.producer.sendBatch({ acks: -1, compression: CompressionTypes.None, topicMessages: topicMessagesOf(records) });
    }, KAFKAJS_REQUEST_LIMITS);
  }

  /** @throws the kafkajs error when the broker cannot be reached */
  async connect(): Promise<void> {
    await this.producer.connect();
  }

  send(records: readonly OutputRecord[]): Promise<void> {
    return this.batcher.send(records);
  }

  async disconnect(): Promise<void> {
    await this.producer.disconnect();
  }
}
