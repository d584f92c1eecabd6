/**
 * Topic helpers for the demo, benchmarks and integration tests: create topics, produce
 * records, and read topics back until a condition holds (kafkajs).
 */
import { randomUUID } from 'node:crypto';
import type { Admin, IHeaders, KafkaMessage, Message } from 'kafkajs';
import { Kafka, Partitioners, logLevel } from '../../src/kafkajs/kafkajs-library.js';
import { pollUntil, waitFor } from './wait-for.js';

/** A record read back from a topic. */
export interface ReadRecord {
  readonly topic: string;
  readonly partition: number;
  readonly offset: number;
  readonly timestamp: number;
  readonly key: string | null;
  readonly value: Buffer | null;
  readonly headers: Record<string, string>;
  /**
   * The transactional producer that wrote it, `<producer id>/<epoch>` (absent for a record
   * written outside a transaction): tells two copies of a record apart by who wrote them.
   */
  readonly producer?: string;
}

/** The producer fields kafkajs decodes with each fetched record (`batchContext`, not in its types). */
interface BatchContext {
  readonly producerId?: string;
  readonly producerEpoch?: number;
  readonly inTransaction?: boolean;
}

/** A fetched kafkajs message as a {@link ReadRecord}. */
export function readRecordOf(topic: string, partition: number, m: KafkaMessage): ReadRecord {
  const context = (m as { batchContext?: BatchContext }).batchContext;
  return {
    topic,
    partition,
    offset: Number(m.offset),
    timestamp: Number(m.timestamp),
    key: m.key?.toString() ?? null,
    value: m.value,
    headers: decodeHeaders(m.headers),
    ...(context?.inTransaction ? { producer: `${context.producerId}/${context.producerEpoch}` } : {}),
  };
}

/**
 * Keeps a reader to one copy of each record: kafkajs delivers batches again when its consumer
 * restarts after an error (from the reader group's last commit). Those records are read once,
 * and a line on stderr says it happened.
 */
export class ReadOnce {
  /** Per `topic:partition`: the offset after the last record read. */
  private readonly next = new Map<string, number>();
  private readonly again: string[] = [];

  /** Whether the record at `offset` is new to the reader. */
  accept(topic: string, partition: number, offset: number): boolean {
    const position = `${topic}:${partition}`;
    if (offset < (this.next.get(position) ?? 0)) {
      this.again.push(`${position}@${offset}`);
      return false;
    }
    this.next.set(position, offset + 1);
    return true;
  }

  /** Reports the records given again since the last call. */
  report(): void {
    if (this.again.length === 0) return;
    console.warn(`[topic-io] the reader was given ${this.again.length} records again (read once): ${this.again.slice(0, 5).join(', ')}`);
    this.again.length = 0;
  }
}

/** A kafkajs client with logging off (errors surface as rejected calls). */
export function quietKafka(brokers: string, clientId = 'weir-tools'): Kafka {
  return new Kafka({ clientId, brokers: brokers.split(','), logLevel: logLevel.NOTHING, retry: { retries: 8, initialRetryTime: 200 } });
}

/**
 * Creates topics that do not exist yet (and waits for their leaders). `config` sets topic
 * configs, e.g. `{ 'message.timestamp.type': 'LogAppendTime' }` to have the broker stamp
 * every record with its append time.
 */
export async function createTopics(
  admin: Admin,
  topics: ReadonlyArray<{ topic: string; partitions: number; config?: Readonly<Record<string, string>> }>,
): Promise<void> {
  const existing = new Set(await admin.listTopics());
  const missing = topics.filter((t) => !existing.has(t.topic));
  if (missing.length === 0) return;
  const created = await admin
    .createTopics({
      waitForLeaders: true,
      topics: missing.map((t) => ({
        topic: t.topic,
        numPartitions: t.partitions,
        ...(t.config ? { configEntries: Object.entries(t.config).map(([name, value]) => ({ name, value })) } : {}),
      })),
    })
    .then(
      () => true,
      (error: unknown) => {
        // A broker that started a moment ago may not know the topics it just created yet
        // (UNKNOWN_TOPIC_OR_PARTITION while kafkajs waits for their leaders): wait below.
        if ((error as { retriable?: unknown }).retriable === true) return false;
        throw error;
      },
    );
  if (created) return;
  const names = missing.map((t) => t.topic);
  const ready = await pollUntil(
    async () => {
      const metadata = await admin.fetchTopicMetadata({ topics: names }).catch(() => undefined);
      return metadata?.topics.every((t) => t.partitions.length > 0 && t.partitions.every((p) => p.leader >= 0)) === true;
    },
    30_000,
    200,
  );
  if (!ready) throw new Error(`createTopics: no leaders for ${names.join(', ')} within 30 s`);
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

/**
 * Waits until every topic exists (weir creates sink, DLQ and retry topics when it starts).
 *
 * @throws Error naming the missing topics after `timeoutMs` ms
 */
export async function waitForTopics(kafka: Kafka, topics: readonly string[], timeoutMs: number): Promise<void> {
  const admin = kafka.admin();
  await admin.connect();
  let missing = topics;
  try {
    await waitFor(
      async () => {
        const existing = new Set(await admin.listTopics());
        missing = topics.filter((t) => !existing.has(t));
        return missing.length === 0;
      },
      timeoutMs,
      () => `topics ${missing.join(', ')} do not exist`,
    );
  } finally {
    await admin.disconnect();
  }
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
 * time is up. Waits first (within the same time budget) for the topics to exist.
 *
 * @returns everything read, each partition in offset order, and whether `until` held
 */
export async function readTopics(
  kafka: Kafka,
  topics: readonly string[],
  options: ReadTopicsOptions,
): Promise<{ records: ReadRecord[]; complete: boolean }> {
  const began = Date.now();
  await waitForTopics(kafka, topics, options.timeoutMs);
  const consumer = kafka.consumer({
    groupId: `weir-reader-${randomUUID()}`,
    readUncommitted: options.isolation === 'read_uncommitted',
    maxWaitTimeInMs: 200,
  });
  const records: ReadRecord[] = [];
  const once = new ReadOnce();
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
          if (offset < floor || !once.accept(batch.topic, batch.partition, offset)) continue;
          records.push(readRecordOf(batch.topic, batch.partition, m));
        }
        once.report();
        options.onProgress?.(records);
        if (options.until(records)) {
          complete = true;
          resolveDone();
        }
      },
    });
    if (!complete)
      await Promise.race([done, new Promise((resolve) => setTimeout(resolve, Math.max(0, options.timeoutMs - (Date.now() - began))))]);
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

/** Header of the seal records {@link readToEnd} appends (value: the partition). */
export const SEAL_HEADER = 'weir.test.seal';

/**
 * Reads topics completely: appends a seal record to every partition, then reads (read_committed
 * by default) until every seal is seen. Call it when the writers of the topics have stopped, so
 * that every transaction before the seals is decided (committed or aborted).
 *
 * @returns every record before the seals, each partition in offset order (the seals left out)
 * @throws Error when not every seal is read within `timeoutMs`
 */
export async function readToEnd(
  kafka: Kafka,
  topics: readonly string[],
  options: { readonly timeoutMs: number; readonly isolation?: 'read_committed' | 'read_uncommitted' },
): Promise<ReadRecord[]> {
  const admin = kafka.admin();
  await admin.connect();
  try {
    const { topics: metadata } = await admin.fetchTopicMetadata({ topics: [...topics] });
    const producer = kafka.producer({ idempotent: true, maxInFlightRequests: 1 });
    await producer.connect();
    try {
      for (const t of metadata) {
        const seals: Message[] = t.partitions.map((p) => ({
          partition: p.partitionId,
          key: null,
          value: null,
          headers: { [SEAL_HEADER]: String(p.partitionId) },
        }));
        await producer.send({ topic: t.name, acks: -1, messages: seals });
      }
    } finally {
      await producer.disconnect();
    }
    const expected = metadata.reduce((n, t) => n + t.partitions.length, 0);
    // Partitions whose seal was read (a partition may hold seals of an earlier, failed read too).
    const sealed = (rs: readonly ReadRecord[]): number =>
      new Set(rs.filter((r) => r.headers[SEAL_HEADER] !== undefined).map((r) => `${r.topic}:${r.partition}`)).size;
    const { records, complete } = await readTopics(kafka, topics, {
      until: (rs) => sealed(rs) >= expected,
      timeoutMs: options.timeoutMs,
      ...(options.isolation ? { isolation: options.isolation } : {}),
    });
    if (!complete)
      throw new Error(`readToEnd: read ${sealed(records)} of ${expected} seals of ${topics.join(', ')} within ${options.timeoutMs} ms`);
    return records.filter((r) => r.headers[SEAL_HEADER] === undefined);
  } finally {
    await admin.disconnect();
  }
}
