import type { Command } from 'commander';
import { pino } from 'pino';
import { Worker } from '../worker/worker.js';
import { createLogSink, LogContext, loggerOptions } from '../observability/logger.js';
import { MetricsServer, type Exposition } from '../observability/metrics-server.js';
import { StreamThreads, StreamThreadsStartError } from '../host/stream-threads.js';
import { loadWorkerConfig } from '../config/worker-config.js';
import type { HealthProbes } from '../observability/health-probes.js';
import { MetricsPortError } from '../errors.js';
import type { CompileOverrides } from '../topology/compile.js';
import { WorkerMetrics } from '../observability/worker-metrics.js';
import { loadTopology } from '../host/load-topology.js';
import { StopSignals } from '../host/stop-signals.js';
import { EXIT, exitCodeOf, reportError } from '../host/report-error.js';

/** Flags of `weir run` (commander's camelCase names). */
interface RunFlags {
  readonly verbose?: boolean;
  readonly [key: string]: string | boolean | undefined;
}

/**
 * `weir run <topology>`: runs the topology as a worker in the consumer group
 * `application.id` until SIGINT or SIGTERM. Exit codes: 0 after a clean shutdown, 1 when the
 * worker fails or shutdown outlives `--shutdown-timeout-ms`, 2 for a bad config or topology.
 */
export function addRunCommand(program: Command): void {
  program
    .command('run')
    .description('run a topology as a worker process in its consumer group')
    .argument('<topology>', 'topology file (.ts or .js) that default-exports topology(...)')
    .option('--application-id <id>', 'application.id: consumer group and transactional-id prefix [env WEIR_APPLICATION_ID]')
    .option('--guarantee <guarantee>', 'processing.guarantee: at_least_once | exactly_once [env WEIR_PROCESSING_GUARANTEE]')
    .option('--commit-interval-ms <ms>', 'commit.interval.ms [env WEIR_COMMIT_INTERVAL_MS]')
    .option('--brokers <list>', 'Kafka bootstrap servers, host:port,... [env KAFKA_BROKERS, default 127.0.0.1:9092]')
    .option('--redis-url <url>', 'Redis for dedup [env REDIS_URL, default redis://127.0.0.1:6379]')
    .option('--redis-cluster <nodes>', 'Redis Cluster for dedup instead of --redis-url: host:port,... [env REDIS_CLUSTER_NODES]')
    .option('--log-level <level>', 'fatal|error|warn|info|debug|trace|silent [env WEIR_LOG_LEVEL, default info]')
    .option('--session-timeout-ms <ms>', 'consumer session.timeout.ms [env WEIR_SESSION_TIMEOUT_MS, default 30000]')
    .option('--heartbeat-interval-ms <ms>', 'consumer heartbeat interval [env WEIR_HEARTBEAT_INTERVAL_MS]')
    .option('--partitions <n>', "partitions of topics weir creates [env WEIR_TOPIC_PARTITIONS, default: the source topic's]")
    .option('--metrics-port <port>', 'serve /metrics (Prometheus), /healthz and /readyz on this port [env WEIR_METRICS_PORT]')
    .option('--transaction-timeout-ms <ms>', 'exactly_once transaction.timeout.ms [env WEIR_TRANSACTION_TIMEOUT_MS, default 10000]')
    .option(
      '--max-buffered-records <n>',
      'records buffered per partition before fetching pauses [env WEIR_MAX_BUFFERED_RECORDS, default 2000]',
    )
    .option(
      '--max-record-bytes <bytes>',
      "largest record weir writes; keep it at most the broker's message.max.bytes [env WEIR_MAX_RECORD_BYTES, default 1000000]",
    )
    .option('--threads <n>', 'stream threads: consumer-group members in this process (num.stream.threads) [env WEIR_THREADS, default 1]')
    .option(
      '--client <name>',
      'Kafka client: kafkajs | librdkafka (@confluentinc/kafka-javascript) [env WEIR_KAFKA_CLIENT, default kafkajs]',
    )
    .option(
      '--group-instance-id <id>',
      'static membership (group.instance.id, librdkafka): one id (suffixed -1, -2, … per thread) or one per thread, comma-separated [env WEIR_GROUP_INSTANCE_ID]',
    )
    .option('--shutdown-timeout-ms <ms>', 'longest graceful shutdown [env WEIR_SHUTDOWN_TIMEOUT_MS, default 10000]')
    .option(
      '--event-loop-stall-ms <ms>',
      '/healthz fails after an event-loop stall this long [env WEIR_EVENT_LOOP_STALL_MS, default 10000]',
    )
    .option(
      '--stuck-task-ms <ms>',
      '/healthz fails when a task retries a failed produce/commit/dedup call this long [env WEIR_STUCK_TASK_MS, default 300000]',
    )
    .option('--verbose', 'print stack traces of errors')
    .action(async (file: string, flags: RunFlags) => {
      const code = await run(file, flags);
      process.exitCode = code;
      // kafkajs and ioredis may keep sockets and timers alive a little longer; the run is over.
      setTimeout(() => process.exit(code), 50).unref();
    });
}

/** What `weir run` runs: one worker in the main thread, or stream threads (`--threads`). */
interface StreamProcess extends HealthProbes {
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

function oneWorker(worker: Worker, metrics: WorkerMetrics): StreamProcess {
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

async function run(file: string, flags: RunFlags): Promise<number> {
  const signals = new StopSignals();
  const verbose = flags.verbose === true;
  let config;
  let topology;
  let overrides: CompileOverrides;
  try {
    const { guarantee, partitions, groupInstanceId, verbose: _verbose, ...rest } = flags;
    config = loadWorkerConfig(
      {
        ...(rest as Record<string, string | undefined>),
        processingGuarantee: guarantee as string | undefined,
        topicPartitions: partitions as string | undefined,
        groupInstanceIds: groupInstanceId as string | undefined,
      },
      process.env,
    );
    overrides = {
      ...(config.applicationId ? { applicationId: config.applicationId } : {}),
      ...(config.processingGuarantee ? { processingGuarantee: config.processingGuarantee } : {}),
      ...(config.commitIntervalMs ? { commitIntervalMs: config.commitIntervalMs } : {}),
    };
    // Loaded here too with stream threads: a bad file fails before any thread starts.
    topology = await loadTopology(file, overrides);
  } catch (error) {
    reportError(error, verbose);
    return exitCodeOf(error);
  }
  // Stopped while the file loaded: nothing started, nothing to commit.
  if (signals.received !== undefined) return EXIT.ok;
  const logContext = new LogContext();
  const sink = createLogSink();
  const logger = pino(loggerOptions(config.logLevel, logContext), sink);
  const metrics = new WorkerMetrics({ application_id: topology.applicationId });
  const unit: StreamProcess =
    config.threads === 1
      ? oneWorker(new Worker({ topology, config, logger, metrics, logContext }), metrics)
      : new StreamThreads(
          {
            entry: new URL('../host/stream-thread-main.js', import.meta.url),
            data: { file, overrides, config, verbose },
            groupId: topology.applicationId,
            logger,
            sink,
            metrics,
          },
          config.threads,
        );
  const server = new MetricsServer({ exposition: () => unit.exposition(), probes: unit });

  const shutdown = async (signal: string): Promise<number> => {
    logger.info({ signal }, 'shutting down');
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<'timeout'>((resolve) => (timer = setTimeout(() => resolve('timeout'), config.shutdownTimeoutMs)));
    const result = await Promise.race([unit.stop().then(() => 'stopped' as const), timeout]);
    clearTimeout(timer);
    await server.close();
    if (result === 'timeout') {
      logger.error({ shutdownTimeoutMs: config.shutdownTimeoutMs }, 'shutdown timed out; exiting without a clean commit');
      await unit.terminate();
      return EXIT.failure;
    }
    return EXIT.ok;
  };

  // The first SIGINT/SIGTERM shuts down gracefully (also while the worker is still starting);
  // a second one exits at once, as in most servers.
  signals.useLogger(logger);
  const stopSignal = signals.first;
  const started = (async () => {
    if (config.metricsPort !== undefined) {
      const port = await server.listen(config.metricsPort).catch((error: unknown) => {
        throw new MetricsPortError(config.metricsPort!, { cause: error });
      });
      logger.info({ port }, `serving /metrics, /healthz and /readyz on port ${port} of every interface`);
    }
    await unit.start();
  })().then(
    () => ({ started: true as const }),
    (error: unknown) => ({ error }),
  );
  const first = await Promise.race([started, stopSignal.then((signal) => ({ signal }))]);
  if ('signal' in first) return shutdown(first.signal);
  if ('error' in first) {
    const error = first.error;
    if (error instanceof StreamThreadsStartError) {
      // The thread already logged the error; print what `weir run` prints for it.
      for (const line of error.lines) process.stderr.write(`${line}\n`);
      await server.close();
      return error.exitCode;
    }
    logger.error({ err: error }, 'worker failed to start');
    await Promise.race([unit.stop(), new Promise((r) => setTimeout(r, config.shutdownTimeoutMs))]);
    await server.close();
    reportError(error, verbose);
    return exitCodeOf(error);
  }
  const ended = await Promise.race([stopSignal.then((signal) => ({ signal })), unit.died.then((error) => ({ error }))]);
  if ('signal' in ended) return shutdown(ended.signal);
  // A worker gave up for good: stop the rest (other stream threads) and exit with its code.
  await Promise.race([unit.stop(), new Promise((r) => setTimeout(r, config.shutdownTimeoutMs))]);
  await server.close();
  if (ended.error instanceof StreamThreadsStartError) {
    for (const line of ended.error.lines) process.stderr.write(`${line}\n`);
    return ended.error.exitCode;
  }
  reportError(ended.error, verbose);
  return exitCodeOf(ended.error);
}
