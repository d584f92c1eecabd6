import type { OutputRecord } from '../record/record-types.js';
import { ERR, codeOf } from './librdkafka-errors.js';
import type { LibrdkafkaError, NativeDeliveryReport, NativeProducer } from './librdkafka-native.js';
import { toNativeHeaders } from './librdkafka-messages.js';

/** One `send` waiting for its delivery reports: the binding's `opaque` of each of its records. */
interface PendingSend {
  remaining: number;
  error: unknown;
  readonly resolve: () => void;
  readonly reject: (error: unknown) => void;
}

/** Waits after `ERR__QUEUE_FULL` (librdkafka's producer queue is full) before producing again, ms. */
const QUEUE_FULL_WAIT_MS = 5;

/**
 * Produces records through a librdkafka producer and settles when the broker acknowledged all
 * of them (delivery reports, `dr_cb`). The producer must poll in the background
 * (`setPollInBackground(true)`) and route its `delivery-report` events to {@link delivered}.
 */
export class DeliveryTracker {
  /** Counts sends still waiting for reports (disconnect waits for none: librdkafka flushes). */
  private inFlight = 0;

  constructor(
    private readonly producer: () => NativeProducer,
    /** Called on every successful delivery (the broker answers: an outage is over). */
    private readonly onDelivered: () => void = () => undefined,
  ) {}

  /** Sends waiting for acknowledgements. */
  get pending(): number {
    return this.inFlight;
  }

  /**
   * Produces `records` in order (so each partition keeps their order) and resolves when every
   * one is acknowledged; rejects with the first failure (librdkafka's delivery error, e.g.
   * `ERR__MSG_TIMED_OUT` after `message.timeout.ms`) once every record has a report.
   */
  async send(records: readonly OutputRecord[]): Promise<void> {
    const { acknowledged } = await this.enqueue(records);
    await acknowledged;
  }

  /**
   * Produces `records` in order into librdkafka's queue, waiting while it is full
   * (`ERR__QUEUE_FULL`), and resolves once every one is queued — not yet acknowledged. Inside a
   * transaction that is enough: `commitTransaction` delivers every queued record before it
   * commits, and fails (an abortable error) when one could not be delivered.
   *
   * @returns `acknowledged`: settles as {@link send} does, when every record has its delivery
   *   report (rejects with the first failure)
   * @throws the first error of librdkafka's `produce` other than a full queue (an unknown
   *   partition, a record over `message.max.bytes`): that record and the ones after it are not
   *   queued, and none of the batch counts as sent
   */
  async enqueue(records: readonly OutputRecord[]): Promise<{ readonly acknowledged: Promise<void> }> {
    if (records.length === 0) return { acknowledged: Promise.resolve() };
    const producer = this.producer();
    let pending!: PendingSend;
    const done = new Promise<void>((resolve, reject) => {
      pending = { remaining: records.length, error: undefined, resolve, reject };
    });
    // Settled by the reports; whoever takes `acknowledged` sees its outcome.
    done.catch(() => undefined);
    this.inFlight++;
    const acknowledged = done.finally(() => this.inFlight--);
    acknowledged.catch(() => undefined);
    await produceInOrder(producer, records, pending, (error, notQueued) => {
      // Records not produced get no report: count them as failed now.
      pending.error ??= error;
      pending.remaining -= notQueued;
      if (pending.remaining === 0) settle(pending);
    });
    return { acknowledged };
  }

  /** The producer's `delivery-report` listener. */
  delivered(err: LibrdkafkaError | null | undefined, report: NativeDeliveryReport): void {
    const pending = report.opaque as PendingSend | undefined;
    if (pending === undefined || typeof pending.remaining !== 'number') return;
    if (err) pending.error ??= err;
    if (--pending.remaining > 0) return;
    if (pending.error === undefined) this.onDelivered();
    settle(pending);
  }
}

/**
 * Produces `records` in order (so each partition keeps their order) into librdkafka's queue,
 * each with `opaque` (its delivery report's), waiting while the queue is full
 * (`ERR__QUEUE_FULL`): resolves once every record is queued, not yet acknowledged.
 *
 * @param refused called before the throw with the error and how many records were not queued
 * @throws the first error of librdkafka's `produce` other than a full queue (an unknown
 *   partition, a record over `message.max.bytes`): that record and the ones after it are not queued
 */
export async function produceInOrder(
  producer: NativeProducer,
  records: readonly OutputRecord[],
  opaque: unknown,
  refused: (error: unknown, notQueued: number) => void = () => undefined,
): Promise<void> {
  for (let i = 0; i < records.length; i++) {
    const r = records[i]!;
    for (let wait = QUEUE_FULL_WAIT_MS; ; wait = Math.min(100, wait * 2)) {
      try {
        producer.produce(r.topic, r.partition ?? null, r.value, r.key, r.timestamp ?? null, opaque, toNativeHeaders(r.headers));
        break;
      } catch (error) {
        if (codeOf(error) !== ERR.QUEUE_FULL) {
          refused(error, records.length - i);
          throw error;
        }
        await new Promise((resolve) => setTimeout(resolve, wait));
      }
    }
  }
}

function settle(pending: PendingSend): void {
  if (pending.error === undefined) pending.resolve();
  else pending.reject(pending.error);
}
