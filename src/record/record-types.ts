/**
 * The raw record shapes that flow between weir's layers: bytes in, bytes out. Serdes turn
 * them into the values a processor sees.
 */

/** Kafka record headers, as kafkajs carries them (a header may repeat: then an array). */
export type RecordHeaders = Record<string, Buffer | string | Array<Buffer | string> | undefined>;

/** One record read from a partition. */
export interface InputRecord {
  readonly topic: string;
  readonly partition: number;
  /** Offset in the partition (int64 in Kafka; a JS number is exact below 2^53). */
  readonly offset: number;
  /** Record timestamp, epoch ms. */
  readonly timestamp: number;
  readonly key: Buffer | null;
  readonly value: Buffer | null;
  readonly headers: RecordHeaders;
}

/** One record to write. */
export interface OutputRecord {
  readonly topic: string;
  readonly key: Buffer | null;
  readonly value: Buffer | null;
  readonly headers: RecordHeaders;
  /** Explicit partition; default: the producer's partitioner (murmur2 of the key). */
  readonly partition?: number;
  /** Epoch ms; default: the producer's clock. */
  readonly timestamp?: number;
}

/** A topic partition. */
export interface TopicPartition {
  readonly topic: string;
  readonly partition: number;
}

/** Next offset to read (= committed offset) of one topic partition. */
export interface TopicPartitionOffset {
  readonly topic: string;
  readonly partition: number;
  readonly offset: number;
  /** The metadata string committed with the offset (Kafka's `OffsetCommit`/`TxnOffsetCommit` metadata). */
  readonly metadata?: string;
}
