/** One task as the lag and task-state metrics see it. */
export interface TaskMetricsView {
  readonly topic: string;
  readonly partition: number;
  readonly state: string;
  /** The next offset the task will process (its fetch position minus what it buffered); absent while the task is being created. */
  readonly position?: number;
  /** `retry.order: 'key'` source tasks: the keys and records they hold back, and whether at `maxParkedKeys`. */
  readonly parked?: { readonly keys: number; readonly records: number; readonly full: boolean };
}

/**
 * Where the metrics read the tasks and log-end offsets from at each scrape (the worker). Lag is
 * the Kafka consumer's per-partition `records-lag` (KIP-92), which Kafka Streams reports too:
 * end offset minus position, here the next offset the task will process, so buffered records
 * count as lag.
 */
export interface LagSource {
  tasks(): readonly TaskMetricsView[];
  /** End offsets (the last stable offset, as read_committed readers see it) of `topics`, by topic and partition. */
  endOffsets(topics: readonly string[]): Promise<ReadonlyMap<string, ReadonlyMap<number, number>>>;
  /** Whether `topic` is a retry tier. */
  isRetryTier(topic: string): boolean;
}
