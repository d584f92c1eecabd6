/**
 * The workloads of `npm run bench`: one input topic each (record size × partitions), run by a
 * list of contestants, giving one table in bench/README.md. A scaling table (say exactly_once at
 * 24 and 96 input partitions) is one more entry with the contestants it compares.
 */
import { chainContestants, CONTESTANTS, EOS_SCALING_CONTESTANTS, type Contestant } from './contestants.js';

/** One input topic and the contestants that run on it. */
export interface Workload {
  /** Part of topic and group names, and of the README section `bench:<id>`. */
  readonly id: string;
  /** Heading of its table. */
  readonly title: string;
  /** Value size of every input record, bytes (keys are `key-<n>`). */
  readonly recordBytes: number;
  readonly partitions: number;
  readonly contestants: readonly Contestant[];
  /** The contestant every ratio of the table is relative to, and how the table names it. */
  readonly baseline: { readonly id: string; readonly label: string };
  /**
   * A second reference row: under the table, every other row of its guarantee gets its
   * per-repetition ratios to it (the exactly_once rows against Kafka Streams exactly_once_v2
   * in the tables whose baseline is at_least_once).
   */
  readonly versus?: { readonly id: string; readonly label: string };
}

const KS_ALOS = { id: 'kstreams-alos-1t', label: 'KS ALOS 1 thread' };
const KS_EOS = { id: 'kstreams-eos-1t', label: 'KS EOS v2' };

/**
 * The pass-through at 100 B and at 1 KiB per record, 6 partitions, every contestant (the
 * exactly_once rows also against Kafka Streams exactly_once_v2); and exactly_once at 24 and 96
 * input partitions, where Kafka Streams' exactly_once_v2 keeps one producer per thread and weir
 * on kafkajs one per partition; and per client, two steps chained in one task against the same
 * two steps joined by a topic (issue 21).
 */
export const WORKLOADS: readonly Workload[] = [
  {
    id: 'passthrough-100b',
    title: '100 B records, 6 partitions',
    recordBytes: 100,
    partitions: 6,
    contestants: CONTESTANTS,
    baseline: KS_ALOS,
    versus: KS_EOS,
  },
  {
    id: 'passthrough-1kib',
    title: '1 KiB records, 6 partitions',
    recordBytes: 1024,
    partitions: 6,
    contestants: CONTESTANTS,
    baseline: KS_ALOS,
    versus: KS_EOS,
  },
  {
    id: 'eos-24',
    title: 'exactly_once, 100 B records, 24 partitions',
    recordBytes: 100,
    partitions: 24,
    contestants: EOS_SCALING_CONTESTANTS,
    baseline: KS_EOS,
  },
  {
    id: 'eos-96',
    title: 'exactly_once, 100 B records, 96 partitions',
    recordBytes: 100,
    partitions: 96,
    contestants: EOS_SCALING_CONTESTANTS,
    baseline: KS_EOS,
  },
  ...(['kafkajs', 'librdkafka'] as const).map((client) => ({
    id: `chain-${client}`,
    title: `Two steps, chained in one task or joined by a topic: 100 B records, 6 partitions, at_least_once on ${client}`,
    recordBytes: 100,
    partitions: 6,
    contestants: chainContestants(client === 'kafkajs' ? undefined : client),
    baseline: { id: `weir-alos-1t${client === 'kafkajs' ? '' : '-librdkafka'}-joined`, label: 'two steps joined by a topic' },
  })),
];
