import { z } from 'zod';
import { ConfigError } from '../errors.js';

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
  transactionTimeoutMs: { flag: '--transaction-timeout-ms', env: 'WEIR_TRANSACTION_TIMEOUT_MS' },
  maxBufferedRecords: { flag: '--max-buffered-records', env: 'WEIR_MAX_BUFFERED_RECORDS' },
  maxRecordBytes: { flag: '--max-record-bytes', env: 'WEIR_MAX_RECORD_BYTES' },
  shutdownTimeoutMs: { flag: '--shutdown-timeout-ms', env: 'WEIR_SHUTDOWN_TIMEOUT_MS' },
  eventLoopStallMs: { flag: '--event-loop-stall-ms', env: 'WEIR_EVENT_LOOP_STALL_MS' },
  stuckTaskMs: { flag: '--stuck-task-ms', env: 'WEIR_STUCK_TASK_MS' },
} as const satisfies Record<keyof WorkerConfig, { flag: string; env: string }>;

type Key = keyof typeof CONFIG_SOURCES;

// An empty flag or variable is not 0 (z.coerce would make it so): it fails as not a number.
const int = (min: number, max: number) =>
  z.preprocess((v) => (typeof v === 'string' && v.trim() === '' ? Number.NaN : v), z.coerce.number().int().min(min).max(max));
const hostPort = /^[A-Za-z0-9.-]+:\d{1,5}$|^\[[0-9A-Fa-f:]+\]:\d{1,5}$/;

const schema = z.object({
  brokers: z
    .string()
    .transform((s) =>
      s
        .split(',')
        .map((b) => b.trim())
        .filter((b) => b.length > 0),
    )
    .pipe(
      z
        .array(
          z
            .string()
            .regex(hostPort, 'each broker must be host:port')
            .refine((b) => Number(b.slice(b.lastIndexOf(':') + 1)) <= 65_535, 'a port must be at most 65535'),
        )
        .min(1, 'at least one broker is required'),
    ),
  redisUrl: z.url({ protocol: /^rediss?$/, error: 'must be a redis:// or rediss:// URL' }),
  redisCluster: z
    .string()
    .transform((s) =>
      s
        .split(',')
        .map((n) => n.trim())
        .filter((n) => n.length > 0),
    )
    .pipe(z.array(z.string().regex(hostPort, 'each cluster node must be host:port')).min(1, 'at least one cluster node is required'))
    .transform((nodes) =>
      nodes.map((n) => ({ host: n.slice(0, n.lastIndexOf(':')).replace(/^\[|\]$/g, ''), port: Number(n.slice(n.lastIndexOf(':') + 1)) })),
    )
    .optional(),
  logLevel: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']),
  applicationId: z
    .string()
    .regex(/^[a-zA-Z0-9._-]+$/, "may use only ASCII letters, digits, '.', '_' and '-'")
    .optional(),
  processingGuarantee: z.enum(['at_least_once', 'exactly_once']).optional(),
  commitIntervalMs: int(1, 3_600_000).optional(),
  sessionTimeoutMs: int(6_000, 300_000),
  heartbeatIntervalMs: int(100, 100_000).optional(),
  topicPartitions: int(1, 10_000).optional(),
  metricsPort: int(0, 65_535).optional(),
  transactionTimeoutMs: int(1_000, 900_000),
  maxBufferedRecords: int(1, 1_000_000),
  maxRecordBytes: int(1_024, 1_073_741_824),
  shutdownTimeoutMs: int(100, 600_000),
  eventLoopStallMs: int(10, 600_000),
  stuckTaskMs: int(1_000, 86_400_000),
});

const DEFAULTS: Partial<Record<Key, string>> = {
  brokers: '127.0.0.1:9092',
  redisUrl: 'redis://127.0.0.1:6379',
  logLevel: 'info',
  sessionTimeoutMs: '30000',
  transactionTimeoutMs: '60000',
  maxBufferedRecords: '2000',
  maxRecordBytes: '1000000',
  shutdownTimeoutMs: '10000',
  eventLoopStallMs: '10000',
  stuckTaskMs: '300000',
};

/**
 * Builds the worker configuration: flags win over environment variables, which win over
 * defaults (`KAFKA_BROKERS` 127.0.0.1:9092, `REDIS_URL` redis://127.0.0.1:6379, log level
 * info, session timeout 30 s, ...). Validated with zod.
 *
 * @param flags parsed command-line options (commander's camelCase names, as strings)
 * @param env the environment, e.g. `process.env`
 * @throws ConfigError naming the flag or environment variable that holds the bad value
 */
export function loadWorkerConfig(
  flags: Readonly<Partial<Record<Key, string | number | undefined>>>,
  env: Readonly<Record<string, string | undefined>>,
): WorkerConfig {
  const raw: Partial<Record<Key, string>> = {};
  const origin: Partial<Record<Key, string>> = {};
  for (const key of Object.keys(CONFIG_SOURCES) as Key[]) {
    const { flag, env: name } = CONFIG_SOURCES[key];
    const fromFlag = flags[key];
    const fromEnv = key === 'logLevel' ? (env[name] ?? env['LOG_LEVEL']) : env[name];
    if (fromFlag !== undefined) {
      raw[key] = String(fromFlag);
      origin[key] = flag;
    } else if (fromEnv !== undefined && fromEnv !== '') {
      raw[key] = fromEnv;
      origin[key] = key === 'logLevel' && env[name] === undefined ? 'LOG_LEVEL' : name;
    } else if (DEFAULTS[key] !== undefined) {
      raw[key] = DEFAULTS[key];
      origin[key] = `${name} (default)`;
    }
  }
  const parsed = schema.safeParse(raw);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    const key = issue.path[0] as Key;
    throw new ConfigError(origin[key] ?? CONFIG_SOURCES[key]?.env ?? String(key), `${issue.message} (got ${JSON.stringify(raw[key])})`);
  }
  const c = parsed.data;
  const heartbeatIntervalMs = c.heartbeatIntervalMs ?? Math.min(3_000, Math.floor(c.sessionTimeoutMs / 3));
  if (heartbeatIntervalMs >= c.sessionTimeoutMs) {
    throw new ConfigError(
      origin.heartbeatIntervalMs ?? 'WEIR_HEARTBEAT_INTERVAL_MS',
      `must be less than the session timeout (${c.sessionTimeoutMs} ms)`,
    );
  }
  return { ...c, heartbeatIntervalMs } as WorkerConfig;
}
