import { RangeProgress, type TopicRangeReadOptions } from '../kafka/topic-range.js';
import { rangeReaderConfig } from './librdkafka-config.js';
import { isFatalError } from './librdkafka-errors.js';
import { toInputRecord } from './librdkafka-messages.js';
import {
  call,
  type LibrdkafkaError,
  type NativeConsumer,
  type NativeMessage,
  type NativeTopicPartitionOffset,
} from './librdkafka-native.js';
import type { NativeClients } from './librdkafka-native-clients.js';

/** How long one `consume` call waits for a first record, ms. */
const CONSUME_WAIT_MS = 250;

/**
 * `KafkaClient.readTopicRange` on librdkafka: reads a fixed range of a topic once
 * (read_committed) and returns when every partition reached the end of its range. Unlike
 * kafkajs, librdkafka reads partitions it is assigned without joining the consumer group
 * (`assign()`), so a read never rebalances anyone, and two reads of the same group do not
 * share the partitions out. With `commit`, progress is committed to `groupId` as a simple
 * consumer's commit (no generation): when the handler calls `progress`, and at each batch end;
 * those commits are only enqueued (librdkafka's `commitAsync`: a crash may lose the last ones),
 * so the last one of each partition is committed once more with `commitSync`, which waits for
 * the coordinator's answer, before the read returns. Partition EOF events carry each partition
 * past trailing transaction markers and aborted records.
 *
 * @returns the position reached in each partition (the next offset to read)
 * @throws TopicRangeStalledError when no partition moves for `idleTimeoutMs`
 * @throws the binding's error when the broker cannot be reached or the final commit fails, or what
 *   `onRecords` threw
 */
export async function readLibrdkafkaTopicRange(clients: NativeClients, options: TopicRangeReadOptions): Promise<Map<number, number>> {
  const { topic, ranges } = options;
  const progress = new RangeProgress(ranges);
  const { positions, pending } = progress;
  if (pending.size === 0) return positions;

  const consumer = clients.consumer(rangeReaderConfig(options.groupId));
  let eofs: NativeTopicPartitionOffset[] = [];
  consumer.on('partition.eof', (eof) => eofs.push(eof));
  const removeProbe = await clients.connect(consumer);
  const idle = options.idleTimeoutMs ?? 30_000;
  const advance = (partition: number, nextOffset: number): void => {
    if (progress.advance(partition, nextOffset)) consumer.pause([{ topic, partition }]);
  };
  /** Partition → the last offset committed (enqueued) for it. */
  const enqueued = new Map<number, number>();
  const commitAt = async (partition: number, nextOffset: number): Promise<void> => {
    const range = ranges.get(partition)!;
    const position = Math.min(range.to, nextOffset);
    if (options.commit && position > range.from) {
      await call((cb) => consumer.commitCb([{ topic, partition, offset: position }], cb));
      enqueued.set(partition, position);
    }
    progress.moved();
  };

  // The enqueued commits' answers come later: the last one of each partition is committed once
  // more, waiting for the answer, before the read returns (the same offsets, so a handler's
  // `progress` past the position of a read that stops early is not taken back).
  const committedAtEnd = (): Map<number, number> => {
    if (enqueued.size > 0) consumer.commitSync([...enqueued].map(([partition, offset]) => ({ topic, partition, offset })));
    return positions;
  };

  try {
    consumer.setDefaultConsumeTimeout(CONSUME_WAIT_MS);
    consumer.setDefaultIsTimeoutOnlyForFirstMessage(true);
    consumer.assign([...pending].map((partition) => ({ topic, partition, offset: ranges.get(partition)!.from })));
    while (pending.size > 0) {
      const stalled = progress.stalled(topic, idle);
      if (stalled !== undefined) throw stalled;
      eofs = [];
      const messages = await consumeOnce(consumer, clients);
      for (const [partition, batch] of byPartition(messages)) {
        const range = ranges.get(partition);
        if (range === undefined || !pending.has(partition)) continue;
        const from = positions.get(partition) ?? range.from;
        const records = batch.filter((m) => m.offset >= from && m.offset < range.to).map((m) => toInputRecord(m));
        const end = Math.min(range.to, batch[batch.length - 1]!.offset + 1);
        if (records.length > 0) {
          await options.onRecords(records, {
            progress: (nextOffset) => commitAt(partition, nextOffset),
            heartbeat: async () => progress.moved(),
            end,
          });
        }
        if (options.shouldStop?.() === true) return committedAtEnd();
        await commitAt(partition, end);
        advance(partition, end);
      }
      // The end of a partition past trailing markers: committed too, so the group's lag reads 0.
      for (const eof of eofs) {
        const position = positions.get(eof.partition);
        if (eof.topic !== topic || !pending.has(eof.partition) || position === undefined || eof.offset <= position) continue;
        await commitAt(eof.partition, eof.offset);
        advance(eof.partition, eof.offset);
      }
    }
    return committedAtEnd();
  } finally {
    removeProbe();
    await call((cb) => consumer.disconnect(cb)).catch(() => undefined);
  }
}

/** One `consume` call; errors librdkafka retries itself are logged and read as no records. */
async function consumeOnce(consumer: NativeConsumer, clients: NativeClients): Promise<NativeMessage[]> {
  try {
    const messages = await call<NativeMessage[]>((cb) => consumer.consume(1_000, cb));
    if (messages.length > 0) clients.router.heard();
    return messages;
  } catch (error) {
    if (isFatalError(error)) throw error;
    clients.router.errorEvent(error as LibrdkafkaError);
    await new Promise((resolve) => setTimeout(resolve, CONSUME_WAIT_MS));
    return [];
  }
}

/** Messages grouped by partition, each group in offset order. */
function byPartition(messages: readonly NativeMessage[]): Map<number, NativeMessage[]> {
  const groups = new Map<number, NativeMessage[]>();
  for (const m of messages) {
    const group = groups.get(m.partition);
    if (group === undefined) groups.set(m.partition, [m]);
    else group.push(m);
  }
  return groups;
}
