import type { OutputRecord } from '../record/record-types.js';
import { produceInOrder } from './librdkafka-delivery.js';
import { ERR, codeOf } from './librdkafka-errors.js';
import { call, type LibrdkafkaError, type NativeProducer } from './librdkafka-native.js';

/**
 * Failures of records that librdkafka threw out of its queues: an abort, the transaction's
 * abortable error or the producer's fatal error purges what is still queued.
 */
const PURGED = new Set<number>([ERR.PURGE_QUEUE, ERR.PURGE_INFLIGHT]);

/**
 * The deliveries of a librdkafka transactional producer's open transaction, known by their
 * failures alone: the producer runs with `delivery.report.only.error`, so a delivered record
 * costs no report (the binding builds a JavaScript object and an event for each report: a fifth
 * of a worker's CPU per record under exactly_once, bench/README.md), and `acknowledged()` waits
 * with librdkafka's `flush` until nothing of the transaction is queued or in flight.
 *
 * Records are produced without an `opaque` (`undefined`: `null` is an opaque too). The binding
 * holds a record's opaque in a persistent V8 handle that only its delivery report releases, and
 * with `delivery.report.only.error` a delivered record gets none: every opaque leaked (about
 * 70 MiB per million records, and 1.9 µs of main-thread CPU per record, bench/README.md). So a
 * failure is taken as the open transaction's when it reaches JavaScript while that transaction
 * is open, except a purge ({@link PURGED}), which is never the first cause of a failed
 * transaction: the call that follows it fails on its own (the abortable or fatal error). A real
 * failure of an aborted transaction whose report reaches JavaScript after the next `begin` fails
 * that transaction's `sendOffsets`: one more abort, never a record lost. The binding hands
 * reports over 100 per turn of the event loop, so a burst of them (an outage's timeouts) can fail
 * a few transactions in a row; each report fails one at most.
 *
 * Whether a record was delivered is the transaction's business in the end: librdkafka counts every
 * failed delivery of a transactional producer and `commitTransaction` fails (abortable) when
 * there was one, whether or not its report reached JavaScript yet. The reports seen here only
 * make `sendOffsets` fail before the offsets join a transaction that cannot commit, and name the
 * record's own error rather than librdkafka's count.
 */
export class TransactionDeliveries {
  /** Records were queued since the last flush. */
  private queued = false;
  /** The first failed delivery of the open transaction. */
  private failure: LibrdkafkaError | undefined;
  /** A purge was reported since the transaction began: a flush then proves no delivery. */
  private purged = false;

  constructor(
    private readonly producer: () => NativeProducer,
    /** Called when a flush found every record delivered (the broker answers: an outage is over). */
    private readonly onDelivered: () => void,
  ) {}

  /** A new transaction begins (or the last one was dropped): earlier reports no longer count. */
  reset(): void {
    this.queued = false;
    this.failure = undefined;
    this.purged = false;
  }

  /**
   * Queues `records` in order (see `produceInOrder`) and resolves once librdkafka holds them.
   *
   * @throws librdkafka's `produce` error for a record it did not queue; the transaction must be aborted
   */
  async send(records: readonly OutputRecord[]): Promise<void> {
    if (records.length === 0) return;
    this.queued = true;
    await produceInOrder(this.producer(), records, undefined);
  }

  /**
   * The `delivery-report` listener of the transaction's producer (failures only,
   * `delivery.report.only.error`); a report of a producer since replaced must not reach it.
   */
  delivered(err: LibrdkafkaError | null | undefined): void {
    if (!err) return;
    if (PURGED.has(codeOf(err) ?? 0)) this.purged = true;
    else this.failure ??= err;
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
      if (this.failure === undefined && !this.purged) this.onDelivered();
    }
    if (this.failure !== undefined) throw this.failure;
  }
}
