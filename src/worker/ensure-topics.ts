import type { Logger } from 'pino';
import { MissingSourceTopicError, ParkedStateError } from '../errors.js';
import type { KafkaAdmin } from '../kafka/kafka-admin.js';
import { producedTopics, type CompiledTopology } from '../topology/compiled-topology.js';

/**
 * Checks the topology's topics at start: every source topic must exist; missing sink, DLQ
 * and retry-tier topics are created with the partitions their node asks for, else
 * `defaultPartitions`, else the partition count of their sub-topology's source. A parked-records
 * changelog (`order: 'key'`) is created compacted with its source's partition count.
 *
 * @returns the partition count of every source topic
 * @throws MissingSourceTopicError naming the missing source topics
 * @throws ParkedStateError when a changelog topic exists with another partition count than its source
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
  for (const p of produced) {
    const [have, want] = [counts.get(p.topic), counts.get(p.sourceTopic)!];
    if (p.changelog && have !== undefined && have !== want)
      throw new ParkedStateError(
        `changelog topic '${p.topic}' has ${have} partition(s) but its source '${p.sourceTopic}' has ${want}: ` +
          'task n restores from partition n, so they must match (delete the changelog only when no record is parked)',
      );
  }
  const toCreate = produced
    .filter((p) => !counts.has(p.topic))
    .map((p) =>
      p.changelog
        ? { topic: p.topic, partitions: counts.get(p.sourceTopic)!, config: { 'cleanup.policy': 'compact' } }
        : { topic: p.topic, partitions: p.partitions ?? defaultPartitions ?? counts.get(p.sourceTopic)! },
    );
  if (toCreate.length > 0) {
    if (await admin.createTopics(toCreate)) logger.info({ topics: toCreate }, `created ${toCreate.length} topic(s)`);
    else logger.debug({ topics: toCreate }, 'topics created meanwhile by another worker');
  }
  return new Map(sources.map((t) => [t, counts.get(t)!]));
}
