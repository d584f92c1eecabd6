import { randomUUID } from 'node:crypto';
import type { Logger } from 'pino';
import type { KafkaAdmin } from '../kafka/kafka-admin.js';
import type { KafkaClient } from '../kafka/kafka-client.js';
import { ParkedRecords } from '../runtime/parked-records.js';
import { consumedTopics, producedTopics, type CompiledTopology } from '../topology/compiled-topology.js';
import { processorOfParkedChangelog } from '../topology/topic-names.js';
import { readParkedPartitions } from './restore-parked.js';

/** A parked-records changelog of the application that no processor of the topology restores. */
export interface OrphanChangelog {
  readonly topic: string;
  /** The processor it is named after (`<application.id>.<processor>.parked`): the one that had `retry.order: 'key'`. */
  readonly processor: string;
  /** Parked records of the topology's sources still in it (heads and the records waiting behind them), over its partitions. */
  readonly records: number;
  /** Keys those records belong to. */
  readonly keys: number;
  /** Partitions whose entries cannot be read back (their records are not counted). */
  readonly unreadable: number;
}

/**
 * The application's parked-records changelogs (`<application.id>.<processor>.parked`) that hold
 * parked records although no processor of `topology` keeps key order under that name: the
 * topology dropped `retry.order: 'key'` (or renamed the processor) while records were parked.
 * Those records are not processed by anyone; a worker start logs them (see
 * {@link warnOfOrphanChangelogs}). Only records read from the topology's source topics count:
 * a changelog without any (empty, decided, or another application's whose id extends this one's)
 * is not returned. Each is read in a throwaway group that commits nothing.
 *
 * @throws the client's error when Kafka fails
 */
export async function orphanChangelogs(topology: CompiledTopology, client: KafkaClient, admin: KafkaAdmin): Promise<OrphanChangelog[]> {
  const used = new Set([...consumedTopics(topology), ...producedTopics(topology).map((p) => p.topic)]);
  const sources = new Set(topology.subtopologies.toArray().map((s) => s.source.topic));
  const candidates = (await admin.listTopics()).filter((t) => !used.has(t)).sort();
  const orphans: OrphanChangelog[] = [];
  for (const topic of candidates) {
    const processor = processorOfParkedChangelog(topology.applicationId, topic);
    if (processor === undefined) continue;
    const read = await readParkedPartitions(client, admin, topic, `${topology.applicationId}.orphan-check.${randomUUID()}`);
    const readable = [...read.values()].filter((p): p is ParkedRecords => p instanceof ParkedRecords);
    // Only records of this topology's sources: an application whose id extends this one's
    // (`orders.eu` next to `orders`) names its changelogs alike.
    const lists = readable.flatMap((p) => [...p.snapshot().values()]).filter((list) => sources.has(list.first()?.record.topic ?? ''));
    const records = lists.reduce((n, list) => n + list.size, 0);
    if (records > 0) orphans.push({ topic, processor, records, keys: lists.length, unreadable: read.size - readable.length });
  }
  return orphans;
}

/**
 * Logs (`warn`) each {@link orphanChangelogs} entry at a worker's start, naming the topic and
 * what it holds, so records parked under a processor that no longer keeps key order are not
 * forgotten silently. A failure to check is logged (`warn`) and does not stop the start.
 */
export async function warnOfOrphanChangelogs(
  topology: CompiledTopology,
  client: KafkaClient,
  admin: KafkaAdmin,
  logger: Logger,
): Promise<void> {
  let orphans: OrphanChangelog[];
  try {
    orphans = await orphanChangelogs(topology, client, admin);
  } catch (error) {
    logger.warn({ err: error }, 'could not check for parked-records changelogs the topology no longer restores');
    return;
  }
  for (const o of orphans)
    logger.warn(
      { changelog: o.topic, processor: o.processor, records: o.records, keys: o.keys, unreadablePartitions: o.unreadable },
      `changelog topic '${o.topic}' holds ${o.records} parked record(s) of ${o.keys} key(s) that no processor of this topology ` +
        `restores (no processor '${o.processor}' has retry order 'key' first in its chain): they are not processed. Put order 'key' back on ` +
        `processor '${o.processor}' (under that name) until weir_parked_records is 0, then remove it`,
    );
}
