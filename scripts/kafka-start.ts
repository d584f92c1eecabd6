/**
 * Starts the local single-node Kafka broker (127.0.0.1:9092) unless one already answers.
 *
 *   npx tsx scripts/kafka-start.ts [--redis]
 *
 * `--redis` also starts `redis-server` on 127.0.0.1:6379 when Redis does not answer.
 * Exits with code 1 and the reason (with the end of the broker log) when the broker cannot start.
 */
import { parseArgs } from 'node:util';
import { DEFAULT_BROKERS } from './lib/broker-instance.js';
import { startBroker } from './lib/kafka-broker.js';
import { ensureKafkaJars, kafkaJarsPresent } from './lib/kafka-jars.js';
import { DEFAULT_REDIS_URL, ensureRedis } from './lib/redis-server.js';
import { kafkaPaths } from './lib/repo-paths.js';

async function main(): Promise<void> {
  const { values } = parseArgs({ options: { redis: { type: 'boolean', default: false } } });
  const began = Date.now();
  if (!(await kafkaJarsPresent())) {
    console.log(`Fetching the Kafka broker jars into ${kafkaPaths.lib} with Maven ...`);
    await ensureKafkaJars();
    console.log(`Fetched the Kafka broker jars in ${((Date.now() - began) / 1000).toFixed(1)} s.`);
  }
  const startedAt = Date.now();
  const broker = await startBroker();
  const seconds = ((Date.now() - startedAt) / 1000).toFixed(1);
  if (broker.startedByUs) {
    console.log(`Kafka started on ${DEFAULT_BROKERS}: pid ${broker.pid} in ${seconds} s (log: ${kafkaPaths.brokerLog}).`);
  } else {
    console.log(`Kafka already running on ${DEFAULT_BROKERS}${broker.pid === undefined ? '' : ` (pid ${broker.pid})`}.`);
  }
  if (values.redis) {
    const redis = await ensureRedis(DEFAULT_REDIS_URL);
    console.log(
      redis.startedByUs ? `Redis started on ${DEFAULT_REDIS_URL} (pid ${redis.pid}).` : `Redis already running on ${DEFAULT_REDIS_URL}.`,
    );
  }
}

main().catch((error: unknown) => {
  console.error(error instanceof Error ? error.message : String(error));
  process.exit(1);
});
