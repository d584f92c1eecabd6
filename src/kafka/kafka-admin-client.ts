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
    this.admin = kafka.admin();
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
   * for their leaders. A topic created meanwhile by another worker is not an error.
   */
  async createTopics(topics: readonly TopicToCreate[]): Promise<void> {
    if (topics.length === 0) return;
    await this.admin.createTopics({
      waitForLeaders: true,
      topics: topics.map((t) => ({ topic: t.topic, numPartitions: t.partitions })),
    });
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
