/**
 * True when a Kafka client's error (or an error it wraps) is one the client calls retriable: the
 * cluster is not ready yet (a topic a broker does not know yet, a coordinator loading, a leader
 * moving, a connection lost mid-request), not a refusal.
 *
 * - kafkajs sets `retriable` from the protocol's error codes; once its own retries are spent it
 *   throws `KafkaJSNumberOfRetriesExceeded` (`retriable: false`) wrapping the retriable cause in
 *   `originalError` (or `cause`), so the chain is followed.
 * - @confluentinc/kafka-javascript's `LibrdKafkaError` sets `isRetriable` (librdkafka's
 *   `rd_kafka_error_is_retriable`).
 *
 * weir's own errors (a missing source topic, a bad config) carry neither, so they are not.
 */
export function isRetriableKafkaError(error: unknown, depth = 0): boolean {
  if (typeof error !== 'object' || error === null || depth > 5) return false;
  const e = error as { retriable?: unknown; isRetriable?: unknown; originalError?: unknown; cause?: unknown };
  if (e.retriable === true || e.isRetriable === true) return true;
  return isRetriableKafkaError(e.originalError, depth + 1) || isRetriableKafkaError(e.cause, depth + 1);
}
