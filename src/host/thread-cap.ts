import type { Logger } from 'pino';
import { createKafkaClient } from '../config/kafka-clients.js';
import type { WorkerConfig } from '../config/worker-config.js';
import type { KafkaAdmin } from '../kafka/kafka-admin.js';
import { consumedTopics, producedTopics, type CompiledTopology } from '../topology/compiled-topology.js';
import { withinTimeout } from '../failure/within-timeout.js';

/** How long {@link countMaxTasks} may wait for the broker's partition counts, ms. */
const COUNT_TIMEOUT_MS = 10_000;

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
 * {@link maxTasks}, asked of the broker by an admin client of its own before the process starts
 * its threads (for the `--threads` cap and the exactly_once partition warning). The client
 * gives up within seconds (`failFast`), and the whole count within 10 s: both uses only advise.
 *
 * @returns the partitions, or undefined when the broker cannot be asked (the threads' start
 *   reports the broker)
 */
export async function countMaxTasks(topology: CompiledTopology, config: WorkerConfig, logger: Logger): Promise<number | undefined> {
  let partitions: number | undefined;
  const ask = (async () => {
    const client = await createKafkaClient(config.client, {
      brokers: config.brokers,
      clientId: `${topology.applicationId}-partition-count`,
      logger: logger.child({ component: 'partition-count' }),
      failFast: true,
    });
    const admin = client.admin();
    await admin.connect();
    try {
      partitions = await maxTasks(topology, admin, config.topicPartitions);
    } finally {
      await admin.disconnect().catch(() => undefined);
    }
  })().catch((error: unknown) => logger.debug({ err: error }, "could not count the application's partitions"));
  await withinTimeout(ask, COUNT_TIMEOUT_MS);
  return partitions;
}

/**
 * `--threads` above the tasks the process can ever get ({@link maxTasks}) is capped to that
 * number, with one `info` line: the extra threads would join the group, take nothing and cost a
 * consumer, producers and a V8 heap each (`--threads 99` on 3 partitions took 77 s and 13
 * generations to settle at 5.8 GB). When the broker cannot be asked ({@link countMaxTasks}
 * gives undefined), the config is returned unchanged: the threads' start reports the broker.
 *
 * @param partitionsOf - the application's partitions ({@link countMaxTasks}), asked only when
 *   `config.threads` is above 1
 * @returns the config, with `threads` capped when it was above the application's partitions
 */
export async function capThreads(
  config: WorkerConfig,
  partitionsOf: () => Promise<number | undefined>,
  logger: Logger,
): Promise<WorkerConfig> {
  if (config.threads <= 1) return config;
  const partitions = await partitionsOf();
  if (partitions === undefined || partitions <= 0 || config.threads <= partitions) return config;
  logger.info(
    { threads: config.threads, cappedTo: partitions },
    `--threads ${config.threads} capped at ${partitions}: the application has ${partitions} partition(s) to consume (sources and retry tiers), so more threads would take none`,
  );
  return { ...config, threads: partitions };
}
