import type { Logger } from 'pino';
import { CappedBackoff } from '../failure/capped-backoff.js';
import { isRetriableKafkaError } from '../kafka/retriable-kafka-error.js';

/** Options of {@link retryWhileRetriable}. Times in ms. */
export interface RetryWhileRetriableOptions {
  /** What the step does, for the log (`checking the topics`, `joining the group`). */
  readonly step: string;
  readonly logger: Logger;
  /** Throws when the caller gave up meanwhile (the worker is stopping); called before each retry. */
  readonly stillWanted: () => void;
  /** Pacing of the retries; default 500 ms doubling to 10 s. */
  readonly backoff?: CappedBackoff;
  /** Waits `ms`; default a timer (tests inject a manual clock's). */
  readonly sleep?: (ms: number) => Promise<void>;
}

/**
 * Runs a start step of a worker until it succeeds, trying it again after a backoff while it fails
 * with an error the Kafka client calls retriable ({@link isRetriableKafkaError}): a broker that
 * is restarting, or that does not know yet of a topic another worker created a moment ago. Each
 * retry logs one `warn` with the error and the delay. Any other error is thrown at once — as a
 * Kafka Streams thread keeps retrying a cluster that is not ready, and fails on a refusal.
 *
 * @returns the step's result
 * @throws the step's first non-retriable error, or what `stillWanted` throws
 */
export async function retryWhileRetriable<T>(run: () => Promise<T>, options: RetryWhileRetriableOptions): Promise<T> {
  const backoff = options.backoff ?? new CappedBackoff(500, 10_000);
  const sleep = options.sleep ?? ((ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms)));
  for (;;) {
    try {
      return await run();
    } catch (error) {
      if (!isRetriableKafkaError(error)) throw error;
      const delayMs = backoff.next();
      options.logger.warn(
        { err: error, attempt: backoff.failures, retryInMs: delayMs },
        `${options.step}: the Kafka cluster is not ready (retriable error); retrying`,
      );
      await sleep(delayMs);
      options.stillWanted();
    }
  }
}
