/**
 * Stops the local Kafka broker started by `scripts/kafka-start.ts` (pid in `.kafka/broker.pid`),
 * keeping its data in `.kafka/data`.
 *
 *   npx tsx scripts/kafka-stop.ts [--redis] [--kill]
 *
 * `--redis` also stops a `redis-server` that `kafka-start --redis` started (never another one).
 * `--kill` sends SIGKILL at once instead of a clean shutdown.
 */
import { parseArgs } from 'node:util';
import { stopBroker } from './lib/kafka-broker.js';
import { DEFAULT_REDIS_URL, stopRedis } from './lib/redis-server.js';

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: { redis: { type: 'boolean', default: false }, kill: { type: 'boolean', default: false } },
  });
  const began = Date.now();
  const stopped = await stopBroker({ hard: values.kill });
  console.log(
    stopped
      ? `Kafka stopped in ${((Date.now() - began) / 1000).toFixed(1)} s.`
      : 'No Kafka broker started by kafka:start is running (nothing to stop).',
  );
  if (values.redis) {
    console.log((await stopRedis(DEFAULT_REDIS_URL)) ? 'Redis stopped.' : 'No Redis started by kafka:start is running.');
  }
}

main().catch((error: unknown) => {
  console.error(error instanceof Error ? error.message : String(error));
  process.exit(1);
});
