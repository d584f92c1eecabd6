import { z } from 'zod';
import { KAFKA_CLIENTS } from '../kafka/kafka-client.js';
import { METRICS_RECORDING_LEVELS } from './metrics-recording-level.js';
import { redisUrl } from './redis-url.js';

/** Most stream threads one process may run (each holds its own consumer, producers and V8 heap). */
export const MAX_THREADS = 256;

const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;
const GUARANTEES = ['at_least_once', 'exactly_once'] as const;

// Decimal digits only: an empty value is not 0, and ' 2', '0x2' or '1e0' (which Number() takes) are no counts.
const int = (min: number, max: number) =>
  z
    .string()
    .regex(/^\d+$/, 'must be a whole number in decimal digits')
    .transform(Number)
    .pipe(z.number().min(min, `must be at least ${min}`).max(max, `must be at most ${max}`).int('must be a whole number'));
/** A comma-separated list: its items trimmed, empty ones dropped. */
const commaList = () =>
  z.string().transform((s) =>
    s
      .split(',')
      .map((item) => item.trim())
      .filter((item) => item.length > 0),
  );
const hostPort = /^[A-Za-z0-9.-]+:\d{1,5}$|^\[[0-9A-Fa-f:]+\]:\d{1,5}$/;

/**
 * The rules every worker setting is checked with, one zod schema per key of `WorkerConfig`, each
 * taking the setting as text (a flag's or an environment variable's value). The messages say
 * what a good value is; `readConfigSettings` adds which flag or variable held the bad one.
 */
export const workerConfigSchema = z.object({
  brokers: commaList().pipe(
    z
      .array(
        z
          .string()
          .regex(hostPort, 'each broker must be host:port')
          .refine((b) => Number(b.slice(b.lastIndexOf(':') + 1)) <= 65_535, 'a port must be at most 65535'),
      )
      .min(1, 'at least one broker is required'),
  ),
  redisUrl,
  redisCluster: commaList()
    .pipe(z.array(z.string().regex(hostPort, 'each cluster node must be host:port')).min(1, 'at least one cluster node is required'))
    .transform((nodes) =>
      nodes.map((n) => ({ host: n.slice(0, n.lastIndexOf(':')).replace(/^\[|\]$/g, ''), port: Number(n.slice(n.lastIndexOf(':') + 1)) })),
    )
    .optional(),
  logLevel: z.enum(LOG_LEVELS, { error: `must be one of ${LOG_LEVELS.join(', ')}` }),
  applicationId: z
    .string()
    .regex(/^[a-zA-Z0-9._-]+$/, "may use only ASCII letters, digits, '.', '_' and '-'")
    .optional(),
  processingGuarantee: z.enum(GUARANTEES, { error: `must be one of ${GUARANTEES.join(', ')}` }).optional(),
  commitIntervalMs: int(1, 3_600_000).optional(),
  sessionTimeoutMs: int(6_000, 300_000),
  heartbeatIntervalMs: int(100, 100_000).optional(),
  topicPartitions: int(1, 10_000).optional(),
  metricsPort: int(0, 65_535).optional(),
  metricsHost: z
    .union([z.ipv4(), z.ipv6(), z.string().regex(/^[A-Za-z0-9]([A-Za-z0-9.-]*[A-Za-z0-9])?$/)], {
      error: 'must be an IP address or a host name',
    })
    .optional(),
  // Kafka Streams spells its levels in capitals (INFO, DEBUG): either spelling is taken.
  metricsRecordingLevel: z
    .string()
    .transform((s) => s.toLowerCase())
    .pipe(z.enum(METRICS_RECORDING_LEVELS, { error: `must be one of ${METRICS_RECORDING_LEVELS.join(', ')}` })),
  transactionTimeoutMs: int(1_000, 900_000),
  maxBufferedRecords: int(1, 1_000_000),
  maxRecordBytes: int(1_024, 1_073_741_824),
  shutdownTimeoutMs: int(100, 600_000),
  eventLoopStallMs: int(10, 600_000),
  stuckTaskMs: int(1_000, 86_400_000),
  threads: int(1, MAX_THREADS),
  client: z.enum(KAFKA_CLIENTS, { error: `must be one of ${KAFKA_CLIENTS.join(', ')}` }),
  groupInstanceIds: z
    .string()
    .transform((s) => s.split(',').map((id) => id.trim()))
    .pipe(
      z
        .array(
          z
            .string()
            .min(1, 'must not be empty, nor hold an empty id between commas')
            .max(200, 'must be at most 200 characters')
            .regex(/^[a-zA-Z0-9._-]+$/, "may use only ASCII letters, digits, '.', '_' and '-'"),
        )
        .refine((ids) => new Set(ids).size === ids.length, 'must not repeat an id (each stream thread needs its own)'),
    )
    .optional(),
});
