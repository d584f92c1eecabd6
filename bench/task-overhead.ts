/**
 * `npx tsx bench/task-overhead.ts`: weir's own CPU per record, without a Kafka client — the part
 * of a worker's cost that is weir's code. One `PartitionTask` of the pass-through topology
 * (buffer serdes, one sink) with the worker's listeners (metrics, logs at info, health) and its
 * OpenTelemetry tracer (no SDK registered), fed 100 B records in batches of 500 and writing to a
 * producer that acknowledges at once; under exactly_once (TASK_GUARANTEE=exactly_once) a
 * transactional producer that does the same. After a warm-up of 200 000 records it times
 * TASK_RECORDS (default 1 000 000), TASK_REPS times (default 5), and prints each repetition and
 * the median: CPU µs per record (the process's user + system time) and records/s.
 *
 * Build first (`npm run build`): it runs the built `dist/`, as `weir run` does.
 */
import { pino } from 'pino';
import { sink } from '../dist/dsl/sink.js';
import { topology } from '../dist/dsl/topology-builder.js';
import type { OutputRecord } from '../dist/record/record-types.js';
import type { InputRecord } from '../dist/record/record-types.js';
import { PartitionTask, type TaskOutputPorts } from '../dist/runtime/partition-task.js';
import { compile } from '../dist/topology/compile.js';
import { OtelAttemptTracer } from '../dist/observability/otel-attempt-tracer.js';
import { combineTaskListeners, taskLogListener } from '../dist/observability/task-log-listener.js';
import { WorkerHealth } from '../dist/worker/worker-health.js';
import { WorkerMetrics } from '../dist/observability/worker-metrics.js';

const env = process.env;
const records = Number(env['TASK_RECORDS'] ?? 1_000_000);
const reps = Number(env['TASK_REPS'] ?? 5);
const guarantee = env['TASK_GUARANTEE'] === 'exactly_once' ? 'exactly_once' : 'at_least_once';

const compiled = compile(
  topology({ applicationId: 'task-overhead', processingGuarantee: guarantee })
    .source('in', { key: 'buffer', value: 'buffer' })
    .process('copy', (record) => record.value)
    .branch({ success: sink('out') }),
);
const metrics = new WorkerMetrics({ application_id: 'task-overhead' });
const health = new WorkerHealth(
  () => ({ state: 'running', consumerRestarting: false, groupId: 'task-overhead', memberId: 'm', generation: 1, tasks: [] }),
  { eventLoopStallMs: 10_000, stuckTaskMs: 300_000 },
);
const logger = pino({ level: 'info' }, pino.destination({ dest: '/dev/null', sync: true }));
let produced = 0;
const acknowledge = async (outputs: readonly OutputRecord[]): Promise<void> => {
  produced += outputs.length;
};
const output: TaskOutputPorts =
  guarantee === 'exactly_once'
    ? {
        guarantee,
        transactions: {
          transactionalId: 'task-overhead-in-0',
          begin: async () => undefined,
          send: acknowledge,
          sendOffsets: async () => undefined,
          commit: async () => undefined,
          abort: async () => undefined,
          reset: async () => undefined,
        },
        offsets: { committedOffset: async () => undefined, committedPosition: async () => undefined },
      }
    : { guarantee, producer: { send: acknowledge }, committer: { commit: async () => undefined } };
const task = new PartitionTask({
  topology: compiled,
  topic: 'in',
  partition: 0,
  startOffset: 0,
  output,
  clock: { now: () => Date.now() },
  listener: combineTaskListeners(metrics.listener(), taskLogListener(logger), health.listener()),
  tracer: new OtelAttemptTracer(),
});

const value = Buffer.alloc(100, 'x');
let offset = 0;
function batch(n: number): InputRecord[] {
  return Array.from({ length: n }, () => {
    const o = offset++;
    return { topic: 'in', partition: 0, offset: o, timestamp: Date.now(), key: Buffer.from(`key-${o}`), value, headers: {} };
  });
}

async function run(n: number): Promise<void> {
  for (let i = 0; i < n; i += 500) {
    task.enqueue(batch(500));
    for (;;) {
      const result = await task.poll();
      if (result.kind !== 'yield') break;
    }
  }
}

await run(200_000);
const cpu: number[] = [];
const rates: number[] = [];
for (let rep = 0; rep < reps; rep++) {
  const cpu0 = process.cpuUsage();
  const t0 = performance.now();
  await run(records);
  const used = process.cpuUsage(cpu0);
  cpu.push((used.user + used.system) / records);
  rates.push(records / ((performance.now() - t0) / 1_000));
  console.log(
    `task-overhead: ${guarantee}, repetition ${rep + 1}: ${cpu.at(-1)!.toFixed(2)} µs CPU/record, ${Math.round(rates.at(-1)!)} records/s`,
  );
}
const median = (values: number[]): number => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;
console.log(
  `task-overhead: ${guarantee}: median ${median(cpu).toFixed(2)} µs CPU/record (${Math.min(...cpu).toFixed(2)}–${Math.max(...cpu).toFixed(2)}), ${Math.round(median(rates))} records/s; ${produced} outputs`,
);
health.close();
