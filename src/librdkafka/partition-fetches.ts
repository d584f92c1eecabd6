import type { InputRecord, TopicPartition } from '../record/record-types.js';

/** Where the fetching of one assigned partition stands (see {@link PartitionFetches}). */
export interface PartitionFetch extends TopicPartition {
  /** The offset after the last record handed over (or of the last seek); undefined before either. */
  next: number | undefined;
  /** A seek requested and not yet applied: records fetched meanwhile are stale. */
  seekTo: number | undefined;
  /** The partition is being revoked: its records are no longer handed over. */
  revoking: boolean;
  /** Its task asked for no more records (a full buffer, a long wait): they are stashed, not handed over. */
  held: boolean;
  /** librdkafka's own pause is applied (the stash grew to its limit): it fetches nothing for the partition. */
  nativelyPaused: boolean;
  /**
   * Records fetched while held, in offset order, and the offset after them (past trailing
   * transaction markers, when an EOF event came meanwhile): handed over on release, so that a
   * short hold costs no fetch round trip. librdkafka's pause drops what it prefetched, but its
   * position stays after these records.
   */
  stash: InputRecord[];
  stashNext: number | undefined;
}

/** The fetch state of a consumer's assigned partitions, by topic partition. */
export class PartitionFetches {
  private readonly byKey = new Map<string, PartitionFetch>();

  get(tp: TopicPartition): PartitionFetch | undefined {
    return this.byKey.get(keyOf(tp));
  }

  /** A newly assigned partition (a partition assigned again starts afresh). */
  add(tp: TopicPartition): void {
    this.byKey.set(keyOf(tp), {
      topic: tp.topic,
      partition: tp.partition,
      next: undefined,
      seekTo: undefined,
      revoking: false,
      held: false,
      nativelyPaused: false,
      stash: [],
      stashNext: undefined,
    });
  }

  remove(tp: TopicPartition): void {
    this.byKey.delete(keyOf(tp));
  }

  markRevoking(tp: TopicPartition): void {
    const fetch = this.get(tp);
    if (fetch !== undefined) fetch.revoking = true;
  }

  /**
   * Asks for a seek of an assigned partition (the latest request wins); unassigned partitions
   * are ignored. What was stashed is stale then: the seek fetches again.
   */
  requestSeek(tp: TopicPartition, offset: number): void {
    const fetch = this.get(tp);
    if (fetch === undefined || fetch.revoking) return;
    fetch.seekTo = offset;
    fetch.stash = [];
    fetch.stashNext = undefined;
  }

  /** Keeps records fetched for a held partition, and the offset after them. */
  stashRecords(fetch: PartitionFetch, records: readonly InputRecord[], nextOffset: number): void {
    for (const r of records) fetch.stash.push(r);
    fetch.stashNext = Math.max(fetch.stashNext ?? nextOffset, nextOffset);
  }

  /** A partition's stash, emptied: its records and the offset after them (undefined when empty). */
  takeStash(fetch: PartitionFetch): { records: InputRecord[]; nextOffset: number } | undefined {
    const nextOffset = fetch.stashNext;
    if (nextOffset === undefined) return undefined;
    const records = fetch.stash;
    fetch.stash = [];
    fetch.stashNext = undefined;
    return { records, nextOffset };
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
