import type { Command } from 'commander';
import { Worker } from '../worker/worker.js';
import { createLogger, LogContext } from '../worker/logger.js';
import { loadWorkerConfig } from '../worker/worker-config.js';
import { MetricsPortError } from '../errors.js';
import { WorkerMetrics } from '../worker/worker-metrics.js';
import { loadTopology } from './load-topology.js';
import { EXIT, exitCodeOf, reportError } from './report-error.js';

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
    .option('--transaction-timeout-ms <ms>', 'exactly_once transaction.timeout.ms [env WEIR_TRANSACTION_TIMEOUT_MS, default 60000]')
    .option(
      '--max-buffered-records <n>',
      'records buffered per partition before fetching pauses [env WEIR_MAX_BUFFERED_RECORDS, default 2000]',
    )
    .option(
      '--max-record-bytes <bytes>',
      "largest record weir writes; keep it at most the broker's message.max.bytes [env WEIR_MAX_RECORD_BYTES, default 1000000]",
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

async function run(file: string, flags: RunFlags): Promise<number> {
  const verbose = flags.verbose === true;
  let config;
  let topology;
  try {
    const { guarantee, partitions, verbose: _verbose, ...rest } = flags;
    config = loadWorkerConfig(
      {
        ...(rest as Record<string, string | undefined>),
        processingGuarantee: guarantee as string | undefined,
        topicPartitions: partitions as string | undefined,
      },
      process.env,
    );
    topology = await loadTopology(file, {
      ...(config.applicationId ? { applicationId: config.applicationId } : {}),
      ...(config.processingGuarantee ? { processingGuarantee: config.processingGuarantee } : {}),
      ...(config.commitIntervalMs ? { commitIntervalMs: config.commitIntervalMs } : {}),
    });
  } catch (error) {
    reportError(error, verbose);
    return exitCodeOf(error);
  }
  const logContext = new LogContext();
  const logger = createLogger(config.logLevel, undefined, logContext);
  const metrics = new WorkerMetrics({ application_id: topology.applicationId });
  const worker = new Worker({ topology, config, logger, metrics, logContext });

  const shutdown = async (signal: string): Promise<number> => {
    logger.info({ signal }, 'shutting down');
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<'timeout'>((resolve) => (timer = setTimeout(() => resolve('timeout'), config.shutdownTimeoutMs)));
    const result = await Promise.race([worker.stop().then(() => 'stopped' as const), timeout]);
    clearTimeout(timer);
    await metrics.close();
    if (result === 'timeout') {
      logger.error({ shutdownTimeoutMs: config.shutdownTimeoutMs }, 'shutdown timed out; exiting without a clean commit');
      return EXIT.failure;
    }
    return EXIT.ok;
  };

  // The first SIGINT/SIGTERM shuts down gracefully (also while the worker is still starting);
  // a second one exits at once, as in most servers.
  const stopSignal = new Promise<string>((resolve) => {
    let signals = 0;
    const onSignal = (signal: NodeJS.Signals): void => {
      if (++signals > 1) {
        logger.warn({ signal }, 'second signal: exiting now, without a clean commit');
        process.exit(EXIT.failure);
      }
      resolve(signal);
    };
    process.on('SIGINT', onSignal);
    process.on('SIGTERM', onSignal);
  });
  const started = (async () => {
    if (config.metricsPort !== undefined) {
      const port = await metrics.serve(config.metricsPort, worker.health).catch((error: unknown) => {
        throw new MetricsPortError(config.metricsPort!, { cause: error });
      });
      logger.info({ port }, `metrics on http://127.0.0.1:${port}/metrics, health checks on /healthz and /readyz`);
    }
    await worker.start();
  })().then(
    () => ({ started: true as const }),
    (error: unknown) => ({ error }),
  );
  const first = await Promise.race([started, stopSignal.then((signal) => ({ signal }))]);
  if ('signal' in first) return shutdown(first.signal);
  if ('error' in first) {
    logger.error({ err: first.error }, 'worker failed to start');
    await Promise.race([worker.stop(), new Promise((r) => setTimeout(r, config.shutdownTimeoutMs))]);
    await metrics.close();
    reportError(first.error, verbose);
    return exitCodeOf(first.error);
  }
  return shutdown(await stopSignal);
}
