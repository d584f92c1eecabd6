import type { MessagePort } from 'node:worker_threads';
import type { CompileOverrides } from '../topology/compile.js';
import type { CompiledTopology } from '../topology/compiled-topology.js';
import { LogContext, createThreadLogger } from '../observability/logger.js';
import type { FromThread, StreamThreadData, ToThread } from './stream-thread-protocol.js';
import { Worker } from '../worker/worker.js';
import { WorkerMetrics } from '../observability/worker-metrics.js';

/** What a stream thread needs from the command that runs it. */
export interface StreamThreadCommand {
  /** Loads and compiles the topology file. @throws what `weir run` reports for a bad file */
  load(file: string, overrides: CompileOverrides): Promise<CompiledTopology>;
  /** What `weir run` exits with and prints for an error that stopped the start. */
  describeFailure(error: unknown, verbose: boolean): { readonly exitCode: number; readonly lines: readonly string[] };
}

/**
 * The inside of one stream thread (Kafka Streams' `StreamThread`): loads the topology file,
 * runs one {@link Worker} — a consumer-group member with its own tasks, producers, dedup
 * connections, circuit breakers and retry budgets — and answers the process on `port`: it
 * sends its log lines, says when it started (or why it could not) and each join of its group
 * (member id and assignment), posts every change of its counters and histograms, holds its
 * tasks until `go` when started with `holdTasks`, stops on `stop`, and answers probe and metrics
 * requests. Runs until it has stopped; an uncaught error ends the thread, and
 * the process replaces it (see `StreamThreads`).
 */
export async function hostStreamThread(port: MessagePort, data: StreamThreadData, command: StreamThreadCommand): Promise<void> {
  const post = (message: FromThread): void => port.postMessage(message);
  const logContext = new LogContext();
  const logger = createThreadLogger(data.config.logLevel, data.thread, logContext, (line) =>
    post({ type: 'log', line: line.endsWith('\n') ? line.slice(0, -1) : line }),
  );
  let stopRequested = false;
  /** A `go` came before the worker was made. */
  let released = !data.holdTasks;
  /** The thread's worker and metrics, once the topology is loaded. */
  const running: { worker?: Worker; metrics?: WorkerMetrics } = {};
  let stopped: Promise<void> | undefined;
  const stop = (): Promise<void> =>
    (stopped ??= (async () => {
      await running.worker?.stop();
      post({ type: 'stopped' });
    })());
  port.on('message', (message: ToThread) => {
    switch (message.type) {
      case 'stop':
        stopRequested = true;
        void stop();
        return;
      case 'probe': {
        const worker = running.worker;
        if (worker !== undefined)
          post({ type: 'probe', id: message.id, liveness: worker.health.liveness(), readiness: worker.health.readiness() });
        else
          post({
            type: 'probe',
            id: message.id,
            liveness: { status: 200, body: { status: 'ok', state: 'loading' } },
            readiness: {
              status: 503,
              body: { status: 'not ready', reason: 'the stream thread is loading the topology', state: 'loading' },
            },
          });
        return;
      }
      case 'metrics':
        void (running.metrics?.registry.getMetricsAsJSON() ?? Promise.resolve([])).then((values) =>
          post({ type: 'metrics', id: message.id, metrics: values }),
        );
        return;
      case 'go':
        released = true;
        running.worker?.releaseTasks();
        return;
    }
  });

  let topology: CompiledTopology;
  try {
    topology = await command.load(data.file, data.overrides);
  } catch (error) {
    post({ type: 'failed', ...command.describeFailure(error, data.verbose) });
    return;
  }
  // Counters and histograms are counted by the process, as they happen: a crash loses none.
  const metrics = new WorkerMetrics(
    { application_id: topology.applicationId },
    {
      thread: String(data.thread),
      processMetrics: false,
      forward: (event) => post({ type: 'metric', event }),
      recordingLevel: data.config.metricsRecordingLevel,
    },
  );
  const worker = new Worker({
    topology,
    config: data.config,
    logger,
    metrics,
    logContext,
    thread: data.thread,
    holdTasks: !released,
    onJoined: (event) => post({ type: 'joined', memberId: event.memberId, assignment: event.assignment }),
  });
  running.metrics = metrics;
  running.worker = worker;
  if (stopRequested) {
    await stop();
    return;
  }
  void worker.died.then((error) => post({ type: 'died', ...command.describeFailure(error, data.verbose) }));
  try {
    await worker.start();
    post({ type: 'started' });
  } catch (error) {
    if (stopRequested) return;
    logger.error({ err: error }, 'stream thread failed to start');
    await worker.stop().catch(() => undefined);
    post({ type: 'failed', ...command.describeFailure(error, data.verbose) });
  }
}
