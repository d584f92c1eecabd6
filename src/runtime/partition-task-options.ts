import type { Random } from '../failure/backoff.js';
import type { CompiledTopology } from '../topology/compiled-topology.js';
import type { Clock, DedupStore, OffsetCommitter, OffsetReader, RecordProducer, TransactionalProducer } from './ports.js';
import type { AttemptTracer } from './attempt-tracer.js';
import type { TaskListener } from './task-listener.js';
import type { ResilienceRegistry } from './processor-resilience.js';
import type { ParkedRecords } from './parked-records.js';

/** The output ports of a task, per `processing.guarantee`. */
export type TaskOutputPorts =
  | { readonly guarantee: 'at_least_once'; readonly producer: RecordProducer; readonly committer: OffsetCommitter }
  | { readonly guarantee: 'exactly_once'; readonly transactions: TransactionalProducer; readonly offsets: OffsetReader };

/** Options of a {@link PartitionTask}. */
export interface PartitionTaskOptions {
  readonly topology: CompiledTopology;
  readonly topic: string;
  readonly partition: number;
  /** Next offset to read: the group's committed offset when the task starts. */
  readonly startOffset: number;
  readonly output: TaskOutputPorts;
  readonly clock: Clock;
  /** Uniform [0, 1) source for backoff jitter; default Math.random. */
  readonly random?: Random;
  /**
   * The circuit breakers and retry budgets of the topology's processors, shared by their tasks in
   * the process (see `ResilienceRegistry`); default: the task's own, from each processor's options.
   */
  readonly resilience?: Pick<ResilienceRegistry, 'forProcessor'>;
  /** Required when the processor has `dedup`. */
  readonly dedupStore?: DedupStore;
  readonly listener?: TaskListener;
  /** Records processed per `poll()` before it yields; default 500. */
  readonly maxPollRecords?: number;
  /** Largest record, bytes (estimated): larger outputs dead-letter their input; default 1 000 000. */
  readonly maxRecordBytes?: number;
  /**
   * exactly_once without dedup: the task goes on processing while the transaction of its last
   * commit interval commits (one write in flight at most; see `TaskFlusher`). Default false.
   */
  readonly overlapCommits?: boolean;
  /** Traces each processing attempt; default none. */
  readonly tracer?: AttemptTracer;
  /**
   * Required on the source task of a sub-topology with `retry.order: 'key'`: its parked records,
   * rebuilt from its partition of the changelog topic (`readParkedChangelog`) before it starts.
   */
  readonly parked?: ParkedRecords;
}
