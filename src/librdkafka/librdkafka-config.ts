import { rebalanceTimeoutMs, type GroupConsumerOptions } from '../kafka/group-consumer.js';
import type { KafkaClientOptions } from '../kafka/kafka-client.js';
import type { LibrdkafkaConfig } from './librdkafka-native.js';

/**
 * librdkafka configuration of weir's clients (property names as in librdkafka's
 * CONFIGURATION.md). Pure functions: what each client gets is testable without a broker.
 */

/** Bytes of one buffered record weir assumes when it sizes librdkafka's fetch queues (value, key, headers and overhead). */
export const RECORD_SIZE_ESTIMATE_BYTES = 1_024;

/** How often the group consumer refreshes its topics' metadata (`topic.metadata.refresh.interval.ms`), ms. */
export const METADATA_REFRESH_INTERVAL_MS = 10_000;

/** Properties of every client: brokers, `client.id`, connection timeouts (`failFast`: a few seconds). */
export function commonConfig(options: Pick<KafkaClientOptions, 'brokers' | 'clientId' | 'failFast'>): LibrdkafkaConfig {
  return {
    'bootstrap.servers': options.brokers.join(','),
    'client.id': options.clientId,
    // A broker that closes an idle connection is no problem to report.
    'log.connection.close': false,
    'socket.connection.setup.timeout.ms': options.failFast ? 3_000 : 10_000,
    'reconnect.backoff.max.ms': options.failFast ? 2_000 : 5_000,
  };
}

/**
 * librdkafka's fetch queues, bounded by weir's `--max-buffered-records` (per partition) so a
 * worker's memory stays close to kafkajs': librdkafka prefetches up to `queued.min.messages`
 * records per partition (default 100 000) and up to `queued.max.messages.kbytes` in all
 * (default 64 MiB), fetching `fetch.message.max.bytes` per partition (`max.partition.fetch.bytes`,
 * default 1 MiB) and `fetch.max.bytes` per request (default 50 MiB).
 *
 * With {@link RECORD_SIZE_ESTIMATE_BYTES} per record: one partition's fetch is at most half
 * of its buffer (64 KiB to 1 MiB), the whole queue four partitions' buffers (1 MiB to 64 MiB),
 * and one request the queue (at least one partition's fetch). A partition whose queue is full is
 * fetched again 20 ms later (`fetch.queue.backoff.ms`).
 */
export function fetchQueueConfig(maxBufferedRecords: number, maxBytesPerPartition?: number): LibrdkafkaConfig {
  const bufferBytes = maxBufferedRecords * RECORD_SIZE_ESTIMATE_BYTES;
  const perPartition = maxBytesPerPartition ?? clamp(Math.floor(bufferBytes / 2), 64 * 1_024, 1_048_576);
  const queueKbytes = clamp(Math.ceil((4 * bufferBytes) / 1_024), 1_024, 65_536);
  return {
    'queued.min.messages': maxBufferedRecords,
    'queued.max.messages.kbytes': queueKbytes,
    'fetch.message.max.bytes': perPartition,
    'fetch.max.bytes': Math.max(perPartition, Math.min(52_428_800, queueKbytes * 1_024)),
    // librdkafka waits this long before fetching a partition whose queue was full (default 1 s):
    // with queues this small that wait, not the broker, set the pace (15 k instead of 21 k
    // records/s in bench/run.ts at 100 B).
    'fetch.queue.backoff.ms': 20,
  };
}

/**
 * The worker's group consumer: cooperative-sticky assignment (KIP-429), static membership when
 * `groupInstanceId` is given (KIP-345), no auto commit and no auto offset store (weir commits),
 * `isolation.level` per `readCommitted`, a partition EOF event (to move past trailing
 * transaction markers), a 10 s metadata refresh, and the rebalance timeout (`max.poll.interval.ms`) of the kafkajs
 * binding: at least 60 s.
 */
export function groupConsumerConfig(options: GroupConsumerOptions): LibrdkafkaConfig {
  return {
    'group.id': options.groupId,
    ...(options.groupInstanceId !== undefined ? { 'group.instance.id': options.groupInstanceId } : {}),
    'partition.assignment.strategy': 'cooperative-sticky',
    'session.timeout.ms': options.sessionTimeoutMs,
    'heartbeat.interval.ms': options.heartbeatIntervalMs,
    'max.poll.interval.ms': rebalanceTimeoutMs(options.sessionTimeoutMs),
    'enable.auto.commit': false,
    'enable.auto.offset.store': false,
    'auto.offset.reset': 'earliest',
    'isolation.level': options.readCommitted ? 'read_committed' : 'read_uncommitted',
    'enable.partition.eof': true,
    'allow.auto.create.topics': false,
    'fetch.wait.max.ms': 250,
    // A subscribed topic that the group leader's metadata lacked when it assigned (a broker just
    // restarted, a topic just created) gets its partitions at the next metadata refresh, which
    // triggers the rebalance: 10 s instead of librdkafka's 5 min, so an empty assignment is brief.
    'topic.metadata.refresh.interval.ms': METADATA_REFRESH_INTERVAL_MS,
    ...fetchQueueConfig(options.maxBufferedRecords ?? 2_000, options.maxBytesPerPartition),
  };
}

/** A consumer that reads assigned partitions without joining its group (`readTopicRange`), read_committed. */
export function rangeReaderConfig(groupId: string): LibrdkafkaConfig {
  return {
    'group.id': groupId,
    'enable.auto.commit': false,
    'enable.auto.offset.store': false,
    'auto.offset.reset': 'earliest',
    'isolation.level': 'read_committed',
    'enable.partition.eof': true,
    'allow.auto.create.topics': false,
    'fetch.wait.max.ms': 250,
    ...fetchQueueConfig(2_000),
  };
}

/**
 * The idempotent producer (`enable.idempotence`, `acks=all`): keyed records go where the Java
 * client puts them (`murmur2_random`: murmur2 of the key, unkeyed records spread at random),
 * delivery reports on, a short linger (weir awaits every send's acks, so a long one only adds
 * latency).
 */
export function producerConfig(): LibrdkafkaConfig {
  return {
    'enable.idempotence': true,
    acks: -1,
    partitioner: 'murmur2_random',
    'linger.ms': 2,
    'compression.type': 'none',
    dr_cb: true,
  };
}

/**
 * A transactional producer: {@link producerConfig} with `transactional.id`,
 * `transaction.timeout.ms`, and delivery reports for failed records only
 * (`delivery.report.only.error`): a transaction waits for its records with `flush`, and
 * librdkafka fails its commit when one was not delivered (`TransactionDeliveries`).
 */
export function transactionalProducerConfig(transactionalId: string, transactionTimeoutMs: number): LibrdkafkaConfig {
  return {
    ...producerConfig(),
    'delivery.report.only.error': true,
    'transactional.id': transactionalId,
    'transaction.timeout.ms': transactionTimeoutMs,
  };
}

function clamp(value: number, min: number, max: number): number {
  return Math.min(max, Math.max(min, value));
}
