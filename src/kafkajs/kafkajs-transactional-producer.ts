import type { Kafka, Producer, Transaction } from 'kafkajs';
import { IllegalStateError, ProducerFencedError } from '../errors.js';
import type { OutputRecord, TopicPartitionOffset } from '../record/record-types.js';
import type { TransactionalProducerClient } from '../kafka/kafka-client.js';
import { isFencedError } from './kafkajs-errors.js';
import { topicMessagesOf } from './kafkajs-messages.js';
import { chunkRecords } from '../kafka/produce-batcher.js';
import { KAFKAJS_REQUEST_LIMITS, PRODUCER_CONFIG } from './kafkajs-record-producer.js';

/**
 * A task's transactional producer over kafkajs, `transactional.id` =
 * `<application.id>-<topic>-<partition>`. `init()` runs `InitProducerId` at once (kafkajs
 * would wait for the first transaction), which fences any zombie with the same id and
 * completes its open transaction before the task reads its committed offset. kafkajs leaves
 * its producer stuck (COMMITTING/ABORTING) after a failed commit or abort; `reset()` throws
 * that producer away and builds a new one. Fencing errors become `ProducerFencedError`.
 */
export class KafkajsTransactionalProducer implements TransactionalProducerClient {
  private producer: Producer | undefined;
  private txn: Transaction | undefined;

  constructor(
    private readonly kafka: Kafka,
    readonly transactionalId: string,
    /** `transaction.timeout.ms`: the broker aborts a transaction open longer than this. */
    private readonly transactionTimeoutMs: number,
  ) {}

  /**
   * Connects and initializes the transactional id (fencing older instances). A producer that
   * fails to initialize is disconnected and dropped, so the next `begin()` starts afresh.
   */
  async init(): Promise<void> {
    await this.initialized();
  }

  private async initialized(): Promise<Producer> {
    return this.guard(async () => {
      const producer = this.kafka.producer({
        ...PRODUCER_CONFIG,
        transactionalId: this.transactionalId,
        transactionTimeout: this.transactionTimeoutMs,
      });
      try {
        await producer.connect();
        // kafkajs initializes the producer id on the first transaction(); an empty one ends
        // without an EndTxn request.
        const txn = await producer.transaction();
        await txn.abort();
      } catch (error) {
        await producer.disconnect().catch(() => undefined);
        throw error;
      }
      this.producer = producer;
      return producer;
    });
  }

  async begin(): Promise<void> {
    await this.guard(async () => {
      const producer = this.producer ?? (await this.initialized());
      this.txn = await producer.transaction();
    });
  }

  async send(records: readonly OutputRecord[]): Promise<void> {
    await this.guard(async () => {
      // kafkajs does not split record batches: keep each request under the broker's limit.
      for (const chunk of chunkRecords(records, KAFKAJS_REQUEST_LIMITS))
        await this.current().sendBatch({ acks: -1, topicMessages: topicMessagesOf(chunk) });
    });
  }

  async sendOffsets(groupId: string, offsets: readonly TopicPartitionOffset[]): Promise<void> {
    const topics = new Map<string, Array<{ partition: number; offset: string; metadata?: string }>>();
    for (const o of offsets) {
      const list = topics.get(o.topic) ?? [];
      list.push({ partition: o.partition, offset: String(o.offset), ...(o.metadata !== undefined ? { metadata: o.metadata } : {}) });
      topics.set(o.topic, list);
    }
    await this.guard(() =>
      this.current().sendOffsets({ consumerGroupId: groupId, topics: [...topics].map(([topic, partitions]) => ({ topic, partitions })) }),
    );
  }

  async commit(): Promise<void> {
    await this.guard(async () => {
      await this.current().commit();
      this.txn = undefined;
    });
  }

  async abort(): Promise<void> {
    await this.guard(async () => {
      const txn = this.txn;
      this.txn = undefined;
      if (txn?.isActive()) await txn.abort();
    });
  }

  async reset(): Promise<void> {
    const old = this.producer;
    this.producer = undefined;
    this.txn = undefined;
    await old?.disconnect().catch(() => undefined);
    await this.init();
  }

  async disconnect(): Promise<void> {
    const old = this.producer;
    this.producer = undefined;
    await old?.disconnect();
  }

  private current(): Transaction {
    if (this.txn === undefined) throw new IllegalStateError(`producer '${this.transactionalId}': no transaction in progress`);
    return this.txn;
  }

  private async guard<T>(action: () => Promise<T>): Promise<T> {
    try {
      return await action();
    } catch (error) {
      if (isFencedError(error)) throw new ProducerFencedError(this.transactionalId, { cause: error });
      throw error;
    }
  }
}
