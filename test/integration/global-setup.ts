/**
 * Vitest global setup of the `integration` project: makes sure a Kafka broker and Redis answer
 * before the integration tests run, starting the local ones (scripts/lib/kafka-broker.ts, redis-server.ts) when
 * they do not, and stopping at the end only what it started.
 *
 * Tests read the addresses with `inject('kafkaBrokers')` / `inject('redisUrl')` (also exported
 * to the environment as KAFKA_BROKERS / REDIS_URL). Set KAFKA_BROKERS or REDIS_URL to use other
 * servers; those must already run (only the local defaults are started here).
 */
import type { TestProject } from 'vitest/node';
import { DEFAULT_BROKERS } from '../../scripts/lib/broker-instance.js';
import { brokerAnswers, startBroker, stopBroker } from '../../scripts/lib/kafka-broker.js';
import { DEFAULT_REDIS_URL, ensureRedis, stopRedisIfStarted } from '../../scripts/lib/redis-server.js';

declare module 'vitest' {
  export interface ProvidedContext {
    /** Kafka bootstrap servers, comma-separated `host:port`. */
    kafkaBrokers: string;
    /** Redis URL, e.g. `redis://127.0.0.1:6379`. */
    redisUrl: string;
  }
}

/**
 * Starts what is missing and provides the addresses to the tests.
 *
 * @returns the teardown, which stops the broker and Redis only if this setup started them.
 * @throws Error when a non-default KAFKA_BROKERS does not answer, or the local broker or Redis
 *   cannot be started (the message includes the end of the broker log).
 */
export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const brokers = process.env['KAFKA_BROKERS'] ?? DEFAULT_BROKERS;
  const redisUrl = process.env['REDIS_URL'] ?? DEFAULT_REDIS_URL;

  let brokerStartedByUs = false;
  if (brokers === DEFAULT_BROKERS) {
    const began = Date.now();
    const broker = await startBroker();
    brokerStartedByUs = broker.startedByUs;
    if (brokerStartedByUs) console.log(`[global-setup] started Kafka (pid ${broker.pid}) in ${Date.now() - began} ms`);
  } else if (!(await brokerAnswers(brokers, 10_000))) {
    throw new Error(`KAFKA_BROKERS=${brokers} does not answer; start that broker or unset KAFKA_BROKERS.`);
  }

  let redis: Awaited<ReturnType<typeof ensureRedis>>;
  try {
    redis = await ensureRedis(redisUrl);
  } catch (error) {
    if (brokerStartedByUs) await stopBroker();
    throw error;
  }
  if (redis.startedByUs) console.log(`[global-setup] started Redis (pid ${redis.pid}) on ${redisUrl}`);

  process.env['KAFKA_BROKERS'] = brokers;
  process.env['REDIS_URL'] = redisUrl;
  project.provide('kafkaBrokers', brokers);
  project.provide('redisUrl', redisUrl);

  return async () => {
    // A test may have restarted the broker: stopBroker() stops whichever pid is recorded now.
    if (brokerStartedByUs && (await stopBroker())) console.log('[global-setup] stopped Kafka');
    if (await stopRedisIfStarted(redis, redisUrl)) console.log('[global-setup] stopped Redis');
  };
}
