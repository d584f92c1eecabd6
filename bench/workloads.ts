/**
 * The workloads of `npm run bench`: one input topic each (record size × partitions), run by a
 * list of contestants, giving one table in bench/README.md. A scaling table (say exactly_once at
 * 24 and 96 input partitions) is one more entry with the contestants it compares.
 */
import { CONTESTANTS, type Contestant } from './contestants.js';

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
}

/** The pass-through at 100 B and at 1 KiB per record, 6 partitions, every contestant. */
export const WORKLOADS: readonly Workload[] = [
  { id: 'passthrough-100b', title: '100 B records, 6 partitions', recordBytes: 100, partitions: 6, contestants: CONTESTANTS },
  { id: 'passthrough-1kib', title: '1 KiB records, 6 partitions', recordBytes: 1024, partitions: 6, contestants: CONTESTANTS },
];
