import type { Logger } from 'pino';
import type { LogContext } from '../observability/logger.js';
import type { WorkerMetrics } from '../observability/worker-metrics.js';
import type { WorkerConfig } from '../config/worker-config.js';
import type { AssignmentEvent } from '../kafka/group-consumer.js';
import type { Clock } from '../runtime/ports.js';
import type { CompiledTopology } from '../topology/compiled-topology.js';

/** Options of a {@link Worker}. */
export interface WorkerOptions {
  readonly topology: CompiledTopology;
  readonly config: WorkerConfig;
  readonly logger: Logger;
  readonly metrics?: WorkerMetrics;
  readonly clock?: Clock;
  /** Where the worker puts the fields its log lines carry (the group member id once joined); see `createLogger`. */
  readonly logContext?: LogContext;
  /** The stream thread this worker is (1-based), when the process runs several (`--threads`). */
  readonly thread?: number;
  /** Create no task until {@link Worker.releaseTasks} (a stream thread's start gate): partitions stay paused. */
  readonly holdTasks?: boolean;
  /** Told of every join of the group: the member id and the assignment it got. */
  readonly onJoined?: (event: AssignmentEvent) => void;
}
