import { TopicRangeStalledError } from '../errors.js';
import type { InputRecord } from '../record/record-types.js';
import type { KafkaAdmin } from './kafka-admin.js';

/** Offsets `[from, to)` of one partition. */
export interface OffsetRange {
  readonly from: number;
  readonly to: number;
}

/** What a topic-range handler may do while it works on a batch. */
export interface RangeBatchContext {
  /**
   * Records progress: with `commit`, commits `nextOffset` (the offset after the last record
   * handled) to the group; always heartbeats. Call it after each durable step of a long batch.
   */
  progress(nextOffset: number): Promise<void>;
  /** Keeps the group membership alive during a long wait (e.g. rate limiting). */
  heartbeat(): Promise<void>;
  /**
   * The position after this batch: the offset after its last record, or past trailing
   * transaction markers (which are not delivered as records), capped at the range's end.
   */
  readonly end: number;
}

/** Options of `KafkaClient.readTopicRange`. Times in ms. */
export interface TopicRangeReadOptions {
  readonly topic: string;
  /**
   * The consumer group. Read-only tools pass a fresh id and set `commit: false`: the group has
   * no offsets and vanishes when the reader leaves.
   */
  readonly groupId: string;
  /** The offsets to read, by partition; partitions absent or with `from ≥ to` are not read. */
  readonly ranges: ReadonlyMap<number, OffsetRange>;
  /**
   * Commit each partition's progress to `groupId` (only when the handler calls `progress`, and
   * at the end of each batch). Once the read has returned, its last commits have been answered
   * by the group coordinator.
   */
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

/**
 * The offsets a tool should read to see a topic "as of now": from each partition's start
 * (or `from`, e.g. a group's committed offsets) to its end offset at this moment (the last
 * stable offset). Reading stops there, so an empty or idle topic never makes a tool wait.
 *
 * @returns the ranges, or `undefined` when the topic does not exist
 */
export async function topicRanges(
  admin: KafkaAdmin,
  topic: string,
  from?: ReadonlyMap<number, number>,
): Promise<Map<number, OffsetRange> | undefined> {
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

/** Records in `ranges`. */
export function rangeSize(ranges: ReadonlyMap<number, OffsetRange>): number {
  let n = 0;
  for (const r of ranges.values()) n += Math.max(0, r.to - r.from);
  return n;
}

/**
 * A range read's progress, as both clients' readers keep it: each partition's position (the
 * next offset to read), the partitions still to read, and when any of them last moved.
 */
export class RangeProgress {
  /** Partition → the next offset to read. */
  readonly positions = new Map<number, number>();
  /** Partitions not yet read to the end of their range. */
  readonly pending: Set<number>;
  private lastProgressAt = Date.now();

  constructor(private readonly ranges: ReadonlyMap<number, OffsetRange>) {
    for (const [partition, range] of ranges) this.positions.set(partition, range.from);
    this.pending = new Set([...ranges].filter(([, r]) => r.from < r.to).map(([p]) => p));
  }

  /**
   * `partition` was read up to `nextOffset` (capped at its range's end).
   *
   * @returns true when this finished the partition's range
   */
  advance(partition: number, nextOffset: number): boolean {
    const range = this.ranges.get(partition);
    if (range === undefined || !this.pending.has(partition)) return false;
    const position = Math.min(range.to, nextOffset);
    if (position > (this.positions.get(partition) ?? 0)) {
      this.positions.set(partition, position);
      this.moved();
    }
    if (position < range.to) return false;
    this.pending.delete(partition);
    return true;
  }

  /** Something moved (a commit, a heartbeat of a long batch): the read is not stalled. */
  moved(): void {
    this.lastProgressAt = Date.now();
  }

  /** A `TopicRangeStalledError` when nothing moved for `idleMs`, else undefined. */
  stalled(topic: string, idleMs: number): TopicRangeStalledError | undefined {
    if (Date.now() - this.lastProgressAt <= idleMs) return undefined;
    return new TopicRangeStalledError(
      `reading '${topic}' made no progress for ${idleMs} ms (partitions still to read: ${[...this.pending].join(', ')})`,
    );
  }
}
