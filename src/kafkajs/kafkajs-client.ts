import { Kafka, logLevel, type LogEntry } from 'kafkajs';
import type { GroupConsumer, GroupConsumerHandlers, GroupConsumerOptions } from '../kafka/group-consumer.js';
import type { KafkaAdmin } from '../kafka/kafka-admin.js';
import type {
  KafkaClient,
  KafkaClientOptions,
  RecordProducerClient,
  TransactionalProducerClient,
  TransactionalProducerOptions,
} from '../kafka/kafka-client.js';
import type { TopicRangeReadOptions } from '../kafka/topic-range.js';
import { KafkajsAdmin } from './kafkajs-admin.js';
import { KafkajsGroupConsumer } from './kafkajs-group-consumer.js';
import { KafkajsLogRouter } from './kafkajs-log-router.js';
import { KafkajsRecordProducer } from './kafkajs-record-producer.js';
import { readKafkajsTopicRange } from './kafkajs-topic-range-reader.js';
import { KafkajsTransactionalProducer } from './kafkajs-transactional-producer.js';

/**
 * The one place weir builds a kafkajs client. kafkajs logs go to the worker's pino logger,
 * under `component: 'kafkajs'`, through a {@link KafkajsLogRouter}: group chatter at `debug`,
 * connection errors aggregated per broker, other problems at `warn`. With `failFast` (CLI
 * tools) kafkajs retries for about 3 s before giving up, so a stopped broker is reported quickly.
 */
function createKafka(options: KafkaClientOptions): Kafka {
  const router = new KafkajsLogRouter(options.logger);
  return new Kafka({
    clientId: options.clientId,
    brokers: [...options.brokers],
    connectionTimeout: 3_000,
    retry: options.failFast
      ? { retries: 3, initialRetryTime: 250, maxRetryTime: 2_000 }
      : { retries: 8, initialRetryTime: 300, maxRetryTime: 5_000 },
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
  private readonly kafka: Kafka;

  constructor(options: KafkaClientOptions) {
    this.kafka = createKafka(options);
  }

  admin(): KafkaAdmin {
    return new KafkajsAdmin(this.kafka);
  }

  recordProducer(): RecordProducerClient {
    return new KafkajsRecordProducer(this.kafka);
  }

  transactionalProducer(options: TransactionalProducerOptions): TransactionalProducerClient {
    return new KafkajsTransactionalProducer(this.kafka, options.transactionalId, options.transactionTimeoutMs);
  }

  groupConsumer(options: GroupConsumerOptions, handlers: GroupConsumerHandlers): GroupConsumer {
    return new KafkajsGroupConsumer(this.kafka, options, handlers);
  }

  readTopicRange(options: TopicRangeReadOptions): Promise<Map<number, number>> {
    return readKafkajsTopicRange(this.kafka, options);
  }
}
