import type { Consumer, EachBatchPayload, Kafka } from 'kafkajs';
import type { InputRecord } from '../record/record-types.js';
import type { KafkaAdminClient } from './kafka-admin-client.js';
import { toInputRecord } from './kafka-messages.js';

/** Offsets `[from, to)` of one partition. */
export interface OffsetRange {
  readonly from: number;
  readonly to: number;
}

/** What a {@link readTopicRange} handler may do while it works on a batch. */
export interface RangeBatchContext {
  /**
   * Records progress: with `commit`, commits `nextOffset` (the offset after the last record
   * handled) to the group; always heartbeats. Call it after each durable step of a long batch.
   */
  progress(nextOffset: number): Promise<void>;
  /** Keeps the group membership alive during a long wait (e.g. rate limiting). */
  heartbeat(): Promise<void>;
}

/** Options of {@link readTopicRange}. Times in ms. */
export interface TopicRangeReadOptions {
  readonly topic: string;
  /**
   * The consumer group. kafkajs has no group-less consumer (no `assign()`), so read-only tools
   * pass a fresh id and set `commit: false`: the group has no offsets and vanishes when the
   * reader leaves.
   */
  readonly groupId: string;
  /** The offsets to read, by partition; partitions absent or with `from ≥ to` are not read. */
  readonly ranges: ReadonlyMap<number, OffsetRange>;
  /** Commit each partition's progress to `groupId` (only when the handler calls `progress`, and at the end of each batch). */
  readonly commit: boolean;
  /**
   * Handles one partition's records, in offset order, all within the range. When it resolves,
   * every record is handled (with `commit`, the batch end is committed).
   */
  readonly onRecords: (records: readonly InputRecord[], context: RangeBatchContext) => Promise<void>;
  /** Stop early (after the batch in hand) once this returns true. */
  readonly shouldStop?: () => boolean;
  /** Give up when no partition moves for this long; default 30 000. */
  readonly idleTimeoutMs?: number;
}

/** Thrown when reading makes no progress for `idleTimeoutMs`. */
export class TopicRangeStalledError extends Error {
  override readonly name = 'TopicRangeStalledError';
}

/**
 * The offsets a tool should read to see a topic "as of now": from each partition's start
 * (or `from`, e.g. a group's committed offsets) to its end offset at this moment (the last
 * stable offset). Reading stops there, so an empty or idle topic never makes a tool wait.
 *
 * @returns the ranges, or `undefined` when the topic does not exist
 */
export async function topicRanges(admin: KafkaAdminClient, topic: string, from?: ReadonlyMap<number, number>): Promise<Map<number, OffsetRange> | undefined> {
  const counts = await admin.partitionCounts([topic]);
  if (!counts.has(topic)) return undefined;
  const [low, high] = await Promise.all([admin.earliestOffsets(topic), admin.latestOffsets(topic)]);
  const ranges = new Map<number, OffsetRange>();
  for (const [partition, to] of high) {
    const start = Math.max(low.get(partition) ?? 0, from?.get(partition) ?? 0);
    ranges.set(partition, { from: Math.min(start, to), to });
  }
  return ranges;
}

/** Members of a consumer group right now (0 when the group is empty or unknown). */
export async function groupMemberCount(admin: KafkaAdminClient, groupId: string): Promise<number> {
  const { groups } = await admin.raw.describeGroups([groupId]);
  return groups[0]?.members.length ?? 0;
}

/**
 * Reads a fixed range of a topic once, with kafkajs (read_committed), and returns when every
 * partition reached the end of its range. `weir dlq inspect` reads without committing;
 * `weir dlq replay` commits its progress to its own group so a second run goes on where the
 * first stopped.
 *
 * @returns the position reached in each partition (the next offset to read)
 * @throws TopicRangeStalledError when no partition moves for `idleTimeoutMs`
 * @throws the kafkajs error when the broker cannot be reached, or what `onRecords` threw
 */
export async function readTopicRange(kafka: Kafka, options: TopicRangeReadOptions): Promise<Map<number, number>> {
  const { topic, ranges } = options;
  const positions = new Map<number, number>();
  for (const [partition, range] of ranges) positions.set(partition, range.from);
  const pending = new Set([...ranges].filter(([, r]) => r.from < r.to).map(([p]) => p));
  if (pending.size === 0) return positions;

  const consumer: Consumer = kafka.consumer({
    groupId: options.groupId,
    maxWaitTimeInMs: 250,
    allowAutoTopicCreation: false,
    retry: { retries: 5, initialRetryTime: 300, maxRetryTime: 5_000, restartOnFailure: async () => false },
  });
  let settle: (error?: unknown) => void = () => undefined;
  const finished = new Promise<void>((resolve, reject) => (settle = (error) => (error === undefined ? resolve() : reject(error))));
  let lastProgressAt = Date.now();

  const advance = (partition: number, nextOffset: number): void => {
    const range = ranges.get(partition);
    if (range === undefined || !pending.has(partition)) return;
    const position = Math.min(range.to, nextOffset);
    if (position > (positions.get(partition) ?? 0)) {
      positions.set(partition, position);
      lastProgressAt = Date.now();
    }
    if (position >= range.to) {
      pending.delete(partition);
      consumer.pause([{ topic, partitions: [partition] }]);
      if (pending.size === 0) settle();
    }
  };

  let stopped = false;
  const eachBatch = async (payload: EachBatchPayload): Promise<void> => {
    if (stopped) return;
    try {
      await handleBatch(payload);
    } catch (error) {
      // Never let kafkajs retry a batch whose records were partly handled: stop instead.
      stopped = true;
      settle(error);
    }
  };
  const handleBatch = async ({ batch, resolveOffset, heartbeat, isStale }: EachBatchPayload): Promise<void> => {
    const partition = batch.partition;
    const range = ranges.get(partition);
    if (range === undefined || !pending.has(partition) || isStale()) return;
    const records = batch.messages
      .filter((m) => Number(m.offset) >= (positions.get(partition) ?? range.from) && Number(m.offset) < range.to)
      .map((m) => toInputRecord(topic, partition, m));
    const commitAt = async (nextOffset: number): Promise<void> => {
      const position = Math.min(range.to, nextOffset);
      if (options.commit && position > range.from) {
        await consumer.commitOffsets([{ topic, partition, offset: String(position) }]);
      }
      lastProgressAt = Date.now();
      await heartbeat();
    };
    if (records.length > 0) {
      await options.onRecords(records, { progress: commitAt, heartbeat: async () => { lastProgressAt = Date.now(); await heartbeat(); } });
    }
    // The batch end includes trailing transaction markers (not delivered as records).
    const end = Math.max(Number(batch.lastOffset()), ...batch.messages.map((m) => Number(m.offset))) + 1;
    if (options.shouldStop?.() === true) {
      stopped = true;
      settle();
      return;
    }
    await commitAt(end);
    resolveOffset(batch.lastOffset());
    advance(partition, end);
  };

  // Batches holding only transaction markers or aborted records never reach eachBatch.
  const removeListener = consumer.on(consumer.events.END_BATCH_PROCESS, (event) => {
    const { partition, lastOffset } = event.payload as { partition: number; lastOffset: string };
    if (event.payload.topic === topic) advance(partition, Number(lastOffset) + 1);
  });
  const removeCrash = consumer.on(consumer.events.CRASH, (event) => settle(event.payload.error ?? new Error('the kafkajs consumer crashed')));
  const idle = options.idleTimeoutMs ?? 30_000;
  const watchdog = setInterval(() => {
    if (Date.now() - lastProgressAt > idle) {
      settle(new TopicRangeStalledError(`reading '${topic}' made no progress for ${idle} ms (partitions still to read: ${[...pending].join(', ')})`));
    }
  }, Math.min(1_000, idle));
  try {
    await consumer.connect();
    await consumer.subscribe({ topics: [topic], fromBeginning: true });
    await consumer.run({ autoCommit: false, eachBatchAutoResolve: false, partitionsConsumedConcurrently: 1, eachBatch });
    for (const [partition, range] of ranges) consumer.seek({ topic, partition, offset: String(range.from) });
    await finished;
  } finally {
    clearInterval(watchdog);
    removeListener();
    removeCrash();
    await consumer.disconnect().catch(() => undefined);
  }
  return positions;
}
