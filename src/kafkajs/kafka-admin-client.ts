import type { Admin, Kafka } from 'kafkajs';
import type { OffsetReader } from '../runtime/ports.js';

/** A topic to create: name and partition count. */
export interface TopicToCreate {
  readonly topic: string;
  readonly partitions: number;
}

/**
 * weir's view of the kafkajs admin client: topic metadata and creation, committed and
 * earliest offsets.
 */
export class KafkaAdminClient implements OffsetReader {
  private readonly admin: Admin;

  constructor(kafka: Kafka) {
    // Fewer retries than the client's: an unreachable broker fails a start in seconds.
    this.admin = kafka.admin({ retry: { retries: 4, initialRetryTime: 300, maxRetryTime: 3_000 } });
  }

  /** @throws the kafkajs error when no broker answers */
  async connect(): Promise<void> {
    await this.admin.connect();
  }

  async disconnect(): Promise<void> {
    await this.admin.disconnect();
  }

  /** Partition counts of the topics that exist; missing topics are absent from the map. */
  async partitionCounts(topics: readonly string[]): Promise<Map<string, number>> {
    const existing = new Set(await this.admin.listTopics());
    const wanted = topics.filter((t) => existing.has(t));
    const counts = new Map<string, number>();
    if (wanted.length === 0) return counts;
    const { topics: metadata } = await this.admin.fetchTopicMetadata({ topics: [...new Set(wanted)] });
    for (const t of metadata) counts.set(t.name, t.partitions.length);
    return counts;
  }

  /**
   * Creates topics (replication factor: the broker's `default.replication.factor`), waiting
   * for their leaders. A topic created meanwhile by another worker is not an error. A KRaft
   * broker learns of a new topic from the controller a moment after it was created, and kafkajs
   * gives up at once when the broker does not know it yet (`UNKNOWN_TOPIC_OR_PARTITION`): then
   * this waits (up to `timeoutMs`) until the broker has leaders for every partition.
   *
   * @throws the kafkajs error when the topics cannot be created or get no leaders in time
   */
  async createTopics(topics: readonly TopicToCreate[], timeoutMs = 30_000): Promise<void> {
    if (topics.length === 0) return;
    try {
      await this.admin.createTopics({
        waitForLeaders: true,
        timeout: timeoutMs,
        topics: topics.map((t) => ({ topic: t.topic, numPartitions: t.partitions })),
      });
      return;
    } catch (error) {
      if ((error as { type?: unknown }).type !== 'UNKNOWN_TOPIC_OR_PARTITION') throw error;
    }
    const names = topics.map((t) => t.topic);
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const metadata = await this.admin.fetchTopicMetadata({ topics: names }).catch((error: unknown) => {
        if (Date.now() > deadline) throw error;
        return undefined;
      });
      if (metadata?.topics.every((t) => t.partitions.length > 0 && t.partitions.every((p) => p.leader >= 0))) return;
      if (Date.now() > deadline) throw new Error(`topics ${names.join(', ')} have no leaders ${timeoutMs} ms after they were created`);
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }

  async committedOffset(groupId: string, topic: string, partition: number): Promise<number | undefined> {
    return (await this.committedOffsets(groupId, topic)).get(partition);
  }

  /** A group's committed offsets of one topic, by partition (partitions without one are absent). */
  async committedOffsets(groupId: string, topic: string): Promise<Map<number, number>> {
    const [result] = await this.admin.fetchOffsets({ groupId, topics: [topic] });
    const offsets = new Map<number, number>();
    for (const p of result?.partitions ?? []) {
      const offset = Number(p.offset);
      if (offset >= 0) offsets.set(p.partition, offset);
    }
    return offsets;
  }

  /** The earliest offset (log start) of each partition of a topic. */
  async earliestOffsets(topic: string): Promise<Map<number, number>> {
    const offsets = await this.admin.fetchTopicOffsets(topic);
    return new Map(offsets.map((o) => [o.partition, Number(o.low)]));
  }

  /** The log-end offset (high watermark) of each partition of a topic. */
  async latestOffsets(topic: string): Promise<Map<number, number>> {
    const offsets = await this.admin.fetchTopicOffsets(topic);
    return new Map(offsets.map((o) => [o.partition, Number(o.high)]));
  }

  /** The kafkajs admin client, for tools that need more (e.g. `weir dlq`). */
  get raw(): Admin {
    return this.admin;
  }
}
