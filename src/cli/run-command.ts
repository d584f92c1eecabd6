import type { Command } from 'commander';
import { loadWorkerConfig } from '../config/worker-config.js';
import { loadTopology } from '../host/load-topology.js';
import { exitCodeOf, reportError } from '../host/report-error.js';
import { StopSignals } from '../host/stop-signals.js';
import { StreamProcess } from '../host/stream-process.js';
import { StreamThreadsStartError } from '../host/stream-threads-start-error.js';
import { compileOverridesOf } from '../config/compile-overrides.js';

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
    .option('--metrics-host <address>', 'bind the metrics server to this address [env WEIR_METRICS_HOST, default every interface]')
    .option(
      '--metrics-recording-level <level>',
      'metrics.recording.level: info | debug (adds the per-attempt weir_process_duration_seconds) [env WEIR_METRICS_RECORDING_LEVEL, default info]',
    )
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
      'static membership (group.instance.id, KIP-345): --client librdkafka only, which runs one stream thread [env WEIR_GROUP_INSTANCE_ID]',
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
    .addHelpText(
      'after',
      '\nExit codes: 0 a clean shutdown (SIGINT/SIGTERM); 1 the worker failed (a server unreachable, a missing source topic, ...) ' +
        'or its shutdown outlived --shutdown-timeout-ms; 2 a bad flag, variable, config or topology file.',
    )
    .action(async (file: string, flags: RunFlags) => {
      const code = await run(file, flags);
      process.exitCode = code;
      // kafkajs and ioredis may keep sockets and timers alive a little longer; the run is over.
      setTimeout(() => process.exit(code), 50).unref();
    });
}

/**
 * Loads and validates the config and the topology, runs them as a {@link StreamProcess} and
 * prints what stopped it.
 *
 * @returns the exit code
 */
async function run(file: string, flags: RunFlags): Promise<number> {
  // Watched from the start: a stop that comes while the file loads still ends in exit 0.
  const signals = new StopSignals();
  const verbose = flags.verbose === true;
  let streamProcess: StreamProcess;
  try {
    const config = loadWorkerConfig(configFlags(flags), process.env);
    const overrides = compileOverridesOf(config);
    // Loaded here too with stream threads: a bad file fails before any thread starts.
    const topology = await loadTopology(file, overrides);
    streamProcess = new StreamProcess({ file, topology, overrides, config, verbose, signals });
  } catch (error) {
    reportError(error, verbose);
    return exitCodeOf(error);
  }
  const { code, failure } = await streamProcess.run();
  if (failure instanceof StreamThreadsStartError) {
    // The thread already logged the error; print what `weir run` prints for it.
    for (const line of failure.lines) process.stderr.write(`${line}\n`);
  } else if (failure !== undefined) {
    reportError(failure, verbose);
  }
  return code;
}

/** The flags as `loadWorkerConfig` names them. */
function configFlags(flags: RunFlags): Record<string, string | undefined> {
  const { guarantee, partitions, groupInstanceId, verbose: _verbose, ...rest } = flags;
  return {
    ...(rest as Record<string, string | undefined>),
    processingGuarantee: guarantee as string | undefined,
    topicPartitions: partitions as string | undefined,
    groupInstanceIds: groupInstanceId as string | undefined,
  };
}
