/**
 * When a benchmark run is done, and how many records its sink holds.
 *
 * - at_least_once contestants write without transactions, so a sink partition's high watermark
 *   is its record count: the run is done when the sink's high watermarks add up to the input.
 * - exactly_once contestants write in transactions, and every transaction leaves a commit
 *   marker in each partition it wrote, which takes an offset: the high watermark over-counts.
 *   Their input offsets are committed in the same transaction as the outputs, and the group
 *   coordinator shows transactional offsets only once the transaction commits, so the run is
 *   done when the group's committed input offsets reach the input's end: from that moment every
 *   output is visible to read_committed readers. After the run, {@link countCommittedRecords}
 *   reads the sink read_committed to check the count.
 */
import { randomUUID } from 'node:crypto';
import type { Admin, Kafka } from 'kafkajs';
import { SEAL_HEADER } from '../scripts/lib/topic-io.js';
import type { Guarantee } from './contestants.js';

/** Sum of the high watermarks of `topic`'s partitions (records + transaction markers). */
export async function highWatermarkSum(admin: Admin, topic: string): Promise<number> {
  return (await admin.fetchTopicOffsets(topic)).reduce((sum, p) => sum + Number(p.high), 0);
}

/**
 * Sum of the offsets `group` has committed on `topic` (0 for partitions without one, and 0 while
 * the broker answers with a retriable error, such as NOT_COORDINATOR on a freshly started broker:
 * the caller polls again).
 */
export async function committedOffsetSum(admin: Admin, group: string, topic: string): Promise<number> {
  let offsets: Awaited<ReturnType<Admin['fetchOffsets']>>[number] | undefined;
  try {
    [offsets] = await admin.fetchOffsets({ groupId: group, topics: [topic] });
  } catch (error) {
    if ((error as { retriable?: unknown }).retriable === true) return 0;
    throw error;
  }
  return (offsets?.partitions ?? []).reduce((sum, p) => sum + Math.max(0, Number(p.offset)), 0);
}

/**
 * The done test of a run: the sink holds `records` records (at_least_once), or the group has
 * committed `records` input offsets, i.e. its transactions up to the input's end committed
 * (exactly_once). `records` is the input's end offsets summed (no markers in the input).
 */
export function doneCondition(
  admin: Admin,
  guarantee: Guarantee,
  run: { readonly source: string; readonly sink: string; readonly group: string },
  records: number,
): () => Promise<boolean> {
  return guarantee === 'at_least_once'
    ? async () => (await highWatermarkSum(admin, run.sink)) >= records
    : async () => (await committedOffsetSum(admin, run.group, run.source)) >= records;
}

/**
 * Counts the records of `topic` a read_committed consumer sees: appends a (non-transactional)
 * seal record to every partition, then reads from the beginning until every seal is seen, so
 * that every transaction before the seals must be decided. Call it after the writers stopped.
 * Holds no record in memory.
 *
 * @returns the records before the seals
 * @throws Error when not every seal is read within `timeoutMs`
 */
export async function countCommittedRecords(kafka: Kafka, topic: string, timeoutMs: number): Promise<number> {
  const admin = kafka.admin();
  const groupId = `weir-bench-count-${randomUUID()}`;
  await admin.connect();
  try {
    const [metadata] = (await admin.fetchTopicMetadata({ topics: [topic] })).topics;
    const partitions = metadata?.partitions.map((p) => p.partitionId) ?? [];
    const producer = kafka.producer({ idempotent: true, maxInFlightRequests: 1 });
    await producer.connect();
    await producer.send({
      topic,
      acks: -1,
      messages: partitions.map((partition) => ({ partition, key: null, value: null, headers: { [SEAL_HEADER]: '1' } })),
    });
    await producer.disconnect();

    const consumer = kafka.consumer({ groupId, readUncommitted: false, maxWaitTimeInMs: 200 });
    let records = 0;
    const sealed = new Set<number>();
    let finish: () => void = () => undefined;
    const done = new Promise<void>((resolve) => (finish = resolve));
    await consumer.connect();
    try {
      await consumer.subscribe({ topics: [topic], fromBeginning: true });
      await consumer.run({
        eachBatch: async ({ batch }) => {
          for (const m of batch.messages) {
            if (m.headers?.[SEAL_HEADER] !== undefined) sealed.add(batch.partition);
            else if (!sealed.has(batch.partition)) records += 1;
          }
          if (sealed.size >= partitions.length) finish();
        },
      });
      let timer: NodeJS.Timeout | undefined;
      const inTime = await Promise.race([
        done.then(() => true),
        new Promise<boolean>((resolve) => (timer = setTimeout(() => resolve(false), timeoutMs))),
      ]);
      clearTimeout(timer);
      if (!inTime) throw new Error(`read ${sealed.size} of ${partitions.length} seals of ${topic} within ${timeoutMs} ms`);
      return records;
    } finally {
      await consumer.disconnect();
      await admin.deleteGroups([groupId]).catch(() => undefined);
    }
  } finally {
    await admin.disconnect();
  }
}
