import type { Logger } from 'pino';
import { createKafkaClient } from '../config/kafka-clients.js';
import type { WorkerConfig } from '../config/worker-config.js';
import type { KafkaAdmin } from '../kafka/kafka-admin.js';
import { consumedTopics, producedTopics, type CompiledTopology } from '../topology/compiled-topology.js';
import { withinTimeout } from './within-timeout.js';

/** How long the cap may wait for the broker's partition counts before the threads start uncapped, ms. */
const CAP_TIMEOUT_MS = 10_000;

/**
 * The most tasks the application can ever give one process: the partitions of every topic it
 * consumes — its source topics, and its retry-tier topics (as they are, or as `ensureTopics`
 * will create them: the tier's source partitions unless `--partitions` says otherwise).
 *
 * @throws the client's error when the partition counts cannot be read
 */
export async function maxTasks(topology: CompiledTopology, admin: KafkaAdmin, topicPartitions?: number): Promise<number> {
  const consumed = consumedTopics(topology);
  const tiers = new Map(producedTopics(topology).map((p) => [p.topic, p] as const));
  const counts = await admin.partitionCounts([...new Set([...consumed, ...[...tiers.values()].map((t) => t.sourceTopic)])]);
  return consumed.reduce((sum, topic) => {
    const planned = tiers.get(topic);
    return sum + (counts.get(topic) ?? planned?.partitions ?? topicPartitions ?? counts.get(planned?.sourceTopic ?? '') ?? 0);
  }, 0);
}

/**
 * `--threads` above the tasks the process can ever get ({@link maxTasks}) is capped to that
 * number, with one `info` line: the extra threads would join the group, take nothing and cost a
 * consumer, producers and a V8 heap each (`--threads 99` on 3 partitions took 77 s and 13
 * generations to settle at 5.8 GB). When the broker cannot be asked (unreachable, or no answer
 * within 10 s), the config is returned unchanged: the threads' start reports the broker.
 *
 * @returns the config, with `threads` capped when it was above the application's partitions
 */
export async function capThreads(topology: CompiledTopology, config: WorkerConfig, logger: Logger): Promise<WorkerConfig> {
  if (config.threads <= 1) return config;
  let partitions: number | undefined;
  const ask = (async () => {
    const client = await createKafkaClient(config.client, {
      brokers: config.brokers,
      clientId: `${topology.applicationId}-thread-cap`,
      logger: logger.child({ component: 'thread-cap' }),
    });
    const admin = client.admin();
    await admin.connect();
    try {
      partitions = await maxTasks(topology, admin, config.topicPartitions);
    } finally {
      await admin.disconnect().catch(() => undefined);
    }
  })().catch((error: unknown) => logger.debug({ err: error }, 'could not count the partitions for --threads; not capping it'));
  await withinTimeout(ask, CAP_TIMEOUT_MS);
  if (partitions === undefined || partitions <= 0 || config.threads <= partitions) return config;
  logger.info(
    { threads: config.threads, cappedTo: partitions },
    `--threads ${config.threads} capped at ${partitions}: the application has ${partitions} partition(s) to consume (sources and retry tiers), so more threads would take none`,
  );
  return { ...config, threads: partitions };
}
