/**
 * The Kafka client binding the integration suite runs on: its vitest project
 * (`integration-kafkajs`, `integration-librdkafka`) sets `WEIR_KAFKA_CLIENT`, which every
 * `weir run|dlq|status` the tests spawn inherits.
 */
import { CLIENT_FEATURES, KAFKA_CLIENTS, type KafkaClientName } from '../../../src/kafka/kafka-client.js';

const name = process.env['WEIR_KAFKA_CLIENT'] ?? 'kafkajs';
if (!(KAFKA_CLIENTS as readonly string[]).includes(name))
  throw new Error(`WEIR_KAFKA_CLIENT=${name} is not one of ${KAFKA_CLIENTS.join(', ')}`);

/** The client under test. */
export const CLIENT = name as KafkaClientName;

/**
 * How the client's group consumer moves partitions: kafkajs rebalances eagerly (every task
 * suspends), librdkafka cooperatively (only the tasks of partitions that move stop).
 */
export const REBALANCE_PROTOCOL: 'eager' | 'cooperative' = CLIENT_FEATURES[CLIENT].rebalanceProtocol;

/** A test title that says which client ran it, e.g. `worker logs [librdkafka]`. */
export function onClient(title: string): string {
  return `${title} [${CLIENT}]`;
}
