import type { LogEntry, RetryOptions } from 'kafkajs';
import { Kafka, logLevel } from './kafkajs-library.js';
import type { GroupConsumer, GroupConsumerHandlers, GroupConsumerOptions } from '../kafka/group-consumer.js';
import type { KafkaAdmin } from '../kafka/kafka-admin.js';
import type {
  KafkaClient,
  KafkaClientFeatures,
  KafkaClientOptions,
  RecordProducerClient,
  TransactionalProducerClient,
  TransactionalProducerOptions,
} from '../kafka/kafka-client.js';
import { CLIENT_FEATURES } from '../kafka/kafka-client.js';
import type { TopicRangeReadOptions } from '../kafka/topic-range.js';
import { KafkajsAdmin } from './kafkajs-admin.js';
import { KafkajsGroupConsumer } from './kafkajs-group-consumer.js';
import { KafkajsLogRouter } from './kafkajs-log-router.js';
import { KafkajsRecordProducer } from './kafkajs-record-producer.js';
import { readKafkajsTopicRange } from './kafkajs-topic-range-reader.js';
import { KafkajsTransactionalProducer } from './kafkajs-transactional-producer.js';

/** kafkajs retries of weir's clients: `failFast` (CLI tools) gives up after about 3 s. */
const RETRY: Record<'default' | 'failFast', RetryOptions> = {
  default: { retries: 8, initialRetryTime: 300, maxRetryTime: 5_000 },
  failFast: { retries: 3, initialRetryTime: 250, maxRetryTime: 2_000 },
};

/**
 * Retries of transactional producers: from 20 ms, as the Java producer's `retry.backoff.ms`
 * does after `CONCURRENT_TRANSACTIONS`. A transaction that starts right after the previous one
 * of the same transactional id committed is told `CONCURRENT_TRANSACTIONS` until the
 * coordinator has written the previous one's markers, a matter of milliseconds; kafkajs retried
 * it after its default 300 ms, which at 24 partitions and a 100 ms commit interval summed to
 * minutes of task stall per run (bench/README.md). The retry count is the default's, so an
 * unreachable broker still fails the call within seconds, and the task retries it.
 */
const TRANSACTION_RETRY: RetryOptions = { retries: 8, initialRetryTime: 20, maxRetryTime: 5_000 };

/**
 * The one place weir builds a kafkajs client. kafkajs logs go to the worker's pino logger,
 * under `component: 'kafkajs'`, through a {@link KafkajsLogRouter}: group chatter at `debug`,
 * connection errors aggregated per broker, other problems at `warn`.
 */
function createKafka(options: KafkaClientOptions, router: KafkajsLogRouter, retry: RetryOptions): Kafka {
  return new Kafka({
    clientId: options.clientId,
    brokers: [...options.brokers],
    connectionTimeout: 3_000,
    retry,
    logLevel: logLevel.DEBUG,
    logCreator: () => (entry: LogEntry) => router.route(entry),
  });
}

/**
 * The kafkajs binding of {@link KafkaClient}: pure JavaScript, no native build. kafkajs 2.2.4
 * has no KIP-447, no cooperative rebalancing and no static membership, so exactly_once uses one
 * transactional producer per task (Kafka Streams' first exactly-once design) and every
 * rebalance is eager.
 */
export class KafkajsClient implements KafkaClient {
  readonly name = 'kafkajs' as const;
  readonly features: KafkaClientFeatures = CLIENT_FEATURES.kafkajs;
  private readonly kafka: Kafka;
  /** The same client with {@link TRANSACTION_RETRY}: kafkajs takes a transaction's retries from its client. */
  private readonly transactional: Kafka;

  constructor(options: KafkaClientOptions) {
    const router = new KafkajsLogRouter(options.logger);
    const retry = options.failFast ? RETRY.failFast : RETRY.default;
    this.kafka = createKafka(options, router, retry);
    this.transactional = createKafka(
      options,
      router,
      options.failFast ? { ...TRANSACTION_RETRY, ...RETRY.failFast, initialRetryTime: 20 } : TRANSACTION_RETRY,
    );
  }

  admin(): KafkaAdmin {
    return new KafkajsAdmin(this.kafka);
  }

  recordProducer(): RecordProducerClient {
    return new KafkajsRecordProducer(this.kafka);
  }

  transactionalProducer(options: TransactionalProducerOptions): TransactionalProducerClient {
    return new KafkajsTransactionalProducer(this.transactional, options.transactionalId, options.transactionTimeoutMs);
  }

  groupConsumer(options: GroupConsumerOptions, handlers: GroupConsumerHandlers): GroupConsumer {
    return new KafkajsGroupConsumer(this.kafka, options, handlers);
  }

  readTopicRange(options: TopicRangeReadOptions): Promise<Map<number, number>> {
    return readKafkajsTopicRange(this.kafka, options);
  }
}
