import type { Logger } from 'pino';
import { MissingSourceTopicError } from '../errors.js';
import type { KafkaAdmin } from '../kafka/kafka-admin.js';
import { producedTopics, type CompiledTopology } from '../topology/compiled-topology.js';

/**
 * Checks the topology's topics at start: every source topic must exist; missing sink, DLQ
 * and retry-tier topics are created with the partitions their node asks for, else
 * `defaultPartitions`, else the partition count of their sub-topology's source.
 *
 * @returns the partition count of every source topic
 * @throws MissingSourceTopicError naming the missing source topics
 */
export async function ensureTopics(
  topology: CompiledTopology,
  admin: KafkaAdmin,
  logger: Logger,
  defaultPartitions?: number,
): Promise<Map<string, number>> {
  const sources = topology.subtopologies.toArray().map((s) => s.source.topic);
  const produced = producedTopics(topology);
  const counts = await admin.partitionCounts([...sources, ...produced.map((p) => p.topic)]);
  const missingSources = sources.filter((t) => !counts.has(t));
  if (missingSources.length > 0) throw new MissingSourceTopicError(missingSources);
  const toCreate = produced
    .filter((p) => !counts.has(p.topic))
    .map((p) => ({ topic: p.topic, partitions: p.partitions ?? defaultPartitions ?? counts.get(p.sourceTopic)! }));
  if (toCreate.length > 0) {
    if (await admin.createTopics(toCreate)) logger.info({ topics: toCreate }, `created ${toCreate.length} topic(s)`);
    else logger.debug({ topics: toCreate }, 'topics created meanwhile by another worker');
  }
  return new Map(sources.map((t) => [t, counts.get(t)!]));
}
