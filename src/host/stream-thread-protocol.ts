import type { MetricObjectWithValues, MetricValue } from 'prom-client';
import type { TopicPartition } from '../record/record-types.js';
import type { CompileOverrides } from '../topology/compile.js';
import type { MetricEvent } from '../observability/metric-events.js';
import type { WorkerConfig } from '../config/worker-config.js';
import type { ProbeResult } from '../observability/health-probes.js';

/** What a stream thread is started with (its `workerData`). */
export interface StreamThreadData {
  /** The topology file, loaded again in the thread. */
  readonly file: string;
  readonly overrides: CompileOverrides;
  readonly config: WorkerConfig;
  /** 1-based thread number: the `thread` of its log lines and metrics, and its client id suffix. */
  readonly thread: number;
  /** Print stack traces of errors. */
  readonly verbose: boolean;
  /**
   * Hold the tasks until a `go` (the start gate, see `threadsSettled`): the thread joins its
   * group and reports each join, but creates no task — its partitions stay paused — until the
   * process says the group settled on every thread. False for a thread that replaces another.
   */
  readonly holdTasks: boolean;
}

/** A message from the process to a stream thread. */
export type ToThread =
  /** Shut down gracefully: finish the record in hand, commit, leave the group; then `stopped`. */
  | { readonly type: 'stop' }
  /** Answer `probes` with this id. */
  | { readonly type: 'probe'; readonly id: number }
  /** Answer `metrics` with this id. */
  | { readonly type: 'metrics'; readonly id: number }
  /** The group settled on every thread: start the tasks held since the start (see `holdTasks`). */
  | { readonly type: 'go' };

/** A message from a stream thread to the process. */
export type FromThread =
  /** One JSON log line (no newline). */
  | { readonly type: 'log'; readonly line: string }
  /** The thread's worker joined its group. */
  | { readonly type: 'started' }
  /** The thread's consumer joined its group (at every rebalance): its member id and assignment now. */
  | { readonly type: 'joined'; readonly memberId: string; readonly assignment: readonly TopicPartition[] }
  /** A change of the thread's counters and histograms, posted as it happens; the process counts it. */
  | { readonly type: 'metric'; readonly event: MetricEvent }
  /**
   * The thread's worker could not start: the process exits with `exitCode` (2 bad input, 1
   * otherwise) after printing `lines` (what `weir run` prints for the error).
   */
  | { readonly type: 'failed'; readonly exitCode: number; readonly lines: readonly string[] }
  /** The thread's worker stopped after a `stop`: the thread ends next. */
  | { readonly type: 'stopped' }
  /**
   * The thread's worker gave up for good after its start (another worker runs with its
   * `group.instance.id`) and shut down: the process stops and exits with `exitCode`, printing `lines`.
   */
  | { readonly type: 'died'; readonly exitCode: number; readonly lines: readonly string[] }
  | { readonly type: 'probe'; readonly id: number; readonly liveness: ProbeResult; readonly readiness: ProbeResult }
  /** prom-client's `Registry.getMetricsAsJSON()` of the thread's metrics (its gauges: the process counts the rest). */
  | { readonly type: 'metrics'; readonly id: number; readonly metrics: ReadonlyArray<MetricObjectWithValues<MetricValue<string>>> };
