import type { InputRecord, TopicPartition } from '../record/record-types.js';
import { PartitionFetch } from './partition-fetch.js';

/** The fetch state of a consumer's assigned partitions, by topic partition. */
export class PartitionFetches {
  private readonly byKey = new Map<string, PartitionFetch>();

  get(tp: TopicPartition): PartitionFetch | undefined {
    return this.byKey.get(keyOf(tp));
  }

  /** A newly assigned partition (a partition assigned again starts afresh). */
  add(tp: TopicPartition): void {
    this.byKey.set(keyOf(tp), new PartitionFetch(tp.topic, tp.partition));
  }

  remove(tp: TopicPartition): void {
    this.byKey.delete(keyOf(tp));
  }

  /**
   * The partition is being revoked: its records are no longer handed over (`revoking`, or
   * `revoking-paused` while librdkafka's pause is applied). Unassigned partitions, and ones
   * already being revoked, are left as they are.
   */
  markRevoking(tp: TopicPartition): void {
    const fetch = this.get(tp);
    if (fetch === undefined || fetch.isRevoking()) return;
    fetch.transition(fetch.state === 'paused' ? 'revoking-paused' : 'revoking');
  }

  /**
   * Asks for a seek of an assigned partition (the latest request wins); unassigned partitions
   * are ignored. What was stashed is stale then: the seek fetches again.
   */
  requestSeek(tp: TopicPartition, offset: number): void {
    const fetch = this.get(tp);
    if (fetch === undefined || fetch.isRevoking()) return;
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
