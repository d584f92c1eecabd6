// What weir depends on failed: Kafka (unreachable, a missing topic, a stalled read), the dedup store, the metrics port.
import { WeirError } from './weir-error.js';

/** No Kafka broker answered: the message names the brokers tried and how to set them. */
export class BrokerUnreachableError extends WeirError {
  readonly brokers: readonly string[];

  constructor(brokers: readonly string[], options?: { cause?: unknown }) {
    const reason = options?.cause instanceof Error ? `: ${options.cause.message}` : '';
    super('WEIR_BROKER_UNREACHABLE', `cannot reach Kafka at ${brokers.join(',')} (set --brokers or KAFKA_BROKERS)${reason}`, options);
    this.brokers = brokers;
  }
}

/**
 * A source topic does not exist at start (Kafka Streams' `MissingSourceTopicException`):
 * weir creates sink, DLQ and retry-tier topics, but never the topics it reads.
 */
export class MissingSourceTopicError extends WeirError {
  readonly topics: readonly string[];

  constructor(topics: readonly string[]) {
    super(
      'WEIR_MISSING_SOURCE_TOPIC',
      `source topic${topics.length > 1 ? 's' : ''} ${topics.map((t) => `'${t}'`).join(', ')} do${topics.length > 1 ? '' : 'es'} not exist; create ${topics.length > 1 ? 'them' : 'it'} first`,
    );
    this.topics = topics;
  }
}

/** Reading a topic (`weir dlq inspect`, `weir dlq replay`) made no progress for its idle timeout. */
export class TopicRangeStalledError extends WeirError {
  constructor(message: string) {
    super('WEIR_TOPIC_STALLED', message);
  }
}

/**
 * A worker's consumer got no assignment for longer than a healthy rebalance takes (the
 * rebalance timeout plus the session timeout): it is stuck in its join. The worker replaces it,
 * as after a crash (`RebalanceWatchdog`).
 */
export class RebalanceStalledError extends WeirError {
  constructor(message: string) {
    super('WEIR_REBALANCE_STALLED', message);
  }
}

/** The dedup store (Redis) failed. What happens next follows `onStoreError`. */
export class DedupStoreError extends WeirError {
  constructor(message: string, options?: { cause?: unknown }) {
    super('WEIR_DEDUP_STORE', message, options);
  }
}

/**
 * The worker could not serve `/metrics`, `/healthz` and `/readyz` on its `--metrics-port`
 * (most often: another process already listens there). A runtime failure (exit 1), not bad input.
 */
export class MetricsPortError extends WeirError {
  readonly port: number;

  /**
   * @param port the `--metrics-port`
   * @param options `host`: the `--metrics-host`, when one was given
   */
  constructor(port: number, options?: { cause?: unknown; host?: string }) {
    const code = (options?.cause as { code?: unknown } | undefined)?.code;
    const reason =
      code === 'EADDRINUSE'
        ? 'the port is already in use'
        : options?.cause instanceof Error
          ? options.cause.message
          : String(options?.cause ?? 'unknown error');
    const where =
      options?.host === undefined ? `port ${port} (--metrics-port)` : `${options.host}:${port} (--metrics-host, --metrics-port)`;
    super('WEIR_METRICS_PORT', `cannot serve metrics and health checks on ${where}: ${reason}`, options);
    this.port = port;
  }
}
