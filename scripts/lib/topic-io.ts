/**
 * Topic helpers for the demo, benchmarks and integration tests: create topics, produce
 * records, and read topics back until a condition holds (kafkajs).
 */
import { randomUUID } from 'node:crypto';
import { Kafka, Partitioners, logLevel, type Admin, type IHeaders, type Message } from 'kafkajs';

/** A record read back from a topic. */
export interface ReadRecord {
  readonly topic: string;
  readonly partition: number;
  readonly offset: number;
  readonly timestamp: number;
  readonly key: string | null;
  readonly value: Buffer | null;
  readonly headers: Record<string, string>;
}

/** A kafkajs client with logging off (errors surface as rejected calls). */
export function quietKafka(brokers: string, clientId = 'weir-tools'): Kafka {
  return new Kafka({ clientId, brokers: brokers.split(','), logLevel: logLevel.NOTHING, retry: { retries: 8, initialRetryTime: 200 } });
}

/** Creates topics that do not exist yet (and waits for their leaders). */
export async function createTopics(admin: Admin, topics: ReadonlyArray<{ topic: string; partitions: number }>): Promise<void> {
  const existing = new Set(await admin.listTopics());
  const missing = topics.filter((t) => !existing.has(t.topic));
  if (missing.length > 0) await admin.createTopics({ waitForLeaders: true, topics: missing.map((t) => ({ topic: t.topic, numPartitions: t.partitions })) });
}

/** Produces messages in batches of `batchSize` (idempotent producer, acks=-1). */
export async function produce(kafka: Kafka, topic: string, messages: readonly Message[], batchSize = 2_000): Promise<void> {
  const producer = kafka.producer({ idempotent: true, maxInFlightRequests: 1, createPartitioner: Partitioners.DefaultPartitioner });
  await producer.connect();
  try {
    for (let i = 0; i < messages.length; i += batchSize) {
      await producer.send({ topic, acks: -1, messages: messages.slice(i, i + batchSize) });
    }
  } finally {
    await producer.disconnect();
  }
}

function decodeHeaders(headers: IHeaders | undefined): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(headers ?? {})) {
    const last = Array.isArray(value) ? value[value.length - 1] : value;
    if (last !== undefined) out[name] = last.toString();
  }
  return out;
}

/** Options of {@link readTopics}. */
export interface ReadTopicsOptions {
  /** Stop once this holds for everything read so far. */
  readonly until: (records: readonly ReadRecord[]) => boolean;
  /** Give up after this long, ms (then resolve with what was read). */
  readonly timeoutMs: number;
  /** read_committed (default) or read_uncommitted. */
  readonly isolation?: 'read_committed' | 'read_uncommitted';
  /** Only records at or after these offsets (topic → partition → offset). */
  readonly from?: ReadonlyMap<string, ReadonlyMap<number, number>>;
  /** Called after each batch with the total read so far. */
  readonly onProgress?: (records: readonly ReadRecord[]) => void;
}

/**
 * Reads topics from the beginning (in a throw-away consumer group) until `until` holds or the
 * time is up.
 *
 * @returns everything read, each partition in offset order, and whether `until` held
 */
export async function readTopics(kafka: Kafka, topics: readonly string[], options: ReadTopicsOptions): Promise<{ records: ReadRecord[]; complete: boolean }> {
  const consumer = kafka.consumer({ groupId: `weir-reader-${randomUUID()}`, readUncommitted: options.isolation === 'read_uncommitted', maxWaitTimeInMs: 200 });
  const records: ReadRecord[] = [];
  let resolveDone: () => void = () => undefined;
  const done = new Promise<void>((resolve) => (resolveDone = resolve));
  let complete = options.until(records);
  await consumer.connect();
  try {
    await consumer.subscribe({ topics: [...topics], fromBeginning: true });
    await consumer.run({
      eachBatch: async ({ batch }) => {
        const floor = options.from?.get(batch.topic)?.get(batch.partition) ?? 0;
        for (const m of batch.messages) {
          const offset = Number(m.offset);
          if (offset < floor) continue;
          records.push({ topic: batch.topic, partition: batch.partition, offset, timestamp: Number(m.timestamp), key: m.key?.toString() ?? null, value: m.value, headers: decodeHeaders(m.headers) });
        }
        options.onProgress?.(records);
        if (options.until(records)) {
          complete = true;
          resolveDone();
        }
      },
    });
    if (!complete) await Promise.race([done, new Promise((resolve) => setTimeout(resolve, options.timeoutMs))]);
  } finally {
    await consumer.disconnect();
  }
  return { records, complete };
}

/** The log-end offsets (high watermarks) of topics, by topic and partition. */
export async function endOffsets(admin: Admin, topics: readonly string[]): Promise<Map<string, Map<number, number>>> {
  const result = new Map<string, Map<number, number>>();
  const existing = new Set(await admin.listTopics());
  for (const topic of topics) {
    if (!existing.has(topic)) continue;
    const offsets = await admin.fetchTopicOffsets(topic);
    result.set(topic, new Map(offsets.map((o) => [o.partition, Number(o.high)])));
  }
  return result;
}
