import { randomUUID } from 'node:crypto';
import type { KafkaAdmin } from '../kafka/kafka-admin.js';
import type { KafkaClient } from '../kafka/kafka-client.js';
import { topicRanges, type OffsetRange } from '../kafka/topic-range.js';
import type { InputRecord, TopicPartition } from '../record/record-types.js';
import { taskId } from '../record/task-id.js';
import { ParkedStateError } from '../errors.js';
import { readParkedChangelog } from '../runtime/parked-changelog.js';
import { ParkedRecords } from '../runtime/parked-records.js';
import { routeOf, type CompiledTopology } from '../topology/compiled-topology.js';

/**
 * The parked records of the new source tasks of `order: 'key'` sub-topologies, rebuilt from
 * their partitions of the changelog topic, as Kafka Streams restores a state store from its
 * changelog before a task runs. Each changelog is read once for all of `partitions` (see
 * {@link readParkedPartitions}). Call it once the tasks' transactions are settled (kafkajs: after
 * each task producer's `InitProducerId`; exactly_once_v2: after the start offsets read stable),
 * so no transaction of a predecessor can still add to a changelog partition.
 *
 * @returns task id (`<topic>-<partition>`) → its parked records, or the `ParkedStateError` (naming
 *   `topic-partition@offset`) of a changelog partition that cannot be read back; only for the
 *   tasks that keep key order
 * @throws the client's error when the changelog cannot be read
 */
export async function restoreParked(
  topology: CompiledTopology,
  client: KafkaClient,
  admin: KafkaAdmin,
  partitions: readonly TopicPartition[],
): Promise<Map<string, ParkedRecords | ParkedStateError>> {
  const byChangelog = new Map<string, TopicPartition[]>();
  for (const tp of partitions) {
    const route = routeOf(topology, tp.topic);
    const changelog = route?.tier === null ? route.subtopology.parkedTopic : null;
    if (changelog === null || changelog === undefined) continue;
    byChangelog.set(changelog, [...(byChangelog.get(changelog) ?? []), tp]);
  }
  const restored = new Map<string, ParkedRecords | ParkedStateError>();
  for (const [changelog, tps] of byChangelog) {
    const read = await readParkedPartitions(client, admin, changelog, `${topology.applicationId}.restore.${randomUUID()}`, {
      partitions: tps.map((tp) => tp.partition),
    });
    for (const tp of tps) restored.set(taskId(tp), read.get(tp.partition) ?? new ParkedRecords());
  }
  return restored;
}

/**
 * Reads partitions of a parked-records changelog from their start to their end offset now (the
 * last stable offset: read_committed), in `groupId`, a throwaway group that commits nothing, and
 * rebuilds each partition's parked records. `weir status` and the worker's start check read the
 * same way.
 *
 * @param options.partitions - the partitions to read; all of the topic's when absent
 * @returns partition → its parked records (empty when it holds none), or the `ParkedStateError`
 *   naming `topic-partition@offset` of a partition that cannot be read back. Empty when the topic
 *   does not exist.
 * @throws the client's error when the topic cannot be read
 */
export async function readParkedPartitions(
  client: KafkaClient,
  admin: KafkaAdmin,
  changelog: string,
  groupId: string,
  options: { readonly partitions?: readonly number[] } = {},
): Promise<Map<number, ParkedRecords | ParkedStateError>> {
  const all = (await topicRanges(admin, changelog)) ?? new Map<number, OffsetRange>();
  const wanted = options.partitions ?? [...all.keys()];
  const ranges = new Map(wanted.flatMap((p) => (all.has(p) ? [[p, all.get(p)!] as const] : [])));
  const records = new Map<number, InputRecord[]>();
  if ([...ranges.values()].some((r) => r.to > r.from))
    await client.readTopicRange({
      topic: changelog,
      groupId,
      ranges,
      commit: false,
      onRecords: async (batch) => {
        for (const record of batch) {
          const list = records.get(record.partition);
          if (list === undefined) records.set(record.partition, [record]);
          else list.push(record);
        }
      },
    });
  const read = new Map<number, ParkedRecords | ParkedStateError>();
  for (const partition of wanted) {
    if (!all.has(partition)) continue;
    try {
      read.set(partition, ParkedRecords.rebuild(readParkedChangelog(records.get(partition) ?? [])));
    } catch (error) {
      if (!(error instanceof ParkedStateError)) throw error;
      read.set(partition, error);
    }
  }
  return read;
}
