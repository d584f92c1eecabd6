import type { GroupConsumerHandlers } from '../kafka/group-consumer.js';
import type { InputRecord, TopicPartition } from '../record/record-types.js';
import { toInputRecord } from './librdkafka-messages.js';
import type { NativeMessage, NativeTopicPartitionOffset } from './librdkafka-native.js';
import type { PartitionFetch } from './partition-fetch.js';
import type { PartitionFetches } from './partition-fetches.js';

/**
 * Hands what librdkafka's `consume` calls return to the worker's tasks, partition by partition
 * in offset order, and holds partitions whose task wants no more records for now.
 *
 * librdkafka's own pause drops what it prefetched for the partition and fetches it again on
 * resume: a fetch round trip for every time a task's buffer fills, which set librdkafka's pace
 * (bench/README.md). A held partition is not paused there at first: records fetched meanwhile
 * are stashed and handed over first when the task takes records again; librdkafka is paused
 * only once the stash reaches `stashLimit` records (weir's `--max-buffered-records`), so memory
 * stays bounded: the task's buffer, the stash, and librdkafka's queue (`queued.min.messages`).
 * Kafka's Java consumer likewise keeps what it fetched for a paused partition.
 *
 * Each partition goes `fetching` → `held` (on hold) → `paused` (the stash at its limit) →
 * `fetching` (on release), as the table of {@link PartitionFetchState} allows.
 */
export class FetchDispatcher {
  constructor(
    private readonly fetches: PartitionFetches,
    private readonly handlers: Pick<GroupConsumerHandlers, 'onBatch' | 'onSkipped'>,
    /**
     * Applies or lifts librdkafka's pause of a partition. Returns whether librdkafka took it:
     * false when its consumer is disconnected (it crashed or stops, and fetches nothing more).
     */
    private readonly pauseNatively: (tp: TopicPartition, pause: boolean) => boolean,
    private readonly stashLimit: number,
  ) {}

  /** The partition's task wants no more records for now: `fetching` → `held` (else as it is). */
  hold(tp: TopicPartition): void {
    const fetch = this.fetches.get(tp);
    if (fetch?.state === 'fetching') fetch.transition('held');
  }

  /**
   * The task takes records again: its stash first (on the next turn of the event loop), then
   * what librdkafka fetches. `held` → `fetching`; `paused` → `fetching` and
   * `revoking-paused` → `revoking` lift librdkafka's pause (the state follows the release
   * even when librdkafka refuses: its consumer is disconnected then and fetches nothing).
   */
  release(tp: TopicPartition): void {
    const fetch = this.fetches.get(tp);
    if (fetch === undefined) return;
    switch (fetch.state) {
      case 'held':
        fetch.transition('fetching');
        break;
      case 'paused':
        fetch.transition('fetching');
        this.pauseNatively(fetch, false);
        break;
      case 'revoking-paused':
        fetch.transition('revoking');
        this.pauseNatively(fetch, false);
        return;
      default:
        return;
    }
    if (fetch.stashNext !== undefined) setImmediate(() => this.deliverStash(tp));
  }

  /**
   * Hands the records of one `consume` call over, per partition in offset order (after what a
   * held partition stashed), then the EOF events (an end past transaction markers or aborted
   * records); a held partition's records and EOF offsets are stashed. Records fetched before a
   * requested seek are stale and dropped (the seek fetches again).
   */
  dispatch(messages: readonly NativeMessage[], eofs: readonly NativeTopicPartitionOffset[]): void {
    for (const [tp, batch] of groupByPartition(messages)) {
      const fetch = this.fetches.get(tp);
      if (fetch === undefined || fetch.isRevoking() || fetch.seekTo !== undefined) continue;
      const records = batch.map((m) => toInputRecord(m, fetch.topic));
      const nextOffset = batch[batch.length - 1]!.offset + 1;
      if (!fetch.isHeld()) this.handOver(fetch, records, nextOffset);
      else {
        this.fetches.stashRecords(fetch, records, nextOffset);
        if (fetch.state === 'held' && fetch.stash.length >= this.stashLimit && this.pauseNatively(fetch, true)) fetch.transition('paused');
      }
    }
    for (const eof of eofs) {
      const fetch = this.fetches.get(eof);
      if (fetch === undefined || fetch.isRevoking() || fetch.seekTo !== undefined || fetch.next === undefined) continue;
      if (eof.offset <= (fetch.stashNext ?? fetch.next)) continue;
      if (fetch.isHeld()) this.fetches.stashRecords(fetch, [], eof.offset);
      else this.handOver(fetch, [], eof.offset);
    }
  }

  /** Hands a partition's stash and `records` to its task: accepted, or refused (fetched again after a seek back). */
  private handOver(fetch: PartitionFetch, records: InputRecord[], nextOffset: number): void {
    const stashed = this.fetches.takeStash(fetch);
    const all = stashed === undefined ? records : stashed.records.concat(records);
    const next = Math.max(stashed?.nextOffset ?? nextOffset, nextOffset);
    if (all.length === 0) {
      if (fetch.next !== undefined && next > fetch.next) {
        fetch.next = next;
        this.handlers.onSkipped(fetch.topic, fetch.partition, next);
      }
      return;
    }
    if (this.handlers.onBatch(fetch.topic, fetch.partition, all, next)) fetch.next = next;
    else if (fetch.seekTo === undefined) this.fetches.requestSeek(fetch, all[0]!.offset);
  }

  /** A released partition's stash, handed over unless something came first (a new hold, a seek, a revocation). */
  private deliverStash(tp: TopicPartition): void {
    const fetch = this.fetches.get(tp);
    if (fetch?.state !== 'fetching' || fetch.seekTo !== undefined || fetch.stashNext === undefined) return;
    this.handOver(fetch, [], fetch.stashNext);
  }
}

/** Messages grouped by partition, each group in offset order (the order librdkafka delivers). */
function groupByPartition(messages: readonly NativeMessage[]): Map<TopicPartition, NativeMessage[]> {
  const groups = new Map<string, { tp: TopicPartition; batch: NativeMessage[] }>();
  let group: { tp: TopicPartition; batch: NativeMessage[] } | undefined;
  for (const m of messages) {
    // librdkafka hands a partition's messages over in runs: a run's key is built once, not per message.
    if (group === undefined || group.tp.partition !== m.partition || group.tp.topic !== m.topic) {
      const key = `${m.topic}\u0000${m.partition}`;
      group = groups.get(key);
      if (group === undefined) groups.set(key, (group = { tp: { topic: m.topic, partition: m.partition }, batch: [] }));
    }
    group.batch.push(m);
  }
  return new Map([...groups.values()].map((g) => [g.tp, g.batch]));
}
