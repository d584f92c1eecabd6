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
import { KafkajsRecordProducer } from './kafkajs-record-producer.js';
import { readKafkajsTopicRange } from './kafkajs-topic-range-reader.js';
import { KafkajsTransactionalProducer } from './kafkajs-transactional-producer.js';

/**
 * kafkajs log levels mapped to pino. kafkajs logs retried, recoverable protocol errors
 * (e.g. `COORDINATOR_LOAD_IN_PROGRESS`, `CONCURRENT_TRANSACTIONS`) at ERROR; weir reports
 * failures that matter itself, so kafkajs' ERROR becomes `warn` and INFO becomes `debug`.
 */
const LEVELS: Record<number, 'warn' | 'debug' | 'trace'> = {
  [logLevel.ERROR]: 'warn',
  [logLevel.WARN]: 'warn',
  [logLevel.INFO]: 'debug',
  [logLevel.DEBUG]: 'trace',
};

/**
 * The one place weir builds a kafkajs client. kafkajs logs go to the worker's pino logger,
 * under `component: 'kafkajs'`. With `failFast` (CLI tools) kafkajs retries for about 3 s
 * before giving up, so a stopped broker is reported quickly.
 */
function createKafka(options: KafkaClientOptions): Kafka {
  const log = options.logger.child({ component: 'kafkajs' });
  return new Kafka({
    clientId: options.clientId,
    brokers: [...options.brokers],
    connectionTimeout: 3_000,
    retry: options.failFast
      ? { retries: 3, initialRetryTime: 250, maxRetryTime: 2_000 }
      : { retries: 8, initialRetryTime: 300, maxRetryTime: 5_000 },
    logLevel: logLevel.DEBUG,
    logCreator:
      () =>
      ({ namespace, level, log: entry }: LogEntry) => {
        const method = LEVELS[level] ?? 'debug';
        if (!log.isLevelEnabled(method)) return;
        const { message, timestamp: _timestamp, logger: _logger, ...rest } = entry as { message: string; [key: string]: unknown };
        log[method]({ namespace, ...rest }, message);
      },
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
