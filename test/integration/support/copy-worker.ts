/**
 * A worker in the test's own process (not `weir run`), for tests that reach into its consumer:
 * application `applicationId` copies `source` to `sink` (string keys and values), on `client`,
 * with a 100 ms commit interval, its JSON log lines kept in `logs`.
 */
import { pino } from 'pino';
import { sink as sinkTo, topology } from 'weir';
import { loadWorkerConfig } from '../../../src/config/worker-config.js';
import type { AssignmentEvent } from '../../../src/kafka/group-consumer.js';
import { compile } from '../../../src/topology/compile.js';
import { Worker } from '../../../src/worker/worker.js';

/** One log line of a {@link copyWorker}, as the tests read it. */
export type CopyWorkerLogLine = { msg: string; time: number; err?: { type?: string; message?: string } };

/** What {@link copyWorker} makes the worker of. */
export interface CopyWorkerOptions {
  readonly applicationId: string;
  readonly source: string;
  readonly sink: string;
  readonly brokers: string;
  readonly client: 'kafkajs' | 'librdkafka';
  /** `--session-timeout-ms`. */
  readonly sessionTimeoutMs: number;
  /** Where its log lines go. */
  readonly logs: CopyWorkerLogLine[];
  /** Told of every assignment. */
  readonly onJoined?: (event: AssignmentEvent) => void;
}

/** The worker (not started). */
export function copyWorker(options: CopyWorkerOptions): Worker {
  const { applicationId, source, sink, brokers, client, sessionTimeoutMs, logs } = options;
  return new Worker({
    topology: compile(
      topology({ applicationId })
        .source(source, { key: 'string', value: 'string' })
        .process('copy', (r) => r.value)
        .branch({ success: sinkTo(sink) }),
    ),
    config: loadWorkerConfig({ brokers, sessionTimeoutMs: String(sessionTimeoutMs), commitIntervalMs: '100', client }, {}),
    logger: pino({ level: 'info' }, { write: (line: string) => void logs.push(JSON.parse(line) as CopyWorkerLogLine) }),
    ...(options.onJoined ? { onJoined: options.onJoined } : {}),
  });
}
