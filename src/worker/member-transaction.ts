import type { GroupConsumer } from '../kafka/group-consumer.js';
import type { KafkaClient, TransactionalProducerClient } from '../kafka/kafka-client.js';
import type { Clock } from '../runtime/ports.js';
import { SharedTransaction } from '../runtime/shared-transaction.js';

/** Options of a {@link MemberTransaction}. Times in ms. */
export interface MemberTransactionOptions {
  readonly client: KafkaClient;
  /** The member's consumer: every `sendOffsets` carries its live group metadata (KIP-447). */
  readonly consumer: GroupConsumer;
  /** `<application.id>-<member>` (see `memberTransactionalId`). */
  readonly transactionalId: string;
  readonly transactionTimeoutMs: number;
  readonly commitIntervalMs: number;
  readonly clock: Clock;
  /** The producer was fenced: the member must rejoin with a new consumer and producer. */
  readonly onFenced: (error: unknown) => void;
}

/**
 * A group member's one transactional producer under exactly_once_v2 (Kafka Streams'
 * `StreamsProducer` of a stream thread), bound to the member's consumer: initialized once —
 * `initTransactions` fences an earlier producer with the same transactional id and completes its
 * open transaction — and shared by every task through a {@link SharedTransaction}. An
 * initialization that failed is tried again on the next `get()`. One per consumer: a member
 * that rejoins with a new consumer gets a new one.
 */
export class MemberTransaction {
  private ready: Promise<SharedTransaction> | undefined;
  private producer: TransactionalProducerClient | undefined;
  private closed = false;

  constructor(private readonly options: MemberTransactionOptions) {}

  /**
   * The shared transaction, once its producer is initialized.
   *
   * @throws ProducerFencedError when a newer producer owns the transactional id; the client's error otherwise
   */
  get(): Promise<SharedTransaction> {
    if (this.ready !== undefined) return this.ready;
    const { client, consumer, transactionalId, transactionTimeoutMs, commitIntervalMs, clock, onFenced } = this.options;
    const producer = client.transactionalProducer({ transactionalId, transactionTimeoutMs, groupConsumer: consumer });
    this.producer = producer;
    const ready = producer.init().then(
      // Tasks whose commit interval ends together join one transaction within a few ms.
      () => new SharedTransaction(producer, { clock, joinWindowMs: Math.min(10, Math.floor(commitIntervalMs / 4)), onFenced }),
      async (error: unknown) => {
        if (this.ready === ready) this.ready = undefined;
        await producer.disconnect().catch(() => undefined);
        throw error;
      },
    );
    this.ready = ready;
    if (this.closed) void this.close();
    return ready;
  }

  /**
   * Disconnects the producer. A transaction it left open (a crash mid-commit) is aborted when
   * the member's next producer — same transactional id — initializes, else by the broker after
   * `transaction.timeout.ms`.
   */
  async close(): Promise<void> {
    this.closed = true;
    const producer = this.producer;
    this.producer = undefined;
    this.ready = undefined;
    await producer?.disconnect().catch(() => undefined);
  }
}
