/**
 * Time to resume after a crash: a worker is SIGKILLed while input keeps coming and restarted at
 * once; the time from the kill until the group commits again (the restarted worker took its
 * partitions back and committed) is measured. Without static membership the group coordinator
 * keeps the dead member's partitions until its session timeout (30 s by default) passes; with
 * `--group-instance-id` (KIP-345, librdkafka) the restarted member is the same member and takes
 * them back at once.
 *
 * Rows: kafkajs; librdkafka; librdkafka with `--group-instance-id`. Each repetition (BENCH_REPS,
 * default 3) starts a worker on a fresh group (at_least_once, commit interval 100 ms, session
 * timeout 30 s), waits until it commits, kills it, restarts it and times the resumption; the
 * table (median and min–max, s) goes into bench/README.md between the `bench:time-to-resume`
 * markers. Rows the build cannot run (no librdkafka) say why.
 *
 * Run: `npm run build && npx tsx bench/time-to-resume.ts`. Environment: BENCH_REPS, KAFKA_BROKERS,
 * BENCH_WRITE=0 (leave the README alone).
 */
import { randomUUID } from 'node:crypto';
import type { Admin } from 'kafkajs';
import { DEFAULT_BROKERS } from '../scripts/lib/broker-instance.js';
import { startBroker } from '../scripts/lib/kafka-broker.js';
import { createTopics, produce, quietKafka } from '../scripts/lib/topic-io.js';
import { waitFor } from '../scripts/lib/wait-for.js';
import { startWorker, type WorkerProcess } from '../scripts/lib/worker-process.js';
import { machineDescription, writeBenchSection } from './bench-tools.js';
import { spread } from './report.js';
import { committedOffsetSum } from './sink-progress.js';
import { missingWeirFeature, weirFeatures } from './weir-features.js';

const env = process.env;
const reps = Number(env['BENCH_REPS'] ?? 3);
const brokers = env['KAFKA_BROKERS'] ?? DEFAULT_BROKERS;
const write = env['BENCH_WRITE'] !== '0';
const PARTITIONS = 6;
const SESSION_TIMEOUT_MS = 30_000;

/** One row: a name and the extra `weir run` flags. */
interface Row {
  readonly name: string;
  readonly args: (rep: number) => readonly string[];
  /** Flags and a help word the build must offer. */
  readonly needs: { readonly flags: readonly string[]; readonly word?: string };
}

const ROWS: readonly Row[] = [
  { name: 'kafkajs', args: () => [], needs: { flags: [] } },
  { name: 'librdkafka', args: () => ['--client', 'librdkafka'], needs: { flags: ['--client'], word: 'librdkafka' } },
  {
    name: 'librdkafka, --group-instance-id',
    args: (rep) => ['--client', 'librdkafka', '--group-instance-id', `bench-resume-${rep}`],
    needs: { flags: ['--client', '--group-instance-id'], word: 'librdkafka' },
  },
];

/** Produces a few records a second to `topic` until stopped. */
function trickle(kafka: ReturnType<typeof quietKafka>, topic: string): () => Promise<void> {
  let stopped = false;
  const loop = (async () => {
    for (let n = 0; !stopped; n++) {
      await produce(
        kafka,
        topic,
        Array.from({ length: 20 }, (_, i) => ({ key: `key-${n}-${i}`, value: Buffer.alloc(100, 'x') })),
      );
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  })();
  return async () => {
    stopped = true;
    await loop;
  };
}

/** Seconds from a SIGKILL of a committing worker to the first commit of the worker restarted in its place. */
async function timeToResume(admin: Admin, source: string, row: Row, rep: number): Promise<number> {
  const group = `bench-resume-${randomUUID().slice(0, 8)}`;
  const start = (): WorkerProcess =>
    startWorker('bench/passthrough.ts', {
      args: [
        ...['--application-id', group, '--brokers', brokers, '--log-level', 'info', '--commit-interval-ms', '100'],
        ...['--session-timeout-ms', String(SESSION_TIMEOUT_MS)],
        ...row.args(rep),
      ],
      env: { BENCH_SOURCE: source, BENCH_SINK: `${group}.out` },
    });
  const first = start();
  let second: WorkerProcess | undefined;
  try {
    await first.waitForLog((l) => l.msg === 'task started', 60_000);
    const committing = await committedOffsetSum(admin, group, source);
    await waitFor(
      async () => (await committedOffsetSum(admin, group, source)) > committing,
      30_000,
      () => `${row.name}: no commit`,
      20,
    );
    const atKill = await committedOffsetSum(admin, group, source);
    const killedAt = performance.now();
    await first.stop('SIGKILL');
    second = start();
    await waitFor(
      async () => (await committedOffsetSum(admin, group, source)) > atKill,
      SESSION_TIMEOUT_MS * 3,
      () => `${row.name}: the restarted worker never committed`,
      20,
    );
    return (performance.now() - killedAt) / 1_000;
  } finally {
    await first.stop('SIGKILL');
    await second?.stop('SIGTERM');
    await admin.deleteGroups([group]).catch(() => undefined);
    await admin.deleteTopics({ topics: [`${group}.out`, `${group}.copy.dlq`] }).catch(() => undefined);
  }
}

async function main(): Promise<void> {
  if (brokers === DEFAULT_BROKERS) await startBroker();
  const features = await weirFeatures();
  const kafka = quietKafka(brokers, 'weir-bench-resume');
  const admin = kafka.admin();
  await admin.connect();
  const source = `bench-resume-${randomUUID().slice(0, 8)}.in`;
  await createTopics(admin, [{ topic: source, partitions: PARTITIONS }]);
  const stopInput = trickle(kafka, source);
  const lines = ['| client | seconds from SIGKILL to the restarted worker’s first commit |', '|---|---|'];
  try {
    for (const row of ROWS) {
      const reason = missingWeirFeature(features, row.needs.flags, row.needs.word);
      if (reason !== undefined) {
        console.log(`bench: time-to-resume: ${row.name}: skipped: ${reason}`);
        lines.push(`| ${row.name} | skipped: ${reason} |`);
        continue;
      }
      const seconds: number[] = [];
      for (let rep = 0; rep < reps; rep++) {
        try {
          seconds.push(await timeToResume(admin, source, row, rep));
          console.log(`bench: time-to-resume: ${row.name} [${rep + 1}/${reps}]: ${seconds.at(-1)!.toFixed(1)} s`);
        } catch (error) {
          console.log(
            `bench: time-to-resume: ${row.name} [${rep + 1}/${reps}]: failed: ${error instanceof Error ? error.message : String(error)}`,
          );
        }
      }
      lines.push(`| ${row.name} | ${seconds.length === 0 ? 'failed in every repetition' : spread(seconds, 1)} |`);
    }
  } finally {
    await stopInput();
    await admin.deleteTopics({ topics: [source] }).catch(() => undefined);
    await admin.disconnect();
  }
  const table = [
    `Measured ${new Date().toISOString().slice(0, 10)} on ${machineDescription()}; Kafka broker on the same machine.`,
    `One worker, ${PARTITIONS} partitions, at_least_once, commit interval 100 ms, session timeout ${SESSION_TIMEOUT_MS / 1_000} s, input trickling in; ${reps} repetition(s); median (min–max).`,
    '',
    ...lines,
  ].join('\n');
  console.log(`\n${table}\n`);
  if (write) writeBenchSection('time-to-resume', table);
}

main().then(
  () => process.exit(0),
  (error: unknown) => {
    console.error(`bench: ${error instanceof Error ? error.stack : String(error)}`);
    process.exit(1);
  },
);
