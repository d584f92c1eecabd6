import { setTimeout as sleep } from 'node:timers/promises';
import { IllegalStateError } from '../errors.js';
import { CappedBackoff } from '../failure/capped-backoff.js';
import type { RecordProducerClient } from '../kafka/kafka-client.js';
import type { OutputRecord } from '../record/record-types.js';
import { producerConfig } from './librdkafka-config.js';
import { DeliveryTracker } from './librdkafka-delivery.js';
import { isFatalError } from './librdkafka-errors.js';
import { call, type NativeProducer } from './librdkafka-native.js';
import type { NativeClients } from './librdkafka-native-clients.js';

/** How long `disconnect()` lets librdkafka deliver what is queued, ms. */
const FLUSH_TIMEOUT_MS = 10_000;

/**
 * The at_least_once {@link RecordProducerClient} on librdkafka's producer (the binding's
 * node-rdkafka-style `Producer`): idempotent (`enable.idempotence`, `acks=all`), keyed records
 * partitioned like the Java client (`murmur2_random`), shared by a worker's tasks. librdkafka
 * batches concurrent sends itself (`linger.ms`), polls delivery reports on its own thread, and
 * retries while the broker is unreachable until `message.timeout.ms` (5 min): `send` resolves
 * when every record is acknowledged and rejects when any failed (the task sends them again).
 * Records of one `send` keep their order within each partition.
 *
 * A fatal error (librdkafka's idempotent producer raises one when it cannot keep its sequence
 * guarantees, e.g. after an unrecoverable `OUT_OF_ORDER_SEQUENCE_NUMBER`) ends a librdkafka
 * producer instance for good: every later `produce` fails with `ERR__FATAL`. The send that meets
 * it fails as usual, and the instance is replaced by a new one (new producer id) in the
 * background, as librdkafka's documentation asks, retried until it connects; sends meanwhile
 * fail with an IllegalStateError. Tasks retry their sends, so nothing is lost: at_least_once
 * allows the duplicates of records the old instance had delivered unacknowledged.
 */
export class LibrdkafkaRecordProducer implements RecordProducerClient {
  private producer: NativeProducer | undefined;
  private removeProbe: (() => void) | undefined;
  private readonly deliveries: DeliveryTracker;
  /** The replacement of an instance that failed fatally, while under way. */
  private replacing: Promise<void> | undefined;
  private disconnected = false;

  constructor(private readonly clients: NativeClients) {
    this.deliveries = new DeliveryTracker(
      () => {
        if (this.producer === undefined) throw new IllegalStateError('the librdkafka producer is not connected');
        return this.producer;
      },
      () => clients.router.heard(),
    );
  }

  /** @throws the binding's error when the broker cannot be reached */
  async connect(): Promise<void> {
    const producer = this.clients.producer(producerConfig());
    producer.on('delivery-report', (err, report) => this.deliveries.delivered(err, report));
    this.removeProbe = await this.clients.connect(producer);
    producer.setPollInBackground(true);
    this.producer = producer;
  }

  async send(records: readonly OutputRecord[]): Promise<void> {
    try {
      await this.deliveries.send(records);
    } catch (error) {
      if (isFatalError(error)) this.replacing ??= this.replace(error).finally(() => (this.replacing = undefined));
      throw error;
    }
  }

  async disconnect(): Promise<void> {
    this.disconnected = true;
    await this.replacing;
    const producer = this.producer;
    this.producer = undefined;
    this.removeProbe?.();
    if (producer === undefined) return;
    await call((cb) => producer.flush(FLUSH_TIMEOUT_MS, cb)).catch(() => undefined);
    await call((cb) => producer.disconnect(cb));
  }

  /** Destroys the instance that failed fatally with `error`, and connects a new one (backing off 1–10 s while that fails). */
  private async replace(error: unknown): Promise<void> {
    const failed = this.producer;
    this.producer = undefined;
    this.removeProbe?.();
    this.removeProbe = undefined;
    this.clients.router.warn(
      { err: error },
      'the librdkafka producer failed fatally; replacing it with a new instance (the tasks retry their sends)',
    );
    // The binding flushes first (up to 5 s): librdkafka fails what the instance still holds.
    if (failed !== undefined) await call((cb) => failed.disconnect(cb)).catch(() => undefined);
    const backoff = new CappedBackoff(1_000, 10_000);
    while (!this.disconnected) {
      try {
        await this.connect();
        return;
      } catch {
        await sleep(backoff.next());
      }
    }
  }
}
