import { Kafka, logLevel, type LogEntry, type RetryOptions } from 'kafkajs';
import type { Logger } from 'pino';

/** The kafkajs client, as the layers above `kafka/` name it (they never import kafkajs). */
export type KafkaClient = Kafka;

/** Options of {@link createKafka}. */
export interface KafkaClientOptions {
  /** Bootstrap servers, `host:port`. */
  readonly brokers: readonly string[];
  readonly clientId: string;
  readonly logger: Logger;
  /** kafkajs request retries; default 8 retries from 300 ms up to 5 s. */
  readonly retry?: RetryOptions;
  /** Connection timeout, ms; default 3 000. */
  readonly connectionTimeoutMs?: number;
}

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
 * under `component: 'kafkajs'`.
 */
export function createKafka(options: KafkaClientOptions): Kafka {
  const log = options.logger.child({ component: 'kafkajs' });
  return new Kafka({
    clientId: options.clientId,
    brokers: [...options.brokers],
    connectionTimeout: options.connectionTimeoutMs ?? 3_000,
    retry: options.retry ?? { retries: 8, initialRetryTime: 300, maxRetryTime: 5_000 },
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
