import type { z } from 'zod';
import { ConfigError } from '../errors.js';
import type { MetricsRecordingLevel } from './metrics-recording-level.js';
import { CLIENT_FEATURES, clientsWith, whyLacks, type KafkaClientName } from '../kafka/kafka-client.js';
import { maskedSecrets } from './masked-secrets.js';
import { workerConfigSchema as schema } from './worker-config-schema.js';

/** A validated worker configuration. Times in ms. */
export interface WorkerConfig {
  /** Kafka bootstrap servers, `host:port`. */
  readonly brokers: readonly string[];
  readonly redisUrl: string;
  /**
   * Redis Cluster startup nodes for the dedup store (ioredis `Cluster`); when set, the dedup
   * store uses the cluster instead of `redisUrl`.
   */
  readonly redisCluster?: ReadonlyArray<{ readonly host: string; readonly port: number }>;
  readonly logLevel: LogLevel;
  /** Overrides the topology's `application.id`. */
  readonly applicationId?: string;
  /** Overrides the topology's `processing.guarantee`. */
  readonly processingGuarantee?: 'at_least_once' | 'exactly_once';
  /** Overrides the topology's `commit.interval.ms`. */
  readonly commitIntervalMs?: number;
  /** `session.timeout.ms` of the consumer group. */
  readonly sessionTimeoutMs: number;
  readonly heartbeatIntervalMs: number;
  /** Partitions of sink, DLQ and retry-tier topics weir creates; default the source's count. */
  readonly topicPartitions?: number;
  /** Serve Prometheus metrics on this port (`/metrics`); off when absent. */
  readonly metricsPort?: number;
  /** The address the metrics server binds (an interface's IP address or a host name); default every interface. */
  readonly metricsHost?: string;
  /** Which metrics are recorded (Kafka Streams' `metrics.recording.level`); see {@link MetricsRecordingLevel}. */
  readonly metricsRecordingLevel: MetricsRecordingLevel;
  /** `transaction.timeout.ms` of exactly_once producers. */
  readonly transactionTimeoutMs: number;
  /** Records buffered per partition before fetching pauses. */
  readonly maxBufferedRecords: number;
  /** Largest record weir writes, bytes; at most the broker's `message.max.bytes`. */
  readonly maxRecordBytes: number;
  /** How long shutdown may take before the worker exits anyway. */
  readonly shutdownTimeoutMs: number;
  /** `/healthz` fails when the event loop was blocked longer than this since the previous probe. */
  readonly eventLoopStallMs: number;
  /** `/healthz` fails when a task has been retrying a failed port call (produce, commit, transaction, dedup) longer than this. */
  readonly stuckTaskMs: number;
  /**
   * Stream threads of the process (Kafka Streams' `num.stream.threads`): each a consumer-group
   * member of its own, on a `worker_threads` thread; 1 runs the worker in the main thread.
   */
  readonly threads: number;
  /** The Kafka client binding (`--client`): kafkajs (pure JavaScript) or librdkafka (`@confluentinc/kafka-javascript`). */
  readonly client: KafkaClientName;
  /**
   * `group.instance.id` of each stream thread (static membership, KIP-345), one per thread:
   * `--group-instance-id pod-7` gives `pod-7` to one thread, `pod-7-1`, `pod-7-2`, … to several,
   * or a comma-separated list names each. librdkafka only.
   */
  readonly groupInstanceIds?: readonly string[];
}

export type LogLevel = 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace' | 'silent';

/** Where each setting comes from: the flag (commander's camelCase name) and the env variable. */
export const CONFIG_SOURCES = {
  brokers: { flag: '--brokers', env: 'KAFKA_BROKERS' },
  redisUrl: { flag: '--redis-url', env: 'REDIS_URL' },
  redisCluster: { flag: '--redis-cluster', env: 'REDIS_CLUSTER_NODES' },
  logLevel: { flag: '--log-level', env: 'WEIR_LOG_LEVEL' },
  applicationId: { flag: '--application-id', env: 'WEIR_APPLICATION_ID' },
  processingGuarantee: { flag: '--guarantee', env: 'WEIR_PROCESSING_GUARANTEE' },
  commitIntervalMs: { flag: '--commit-interval-ms', env: 'WEIR_COMMIT_INTERVAL_MS' },
  sessionTimeoutMs: { flag: '--session-timeout-ms', env: 'WEIR_SESSION_TIMEOUT_MS' },
  heartbeatIntervalMs: { flag: '--heartbeat-interval-ms', env: 'WEIR_HEARTBEAT_INTERVAL_MS' },
  topicPartitions: { flag: '--partitions', env: 'WEIR_TOPIC_PARTITIONS' },
  metricsPort: { flag: '--metrics-port', env: 'WEIR_METRICS_PORT' },
  metricsHost: { flag: '--metrics-host', env: 'WEIR_METRICS_HOST' },
  metricsRecordingLevel: { flag: '--metrics-recording-level', env: 'WEIR_METRICS_RECORDING_LEVEL' },
  transactionTimeoutMs: { flag: '--transaction-timeout-ms', env: 'WEIR_TRANSACTION_TIMEOUT_MS' },
  maxBufferedRecords: { flag: '--max-buffered-records', env: 'WEIR_MAX_BUFFERED_RECORDS' },
  maxRecordBytes: { flag: '--max-record-bytes', env: 'WEIR_MAX_RECORD_BYTES' },
  shutdownTimeoutMs: { flag: '--shutdown-timeout-ms', env: 'WEIR_SHUTDOWN_TIMEOUT_MS' },
  eventLoopStallMs: { flag: '--event-loop-stall-ms', env: 'WEIR_EVENT_LOOP_STALL_MS' },
  stuckTaskMs: { flag: '--stuck-task-ms', env: 'WEIR_STUCK_TASK_MS' },
  threads: { flag: '--threads', env: 'WEIR_THREADS' },
  client: { flag: '--client', env: 'WEIR_KAFKA_CLIENT' },
  groupInstanceIds: { flag: '--group-instance-id', env: 'WEIR_GROUP_INSTANCE_ID' },
} as const satisfies Record<keyof WorkerConfig, { flag: string; env: string }>;

type Key = keyof typeof CONFIG_SOURCES;

const DEFAULTS: Partial<Record<Key, string>> = {
  brokers: '127.0.0.1:9092',
  redisUrl: 'redis://127.0.0.1:6379',
  logLevel: 'info',
  metricsRecordingLevel: 'info',
  sessionTimeoutMs: '30000',
  // Kafka Streams' default under exactly_once: a transaction a crashed worker left open holds
  // back read_committed readers of its outputs at most this long.
  transactionTimeoutMs: '10000',
  maxBufferedRecords: '2000',
  maxRecordBytes: '1000000',
  shutdownTimeoutMs: '10000',
  eventLoopStallMs: '10000',
  stuckTaskMs: '300000',
  threads: '1',
  client: 'kafkajs',
};

/** Flags as {@link loadWorkerConfig} takes them: commander's camelCase names, as strings. */
export type ConfigFlags = Readonly<Partial<Record<Key, string | number | undefined>>>;

/**
 * The settings of `keys`, from flags over environment variables over defaults, validated with
 * the same rules as {@link loadWorkerConfig} (which reads every key this way).
 *
 * @returns the parsed settings and, per key, where its value came from (the flag, the variable,
 *   or `<variable> (default)`)
 * @throws ConfigError naming the flag or environment variable that holds the bad value (the
 *   first; the others in its `others`)
 */
export function readConfigSettings<K extends Key>(
  keys: readonly K[],
  flags: ConfigFlags,
  env: Readonly<Record<string, string | undefined>>,
): { readonly settings: Pick<z.infer<typeof schema>, K>; readonly origin: Partial<Record<K, string>> } {
  const raw: Partial<Record<Key, string>> = {};
  const origin: Partial<Record<Key, string>> = {};
  for (const key of keys) {
    const { flag, env: name } = CONFIG_SOURCES[key];
    const fromFlag = flags[key];
    const fromEnv = key === 'logLevel' ? (env[name] ?? env['LOG_LEVEL']) : env[name];
    if (fromFlag !== undefined) {
      raw[key] = String(fromFlag);
      origin[key] = flag;
    } else if (fromEnv === '' && key === 'groupInstanceIds') {
      // An empty pod-name variable must not quietly turn static membership off.
      throw new ConfigError(name, 'must not be empty: unset it for no static membership');
    } else if (fromEnv !== undefined && fromEnv !== '') {
      raw[key] = fromEnv;
      origin[key] = key === 'logLevel' && env[name] === undefined ? 'LOG_LEVEL' : name;
    } else if (DEFAULTS[key] !== undefined) {
      raw[key] = DEFAULTS[key];
      origin[key] = `${name} (default)`;
    }
  }
  const picked = schema.pick(Object.fromEntries(keys.map((k) => [k, true])) as Partial<Record<Key, true>>);
  const parsed = picked.safeParse(raw);
  if (!parsed.success) {
    // Every bad value at once, one problem per key (the first zod found for it).
    const problems = new Map<string, string>();
    for (const issue of parsed.error.issues) {
      const key = issue.path[0] as Key;
      const name = origin[key] ?? CONFIG_SOURCES[key]?.env ?? String(key);
      if (!problems.has(name)) problems.set(name, `${issue.message} (got ${JSON.stringify(maskedSecrets(raw[key]))})`);
    }
    const [first, ...others] = [...problems];
    throw new ConfigError(first![0], first![1], others);
  }
  return { settings: parsed.data as unknown as Pick<z.infer<typeof schema>, K>, origin };
}

/**
 * Builds the worker configuration: flags win over environment variables, which win over
 * defaults (`KAFKA_BROKERS` 127.0.0.1:9092, `REDIS_URL` redis://127.0.0.1:6379, log level
 * info, session timeout 30 s, ...). Validated with zod.
 *
 * @param flags parsed command-line options (commander's camelCase names, as strings)
 * @param env the environment, e.g. `process.env`
 * @throws ConfigError naming the flag or environment variable that holds the bad value
 */
export function loadWorkerConfig(flags: ConfigFlags, env: Readonly<Record<string, string | undefined>>): WorkerConfig {
  const { settings: c, origin } = readConfigSettings(Object.keys(CONFIG_SOURCES) as Key[], flags, env);
  if (c.metricsHost !== undefined && c.metricsPort === undefined)
    throw new ConfigError(
      origin.metricsHost ?? 'WEIR_METRICS_HOST',
      'needs --metrics-port (or WEIR_METRICS_PORT): without a port no metrics server runs',
    );
  const heartbeatIntervalMs = c.heartbeatIntervalMs ?? Math.min(3_000, Math.floor(c.sessionTimeoutMs / 3));
  if (heartbeatIntervalMs >= c.sessionTimeoutMs) {
    throw new ConfigError(
      origin.heartbeatIntervalMs ?? 'WEIR_HEARTBEAT_INTERVAL_MS',
      `must be less than the session timeout (${c.sessionTimeoutMs} ms)`,
    );
  }
  const features = CLIENT_FEATURES[c.client];
  if (!features.streamThreads && c.threads > 1)
    throw new ConfigError(origin.threads ?? 'WEIR_THREADS', oneThreadPerProcess(c.client, c.threads));
  const instanceIds = c.groupInstanceIds;
  if (instanceIds !== undefined) {
    const key = origin.groupInstanceIds ?? 'WEIR_GROUP_INSTANCE_ID';
    if (!features.staticMembership)
      throw new ConfigError(
        key,
        `static membership needs ${oneOf(clientsWith('staticMembership'))} (${whyLacks(c.client, 'staticMembership')})`,
      );
    if (instanceIds.length > 1 && instanceIds.length !== c.threads)
      throw new ConfigError(key, `names ${instanceIds.length} ids for ${c.threads} stream thread(s): give one id, or one per thread`);
  }
  const groupInstanceIds =
    instanceIds === undefined
      ? undefined
      : instanceIds.length === 1 && c.threads > 1
        ? Array.from({ length: c.threads }, (_, i) => `${instanceIds[0]}-${i + 1}`)
        : instanceIds;
  return { ...c, heartbeatIntervalMs, ...(groupInstanceIds ? { groupInstanceIds } : {}) } as WorkerConfig;
}

/** `--client a` or `--client a or --client b`: the clients that have a capability, as flags. */
function oneOf(clients: readonly KafkaClientName[]): string {
  return clients.map((name) => `--client ${name}`).join(' or ');
}

/** The problem of `--threads n` on a client that runs one stream thread per process, and what to do instead. */
function oneThreadPerProcess(client: KafkaClientName, threads: number): string {
  const features = CLIENT_FEATURES[client];
  const members = features.staticMembership ? ', each with its own --group-instance-id' : '';
  const others = clientsWith('streamThreads');
  return (
    `${client} runs one stream thread per process (${whyLacks(client, 'streamThreads')}): run ${threads} processes instead${members}` +
    (others.length > 0 ? `, or stream threads on ${oneOf(others)}` : '')
  );
}
