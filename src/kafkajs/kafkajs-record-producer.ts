import { CompressionTypes, Partitioners, type Kafka, type Producer } from 'kafkajs';
import type { OutputRecord } from '../record/record-types.js';
import type { RecordProducerClient } from '../kafka/kafka-client.js';
import { topicMessagesOf } from './kafkajs-messages.js';
import { ProduceBatcher } from '../kafka/produce-batcher.js';

/** Producer settings shared by the at_least_once and the transactional producers. */
export const PRODUCER_CONFIG = Object.freeze({
  idempotent: true,
  maxInFlightRequests: 1,
  allowAutoTopicCreation: false,
  createPartitioner: Partitioners.DefaultPartitioner,
  retry: { retries: Number.MAX_SAFE_INTEGER },
});

/**
 * The at_least_once {@link RecordProducer}: one idempotent kafkajs producer (`acks=-1`,
 * retries unbounded as kafkajs requires for idempotence, murmur2 partitioner like the Java
 * client) shared by a worker's tasks. `send` resolves when the broker acknowledged every
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
    });
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
