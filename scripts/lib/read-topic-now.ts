/**
 * Reading a topic as of now, without writing to it (kafkajs), for tests and tools.
 *
 * @module
 */
import { randomUUID } from 'node:crypto';
import type { Admin } from 'kafkajs';
import type { Kafka } from '../../src/kafkajs/kafkajs-library.js';
import { ReadOnce, endOffsets, readRecordOf, type ReadRecord } from './topic-io.js';
import { waitFor } from './wait-for.js';

/**
 * Reads every record of `topic` as of now, without writing to it (unlike {@link readToEnd}):
 * takes the end offsets first, then reads (read_committed by default) until each partition's
 * position passes its end offset (transaction markers and, read_committed, aborted records
 * count as passed). Call it when no transaction on the topic is open, else a read_committed
 * read waits for the transaction to end.
 *
 * @returns the records, each partition in offset order
 * @throws Error when the end is not reached within `timeoutMs`
 */
export async function readTopicNow(
  kafka: Kafka,
  admin: Admin,
  topic: string,
  options: { readonly timeoutMs: number; readonly isolation?: 'read_committed' | 'read_uncommitted' },
): Promise<ReadRecord[]> {
  const ends = (await endOffsets(admin, [topic])).get(topic) ?? new Map<number, number>();
  const pending = new Map([...ends].filter(([, end]) => end > 0));
  const records: ReadRecord[] = [];
  if (pending.size === 0) return records;
  const once = new ReadOnce();
  const consumer = kafka.consumer({
    groupId: `weir-reader-${randomUUID()}`,
    readUncommitted: options.isolation === 'read_uncommitted',
    maxWaitTimeInMs: 200,
  });
  consumer.on(consumer.events.END_BATCH_PROCESS, ({ payload }) => {
    const end = pending.get(payload.partition);
    if (end !== undefined && Number(payload.lastOffset) + 1 >= end) pending.delete(payload.partition);
  });
  await consumer.connect();
  try {
    await consumer.subscribe({ topics: [topic], fromBeginning: true });
    await consumer.run({
      eachBatch: async ({ batch }) => {
        const end = ends.get(batch.partition) ?? 0;
        for (const m of batch.messages) {
          const offset = Number(m.offset);
          if (offset >= end || !once.accept(topic, batch.partition, offset)) continue;
          records.push(readRecordOf(topic, batch.partition, m));
        }
        once.report();
      },
    });
    await waitFor(
      () => pending.size === 0,
      options.timeoutMs,
      () => `readTopicNow: partitions ${[...pending.keys()].join(', ')} of ${topic} not read to their end`,
    );
  } finally {
    await consumer.disconnect();
  }
  return records.sort((a, b) => a.partition - b.partition || a.offset - b.offset);
}
