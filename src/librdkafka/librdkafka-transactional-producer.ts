import { IllegalStateError, ProducerFencedError } from '../errors.js';
import type { GroupConsumer } from '../kafka/group-consumer.js';
import type { TransactionalProducerClient, TransactionalProducerOptions } from '../kafka/kafka-client.js';
import type { OutputRecord, TopicPartitionOffset } from '../record/record-types.js';
import { transactionalProducerConfig } from './librdkafka-config.js';
import { FatalErrorWatch, isFencedError } from './librdkafka-errors.js';
import { LibrdkafkaGroupConsumer } from './librdkafka-group-consumer.js';
import type { GroupMetadataConsumers } from './group-metadata-consumers.js';
import { call, type NativeConsumer, type NativeProducer } from './librdkafka-native.js';
import type { NativeClients } from './librdkafka-native-clients.js';
import { TransactionDeliveries } from './transaction-deliveries.js';

/** Timeouts of transaction calls, ms: librdkafka retries within them (e.g. `CONCURRENT_TRANSACTIONS`). */
const TIMEOUT_MS = { init: 60_000, failFastInit: 10_000, offsets: 30_000, end: 60_000 } as const;

/**
 * A transactional producer on librdkafka (the binding's `Producer` with `transactional.id`):
 * `init()` runs `InitProducerId` (`initTransactions`), which fences older instances of the id
 * and completes their open transaction. With `options.groupConsumer` (KIP-447, Kafka Streams'
 * `exactly_once_v2`) `sendOffsets` carries that live consumer's group metadata — member id,
 * generation, group instance id — so the coordinator fences a zombie by its generation;
 * without one it sends the group id alone (generation -1), through a consumer that never joins
 * ({@link GroupMetadataConsumers}). A producer that failed fatally (fenced, or a commit in
 * doubt) is replaced by `reset()`. Fencing errors (`ERR__FENCED`, PRODUCER_FENCED,
 * INVALID_PRODUCER_EPOCH) become `ProducerFencedError`.
 */
export class LibrdkafkaTransactionalProducer implements TransactionalProducerClient {
  readonly transactionalId: string;
  private producer: NativeProducer | undefined;
  /** The producer made last, from its creation on (`producer` is set once it is initialized): its reports and log lines count. */
  private latest: NativeProducer | undefined;
  private removeProbe: (() => void) | undefined;
  private inTransaction = false;
  /** The open transaction's deliveries (failures only: `delivery.report.only.error`). */
  private readonly deliveries: TransactionDeliveries;
  /** The producer's fatal error as librdkafka logged it (its calls fail with a generic one). */
  private readonly fatal = new FatalErrorWatch();
  /** Group ids whose metadata consumer this producer holds. */
  private readonly metadataGroups = new Set<string>();

  constructor(
    private readonly clients: NativeClients,
    private readonly options: TransactionalProducerOptions,
    private readonly metadata: GroupMetadataConsumers,
  ) {
    this.transactionalId = options.transactionalId;
    if (options.groupConsumer !== undefined && !(options.groupConsumer instanceof LibrdkafkaGroupConsumer))
      throw new IllegalStateError('a librdkafka transactional producer takes only a group consumer of the librdkafka client');
    this.deliveries = new TransactionDeliveries(
      () => this.current(),
      () => clients.router.heard(),
    );
  }

  /** Connects and initializes the transactional id (fencing older instances). A producer that fails to initialize is dropped. */
  async init(): Promise<void> {
    await this.initialized();
  }

  private async initialized(): Promise<NativeProducer> {
    return this.guard(async () => {
      const producer = this.clients.producer(transactionalProducerConfig(this.transactionalId, this.options.transactionTimeoutMs));
      // A replaced producer's last reports and log lines are not the new one's.
      this.latest = producer;
      producer.on('delivery-report', (err) => {
        if (producer === this.latest) this.deliveries.delivered(err);
      });
      this.fatal.reset();
      producer.on('event.log', (event) => {
        if (producer === this.latest) this.fatal.logged(event);
      });
      let removeProbe: (() => void) | undefined;
      try {
        removeProbe = await this.clients.connect(producer);
        producer.setPollInBackground(true);
        const timeout = this.clients.options.failFast ? TIMEOUT_MS.failFastInit : TIMEOUT_MS.init;
        await call((cb) => producer.initTransactions(timeout, cb));
      } catch (error) {
        removeProbe?.();
        await call((cb) => producer.disconnect(cb)).catch(() => undefined);
        throw error;
      }
      this.producer = producer;
      this.removeProbe = removeProbe;
      return producer;
    });
  }

  async begin(): Promise<void> {
    await this.guard(async () => {
      const producer = this.producer ?? (await this.initialized());
      await call((cb) => producer.beginTransaction(cb));
      this.deliveries.reset();
      this.inTransaction = true;
    });
  }

  /**
   * Queues `records` in the open transaction and resolves once librdkafka holds them, without
   * waiting for the broker's acknowledgements (and without a delivery report per record:
   * {@link TransactionDeliveries}), so a transaction's records travel while its
   * tasks go on processing (as Kafka Streams' producer sends while its stream thread works)
   * rather than each task waiting for its acknowledgements at every commit (issue 22's profile:
   * that wait was most of a transaction round at 24 partitions). `sendOffsets` and `commit`
   * wait for every acknowledgement first, and fail when a record was not delivered: the
   * offsets join the transaction only once its records are on the broker, so the window in
   * which a crashed producer leaves offsets pending is no longer than before.
   *
   * @throws the error of librdkafka's `produce` for a record it did not queue (see
   *   `produceInOrder`); the transaction must then be aborted
   */
  async send(records: readonly OutputRecord[]): Promise<void> {
    this.current();
    await this.guard(() => this.deliveries.send(records));
  }

  /**
   * Waits until every record sent in the transaction left librdkafka's queue (`flush`).
   *
   * @throws librdkafka's delivery error of the first record reported undelivered (e.g.
   *   `ERR__MSG_TIMED_OUT`), or the flush's timeout: the transaction must be aborted
   */
  private async acknowledged(): Promise<void> {
    await this.deliveries.acknowledged(TIMEOUT_MS.offsets);
  }

  /** Waits for the transaction's acknowledgements (see {@link send}), then adds the offsets to it. */
  async sendOffsets(groupId: string, offsets: readonly TopicPartitionOffset[]): Promise<void> {
    const producer = this.current();
    await this.guard(() => this.acknowledged());
    this.assertMember();
    await this.guard(async () => {
      const consumer = await this.groupMetadataOf(groupId, this.options.groupConsumer);
      const list = offsets.map((o) => ({
        topic: o.topic,
        partition: o.partition,
        offset: o.offset,
        ...(o.metadata !== undefined ? { metadata: o.metadata } : {}),
      }));
      await call((cb) => producer.sendOffsetsToTransaction(list, consumer, TIMEOUT_MS.offsets, cb));
    });
  }

  /**
   * KIP-447's fencing relies on the member's generation, and a member whose assignment librdkafka
   * lost (session timeout) sends generation -1, which the group coordinator does not check: its
   * transaction must neither take offsets nor commit (Kafka Streams closes its tasks dirty and
   * re-initializes the producer then). Fenced: the worker closes its tasks and rejoins with a new
   * producer, whose `initTransactions` aborts this transaction.
   *
   * @throws ProducerFencedError when the bound group consumer's assignment is lost
   */
  private assertMember(): void {
    const consumer = this.options.groupConsumer;
    if (consumer instanceof LibrdkafkaGroupConsumer && consumer.assignmentLost())
      throw new ProducerFencedError(this.transactionalId, {
        cause: new Error('the group member lost its assignment (its session timed out): its transaction may not commit offsets'),
      });
  }

  private async groupMetadataOf(groupId: string, groupConsumer: GroupConsumer | undefined): Promise<NativeConsumer> {
    if (groupConsumer instanceof LibrdkafkaGroupConsumer) return groupConsumer.native();
    this.metadataGroups.add(groupId);
    return this.metadata.acquire(groupId, this);
  }

  /** Waits for the transaction's acknowledgements (see {@link send}), then commits it. */
  async commit(): Promise<void> {
    const producer = this.current();
    await this.guard(() => this.acknowledged());
    this.assertMember();
    await this.guard(async () => {
      await call((cb) => producer.commitTransaction(TIMEOUT_MS.end, cb));
      this.inTransaction = false;
    });
  }

  async abort(): Promise<void> {
    const producer = this.producer;
    const active = this.inTransaction;
    this.inTransaction = false;
    this.deliveries.reset();
    if (producer === undefined || !active) return;
    await this.guard(() => call((cb) => producer.abortTransaction(TIMEOUT_MS.end, cb)));
  }

  async reset(): Promise<void> {
    await this.drop();
    await this.init();
  }

  async disconnect(): Promise<void> {
    await this.drop();
    for (const groupId of this.metadataGroups) await this.metadata.release(groupId, this);
    this.metadataGroups.clear();
  }

  /** Throws the producer away (its transaction state with it). */
  private async drop(): Promise<void> {
    const producer = this.producer;
    this.producer = undefined;
    this.inTransaction = false;
    this.deliveries.reset();
    this.removeProbe?.();
    this.removeProbe = undefined;
    if (producer !== undefined) await call((cb) => producer.disconnect(cb)).catch(() => undefined);
  }

  /** The producer of the transaction in progress. @throws IllegalStateError when none is */
  private current(): NativeProducer {
    if (this.producer === undefined || !this.inTransaction)
      throw new IllegalStateError(`producer '${this.transactionalId}': no transaction in progress`);
    return this.producer;
  }

  private async guard<T>(action: () => Promise<T>): Promise<T> {
    try {
      return await action();
    } catch (failure) {
      const error = await this.fatal.explain(failure);
      if (isFencedError(error)) throw new ProducerFencedError(this.transactionalId, { cause: error });
      throw error;
    }
  }
}
