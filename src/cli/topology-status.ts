import type { KafkaAdmin } from '../kafka/kafka-admin.js';
import type { KafkaClient } from '../kafka/kafka-client.js';
import { ParkedStateError } from '../errors.js';
import { taskId } from '../record/task-id.js';
import type { ParkedRecords } from '../runtime/parked-records.js';
import { orphanChangelogs, type OrphanChangelog } from '../worker/orphan-changelogs.js';
import { readParkedPartitions } from '../worker/restore-parked.js';
import { consumedTopics, routeOf, type CompiledTopology } from '../topology/compiled-topology.js';
import { UNKNOWN_LABEL } from './dlq/dead-letter-tally.js';
import { deadLetterView } from './dlq/dead-letter-view.js';

/** One member of the topology's consumer group. */
export interface MemberStatus {
  /** The coordinator's member id (CONSUMER-ID in `kafka-consumer-groups --describe`). */
  readonly memberId: string;
  readonly clientId: string;
  /** As the coordinator saw it, e.g. `/127.0.0.1`. */
  readonly host: string;
  /** Assigned partitions, `<topic>-<partition>`, sorted. */
  readonly partitions: readonly string[];
}

/** One partition the topology consumes: a source or a retry tier. Offsets are "next offset to read". */
export interface PartitionStatus {
  readonly topic: string;
  readonly kind: 'source' | 'retry-tier';
  readonly partition: number;
  /** The group's committed offset; null when the group has none for it. */
  readonly committed: number | null;
  /** The log-end offset (last stable offset) now. */
  readonly end: number;
  /** `end` minus `committed` (minus the log start when nothing is committed). */
  readonly lag: number;
  /** The member it is assigned to, if any. */
  readonly memberId: string | null;
  /**
   * A source with `retry.order: 'key'`: the records its task holds back (read from its changelog
   * partition; not in `lag`, the offset moved past them), or why they cannot be read back. Null
   * for other partitions.
   */
  readonly parked: ParkedStatus | null;
}

/** What one changelog partition holds: parked keys and records, or the error that stops its task. */
export type ParkedStatus = { readonly keys: number; readonly records: number } | { readonly error: string };

/** Dead letters of one DLQ topic, counted by error class and processor. */
export interface DeadLetterStatus {
  readonly topic: string;
  readonly exists: boolean;
  readonly total: number;
  /** One row per (error class, processor), most records first. */
  readonly counts: ReadonlyArray<{ readonly errorClass: string; readonly processor: string; readonly records: number }>;
}

/** What `weir status --format json` prints. */
export interface TopologyStatus {
  readonly applicationId: string;
  /** False when the coordinator knows no such group (it never ran, or expired): then `state` is `Dead` and the lists are empty. */
  readonly groupExists: boolean;
  /** `Stable`, `PreparingRebalance`, `CompletingRebalance`, `Empty`, `Dead`, … */
  readonly state: string;
  readonly members: readonly MemberStatus[];
  readonly partitions: readonly PartitionStatus[];
  /** Sum of `lag` over `partitions`. */
  readonly totalLag: number;
  /** Sum of the parked records over `partitions`; null when no source keeps key order. */
  readonly totalParked: number | null;
  /** Changelogs of the application that hold parked records no processor of the topology restores. */
  readonly orphanChangelogs: readonly OrphanChangelog[];
  readonly deadLetters: readonly DeadLetterStatus[];
}

/**
 * Reads how a topology is doing, as `kafka-consumer-groups --describe` plus `weir dlq inspect`
 * would: the group's state and members, committed offset, end offset and lag of every source
 * and retry-tier partition, the records parked by `retry.order: 'key'` sources (read from their
 * changelogs, and from changelogs no processor restores), and the dead letters of its DLQ topics
 * by error class and processor (each topic read from start to end as of now in a throw-away
 * group, committing nothing).
 *
 * @param throwawayGroup a fresh group id for each DLQ or changelog read
 * @throws the client's error when Kafka fails
 */
export async function readTopologyStatus(
  topology: CompiledTopology,
  client: KafkaClient,
  admin: KafkaAdmin,
  throwawayGroup: () => string,
): Promise<TopologyStatus> {
  const applicationId = topology.applicationId;
  const [group, topics] = await Promise.all([admin.describeGroup(applicationId), admin.partitionCounts(consumedTopics(topology))]);
  const owner = new Map<string, string>();
  const members = group.members.map((m) => {
    for (const tp of m.assignment) owner.set(taskId(tp), m.memberId);
    return { memberId: m.memberId, clientId: m.clientId, host: m.host, partitions: m.assignment.map(taskId).sort() };
  });
  const partitions: PartitionStatus[] = [];
  let anyCommitted = false;
  for (const topic of consumedTopics(topology).filter((t) => topics.has(t))) {
    const [committed, earliest, latest] = await Promise.all([
      admin.committedOffsets(applicationId, topic),
      admin.earliestOffsets(topic),
      admin.latestOffsets(topic),
    ]);
    if (committed.size > 0) anyCommitted = true;
    const route = routeOf(topology, topic);
    const kind = (route?.tier ?? null) === null ? 'source' : 'retry-tier';
    const changelog = kind === 'source' ? (route?.subtopology.parkedTopic ?? null) : null;
    const parked = changelog === null ? undefined : await readParkedPartitions(client, admin, changelog, throwawayGroup());
    for (const [partition, end] of [...latest].sort((a, b) => a[0] - b[0])) {
      const at = committed.get(partition) ?? null;
      const lag = Math.max(0, end - (at ?? earliest.get(partition) ?? 0));
      const memberId = owner.get(taskId({ topic, partition })) ?? null;
      partitions.push({ topic, kind, partition, committed: at, end, lag, memberId, parked: parkedStatus(parked, partition) });
    }
  }
  const dlqTopics = [...new Set(topology.subtopologies.toArray().flatMap((s) => s.steps.toArray().map((step) => step.deadLetter.topic)))];
  const deadLetters = await Promise.all(dlqTopics.map((topic) => countDeadLetters(client, admin, topic, throwawayGroup)));
  return {
    applicationId,
    groupExists: group.state !== 'Dead' || group.members.length > 0 || anyCommitted,
    state: group.state,
    members,
    partitions,
    totalLag: partitions.reduce((n, p) => n + p.lag, 0),
    totalParked: partitions.some((p) => p.parked !== null)
      ? partitions.reduce((n, p) => n + (p.parked !== null && 'records' in p.parked ? p.parked.records : 0), 0)
      : null,
    orphanChangelogs: await orphanChangelogs(topology, client, admin),
    deadLetters,
  };
}

/** A source partition's parked status from its changelog's partitions (`undefined`: no key order). */
function parkedStatus(read: Map<number, ParkedRecords | ParkedStateError> | undefined, partition: number): ParkedStatus | null {
  if (read === undefined) return null;
  const p = read.get(partition);
  if (p instanceof ParkedStateError) return { error: p.message };
  return { keys: p?.keys ?? 0, records: p?.records ?? 0 };
}

async function countDeadLetters(client: KafkaClient, admin: KafkaAdmin, topic: string, group: () => string): Promise<DeadLetterStatus> {
  const counts = await admin.partitionCounts([topic]);
  if (!counts.has(topic)) return { topic, exists: false, total: 0, counts: [] };
  const [low, high] = await Promise.all([admin.earliestOffsets(topic), admin.latestOffsets(topic)]);
  const ranges = new Map([...high].map(([p, to]) => [p, { from: Math.min(low.get(p) ?? 0, to), to }]));
  const tally = new Map<string, { errorClass: string; processor: string; records: number }>();
  let total = 0;
  if ([...ranges.values()].some((r) => r.to > r.from)) {
    await client.readTopicRange({
      topic,
      groupId: group(),
      ranges,
      commit: false,
      onRecords: async (records) => {
        for (const record of records) {
          const view = deadLetterView(record);
          const errorClass = view.errorClass ?? UNKNOWN_LABEL;
          const processor = view.processor ?? UNKNOWN_LABEL;
          const key = JSON.stringify([errorClass, processor]);
          const row = tally.get(key) ?? { errorClass, processor, records: 0 };
          row.records++;
          tally.set(key, row);
          total++;
        }
      },
    });
  }
  const rows = [...tally.values()].sort((a, b) => b.records - a.records || a.errorClass.localeCompare(b.errorClass));
  return { topic, exists: true, total, counts: rows };
}
