import type { Consumer, EachBatchPayload, Kafka } from 'kafkajs';
import { TopicRangeStalledError } from '../errors.js';
import { RangeProgress, type TopicRangeReadOptions } from '../kafka/topic-range.js';
import { toInputRecord } from './kafkajs-messages.js';

/**
 * `KafkaClient.readTopicRange` on kafkajs: reads a fixed range of a topic once
 * (read_committed) and returns when every partition reached the end of its range. kafkajs has
 * no group-less consumer (no `assign()`), so the read joins `groupId`. `weir dlq inspect` reads without committing;
 * `weir dlq replay` commits its progress to its own group so a second run goes on where the
 * first stopped.
 *
 * @returns the position reached in each partition (the next offset to read)
 * @throws TopicRangeStalledError when no partition moves for `idleTimeoutMs`
 * @throws the kafkajs error when the broker cannot be reached, or what `onRecords` threw
 */
export async function readKafkajsTopicRange(kafka: Kafka, options: TopicRangeReadOptions): Promise<Map<number, number>> {
  const { topic, ranges } = options;
  const progress = new RangeProgress(ranges);
  const { positions, pending } = progress;
  if (pending.size === 0) return positions;

  const consumer: Consumer = kafka.consumer({
    groupId: options.groupId,
    maxWaitTimeInMs: 250,
    allowAutoTopicCreation: false,
    retry: { retries: 5, initialRetryTime: 300, maxRetryTime: 5_000, restartOnFailure: async () => false },
  });
  let settle: (error?: unknown) => void = () => undefined;
  const finished = new Promise<void>((resolve, reject) => (settle = (error) => (error === undefined ? resolve() : reject(error))));
  const advance = (partition: number, nextOffset: number): void => {
    if (!progress.advance(partition, nextOffset)) return;
    consumer.pause([{ topic, partitions: [partition] }]);
    if (pending.size === 0) settle();
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
      progress.moved();
      await heartbeat();
    };
    // The batch end includes trailing transaction markers (not delivered as records).
    const end = Math.max(Number(batch.lastOffset()), ...batch.messages.map((m) => Number(m.offset))) + 1;
    if (records.length > 0) {
      await options.onRecords(records, {
        progress: commitAt,
        heartbeat: async () => {
          progress.moved();
          await heartbeat();
        },
        end: Math.min(range.to, end),
      });
    }
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
  const removeCrash = consumer.on(consumer.events.CRASH, (event) =>
    settle(event.payload.error ?? new TopicRangeStalledError(`the kafkajs consumer reading '${topic}' crashed`)),
  );
  const idle = options.idleTimeoutMs ?? 30_000;
  const watchdog = setInterval(
    () => {
      const stalled = progress.stalled(topic, idle);
      if (stalled !== undefined) settle(stalled);
    },
    Math.min(1_000, idle),
  );
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
