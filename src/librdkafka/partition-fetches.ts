import type { TopicPartition } from '../record/record-types.js';

/** Where the fetching of one assigned partition stands (see {@link PartitionFetches}). */
export interface PartitionFetch extends TopicPartition {
  /** The offset after the last record handed over (or of the last seek); undefined before either. */
  next: number | undefined;
  /** A seek requested and not yet applied: records fetched meanwhile are stale. */
  seekTo: number | undefined;
  /** The partition is being revoked: its records are no longer handed over. */
  revoking: boolean;
}

/** The fetch state of a consumer's assigned partitions, by topic partition. */
export class PartitionFetches {
  private readonly byKey = new Map<string, PartitionFetch>();

  get(tp: TopicPartition): PartitionFetch | undefined {
    return this.byKey.get(keyOf(tp));
  }

  /** A newly assigned partition (a partition assigned again starts afresh). */
  add(tp: TopicPartition): void {
    this.byKey.set(keyOf(tp), { topic: tp.topic, partition: tp.partition, next: undefined, seekTo: undefined, revoking: false });
  }

  remove(tp: TopicPartition): void {
    this.byKey.delete(keyOf(tp));
  }

  markRevoking(tp: TopicPartition): void {
    const fetch = this.get(tp);
    if (fetch !== undefined) fetch.revoking = true;
  }

  /** Asks for a seek of an assigned partition (the latest request wins); unassigned partitions are ignored. */
  requestSeek(tp: TopicPartition, offset: number): void {
    const fetch = this.get(tp);
    if (fetch !== undefined && !fetch.revoking) fetch.seekTo = offset;
  }

  /** The seeks requested now, with their offsets. */
  seeks(): Array<[PartitionFetch, number]> {
    const out: Array<[PartitionFetch, number]> = [];
    for (const fetch of this.byKey.values()) if (fetch.seekTo !== undefined) out.push([fetch, fetch.seekTo]);
    return out;
  }

  /** The assigned partitions, revoking ones included. */
  partitions(): TopicPartition[] {
    return [...this.byKey.values()].map((f) => ({ topic: f.topic, partition: f.partition }));
  }
}

function keyOf(tp: TopicPartition): string {
  return `${tp.topic}\u0000${tp.partition}`;
}
