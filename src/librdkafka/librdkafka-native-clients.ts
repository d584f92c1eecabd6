import type { KafkaClientOptions } from '../kafka/kafka-client.js';
import { commonConfig } from './librdkafka-config.js';
import type { LibrdkafkaLogRouter } from './librdkafka-log-router.js';
import {
  call,
  loadLibrdkafka,
  type LibrdkafkaConfig,
  type LibrdkafkaModule,
  type NativeAdmin,
  type NativeConsumer,
  type NativeProducer,
} from './librdkafka-native.js';

/** How long `connect()` waits for the cluster's metadata, ms (`failFast`: CLI tools). */
export function connectTimeoutMs(failFast: boolean | undefined): number {
  return failFast ? 5_000 : 15_000;
}

/**
 * Builds the binding's clients of one {@link LibrdkafkaClient}: the common configuration
 * (brokers, `client.id`, timeouts) under each client's own, and every client's log and error
 * events to the shared {@link LibrdkafkaLogRouter}.
 */
export class NativeClients {
  readonly module: LibrdkafkaModule;

  constructor(
    readonly options: KafkaClientOptions,
    readonly router: LibrdkafkaLogRouter,
  ) {
    this.module = loadLibrdkafka();
  }

  /** A consumer (not connected). */
  consumer(config: LibrdkafkaConfig): NativeConsumer {
    // No topic configuration object: an empty one would replace the topic-level properties
    // given here (auto.offset.reset, partitioner) with librdkafka's defaults.
    const consumer = new this.module.KafkaConsumer({ ...commonConfig(this.options), ...config });
    consumer.on('event.log', (event) => this.router.logEvent(event));
    consumer.on('event.error', (error) => this.router.errorEvent(error));
    return consumer;
  }

  /** A producer (not connected). */
  producer(config: LibrdkafkaConfig): NativeProducer {
    const producer = new this.module.Producer({ ...commonConfig(this.options), ...config });
    producer.on('event.log', (event) => this.router.logEvent(event));
    producer.on('event.error', (error) => this.router.errorEvent(error));
    return producer;
  }

  /** An admin client: librdkafka makes its handle at once and connects to brokers as requests need them. */
  admin(): NativeAdmin {
    return this.module.AdminClient.create(
      { ...commonConfig(this.options) },
      {
        'event.log': (event) => this.router.logEvent(event),
        'event.error': (error) => this.router.errorEvent(error),
      },
    );
  }

  /**
   * Connects a consumer or producer: librdkafka's handle, then the cluster's metadata, so an
   * unreachable broker fails here. A client that answered becomes the log router's probe for
   * outages.
   *
   * @returns a function that unregisters the probe (call it before disconnecting)
   * @throws the binding's error when no broker answers within {@link connectTimeoutMs}
   */
  async connect(client: NativeConsumer | NativeProducer): Promise<() => void> {
    const timeout = connectTimeoutMs(this.options.failFast);
    await call((cb) => client.connect({ timeout, allTopics: false }, cb));
    this.router.heard();
    return this.router.addProbe(() => call((cb) => client.getMetadata({ timeout: 1_500 }, cb)));
  }

  /**
   * A consumer of `config`'s group that never joins it, connected: a source of the group's
   * metadata or committed offsets only. It is no probe for outages (the group's other clients
   * report those).
   *
   * @throws the binding's error when no broker answers within {@link connectTimeoutMs}
   */
  async nonJoiningConsumer(config: LibrdkafkaConfig): Promise<NativeConsumer> {
    const consumer = this.consumer({ 'enable.auto.commit': false, ...config });
    const removeProbe = await this.connect(consumer);
    removeProbe();
    return consumer;
  }
}
