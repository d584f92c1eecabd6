import type { Logger } from 'pino';
import type { WorkerConfig } from '../config/worker-config.js';
import type { HealthProbes } from '../observability/health-probes.js';
import type { LogContext, LogSink } from '../observability/logger.js';
import type { Exposition } from '../observability/metrics-server.js';
import type { WorkerMetrics } from '../observability/worker-metrics.js';
import type { CompileOverrides } from '../topology/compile.js';
import type { CompiledTopology } from '../topology/compiled-topology.js';
import { Worker } from '../worker/worker.js';
import { StreamThreads } from './stream-threads.js';

/** What a {@link StreamProcess} runs: one worker in the main thread, or stream threads (`--threads`). */
export interface ProcessThreads extends HealthProbes {
  /** @throws what stopped the start (a `StreamThreadsStartError` carries its exit code and message) */
  start(): Promise<void>;
  /** Graceful shutdown. */
  stop(): Promise<void>;
  /** After a shutdown that timed out: end now. */
  terminate(): Promise<void>;
  exposition(): Promise<Exposition>;
  /** Settles with the error when the process must stop after its start (a `group.instance.id` another worker runs with). */
  readonly died: Promise<unknown>;
}

/** What {@link processThreads} builds the threads from. */
export interface ProcessThreadsOptions {
  /** The topology file: each stream thread loads it again. */
  readonly file: string;
  readonly topology: CompiledTopology;
  readonly overrides: CompileOverrides;
  readonly config: WorkerConfig;
  /** Whether errors are printed with their stacks (a stream thread formats its own). */
  readonly verbose: boolean;
  readonly logger: Logger;
  readonly logContext: LogContext;
  readonly sink: LogSink;
  readonly metrics: WorkerMetrics;
}

/** One worker in the main thread when `config.threads` is 1, else `config.threads` stream threads. */
export function processThreads(options: ProcessThreadsOptions): ProcessThreads {
  const { file, topology, overrides, config, verbose, logger, logContext, sink, metrics } = options;
  if (config.threads === 1) return mainThreadWorker(new Worker({ topology, config, logger, metrics, logContext }), metrics);
  return new StreamThreads(
    {
      entry: new URL('./stream-thread-main.js', import.meta.url),
      data: { file, overrides, config, verbose },
      groupId: topology.applicationId,
      logger,
      sink,
      metrics,
    },
    config.threads,
  );
}

function mainThreadWorker(worker: Worker, metrics: WorkerMetrics): ProcessThreads {
  return {
    start: () => worker.start(),
    stop: () => worker.stop(),
    terminate: async () => undefined,
    liveness: () => worker.health.liveness(),
    readiness: () => worker.health.readiness(),
    exposition: () => metrics.exposition(),
    died: worker.died,
  };
}
