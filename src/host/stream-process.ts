import { pino, type Logger } from 'pino';
import type { WorkerConfig } from '../config/worker-config.js';
import { MetricsPortError, ShutdownTimeoutError } from '../errors.js';
import { createLogSink, LogContext, loggerOptions } from '../observability/logger.js';
import { MetricsServer } from '../observability/metrics-server.js';
import { WorkerMetrics } from '../observability/worker-metrics.js';
import type { CompileOverrides } from '../topology/compile.js';
import type { CompiledTopology } from '../topology/compiled-topology.js';
import { warnExactlyOncePartitions } from './exactly-once-partition-warning.js';
import { assertProcessTransition, type ProcessState } from './process-state.js';
import { processThreads, type ProcessThreads } from './process-threads.js';
import { EXIT, exitCodeOf } from './report-error.js';
import type { StopSignals } from './stop-signals.js';
import { StreamThreadsStartError } from './stream-threads-start-error.js';
import { capThreads, countMaxTasks } from './thread-cap.js';
import { withinTimeout } from '../failure/within-timeout.js';

/** Options of {@link StreamProcess}: what `weir run` loaded and validated. */
export interface StreamProcessOptions {
  /** The topology file: each stream thread loads it again. */
  readonly file: string;
  /** The topology, compiled with `overrides`. */
  readonly topology: CompiledTopology;
  readonly overrides: CompileOverrides;
  /** The worker config; `threads` (1..n), `shutdownTimeoutMs` and `metricsPort` shape the process. */
  readonly config: WorkerConfig;
  /** Whether errors carry their stacks (stream threads format their own errors). */
  readonly verbose: boolean;
  /** SIGINT and SIGTERM, watched since the command started. */
  readonly signals: Pick<StopSignals, 'first' | 'received' | 'useLogger'>;
}

/**
 * How a {@link StreamProcess} ended: the exit code, and the error to print, if any (a
 * `StreamThreadsStartError` carries the lines to print; other errors are printed as `reportError` does).
 */
export interface ProcessExit {
  readonly code: number;
  readonly failure?: unknown;
}

/** What a started process is made of. */
interface Parts {
  readonly logger: Logger;
  readonly threads: ProcessThreads;
  readonly server: MetricsServer;
}

/**
 * A `weir run` process, as Kafka Streams' `KafkaStreams` is one: one object over its 1..n stream
 * threads (one worker in the main thread, or `node:worker_threads` with `--threads`), with one
 * log stream, one `/metrics`, `/healthz` and `/readyz` server (`--metrics-port`), one start, one
 * shutdown and one exit code. A thread that crashes after the start is replaced (see
 * `StreamThreads`). Its lifecycle is the state table of {@link ProcessState}; every change goes
 * through `transition()`.
 *
 * The first stop signal shuts it down gracefully, also while it is still starting, within
 * `config.shutdownTimeoutMs` (ms). Exit codes: 0 after a clean shutdown; 1 when a thread's
 * worker fails or shutdown outlives the timeout; 2 for bad input found at the start (a
 * `group.instance.id` another worker runs with, a topology a thread cannot load).
 */
export class StreamProcess {
  private current: ProcessState = 'created';
  private logger: Logger | undefined;

  constructor(private readonly options: StreamProcessOptions) {}

  /** The process's state (see {@link ProcessState}). */
  get state(): ProcessState {
    return this.current;
  }

  /**
   * Starts the process and runs it until a stop signal, or until a thread's worker gives up.
   * Call it once.
   *
   * @returns how it ended: its exit code, and the error to print (none after a clean shutdown
   *   or a shutdown that timed out, which it logs)
   * @throws IllegalStateError when called a second time
   */
  async run(): Promise<ProcessExit> {
    const { signals } = this.options;
    // Stopped while the file loaded: nothing started, nothing to commit.
    if (signals.received !== undefined) {
      this.transition('stopped');
      return { code: EXIT.ok };
    }
    this.transition('starting');
    const parts = await this.parts();
    // The first SIGINT/SIGTERM shuts down gracefully (also while the worker is still starting);
    // a second one exits at once, as in most servers.
    signals.useLogger(parts.logger);
    const started = this.start(parts).then(
      () => ({ started: true as const }),
      (error: unknown) => ({ error }),
    );
    const first = await Promise.race([started, signals.first.then((signal) => ({ signal }))]);
    if ('signal' in first) return this.shutdown(parts, first.signal);
    if ('error' in first) return this.startFailed(parts, first.error);
    this.transition('running');
    const ended = await Promise.race([signals.first.then((signal) => ({ signal })), parts.threads.died.then((error) => ({ error }))]);
    if ('signal' in ended) return this.shutdown(parts, ended.signal);
    // A worker gave up for good: stop the rest (other stream threads) and exit with its code.
    return this.fail(parts, ended.error);
  }

  private async parts(): Promise<Parts> {
    const { topology } = this.options;
    const logContext = new LogContext();
    const sink = createLogSink();
    const logger = pino(loggerOptions(this.options.config.logLevel, logContext), sink);
    this.logger = logger;
    // The application's partitions, counted once if the cap or the warning asks for them.
    let counted: Promise<number | undefined> | undefined;
    const partitions = (): Promise<number | undefined> => (counted ??= countMaxTasks(topology, this.options.config, logger));
    // --threads above the application's partitions is capped (a stop signal meanwhile is kept).
    const config = await capThreads(this.options.config, partitions, logger);
    await warnExactlyOncePartitions(topology.processingGuarantee, config, partitions, logger);
    const metrics = new WorkerMetrics({ application_id: topology.applicationId }, { recordingLevel: config.metricsRecordingLevel });
    const threads = processThreads({ ...this.options, config, logger, logContext, sink, metrics });
    const server = new MetricsServer({ exposition: () => threads.exposition(), probes: threads });
    return { logger, threads, server };
  }

  private async start({ logger, threads, server }: Parts): Promise<void> {
    const { metricsPort, metricsHost, metricsRecordingLevel } = this.options.config;
    if (metricsPort !== undefined) {
      const { address, port } = await server.listen(metricsPort, metricsHost).catch((error: unknown) => {
        throw new MetricsPortError(metricsPort, { cause: error, ...(metricsHost !== undefined ? { host: metricsHost } : {}) });
      });
      const everywhere = address === '::' || address === '0.0.0.0';
      const where = everywhere ? `port ${port} of every interface` : `${address.includes(':') ? `[${address}]` : address}:${port}`;
      logger.info({ address, port, metricsRecordingLevel }, `serving /metrics, /healthz and /readyz on ${where}`);
    }
    await threads.start();
  }

  private async startFailed(parts: Parts, error: unknown): Promise<ProcessExit> {
    if (!(error instanceof StreamThreadsStartError)) {
      parts.logger.error({ err: error }, 'worker failed to start');
      return this.fail(parts, error);
    }
    // The threads stopped already, and the thread logged the error.
    this.transition('failing');
    await parts.server.close();
    this.transition('failed');
    return { code: error.exitCode, failure: error };
  }

  /** Stops what runs, within the shutdown timeout, and ends with the exit code of `error`. */
  private async fail({ threads, server }: Parts, error: unknown): Promise<ProcessExit> {
    this.transition('failing');
    await withinTimeout(threads.stop(), this.options.config.shutdownTimeoutMs);
    await server.close();
    this.transition('failed');
    return { code: error instanceof StreamThreadsStartError ? error.exitCode : exitCodeOf(error), failure: error };
  }

  private async shutdown({ logger, threads, server }: Parts, signal: string): Promise<ProcessExit> {
    logger.info({ signal }, 'shutting down');
    this.transition('stopping');
    const { shutdownTimeoutMs } = this.options.config;
    const result = await withinTimeout(threads.stop(), shutdownTimeoutMs);
    await server.close();
    if (result === 'timeout') {
      logger.error({ shutdownTimeoutMs }, 'shutdown timed out; exiting without a clean commit');
      await threads.terminate();
      this.transition('failed');
      return { code: EXIT.failure, failure: new ShutdownTimeoutError(shutdownTimeoutMs) };
    }
    this.transition('stopped');
    return { code: EXIT.ok };
  }

  /** The one place the process's state changes, checked against the table of {@link ProcessState}. */
  private transition(to: ProcessState): void {
    assertProcessTransition(this.current, to);
    this.logger?.debug({ from: this.current, to }, 'process state');
    this.current = to;
  }
}
