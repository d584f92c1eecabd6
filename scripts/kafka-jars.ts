/**
 * Fetches the Kafka broker jars declared in `kafka/pom.xml` into `kafka/lib/` with Maven
 * (nothing else; for CI caches and offline preparation).
 *
 *   npx tsx scripts/kafka-jars.ts
 */
import { ensureKafkaJars, kafkaJarsPresent } from './lib/kafka-jars.js';
import { kafkaPaths } from './lib/repo-paths.js';

async function main(): Promise<void> {
  if (await kafkaJarsPresent()) {
    console.log(`Kafka broker jars already present in ${kafkaPaths.lib}.`);
    return;
  }
  const began = Date.now();
  console.log(`Fetching the Kafka broker jars into ${kafkaPaths.lib} with Maven ...`);
  await ensureKafkaJars();
  console.log(`Fetched the Kafka broker jars in ${((Date.now() - began) / 1000).toFixed(1)} s.`);
}

main().catch((error: unknown) => {
  console.error(error instanceof Error ? error.message : String(error));
  process.exit(1);
});
