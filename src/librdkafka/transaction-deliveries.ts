import type { OutputRecord } from '../record/record-types.js';
import { produceInOrder } from './librdkafka-delivery.js';
import { call, type LibrdkafkaError, type NativeDeliveryReport, type NativeProducer } from './librdkafka-native.js';

/**
 * The deliveries of a librdkafka transactional producer's open transaction, known by their
 * failures alone: the producer runs with `delivery.report.only.error`, so a delivered record
 * costs no report (the binding builds a JavaScript object and an event for each report: a fifth
 * of a worker's CPU per record under exactly_once, bench/README.md), and `acknowledged()` waits
 * with librdkafka's `flush` until nothing of the transaction is queued or in flight.
 *
 * Whether a record was delivered is the transaction's business in the end: librdkafka counts every
 * failed delivery of a transactional producer and `commitTransaction` fails (abortable) when
 * there was one, whether or not its report reached JavaScript yet. The reports seen here only
 * make `sendOffsets` fail before the offsets join a transaction that cannot commit.
 */
export class TransactionDeliveries {
  /** The open transaction's `opaque`: a report of an earlier (aborted) transaction is not this one's. */
  private transaction: object = {};
  /** Records were queued since the last flush. */
  private queued = false;
  /** The first failed delivery of the open transaction. */
  private failure: LibrdkafkaError | undefined;

  constructor(
    private readonly producer: () => NativeProducer,
    /** Called when a flush found every record delivered (the broker answers: an outage is over). */
    private readonly onDelivered: () => void,
  ) {}

  /** A new transaction begins (or the last one was dropped): earlier reports no longer count. */
  reset(): void {
    this.transaction = {};
    this.queued = false;
    this.failure = undefined;
  }

  /**
   * Queues `records` in order (see `produceInOrder`) and resolves once librdkafka holds them.
   *
   * @throws librdkafka's `produce` error for a record it did not queue; the transaction must be aborted
   */
  async send(records: readonly OutputRecord[]): Promise<void> {
    if (records.length === 0) return;
    this.queued = true;
    await produceInOrder(this.producer(), records, this.transaction);
  }

  /** The producer's `delivery-report` listener (failures only, `delivery.report.only.error`). */
  delivered(err: LibrdkafkaError | null | undefined, report: NativeDeliveryReport): void {
    if (err && report.opaque === this.transaction) this.failure ??= err;
  }

  /**
   * Waits until every record queued in the transaction has left librdkafka's queue, delivered or
   * failed (`flush`, at most `timeoutMs`).
   *
   * @throws the first delivery failure reported for the transaction (e.g. `MSG_SIZE_TOO_LARGE`
   *   from the broker, `ERR__MSG_TIMED_OUT`), or the flush's `ERR__TIMED_OUT`: the transaction
   *   must be aborted
   */
  async acknowledged(timeoutMs: number): Promise<void> {
    if (this.queued) {
      this.queued = false;
      const producer = this.producer();
      await call((cb) => producer.flush(timeoutMs, cb));
      if (this.failure === undefined) this.onDelivered();
    }
    if (this.failure !== undefined) throw this.failure;
  }
}
