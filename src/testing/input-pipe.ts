import { murmur2Partition } from '../record/murmur2.js';
import { TestDriverError } from '../errors.js';
import type { InMemoryKafka } from './in-memory-kafka.js';
import type { ManualClock } from './manual-clock.js';
import { TEST_INPUT_HEADER, serializeInput, type PipedInput, type TestInput } from './test-records.js';
import type { TopicCatalog } from './topic-catalog.js';

/**
 * The {@link TopologyTestDriver}'s way in: writes test records to a source or retry-tier topic
 * of the in-memory Kafka, each stamped with {@link TEST_INPUT_HEADER} (its input id), and keeps
 * every record piped so far.
 */
export class InputPipe {
  private readonly piped: PipedInput[] = [];
  private roundRobin = 0;

  constructor(
    private readonly kafka: InMemoryKafka,
    private readonly catalog: TopicCatalog,
    private readonly clock: ManualClock,
  ) {}

  /** Every record piped in so far, in pipe order (index = input id). */
  get inputs(): readonly PipedInput[] {
    return this.piped;
  }

  /**
   * Writes records to `topic`, keyless ones round-robin, keyed ones by murmur2 as Kafka's
   * default partitioner, unless a record names its partition.
   *
   * @returns where each record landed
   * @throws Error when the topic is not consumed by the topology, a partition does not exist,
   *   or a key or value cannot be serialized (naming the record)
   */
  async write<K, V>(topic: string, records: TestInput<K, V> | readonly TestInput<K, V>[]): Promise<PipedInput<K, V>[]> {
    const info = this.catalog.require(topic, ['source', 'retry-tier'], 'pipeInput');
    const list: readonly TestInput<K, V>[] = Array.isArray(records) ? records : [records as TestInput<K, V>];
    const piped: PipedInput<K, V>[] = [];
    const producer = this.kafka.producer();
    for (const [index, input] of list.entries()) {
      const { key, value } = serializeInput(topic, index, input, info.serdes);
      const partition = input.partition ?? (key === null ? this.roundRobin++ % info.partitions : murmur2Partition(key, info.partitions));
      if (!Number.isInteger(partition) || partition < 0 || partition >= info.partitions) {
        throw new TestDriverError(
          `pipeInput('${topic}') record ${index}: partition ${partition} does not exist (the topic has ${info.partitions})`,
        );
      }
      const id = this.piped.length;
      const headers = { ...input.headers, [TEST_INPUT_HEADER]: String(id) };
      const offset = this.kafka.endOffset(topic, partition);
      const timestamp = input.timestamp ?? this.clock.now();
      await producer.send([{ topic, partition, key, value, headers, timestamp }]);
      const entry: PipedInput<K, V> = {
        id,
        topic,
        partition,
        offset,
        timestamp,
        key: input.key ?? null,
        value: input.value,
        rawKey: key,
        rawValue: value,
        headers: { ...input.headers },
      };
      this.piped.push(entry);
      piped.push(entry);
    }
    return piped;
  }
}
