import { IllegalStateError } from '../errors.js';
import type { RecordProducerClient } from '../kafka/kafka-client.js';
import type { OutputRecord } from '../record/record-types.js';
import { producerConfig } from './librdkafka-config.js';
import { DeliveryTracker } from './librdkafka-delivery.js';
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
 */
export class LibrdkafkaRecordProducer implements RecordProducerClient {
  private producer: NativeProducer | undefined;
  private removeProbe: (() => void) | undefined;
  private readonly deliveries: DeliveryTracker;

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

  send(records: readonly OutputRecord[]): Promise<void> {
    return this.deliveries.send(records);
  }

  async disconnect(): Promise<void> {
    const producer = this.producer;
    this.producer = undefined;
    this.removeProbe?.();
    if (producer === undefined) return;
    await call((cb) => producer.flush(FLUSH_TIMEOUT_MS, cb)).catch(() => undefined);
    await call((cb) => producer.disconnect(cb));
  }
}
